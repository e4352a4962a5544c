//! Command hooks: run the command, then read its exit the way Claude Code does (the exit
//! table is in [`crate::protocol`]).

use crate::config::CommandHook;
use crate::process::{Exit, Finished, RunError, run_shell};
use crate::protocol::{HookReply, HookRequest, Verdict};
use kun_ports::HookPhase;
use serde_json::Value;

/// The exit code that blocks (Claude Code's convention).
pub(crate) const BLOCKING_EXIT_CODE: i32 = 2;

/// Exit codes from this one up are a shell reporting that its command died by a signal
/// (`128 + n`: 139 is a segmentation fault, 137 a SIGKILL): a crash, not an answer.
pub(crate) const FIRST_CRASH_EXIT_CODE: i32 = 128;

/// At most this much stderr is quoted in a reason or warning.
const QUOTE_LIMIT: usize = 2000;

/// Runs a command hook.
///
/// # Errors
/// A message for [`kun_ports::HookFailure`] when the hook could not start, was killed by a
/// signal (directly, or inside `sh -c`, which reports exit 128 + the signal), or timed out
/// (its process group is killed then).
pub(crate) async fn run_command_hook(
    hook: &CommandHook,
    label: &str,
    request: &HookRequest<'_>,
) -> Result<HookReply, String> {
    let phase = request.phase.as_str();
    let input = request.command_input().to_string().into_bytes();
    let finished = run_shell(&hook.command, &request.turn.cwd, input, hook.timeout)
        .await
        .map_err(|err| match err {
            RunError::TimedOut(limit) => format!(
                "{phase} hook `{label}` did not finish within {}; its process group was killed. \
                 Make the hook faster or raise its `timeout` (seconds).",
                seconds(limit)
            ),
            RunError::Spawn(_) | RunError::Wait(_) => {
                format!("{phase} hook `{label}` could not run: {err}")
            }
        })?;
    read_exit(request.phase, label, &finished)
}

fn read_exit(phase: HookPhase, label: &str, run: &Finished) -> Result<HookReply, String> {
    let name = phase.as_str();
    match run.exit {
        Exit::Signal(signal) => Err(format!(
            "{name} hook `{label}` was killed by signal {signal}"
        )),
        Exit::Code(code) if code >= FIRST_CRASH_EXIT_CODE => {
            let stderr = quote(&run.stderr.text());
            let detail = if stderr.is_empty() {
                String::new()
            } else {
                format!("; stderr: {stderr}")
            };
            let signal = code - FIRST_CRASH_EXIT_CODE;
            Err(format!(
                "{name} hook `{label}` crashed: it exited with code {code}, which is how a shell \
                 reports a command killed by signal {signal}{detail}"
            ))
        }
        Exit::Code(0) => Ok(read_stdout(phase, label, run)),
        Exit::Code(BLOCKING_EXIT_CODE) => {
            let stderr = quote(&run.stderr.text());
            let reason = if stderr.is_empty() {
                format!("a {name} hook blocked this (exit 2) without a reason on stderr")
            } else {
                stderr
            };
            Ok(HookReply {
                verdict: Verdict::Block { reason },
                ..HookReply::default()
            })
        }
        Exit::Code(code) => {
            let stderr = quote(&run.stderr.text());
            let detail = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {stderr}")
            };
            Ok(HookReply::warning(format!(
                "{name} hook `{label}` exited with code {code}; the call went on{detail}"
            )))
        }
    }
}

fn read_stdout(phase: HookPhase, label: &str, run: &Finished) -> HookReply {
    let name = phase.as_str();
    let text = run.stdout.text();
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return HookReply::default();
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Object(answer)) => HookReply::from_json(phase, label, &answer),
        Ok(_) => HookReply::warning(format!(
            "{name} hook `{label}` printed JSON that is not an object; it was ignored"
        )),
        Err(_) if matches!(phase, HookPhase::UserPromptSubmit | HookPhase::TurnStart) => {
            HookReply {
                context: Some(quote(trimmed)),
                ..HookReply::default()
            }
        }
        Err(_) => {
            let cut = if run.stdout.truncated {
                " (it was also longer than the capture limit)"
            } else {
                ""
            };
            HookReply::warning(format!(
                "{name} hook `{label}` printed output that is not JSON{cut}; it was ignored. \
                 Print a JSON object, or nothing."
            ))
        }
    }
}

/// Trims and cuts text for quoting.
fn quote(text: &str) -> String {
    let trimmed = text.trim();
    if trimmed.len() <= QUOTE_LIMIT {
        return trimmed.to_owned();
    }
    let mut end = QUOTE_LIMIT;
    while !trimmed.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &trimmed[..end])
}

fn seconds(limit: std::time::Duration) -> String {
    let secs = limit.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}s")
    } else {
        format!("{secs}s")
    }
}
