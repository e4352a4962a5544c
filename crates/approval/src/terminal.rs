//! The terminal approver: prints the question, reads `once` / `session` / `deny` from a line.

use crate::approver::{Approver, NoAnswer};
use async_trait::async_trait;
use kun_ports::{ApprovalDecision, ApprovalRequest};
use std::io::IsTerminal as _;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt as _, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _,
};
use tokio::sync::Mutex;

/// The longest answer line read; the rest of a longer line is garbage and denies.
const MAX_ANSWER: usize = 1_024;
/// The longest argument text shown in a prompt.
const MAX_SHOWN_ARGUMENTS: usize = 2_000;

/// Asks a person on a terminal. Generic over the reader and writer so tests use buffers.
///
/// Answers (case-insensitive, first word counts):
///
/// | typed | decision |
/// |---|---|
/// | `o`, `once`, `y`, `yes`, `allow` | `Allow` |
/// | `s`, `session` | `AllowForSession`; `Allow` (this call only) when the request's grant key is not session-grantable |
/// | `d`, `deny`, `n`, `no` (optionally followed by a reason) | `Deny` |
/// | anything else, an empty line | `Deny` (never guess a yes) |
/// | end of input | no answer: the gate denies |
///
/// The prompt says only what will happen: it offers `session` only when the request's
/// [`GrantKey`](kun_ports::GrantKey) can be granted for the session, names what such a grant
/// covers, and otherwise says the call can be allowed once only (a compound command has no
/// prefix a grant could safely cover). The echo after the answer repeats what was decided.
///
/// Questions are asked one at a time: concurrent requests wait their turn for the terminal.
/// If the gate times out while a read is pending, a line typed afterwards answers the next
/// question, so put prompts on a terminal only where a person is present.
#[derive(Debug)]
pub struct TerminalApprover<R, W> {
    io: Mutex<(R, W)>,
}

impl<R, W> TerminalApprover<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    /// Reads answers from `reader`, writes prompts to `writer`.
    #[must_use]
    pub fn new(reader: R, writer: W) -> Self {
        Self {
            io: Mutex::new((reader, writer)),
        }
    }

    async fn prompt(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, NoAnswer> {
        let mut io = self.io.lock().await;
        let (reader, writer) = &mut *io;
        writer
            .write_all(question(request).as_bytes())
            .await
            .map_err(failed)?;
        writer.flush().await.map_err(failed)?;
        let mut line = Vec::new();
        let read = reader
            .take(MAX_ANSWER as u64)
            .read_until(b'\n', &mut line)
            .await
            .map_err(failed)?;
        if read == 0 {
            return Err(NoAnswer::InputClosed);
        }
        let decision = if line.ends_with(b"\n") || read < MAX_ANSWER {
            granted_as_offered(
                parse_answer(&String::from_utf8_lossy(&line)),
                request.grant_key.session_grantable,
            )
        } else {
            skip_rest_of_line(reader).await.map_err(failed)?;
            ApprovalDecision::deny(
                "the answer at the terminal was too long, so the call was denied",
            )
        };
        let echo = match &decision {
            ApprovalDecision::Allow => "allowed once\n".to_owned(),
            ApprovalDecision::AllowForSession => {
                format!("allowed for this session: {}\n", grant_cover(request))
            }
            ApprovalDecision::Deny { .. } => "denied\n".to_owned(),
        };
        writer.write_all(echo.as_bytes()).await.map_err(failed)?;
        writer.flush().await.map_err(failed)?;
        Ok(decision)
    }
}

impl TerminalApprover<tokio::io::BufReader<tokio::io::Stdin>, tokio::io::Stderr> {
    /// Reads answers from stdin and prompts on stderr (stdout stays free for results), if both
    /// are terminals; `None` otherwise, so a piped or headless run never waits on a prompt.
    #[must_use]
    pub fn stdio_if_terminal() -> Option<Self> {
        let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        interactive.then(|| {
            Self::new(
                tokio::io::BufReader::new(tokio::io::stdin()),
                tokio::io::stderr(),
            )
        })
    }
}

