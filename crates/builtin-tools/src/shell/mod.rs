//! The command tools: [`BashTool`] (`bash`), [`BackgroundShellTool`] (`background_shell`) and
//! [`VerifyChangesTool`] (`verify_changes`).
//!
//! They share one way to run a command (see the invariants of the private `process` module):
//! * `bash -c` (or `sh -c` when there is no bash) in the primary workspace root;
//! * its own session and process group, stdin closed, and only the allow-listed environment
//!   (`PATH`, `HOME`, `LANG`, `LC_*`, `TERM`, `USER`, `SHELL`, `TMPDIR`, `TZ` and the names in
//!   [`ShellConfig::env`]; see [`kun_ports::process`]);
//! * built by the [`CommandConfinement`] given at construction — a command it cannot confine
//!   does not run (`sandbox_command_blocked`);
//! * a timeout and the turn's abort signal kill the whole group; when a call returns, no
//!   process of its group is left (background jobs excepted, until killed or dropped);
//! * output goes through an [`OutputAccumulator`](crate::output::OutputAccumulator): the tail
//!   within the limits, the full stream spilled to a file when it is longer.
//!
//! ```
//! use kun_builtin_tools::shell::{BashTool, ShellConfig};
//! use kun_ports::Tool;
//! use kun_sandbox::NoConfinement;
//! use std::sync::Arc;
//!
//! let bash = BashTool::with_config(Arc::new(NoConfinement), ShellConfig::default());
//! assert_eq!(bash.spec().name, "bash");
//! assert_eq!(bash.approval_scope(&serde_json::json!({"command": "git status -s"})).as_deref(), Some("git status"));
//! ```
//!
//! [`CommandConfinement`]: kun_ports::CommandConfinement

mod background;
mod bash;
mod process;
mod run;
mod scope;
mod verify;

use crate::OutputLimits;
use crate::output::Spill;
use kun_ports::process::EnvAllowList;
use std::time::Duration;

pub use background::{
    BackgroundLimits, BackgroundOutput, BackgroundShellTool, JobKilled, JobList, JobOutput,
    JobStarted, JobState, JobSummary, StatusName,
};
pub use bash::{BashOutput, BashTool};
pub use kun_ports::NetworkAccess;
pub use run::{CapturedOutput, ProgressForwarding};
pub use scope::command_scope;
pub use verify::{
    CargoChecks, CheckResult, CheckSource, VerifyChangesTool, VerifyConfig, VerifyOutput,
    detect_checks,
};

pub(crate) use process::{Stream, find_on_path, read_only_scope, spawn};

/// How long a command may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// When the call gives no `timeout_seconds` (default 900 s).
    pub default: Duration,
    /// The most a call may ask for (default 3,600 s); larger requests are capped.
    pub max: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            default: Duration::from_secs(900),
            max: Duration::from_secs(3_600),
        }
    }
}

/// How the command tools run commands and keep their output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShellConfig {
    /// Output limits (the tail is kept): default 2,000 lines / 50 KiB.
    pub limits: OutputLimits,
    /// Where full outputs over the limits are saved (default `$TMPDIR/kun-output`).
    pub spill: Spill,
    /// Default and maximum run time.
    pub timeouts: Timeouts,
    /// Whether confined commands may use the network (`[sandbox] network`).
    pub network: NetworkAccess,
    /// Which variables of our environment commands see: the base list plus the names of
    /// `[shell] env`.
    pub env: EnvAllowList,
    /// Whether live output is forwarded as progress updates.
    pub progress: ProgressForwarding,
}
