//! `verify_changes`: run the project's checks and summarise what failed.
//!
//! Detection, in the primary workspace root (all that apply, in this order):
//!
//! | file | checks |
//! |---|---|
//! | `Cargo.toml` | `cargo check --all-targets`, `cargo test` (see [`CargoChecks`]) |
//! | `package.json` | `npm test` when it has a real `test` script; `npx --no-install tsc --noEmit` when `tsconfig.json` exists |
//! | `pyproject.toml` | `python -m pytest -q` (`python3` when there is no `python`) |
//!
//! [`CheckSource::Configured`] replaces detection. Each check runs like `bash` (shell, process
//! group, scrubbed environment, confinement, timeout, abort) and is summarised by its exit
//! code, its first error-looking lines (seen anywhere in the stream, not only in the tail) and
//! the tail of its output.

use super::ShellConfig;
use super::process::Ending;
use super::run::{call_timeout, duration_ms, run_script};
use crate::output::truncate_tail;
use crate::{Failure, Outcome, OutputLimits, finish, parse_args, schema_for};
use async_trait::async_trait;
use kun_ports::{
    CommandConfinement, SideEffect, Tool, ToolContext, ToolError, ToolKind, ToolPolicy, ToolResult,
    ToolSpec,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Markers of an error line in compiler, test-runner and interpreter output.
const ERROR_MARKERS: &[&str] = &[
    "error[",
    "error:",
    "Error:",
    "ERROR",
    "FAILED",
    "FAIL ",
    "Traceback",
    "panicked at",
    "npm ERR!",
    "AssertionError",
    "✕",
    "✗",
];
/// Longest line the scanner keeps (longer ones are cut).
const MAX_SCANNED_LINE: usize = 1_000;

/// Which cargo commands a Rust project is checked with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CargoChecks {
    /// `cargo check --all-targets`.
    Check,
    /// `cargo test`.
    Test,
    /// Both, check first (the default).
    #[default]
    CheckAndTest,
}

/// Where the checks come from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CheckSource {
    /// Detected from the project files (the default); see the module docs.
    #[default]
    Detect,
    /// These command lines, in order.
    Configured(Vec<String>),
}

/// How `verify_changes` finds and reports checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyConfig {
    /// Detected or configured checks.
    pub source: CheckSource,
    /// The cargo commands for Rust projects.
    pub cargo: CargoChecks,
    /// At most this many error lines per failed check (default 10).
    pub summary_lines: usize,
    /// The tail of each check's output in the result (default 60 lines / 8 KiB).
    pub tail_limits: OutputLimits,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        Self {
            source: CheckSource::Detect,
            cargo: CargoChecks::default(),
            summary_lines: 10,
            tail_limits: OutputLimits::new(60, 8 * 1024),
        }
    }
}

/// The command lines of the checks detected in `root`; see the module docs.
#[must_use]
pub fn detect_checks(root: &Path, cargo: CargoChecks) -> Vec<String> {
    let mut checks = Vec::new();
    if root.join("Cargo.toml").is_file() {
        if matches!(cargo, CargoChecks::Check | CargoChecks::CheckAndTest) {
            checks.push("cargo check --all-targets".to_owned());
        }
        if matches!(cargo, CargoChecks::Test | CargoChecks::CheckAndTest) {
            checks.push("cargo test".to_owned());
        }
    }
    if let Ok(text) = std::fs::read_to_string(root.join("package.json")) {
        let manifest: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let test = manifest.pointer("/scripts/test").and_then(Value::as_str);
        // `npm init` writes a placeholder test script that always fails.
        if test.is_some_and(|script| !script.contains("no test specified")) {
            checks.push("npm test".to_owned());
        }
        if root.join("tsconfig.json").is_file() {
            checks.push("npx --no-install tsc --noEmit".to_owned());
        }
    }
    if root.join("pyproject.toml").is_file() {
        let python = if super::find_on_path("python").is_some() {
            "python"
        } else {
            "python3"
        };
        checks.push(format!("{python} -m pytest -q"));
    }
    checks
}

