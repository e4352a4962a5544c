//! # kun-hooks
//!
//! Gate three of kun-rs: hooks around tool calls and turns, compatible with Claude Code's hook
//! settings and hook scripts.
//!
//! * [`HooksConfig`] — the `hooks` settings (event → `[{matcher, hooks: [...]}]`) from JSON or
//!   TOML, validated and compiled at load ([`config`]).
//! * [`ToolMatcher`] — `*`, or an anchored regex over the tool name that also matches the
//!   Claude Code names of our built-ins (`Write|Edit` matches `write` and `edit`) ([`matcher`]).
//! * [`HookEngine`] — implements [`kun_ports::HookRunner`]: the PreToolUse and PostToolUse
//!   chains (run by the host) and the loop phases (UserPromptSubmit, TurnStart, TurnEnd,
//!   PreCompact) ([`engine`]).
//! * Command hooks speak the Claude Code protocol: JSON on stdin, exit 2 blocks with stderr as
//!   the reason, JSON on stdout may decide, rewrite or add context ([`protocol`] documents the
//!   wire format). Each runs as
//!   `sh -c` in its own process group from the workspace root, with a timeout (default 60 s)
//!   that kills the whole group; a crash or timeout in a tool phase is a
//!   [`kun_ports::HookFailure`] (the host answers `hook_failed`).
//! * Workflow hooks POST to an HTTP endpoint in observe, block or rewrite mode and always fail
//!   open ([`workflow`] documents the request and the answers).
//! * [`BuiltinHook::DesignQuality`] — an opt-in PostToolUse review of front-end files
//!   ([`design_quality`]).
//!
//! ```no_run
//! # async fn demo(call: kun_ports::HookToolCall) -> Result<(), Box<dyn std::error::Error>> {
//! use kun_hooks::{HookEngine, HooksConfig};
//! use kun_ports::{HookRunner, PreToolDecision};
//!
//! let config = HooksConfig::from_toml_str(r#"
//!     [[PreToolUse]]
//!     matcher = "write|edit"
//!     hooks = [{ type = "command", command = "./.kun/hooks/check.sh", timeout = 5 }]
//! "#)?;
//! let engine = HookEngine::builder().config(config).build()?;
//! let outcome = engine.pre_tool_use(&call).await?;
//! if let PreToolDecision::Deny { reason } = outcome.decision {
//!     println!("denied: {reason}");
//! }
//! # Ok(()) }
//! ```

// The README is compiled as doctests, so its examples cannot rot.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

mod command;
pub mod config;
pub mod design_quality;
pub mod engine;
pub mod matcher;
mod process;
pub mod protocol;
pub mod workflow;

pub use config::{
    CommandHook, ConfigError, ConfigFormat, DEFAULT_TIMEOUT, HookGroup, HookSpec, HooksConfig,
    WorkflowHook, WorkflowMode,
};
pub use design_quality::{DesignFinding, DesignRule};
pub use engine::{BuiltinHook, EngineError, HookEngine, HookEngineBuilder};
pub use matcher::{MatcherError, ToolMatcher, claude_code_names};
