//! # kun-builtin-tools
//!
//! The built-in tools of kun-rs (SPEC §8) and the pieces they share: the tool boundary
//! ([`Failure`], [`parse_args`]), the schema sanitiser ([`sanitize_schema`]), output limits,
//! truncation and the streaming output accumulator, the read-before-edit hooks, the file
//! mutation queue and the edit engine.
//!
//! | tool | kind | policy | side effect |
//! |---|---|---|---|
//! | read | tool_call | auto | read-only |
//! | grep, glob, ls, repo_map, git_inspect | tool_call | auto | read-only |
//! | find (alias of glob, not advertised) | tool_call | auto | read-only |
//! | lsp | command_execution | on-request | read-only |
//! | edit, write | file_change | on-request | — |
//! | bash, background_shell, verify_changes | command_execution | on-request | — |
//! | send_im_attachment | tool_call | on-request + explicit approval | — |

mod args;
pub mod fs;
pub mod git_inspect;
mod limits;
pub mod lsp;
pub mod output;
mod provider;
pub mod repo_map;
pub mod search;
pub mod shell;
pub mod testing;

pub use args::{Failure, Outcome, finish, parse_args};
pub use kun_ports::{output_schema_for, sanitize_schema, schema_for};
pub use limits::OutputLimits;
pub use provider::{BuiltinOptions, BuiltinProvider, Preset};
