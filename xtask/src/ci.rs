//! `cargo xtask ci`: every check a change must pass, in order, stopping at the first failure.

use crate::arch;
use crate::step::{self, Action, Failure, Step};
use crate::workspace::cargo_command;
use std::process::Stdio;
use std::time::Instant;

/// Runs fmt, clippy, tests, doctests, docs and the architecture check.
pub fn run() -> Result<(), Failure> {
    let steps = steps();
    let total = steps.len();
    let started = Instant::now();
    let mut timings = Vec::with_capacity(total);
    for (index, step) in steps.into_iter().enumerate() {
        let name = step.name;
        let elapsed = step::run(step, index + 1, total)?;
        timings.push((name, elapsed));
    }
    println!("\nci passed in {}:", step::seconds(started.elapsed()));
    for (name, elapsed) in timings {
        println!("  {name:<10} {}", step::seconds(elapsed));
    }
    Ok(())
}

fn steps() -> Vec<Step> {
    let mut doc = cargo_command(["doc", "--workspace", "--no-deps"]);
    doc.env("RUSTDOCFLAGS", "-D warnings");
    vec![
        Step {
            name: "fmt",
            action: Action::Run(cargo_command(["fmt", "--all", "--", "--check"])),
        },
        Step {
            name: "clippy",
            action: Action::Run(cargo_command([
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ])),
        },
        Step {
            name: "tests",
            action: Action::Run(test_command()),
        },
        Step {
            name: "doctests",
            action: Action::Run(cargo_command(["test", "--workspace", "--doc"])),
        },
        Step {
            name: "docs",
            action: Action::Run(doc),
        },
        Step {
            name: "arch",
            action: Action::Check(arch::run),
        },
    ]
}

/// `cargo nextest run` when nextest is installed (it does not run doctests; a later step
/// does), else `cargo test`.
fn test_command() -> std::process::Command {
    let nextest = cargo_command(["nextest", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if nextest {
        cargo_command(["nextest", "run", "--workspace", "--no-fail-fast"])
    } else {
        println!("(cargo-nextest is not installed; using `cargo test`)");
        cargo_command(["test", "--workspace"])
    }
}