/// The arguments of `verify_changes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct VerifyArgs {
    /// Stop each check (and everything it started) after this many seconds. Default 900.
    timeout_seconds: Option<u64>,
}

/// Collects the first error-looking lines of a stream.
#[derive(Debug)]
struct ErrorLines {
    partial: Vec<u8>,
    found: Vec<String>,
    max: usize,
}

impl ErrorLines {
    fn new(max: usize) -> Self {
        Self {
            partial: Vec::new(),
            found: Vec::new(),
            max,
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
            self.extend_partial(&rest[..newline]);
            self.end_line();
            rest = &rest[newline + 1..];
        }
        self.extend_partial(rest);
    }

    fn extend_partial(&mut self, bytes: &[u8]) {
        let room = MAX_SCANNED_LINE.saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn end_line(&mut self) {
        if self.found.len() < self.max {
            let line = String::from_utf8_lossy(&self.partial);
            let line = line.trim_end();
            if ERROR_MARKERS.iter().any(|marker| line.contains(marker)) {
                self.found.push(line.to_owned());
            }
        }
        self.partial.clear();
    }

    fn finish(mut self) -> Vec<String> {
        if !self.partial.is_empty() {
            self.end_line();
        }
        self.found
    }
}

/// The `verify_changes` tool (command_execution, on-request). Output:
/// `{checks: [{command, exit_code, passed, summary, output_tail, full_output_path?}], passed}`;
/// an error result when a check failed.
pub struct VerifyChangesTool {
    spec: ToolSpec,
    shell: ShellConfig,
    verify: VerifyConfig,
    confinement: Arc<dyn CommandConfinement>,
}

impl fmt::Debug for VerifyChangesTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifyChangesTool")
            .field("verify", &self.verify)
            .finish_non_exhaustive()
    }
}

impl VerifyChangesTool {
    /// A `verify_changes` tool with the default configuration.
    #[must_use]
    pub fn new(confinement: Arc<dyn CommandConfinement>) -> Self {
        Self::with_config(confinement, ShellConfig::default(), VerifyConfig::default())
    }

    /// A `verify_changes` tool with explicit configurations.
    #[must_use]
    pub fn with_config(
        confinement: Arc<dyn CommandConfinement>,
        shell: ShellConfig,
        verify: VerifyConfig,
    ) -> Self {
        let description = "Run the project's checks (build, type check, tests) and summarise failures. Checks are \
                           detected from Cargo.toml, package.json and pyproject.toml in the workspace root, or \
                           configured by the host. Each result has the command, exit code, the first error lines \
                           and the tail of the output. Run it after changing code.";
        let spec = ToolSpec::new("verify_changes", description, schema_for::<VerifyArgs>())
            .with_kind(ToolKind::CommandExecution)
            .with_command_runner(kun_ports::CommandRunner::Confinement)
            .with_policy(ToolPolicy::OnRequest)
            .with_side_effect(SideEffect::Unknown);
        Self {
            spec,
            shell,
            verify,
            confinement,
        }
    }

    async fn run(&self, arguments: Value, ctx: &ToolContext<'_>) -> Outcome {
        let args: VerifyArgs = parse_args("verify_changes", arguments)?;
        let timeout = call_timeout(&self.shell, args.timeout_seconds)?;
        let root = ctx.turn.primary_root();
        let commands = match &self.verify.source {
            CheckSource::Detect => detect_checks(root, self.verify.cargo),
            CheckSource::Configured(commands) => commands.clone(),
        };
        if commands.is_empty() {
            return Err(Failure::new(format!(
                "found no checks to run in {}: there is no Cargo.toml, package.json with a test script or \
                 tsconfig.json, or pyproject.toml; run the project's checks with bash instead",
                root.display()
            )));
        }
        let mut checks = Vec::with_capacity(commands.len());
        for command in &commands {
            if ctx.is_aborted() {
                return Err(Failure::new("the turn was aborted before every check ran"));
            }
            checks.push(self.check(command, ctx, timeout).await?);
        }
        let passed = checks
            .iter()
            .all(|check| check["passed"] == Value::Bool(true));
        Ok(json!({ "checks": checks, "passed": passed }))
    }

