//! # kun-ports
//!
//! The vocabulary and the ports of kun-rs. Every concern crate depends on this crate and on
//! external crates only; adapters implement these traits, and `kun-composition` wires them.
//!
//! * Vocabulary: [`ProviderKind`], [`ToolKind`], [`ToolPolicy`], [`SideEffect`],
//!   [`SandboxMode`], [`ApprovalPolicy`], [`ErrorCode`], [`ToolResult`], [`ToolHostContext`],
//!   [`WorkspaceStanding`].
//! * The tool boundary: [`TypedTool`] (typed arguments and output, a rendering for the model;
//!   every `TypedTool` is a [`Tool`]), [`ToolFailure`], [`ContentBlock`], and the one schema
//!   sanitiser ([`sanitize_schema`], [`schema_for`], [`output_schema_for`]).
//! * Ports: [`ToolHost`], [`ToolProvider`], [`Tool`], [`ApprovalGate`], [`HookRunner`],
//!   [`SandboxPolicy`], [`CommandConfinement`], [`OperationLedger`], [`ReadTracker`],
//!   [`ArtifactStore`], [`MemoryStore`], [`ChildAgentRunner`], [`UserInputChannel`],
//!   [`ImBridge`], [`ComputerBackend`], [`WebSearchBackend`], [`MediaBackend`],
//!   [`ThreadState`].
//! * With feature `testkit`: a contract-test suite per port (module `testkit`) and `mockall`
//!   mocks (`MockToolHost`, `MockApprovalGate`, …).
//!
//! This crate does no I/O, except [`process`]: the one place that touches child processes
//! (their environment, session and process group), shared by every crate that starts one.
//!
//! ```
//! use kun_ports::{ErrorCode, ToolResult};
//! let denied = ToolResult::failure(ErrorCode::ApprovalDenied, "the user declined");
//! assert_eq!(denied.output["code"], "approval_denied");
//! ```

// The README is compiled as doctests (its testkit example needs `--features testkit`, which
// `cargo test --workspace` turns on through the adapters' dev-dependencies).
#![cfg_attr(all(doctest, feature = "testkit"), doc = include_str!("../README.md"))]

mod approval;
mod artifacts;
mod computer;
mod content;
mod context;
mod delegation;
mod grant;
mod hooks;
mod host;
mod im;
mod ledger;
mod media;
mod memory;
pub mod process;
mod read_tracker;
mod result;
mod sandbox;
mod schema;
mod thread_state;
mod tool;
mod tool_names;
mod typed;
mod user_input;
mod vocabulary;
mod web;
mod workspace;

#[cfg(feature = "testkit")]
pub mod testkit;

pub use approval::*;
pub use artifacts::*;
pub use computer::*;
pub use content::*;
pub use context::*;
pub use delegation::*;
pub use grant::*;
pub use hooks::*;
pub use host::*;
pub use im::*;
pub use ledger::*;
pub use media::*;
pub use memory::*;
pub use read_tracker::*;
pub use result::*;
pub use sandbox::*;
pub use schema::{output_schema_for, sanitize_schema, schema_for};
pub use thread_state::*;
pub use tool::*;
pub use tool_names::*;
pub use typed::*;
pub use user_input::*;
pub use vocabulary::*;
pub use web::*;
pub use workspace::*;
