//! Running one command line to its end through the accumulator: what `bash` and
//! `verify_changes` share.

use super::ShellConfig;
use super::process::{self, Ending, Finished, Stream};
use crate::Failure;
use crate::output::{OutputAccumulator, OutputSnapshot, Utf8Chunker};
use kun_ports::{CommandConfinement, ErrorCode, ToolContext};
use serde_json::{Map, Value, json};
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

impl CommandRun {
    /// `{exit_code, output, truncated, full_output_path?, notice?, duration_ms}`.
    pub(crate) fn fields(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("exit_code".into(), json!(self.finished.ending.exit_code()));
        map.insert("output".into(), json!(self.snapshot.text));
        map.insert("truncated".into(), json!(self.snapshot.truncated));
        if let Some(path) = &self.snapshot.full_output_path {
            map.insert("full_output_path".into(), json!(path.display().to_string()));
        }
        if let Some(notice) = &self.snapshot.notice {
            map.insert("notice".into(), json!(notice));
        }
        map.insert(
            "duration_ms".into(),
            json!(duration_ms(self.finished.duration)),
        );
        map
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
    Some(
        run.fields()
            .into_iter()
            .fold(failure, |failure, (key, value)| failure.with(&key, value)),
    )
}
