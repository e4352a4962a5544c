//! Project automation for kun-rs, run as `cargo xtask <task>` (an alias in
//! `.cargo/config.toml`).
//!
//! * `cargo xtask ci`: formatting, clippy, tests, doctests, docs and the architecture check,
//!   in that order, stopping at the first failure.
//! * `cargo xtask arch`: only the architecture check (concern crates depend on `kun-ports` and
//!   external crates, never on a sibling).
//! * `cargo xtask bench [NAME…] [-- ARGS…]`: the benchmark programs (examples named
//!   `bench_*` in their crates).
//! * `cargo xtask fuzz [TARGET] [--seconds N]`: the cargo-fuzz targets of `fuzz/` (outside
//!   the workspace and outside `ci`).
//! * `cargo xtask layout`: regenerates the hot-text linker script of `kun-tools` from a
//!   profiled `serve` session (needs valgrind).
//!
//! Only `std` and `serde_json`, so it compiles in seconds.

mod arch;
mod bench;
mod ci;
mod fuzz;
mod layout;
mod step;
mod workspace;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  ci                     fmt, clippy, tests, doctests, docs, architecture check (stops at the first failure)
  arch                   check that concern crates depend only on kun-ports among workspace crates
  bench [NAME...] [-- ARGS...]
                         run benchmark programs (all available ones when no NAME is given)
  fuzz [TARGET] [--seconds N]
                         run the cargo-fuzz targets of fuzz/ (all when no TARGET), N seconds each (default 60)
  layout                 profile a `kun-tools serve` session under valgrind and regenerate crates/cli/layout/hot-text.ld
  help                   this text";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("ci") if args.len() == 1 => ci::run(),
        Some("arch") if args.len() == 1 => arch::run(),
        Some("bench") => bench::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("layout") if args.len() == 1 => layout::run(),
        Some("help" | "-h" | "--help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(_) => {
            eprintln!(
                "error: unknown task or arguments `{}`\n\n{USAGE}",
                args.join(" ")
            );
            return ExitCode::from(2);
        }
        None => {
            eprintln!("error: no task given\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("\nerror: {failure}");
            ExitCode::FAILURE
        }
    }
}