#[async_trait]
impl<R, W> Approver for TerminalApprover<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    async fn ask(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, NoAnswer> {
        self.prompt(request).await
    }
}

/// Discards input up to and including the next newline, so an overlong answer cannot spill
/// into the next question.
async fn skip_rest_of_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<()> {
    let mut scratch = Vec::new();
    loop {
        scratch.clear();
        let read = (&mut *reader)
            .take(MAX_ANSWER as u64)
            .read_until(b'\n', &mut scratch)
            .await?;
        if read == 0 || scratch.ends_with(b"\n") {
            return Ok(());
        }
    }
}

fn failed(error: std::io::Error) -> NoAnswer {
    NoAnswer::Failed(format!("terminal I/O: {error}"))
}

/// The prompt for one request. Model-controlled text is shown with control characters
/// escaped, so arguments cannot move the cursor or recolour the terminal.
fn question(request: &ApprovalRequest) -> String {
    let mut arguments = request.arguments.to_string();
    if arguments.len() > MAX_SHOWN_ARGUMENTS {
        let mut cut = MAX_SHOWN_ARGUMENTS;
        while !arguments.is_char_boundary(cut) {
            cut -= 1;
        }
        arguments.truncate(cut);
        arguments.push_str(" …(truncated)");
    }
    let choices = if request.grant_key.session_grantable {
        format!(
            "  a session grant would cover: {}\n\
             allow [o]nce, allow for [s]ession, or [d]eny (optionally: d <reason>)? ",
            grant_cover(request)
        )
    } else {
        "  this call can be allowed once only: it has no command prefix a session grant could \
         safely cover, so you will be asked again next time\n\
         allow [o]nce or [d]eny (optionally: d <reason>)? "
            .to_owned()
    };
    let asker = request
        .delegated_agent
        .as_ref()
        .map(|agent| format!(", asked by the sub-agent {}", printable(agent)))
        .unwrap_or_default();
    format!(
        "\napproval needed: {tool} (call {call}{asker})\n  why: {why}\n  arguments: {args}\n{choices}",
        tool = printable(&request.tool_name),
        call = printable(&request.call_id),
        why = request.reason.describe(),
        args = printable(&arguments),
    )
}

/// What a session grant for `request` covers, for the prompt and the echo.
fn grant_cover(request: &ApprovalRequest) -> String {
    match &request.grant_key.scope {
        Some(scope) => format!(
            "{} `{}`",
            printable(&request.grant_key.tool_name),
            printable(scope)
        ),
        None => format!("every {} call", printable(&request.grant_key.tool_name)),
    }
}

/// A `session` answer to a request that cannot be granted for the session allows this call
/// only: the gate would record no grant, so the decision says what really happens.
fn granted_as_offered(decision: ApprovalDecision, session_grantable: bool) -> ApprovalDecision {
    match decision {
        ApprovalDecision::AllowForSession if !session_grantable => ApprovalDecision::Allow,
        other => other,
    }
}

