//! Running a named step with a header, its elapsed time, and a typed failure.

use std::fmt;
use std::process::Command;
use std::time::{Duration, Instant};

/// Why a task failed; printed once by `main`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure(String);

impl Failure {
    /// A failure with a message that says what to do next.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a step does.
pub enum Action {
    /// Runs a program; the step passes when it exits with status 0.
    Run(Command),
    /// Runs a check in this process.
    Check(fn() -> Result<(), Failure>),
}

/// One step of a task.
pub struct Step {
    /// Short name, shown in the header and the summary.
    pub name: &'static str,
    /// What it does.
    pub action: Action,
}

/// Prints `==> [i/n] name: command`, runs the step, prints its result and elapsed time.
pub fn run(step: Step, index: usize, total: usize) -> Result<Duration, Failure> {
    let Step { name, action } = step;
    let shown = match &action {
        Action::Run(command) => describe(command),
        Action::Check(_) => format!("cargo xtask {name}"),
    };
    println!("\n==> [{index}/{total}] {name}: {shown}");
    let started = Instant::now();
    let result = match action {
        Action::Run(mut command) => match command.status() {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(Failure::new(format!(
                "step `{name}` failed ({status}); run `{shown}` to see it again"
            ))),
            Err(error) => Err(Failure::new(format!(
                "step `{name}` could not start `{shown}`: {error}"
            ))),
        },
        Action::Check(check) => check(),
    };
    let elapsed = started.elapsed();
    match &result {
        Ok(()) => println!("<== {name} passed in {}", seconds(elapsed)),
        Err(_) => println!("<== {name} FAILED after {}", seconds(elapsed)),
    }
    result.map(|()| elapsed)
}

/// `cargo clippy --workspace`, with the environment it was given in front.
pub fn describe(command: &Command) -> String {
    let mut words: Vec<String> = command
        .get_envs()
        .filter(|(key, _)| *key == "RUSTDOCFLAGS")
        .map(|(key, value)| {
            format!(
                "{}=\"{}\"",
                key.to_string_lossy(),
                value
                    .map(|v| v.to_string_lossy().into_owned())
                    .unwrap_or_default()
            )
        })
        .collect();
    words.push("cargo".to_owned());
    words.extend(
        command
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned()),
    );
    words.join(" ")
}

/// `12.3 s`.
pub fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}
