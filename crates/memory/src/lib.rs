//! # kun-memory
//!
//! Long-term memory for kun-rs: facts a model keeps across turns and sessions, scoped to the
//! user, a workspace or a project (see `kun_ports::memory` for the scope rules).
//!
//! * [`SqliteMemoryStore`]: the [`MemoryStore`](kun_ports::MemoryStore) on one embedded SQLite
//!   file (bundled, nothing to install or start): WAL, a schema version with forward
//!   migrations ([`schema`]), FTS5 search with Chinese and Japanese cut into bigrams
//!   ([`segment`]), safe for several processes at once.
//! * The tools `memory_create`, `memory_update`, `memory_delete` (`file_change`, on-request) and
//!   `memory_search` (auto, read-only) in [`MemoryProvider`] ([`tools`]).
//! * [`retrieve`]: at most 8 memories for a prompt, rendered `- [id] (scope) content` within a
//!   byte budget, for runtimes to put before a turn.
//! * [`place_for`]: a workspace's keys (real path, normalised git remote).
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use kun_memory::{RetrievalOptions, SqliteMemoryStore, place_for, retrieve};
//! use kun_ports::{MemoryScope, MemoryStore, NewMemory, ToolHostContext};
//!
//! let data = tempfile::tempdir().unwrap();
//! let workspace = tempfile::tempdir().unwrap();
//! let store = SqliteMemoryStore::open(&data.path().join("memory.sqlite")).unwrap();
//! let place = place_for(workspace.path());
//! store.create(&place, NewMemory {
//!     scope: MemoryScope::Workspace,
//!     content: "Integration tests need `docker compose up` first".into(),
//!     tags: vec!["testing".into()],
//! }).await.unwrap();
//!
//! let ctx = ToolHostContext::builder("thread", "turn").workspace(workspace.path()).build();
//! let found = retrieve(&store, "how do I run the integration tests?", &ctx, RetrievalOptions::default())
//!     .await
//!     .unwrap();
//! assert_eq!(found.text, "- [m1] (workspace) Integration tests need `docker compose up` first");
//! # });
//! ```

mod lazy;
mod place;
mod provider;
mod render;
mod retrieve;
pub mod schema;
pub mod segment;
mod store;
pub mod tools;

pub use lazy::{LazySqliteStore, default_memory_path};
pub use place::{normalise_remote, place_for, remote_url};
pub use provider::MemoryProvider;
pub use render::{render_memories, render_memory};
pub use retrieve::{RetrievalOptions, Retrieved, prompt_query, retrieve};
pub use store::{MAX_RESULTS, SqliteMemoryStore, StoreStatus};
