//! Contract-test suites, one per port. An adapter crate calls the suite for its port from a
//! test; the suite panics (fails the test) with a message naming the broken rule.
//!
//! ```ignore
//! #[tokio::test]
//! async fn in_memory_ledger_honours_the_contract() {
//!     kun_ports::testkit::operation_ledger_contract(|| InMemoryLedger::default()).await;
//! }
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod approval;
mod artifacts;
mod child_runner;
mod computer;
#[cfg(unix)]
mod confinement;
mod external;
mod hooks;
mod host;
mod http_server;
mod ledger;
mod media;
mod memory;
#[cfg(target_os = "linux")]
mod processes;
mod read_tracker;
mod sandbox;
mod thread_state;
mod user_input;
mod web;

pub use approval::*;
pub use artifacts::*;
pub use child_runner::*;
pub use computer::*;
#[cfg(unix)]
pub use confinement::*;
pub use external::*;
pub use hooks::*;
pub use host::*;
pub use http_server::*;
pub use ledger::*;
pub use media::*;
pub use memory::*;
#[cfg(target_os = "linux")]
pub use processes::*;
pub use read_tracker::*;
pub use sandbox::*;
pub use thread_state::*;
pub use user_input::*;
pub use web::*;
