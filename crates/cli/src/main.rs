//! `kun-tools`: the tool surface of kun-rs from the command line.
//!
//! * `kun-tools catalog --workspace DIR [--json]` — what the model would see.
//! * `kun-tools call --workspace DIR [--yes|--no] TOOL ARGS_JSON` — one call through all gates.
//! * `kun-tools call --workspace DIR --script FILE` — JSON lines, one turn each.
//! * `kun-tools serve --workspace DIR [--http ADDR]` — the MCP server (see [`serve`]).
//! * `kun-tools doctor [--workspace DIR] [--json]` — configuration, trust, providers,
//!   confinement.
//! * `kun-tools trust DIR` — trust a workspace from now on (see [`trust`]).
//! * `kun-tools skills --workspace DIR [--prompt TEXT] [--file PATH]… [--json]` — skills.
//!
//! `catalog`, `call`, `serve` and `doctor` take `--trust-workspace` to trust the workspace
//! for one run. Workspace settings an untrusted workspace may not apply are reported once on
//! stderr, one line each.
//! * `kun-tools memory list|search|rm --workspace DIR [--json]` — the memories it sees.
//!
//! Exit codes: 0 when a call produced a result (error results included), 1 when a call was
//! refused with an `Err` (unknown or unadvertised tool, a `never` tool, an abort), 2 for usage
//! or configuration errors. `serve` exits 0 when the client disconnects or a signal stops it,
//! 1 when serving failed (a failed handshake, an address in use), 2 for usage or
//! configuration errors. `doctor` exits 0 when every configuration file is valid, 1 otherwise.

mod call;
mod catalog;
mod cli;
mod doctor;
mod memory;
mod on_demand;
mod runtime;
mod serve;
mod setup;
mod skills;
mod trust;

use clap::Parser;
use std::process::ExitCode;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every call produced a result.
    Done,
    /// A call was refused (`Err`).
    Refused,
    /// Usage or configuration error.
    Usage,
}

impl From<Outcome> for ExitCode {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Done => Self::SUCCESS,
            Outcome::Refused => Self::from(1),
            Outcome::Usage => Self::from(2),
        }
    }
}

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return if err.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    setup::init_logging();
    let runtime = match runtime::build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("kun-tools: cannot start the async runtime: {err}");
            return ExitCode::from(2);
        }
    };
    let outcome = runtime.block_on(async {
        match cli.command {
            cli::Command::Catalog(args) => catalog::run(args).await,
            cli::Command::Call(args) => call::run(args).await,
            cli::Command::Serve(args) => serve::run(args).await,
            cli::Command::Doctor(args) => doctor::run(&args).await,
            cli::Command::Skills(args) => skills::run(&args),
            cli::Command::Trust(args) => trust::run(&args),
            cli::Command::Memory(args) => memory::run(args).await,
        }
    });
    // A stdio read still pending in the blocking pool must not keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    outcome.into()
}