fn printable(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || is_invisible_format(c) {
            shown.extend(c.escape_unicode());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// Zero-width and bidirectional-override characters: they can make text read differently
/// from what runs.
const fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// Turns a typed line into a decision; anything unrecognised denies.
fn parse_answer(line: &str) -> ApprovalDecision {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    match word.to_ascii_lowercase().as_str() {
        "o" | "once" | "y" | "yes" | "allow" => ApprovalDecision::Allow,
        "s" | "session" => ApprovalDecision::AllowForSession,
        "d" | "deny" | "n" | "no" => {
            let reason = rest.trim();
            ApprovalDecision::deny(if reason.is_empty() {
                "the user denied it at the terminal".to_owned()
            } else {
                printable(reason)
            })
        }
        "" => ApprovalDecision::deny("the user pressed Enter without choosing; denied by default"),
        _ => ApprovalDecision::deny(
            "the answer at the terminal was not once, session or deny, so the call was denied",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kun_ports::{ApprovalReason, GrantKey};
    use serde_json::json;

    #[test]
    fn answers_map_to_decisions() {
        let table = [
            ("o\n", ApprovalDecision::Allow),
            ("ONCE\n", ApprovalDecision::Allow),
            ("  yes  \n", ApprovalDecision::Allow),
            ("s\n", ApprovalDecision::AllowForSession),
            ("Session\r\n", ApprovalDecision::AllowForSession),
            (
                "d\n",
                ApprovalDecision::deny("the user denied it at the terminal"),
            ),
            ("deny   too risky \n", ApprovalDecision::deny("too risky")),
            (
                "no\n",
                ApprovalDecision::deny("the user denied it at the terminal"),
            ),
        ];
        for (typed, expected) in table {
            assert_eq!(parse_answer(typed), expected, "{typed:?}");
        }
    }

    #[test]
    fn garbage_and_empty_lines_deny() {
        for typed in [
            "\n",
            "maybe\n",
            "oo\n",
            "sessions\n",
            "\u{1b}[A\n",
            "yes-please\n",
        ] {
            assert!(
                matches!(
                    parse_answer(typed),
                    ApprovalDecision::Deny { reason: Some(_) }
                ),
                "{typed:?}"
            );
        }
    }

    #[test]
    fn the_question_escapes_control_characters_and_truncates() {
        let request = ApprovalRequest {
            approval_id: "appr_1".to_owned(),
            thread_id: "t".to_owned(),
            turn_id: "u".to_owned(),
            call_id: "c1".to_owned(),
            tool_name: "bash".to_owned(),
            arguments: json!({"command": "echo \u{1b}[2J \u{202e}", "pad": "é".repeat(3_000)}),
            reason: ApprovalReason::UnconfinedCommand,
            grant_key: GrantKey::scoped("bash", "echo\u{1b}"),
            delegated_agent: None,
        };
        let text = question(&request);
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(text.contains("\\u{202e}"), "{text}");
        assert!(text.contains("bash `echo\\u{1b}`"), "{text}");
        assert!(text.contains("(truncated)"));
        assert!(text.len() < 2_600, "{}", text.len());
        assert!(text.contains(ApprovalReason::UnconfinedCommand.describe()));
    }

    fn request(grant_key: GrantKey) -> ApprovalRequest {
        ApprovalRequest {
            approval_id: "appr_1".to_owned(),
            thread_id: "t".to_owned(),
            turn_id: "u".to_owned(),
            call_id: "c1".to_owned(),
            tool_name: "bash".to_owned(),
            arguments: json!({"command": "make && rm -rf build"}),
            reason: ApprovalReason::UnconfinedCommand,
            grant_key,
            delegated_agent: None,
        }
    }

    async fn answer(request: &ApprovalRequest, typed: &str) -> (ApprovalDecision, String) {
        let mut screen = Vec::new();
        let decision = TerminalApprover::new(typed.as_bytes(), &mut screen)
            .prompt(request)
            .await
            .unwrap();
        (decision, String::from_utf8(screen).unwrap())
    }

    #[tokio::test]
    async fn a_compound_command_is_never_promised_a_session_grant() {
        let compound = request(GrantKey::one_call_only("bash"));
        let (decision, screen) = answer(&compound, "s\n").await;
        assert_eq!(decision, ApprovalDecision::Allow, "{screen}");
        assert!(!screen.contains("[s]ession"), "{screen}");
        assert!(!screen.contains("session grant would cover"), "{screen}");
        assert!(screen.contains("allowed once only"), "{screen}");
        assert!(screen.ends_with("allowed once\n"), "{screen}");

        let plain = request(GrantKey::scoped("bash", "cargo test"));
        let (decision, screen) = answer(&plain, "s\n").await;
        assert_eq!(decision, ApprovalDecision::AllowForSession);
        assert!(screen.contains("allow for [s]ession"), "{screen}");
        assert!(
            screen.ends_with("allowed for this session: bash `cargo test`\n"),
            "{screen}"
        );
    }
}
