#![doc = include_str!("../README.md")]

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
#[cfg(feature = "testing")]
pub mod testing;

pub use args::{Failure, Outcome, finish, parse_args};
pub use fs::{
    EditOutput, ImageOutput, ReadBody, ReadOutput, SendOutput, TextPage, WriteChange, WriteOutput,
};
pub use kun_ports::{output_schema_for, sanitize_schema, schema_for};
pub use limits::OutputLimits;
pub use lsp::{LspAnswer, LspOutput};
pub use provider::{BuiltinOptions, BuiltinProvider, Preset};
pub use repo_map::RepoMapOutput;
pub use search::{GlobOutput, GrepMatch, GrepOutput, LsEntry, LsOutput, PageFields};
pub use shell::{BackgroundOutput, BashOutput, CapturedOutput, VerifyOutput};
