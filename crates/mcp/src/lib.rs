//! # kun-mcp
//!
//! Third-party MCP servers behind kun-rs's capability catalog and its gates (SPEC §9). The
//! MCP client is `rmcp`; its types stay inside this crate.
//!
//! * [`McpServerConfig`] — one server: stdio (`command`, `args`, `env`, `cwd`) or streamable
//!   HTTP (`url`, `headers`), plus `enabled`, trust and visibility, timeouts, reconnects.
//! * [`McpManager`] — starts the servers, keeps their connections alive (reconnecting with
//!   exponential backoff), and publishes one [`McpProvider`] per server (`mcp:<server>`) plus
//!   the search gateway (`mcp:search`) through a watch channel; [`ServerStatus`] per server
//!   for diagnostics (`kun-tools doctor`).
//! * [`naming`] — `mcp_<server>_<tool>` in `[a-z0-9_]`, at most a [`naming::NameLimit`] long
//!   (64 by default), hash suffixes for over-long, lossy or colliding names, and an exact
//!   reverse map.
//! * [`trust`] — who vouches for a server: trust follows the definition (name + transport,
//!   hashed into a [`DefinitionId`]), never the name; a workspace definition runs only in a
//!   trusted workspace or when pinned.
//! * [`access`] — visibility (`workspace_roots`) and trust, checked when listing and again
//!   when calling.
//! * [`annotations`] — MCP annotations → policy, kind and side effect (read-only ∧ closed
//!   world → `auto`; open world → `untrusted`; everything else `on-request`; anything not
//!   read-only is `command_execution`).
//! * [`search`] — search mode: `mcp_search` (BM25, English and Chinese), `mcp_describe`,
//!   and `mcp_call`, which forwards to its target so the host gates the target itself.
//!
//! ## Failure model
//!
//! A server that is disabled, fails to start, or dies is never a fault for the caller: its
//! provider is disabled or unavailable with the reason, and a call reaching it gets an error
//! result (`tool_timeout`, `tool_execution_failed`, `invalid_arguments`, or the tool's own
//! `isError` content). A call in flight when its server dies ends with an error result at
//! once, not at the timeout.
//!
//! ## Smallest use
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use kun_mcp::{McpManager, McpServerConfig};
//! use kun_ports::ToolProvider;
//! let manager = McpManager::builder()
//!     .server(McpServerConfig::stdio("time", "mcp-server-time"))
//!     .start()
//!     .await?;
//! for provider in manager.providers() {
//!     println!("{} {:?} {:?}", provider.id(), provider.policy(), provider.tool_names());
//! }
//! manager.shutdown().await;
//! # Ok(()) }
//! ```

// The README is compiled as doctests, so its examples cannot rot.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

pub mod access;
pub mod annotations;
mod config;
mod connection;
mod content;
mod link;
mod manager;
pub mod naming;
mod provider;
mod record;
mod remote;
pub mod search;
mod status;
mod tool;
pub mod trust;

pub use config::{
    ConfigError, DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, McpServerConfig, ReconnectPolicy,
    SearchMode, SearchSettings, TransportConfig, TrustScope,
};
pub use manager::{McpCatalog, McpManager, McpManagerBuilder};
pub use provider::{GATEWAY_PROVIDER_ID, McpProvider};
pub use record::{
    McpToolRecord, SchemaSanitizer, identity_sanitizer, records_for_catalog, records_for_server,
};
pub use remote::RemoteTool;
pub use search::gateway::{CALL_TOOL, DESCRIBE_TOOL, SEARCH_TOOL};
pub use status::{ServerState, ServerStatus};
pub use tool::McpTool;
pub use trust::{DefinedBy, DefinitionId, McpTrust, Vouch, WorkspaceStanding};
