//! Running one command line to its end through the accumulator: what `bash` and
//! `verify_changes` share.

use super::ShellConfig;
use super::process::{self, Ending, Finished, Stream};
use crate::Failure;
use crate::output::{OutputAccumulator, OutputSnapshot, Utf8Chunker};
use kun_ports::{CommandConfinement, ErrorCode, ToolContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::Duration;

/// Whether live output is forwarded to the call's progress sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProgressForwarding {
    /// Each chunk goes to [`ToolContext::report`] as `{"output": text}` (the default).
    #[default]
    Forward,
    /// Nothing is forwarded.
    Silent,
}

/// A command line that ran to an end.
#[derive(Debug)]
pub(crate) struct CommandRun {
    pub(crate) finished: Finished,
    pub(crate) snapshot: OutputSnapshot,
}

/// What a command printed (stdout and stderr, interleaved), within the limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CapturedOutput {
    /// The output; its last lines when it was longer than the limits.
    pub output: String,
    /// What was cut and where the whole output is, when it was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// The file holding the whole output, when it was longer than the limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// How long the command ran, in milliseconds.
    pub duration_ms: u64,
}

impl CapturedOutput {
    /// The output for the model: the notice (the cut is at the top), then the text without
    /// its final newline.
    pub(crate) fn render_into(&self, text: &mut String) {
        if let Some(notice) = &self.notice {
            text.push_str(notice);
            text.push('\n');
        }
        text.push_str(self.output.trim_end_matches('\n'));
    }
}

impl CommandRun {
    /// What the command printed.
    pub(crate) fn captured(&self) -> CapturedOutput {
        CapturedOutput {
            output: self.snapshot.text.clone(),
            notice: self.snapshot.notice.clone(),
            full_output_path: self
                .snapshot
                .full_output_path
                .as_ref()
                .map(|path| path.display().to_string()),
            duration_ms: duration_ms(self.finished.duration),
        }
    }
}

/// Milliseconds, saturating.
pub(crate) fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The timeout of one call: the configured default, or the requested seconds capped at the
/// configured maximum.
///
/// # Errors
/// `invalid_arguments` for zero seconds.
pub(crate) fn call_timeout(
    config: &ShellConfig,
    requested: Option<u64>,
) -> Result<Duration, Failure> {
    match requested {
        None => Ok(config.timeouts.default),
        Some(0) => Err(Failure::invalid("timeout_seconds must be at least 1")),
        Some(seconds) => Ok(Duration::from_secs(seconds).min(config.timeouts.max)),
    }
}

/// Runs `script` with the shell in the primary workspace root, confined, under `timeout` and
/// the turn's abort signal, through an accumulator with the configured limits; `observe` sees
/// every chunk too.
///
/// # Errors
/// When the command cannot be confined or started.
pub(crate) async fn run_script(
    script: &str,
    ctx: &ToolContext<'_>,
    config: &ShellConfig,
    confinement: &dyn CommandConfinement,
    timeout: Duration,
    observe: &mut (dyn FnMut(&[u8]) + Send),
) -> Result<CommandRun, Failure> {
    let spec = process::shell_spec(script, &ctx.turn, config);
    let running = process::spawn(&spec, confinement)?;
    let mut output = OutputAccumulator::with_spill(config.limits, config.spill.clone());
    let mut live = Utf8Chunker::new();
    let finished = running
        .drive(timeout, ctx.turn.abort, |_stream: Stream, chunk: &[u8]| {
            output.push(chunk);
            observe(chunk);
            if config.progress == ProgressForwarding::Forward {
                let text = live.decode(chunk);
                if !text.is_empty() {
                    ctx.report(&json!({ "output": text }));
                }
            }
        })
        .await;
    Ok(CommandRun {
        finished,
        snapshot: output.snapshot(),
    })
}

/// The error result of a run that did not exit by itself, with the output so far; `None` when
/// it exited.
pub(crate) fn abnormal_end(run: &CommandRun, timeout: Duration) -> Option<Failure> {
    let failure = match &run.finished.ending {
        Ending::Exited(_) => return None,
        Ending::TimedOut => Failure::coded(
            ErrorCode::ToolTimeout,
            format!(
                "the command was still running after {} seconds, so it and every process it started \
                 were killed; pass a larger timeout_seconds, or start long-running work with \
                 background_shell",
                timeout.as_secs()
            ),
        )
        .with("timeout_seconds", timeout.as_secs()),
        Ending::Aborted => Failure::new(
            "the turn was aborted, so the command and every process it started were killed",
        ),
        Ending::Lost(err) => Failure::new(format!(
            "lost track of the command ({err}); it and every process it started were killed"
        )),
    };
    let fields = match serde_json::to_value(run.captured()) {
        Ok(Value::Object(fields)) => fields,
        _ => serde_json::Map::new(),
    };
    Some(
        fields
            .into_iter()
            .fold(failure, |failure, (key, value)| failure.with(&key, value)),
    )
}