    async fn check(
        &self,
        command: &str,
        ctx: &ToolContext<'_>,
        timeout: std::time::Duration,
    ) -> Outcome {
        let mut errors = ErrorLines::new(self.verify.summary_lines);
        let mut observe = |chunk: &[u8]| errors.push(chunk);
        let run = run_script(
            command,
            ctx,
            &self.shell,
            self.confinement.as_ref(),
            timeout,
            &mut observe,
        )
        .await?;
        let exit_code = run.finished.ending.exit_code();
        let error_lines = errors.finish();
        let summary = match (&run.finished.ending, exit_code) {
            (Ending::Aborted, _) => {
                return Err(Failure::new(
                    "the turn was aborted while the checks ran; the running check was killed",
                )
                .with("command", command));
            }
            (Ending::TimedOut, _) => {
                format!("timed out after {} s and was killed", timeout.as_secs())
            }
            (_, Some(0)) => "passed".to_owned(),
            (_, Some(code)) if error_lines.is_empty() => {
                format!("failed with exit code {code}; no error lines recognised, see output_tail")
            }
            (_, Some(code)) => format!("failed with exit code {code}:\n{}", error_lines.join("\n")),
            (Ending::Lost(err), None) => format!("lost track of the check: {err}"),
            (_, None) => "did not finish".to_owned(),
        };
        let tail = truncate_tail(&run.snapshot.text, self.verify.tail_limits);
        let mut result = json!({
            "command": command,
            "exit_code": exit_code,
            "passed": exit_code == Some(0),
            "summary": summary,
            "output_tail": tail.content,
            "duration_ms": duration_ms(run.finished.duration),
        });
        if let Some(path) = &run.snapshot.full_output_path {
            result["full_output_path"] = json!(path.display().to_string());
        }
        Ok(result)
    }
}

#[async_trait]
impl Tool for VerifyChangesTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        let mut result = finish(self.run(arguments, &ctx).await);
        if !result.is_error {
            result.is_error = result.output["passed"] != Value::Bool(true);
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_lines_span_chunks_and_stop_at_the_maximum() {
        let mut errors = ErrorLines::new(2);
        errors.push(b"ok\nerr");
        errors.push(b"or: first\nnothing\nerror[E0308]: second\nFAILED third\n");
        assert_eq!(
            errors.finish(),
            vec!["error: first", "error[E0308]: second"]
        );
    }

    #[test]
    fn a_last_line_without_newline_counts() {
        let mut errors = ErrorLines::new(5);
        errors.push(b"Traceback (most recent call last)");
        assert_eq!(errors.finish(), vec!["Traceback (most recent call last)"]);
    }

    #[test]
    fn detection_follows_the_project_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(detect_checks(dir.path(), CargoChecks::default()).is_empty());
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\n").unwrap();
        assert_eq!(
            detect_checks(dir.path(), CargoChecks::Check),
            vec!["cargo check --all-targets"]
        );
        std::fs::write(
            dir.path().join("package.json"),
            r#"{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}"#,
        )
        .unwrap();
        assert_eq!(
            detect_checks(dir.path(), CargoChecks::Test),
            vec!["cargo test"]
        );
        std::fs::write(
            dir.path().join("package.json"),
            r#"{"scripts":{"test":"jest"}}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("tsconfig.json"), "{}").unwrap();
        assert_eq!(
            detect_checks(dir.path(), CargoChecks::CheckAndTest),
            vec![
                "cargo check --all-targets",
                "cargo test",
                "npm test",
                "npx --no-install tsc --noEmit"
            ]
        );
    }
}
