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
//! group, allow-listed environment, confinement, timeout, abort) and is summarised by its exit
//! code, its first error-looking lines (seen anywhere in the stream, not only in the tail) and
//! the tail of its output.
//!
//! With no check to run the call fails with `no_checks_found` in the host's preflight (step
//! 10b), before anyone is asked to approve it. The model reads one line per check
//! (`PASS cargo check --all-targets`, `FAIL cargo test: exit code 101`), each failure
//! followed by its error lines (or, when none were recognised, the tail of its output) and
//! the path of the full output when it was saved.

use super::ShellConfig;
use super::process::Ending;
use super::run::{Runner, call_timeout, duration_ms, run_script};
use crate::output::truncate_tail;
use crate::{Failure, OutputLimits};
use async_trait::async_trait;
use kun_ports::{
    CommandConfinement, ErrorCode, SandboxRequest, SideEffect, ToolContext, ToolHostContext,
    ToolKind, ToolPolicy, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::fmt::Write as _;
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

/// A manifest's text, when it is a regular file of at most 1 MiB opened beneath `root`
/// through no link: a repository's `package.json` linked to `/dev/zero` or made a FIFO must
/// neither hang nor exhaust memory.
fn read_manifest(root: &Path, name: &str) -> Option<String> {
    use std::io::Read;
    const MAX_MANIFEST: u64 = 1 << 20;
    let root = root.canonicalize().ok()?;
    let at = crate::fs::beneath::Beneath::locate(&root.join(name), [&root]);
    let file = crate::fs::open_beneath(&at).ok()?;
    if file.metadata().ok()?.len() > MAX_MANIFEST {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_MANIFEST).read_to_string(&mut text).ok()?;
    Some(text)
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
    if let Some(text) = read_manifest(root, "package.json") {
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
pub struct VerifyArgs {
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

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckResult {
    /// The command line.
    pub command: String,
    /// Its exit code, when it exited by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Whether it exited with 0.
    pub passed: bool,
    /// `passed`, or what failed: the exit code and the first error lines.
    pub summary: String,
    /// The error-looking lines found in its output (at most the configured number).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_lines: Vec<String>,
    /// The last lines of its output.
    pub output_tail: String,
    /// The file holding its whole output, when it outgrew the limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
}

/// What `verify_changes` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VerifyOutput {
    /// Each check, in the order run.
    pub checks: Vec<CheckResult>,
    /// Whether every check passed.
    pub passed: bool,
}

/// What the model reads (see the module docs).
fn render(output: &VerifyOutput) -> String {
    let mut text = String::new();
    for check in &output.checks {
        if !text.is_empty() {
            text.push('\n');
        }
        if check.passed {
            let _ = write!(text, "PASS {}", check.command);
            continue;
        }
        let why = match check.exit_code {
            Some(code) => format!("exit code {code}"),
            None => check.summary.lines().next().unwrap_or_default().to_owned(),
        };
        let _ = write!(text, "FAIL {}: {why}", check.command);
        let detail = if check.error_lines.is_empty() {
            check.output_tail.trim_end_matches('\n')
        } else {
            ""
        };
        for line in check
            .error_lines
            .iter()
            .map(String::as_str)
            .chain(detail.lines())
        {
            let _ = write!(text, "\n  {line}");
        }
        if let Some(path) = &check.full_output_path {
            let _ = write!(text, "\n  full output: {path}");
        }
    }
    text
}

/// The `verify_changes` tool (command_execution, on-request). Output: [`VerifyOutput`]; an
/// error result (with the output) when a check failed, `no_checks_found` when there is none.
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
        let spec = ToolSpec::typed::<VerifyArgs, VerifyOutput>("verify_changes", description)
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

    /// The checks to run in `root`, or `no_checks_found`.
    fn checks(&self, root: &std::path::Path) -> Result<Vec<String>, Failure> {
        let commands = match &self.verify.source {
            CheckSource::Detect => detect_checks(root, self.verify.cargo),
            CheckSource::Configured(commands) => commands.clone(),
        };
        if commands.is_empty() {
            return Err(Failure::coded(
                ErrorCode::NoChecksFound,
                "found no checks to run in the workspace root: there is no Cargo.toml, package.json \
                 with a test script or tsconfig.json, or pyproject.toml; run the project's checks \
                 with bash instead",
            ));
        }
        Ok(commands)
    }

    async fn verify(
        &self,
        args: VerifyArgs,
        ctx: &ToolContext<'_>,
    ) -> Result<VerifyOutput, Failure> {
        let timeout = call_timeout(&self.shell, args.timeout_seconds)?;
        let commands = self.checks(ctx.turn.primary_root())?;
        let mut checks = Vec::with_capacity(commands.len());
        for command in &commands {
            if ctx.is_aborted() {
                return Err(Failure::new("the turn was aborted before every check ran"));
            }
            checks.push(self.check(command, ctx, timeout).await?);
        }
        let passed = checks.iter().all(|check| check.passed);
        Ok(VerifyOutput { checks, passed })
    }

    async fn check(
        &self,
        command: &str,
        ctx: &ToolContext<'_>,
        timeout: std::time::Duration,
    ) -> Result<CheckResult, Failure> {
        let mut errors = ErrorLines::new(self.verify.summary_lines);
        let mut observe = |chunk: &[u8]| errors.push(chunk);
        let run = run_script(
            command,
            ctx,
            &self.shell,
            Runner {
                confinement: self.confinement.as_ref(),
                request: SandboxRequest::Confined,
            },
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
        let passed = exit_code == Some(0);
        Ok(CheckResult {
            command: command.to_owned(),
            exit_code,
            passed,
            summary,
            error_lines: if passed { Vec::new() } else { error_lines },
            output_tail: tail.content,
            full_output_path: run
                .snapshot
                .full_output_path
                .as_ref()
                .map(|path| path.display().to_string()),
            duration_ms: duration_ms(run.finished.duration),
        })
    }
}

#[async_trait]
impl TypedTool for VerifyChangesTool {
    type Args = VerifyArgs;
    type Output = VerifyOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &VerifyOutput) -> String {
        render(output)
    }

    /// A failed check.
    fn is_error(&self, output: &VerifyOutput) -> bool {
        !output.passed
    }

    /// No checks to run: `no_checks_found`, before anyone is asked.
    fn preflight(&self, _args: &VerifyArgs, ctx: &ToolHostContext) -> Result<(), Failure> {
        self.checks(ctx.primary_root()).map(drop)
    }

    async fn run(&self, args: VerifyArgs, ctx: ToolContext<'_>) -> Result<VerifyOutput, Failure> {
        self.verify(args, &ctx).await
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

    #[test]
    fn a_hostile_package_json_neither_hangs_nor_fills_memory() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("package.json");
        // Linked to an endless device, to a real manifest outside, and a FIFO nobody writes.
        std::os::unix::fs::symlink("/dev/zero", &manifest).unwrap();
        assert!(detect_checks(dir.path(), CargoChecks::default()).is_empty());
        std::fs::remove_file(&manifest).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(
            outside.path().join("p.json"),
            r#"{"scripts":{"test":"jest"}}"#,
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path().join("p.json"), &manifest).unwrap();
        assert!(detect_checks(dir.path(), CargoChecks::default()).is_empty());
        std::fs::remove_file(&manifest).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &manifest,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        assert!(detect_checks(dir.path(), CargoChecks::default()).is_empty());
        // Too large to be a manifest.
        std::fs::remove_file(&manifest).unwrap();
        let mut big = String::from(r#"{"scripts":{"test":"jest"},"pad":""#);
        big.push_str(&"x".repeat(2 << 20));
        big.push_str("\"}");
        std::fs::write(&manifest, big).unwrap();
        assert!(detect_checks(dir.path(), CargoChecks::default()).is_empty());
    }
}
