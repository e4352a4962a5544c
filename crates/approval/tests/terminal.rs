//! The terminal approver with in-memory input and output.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use kun_approval::{Gate, TerminalApprover};
use kun_ports::testkit::approval_request;
use kun_ports::{ApprovalDecision, ApprovalGate};
use std::io::{self, Cursor};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;

/// An output buffer the test can read after the gate has written to it.
#[derive(Clone, Default)]
struct Screen(Arc<Mutex<Vec<u8>>>);

impl Screen {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

impl AsyncWrite for Screen {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// A terminal whose output is gone (a closed pty).
struct BrokenScreen;

impl AsyncWrite for BrokenScreen {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, _: &[u8]) -> Poll<io::Result<usize>> {
        Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "pty closed")))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

type BufferTerminal = Gate<TerminalApprover<Cursor<Vec<u8>>, Screen>>;

fn terminal(typed: &str) -> (BufferTerminal, Screen) {
    let screen = Screen::default();
    let approver = TerminalApprover::new(Cursor::new(typed.as_bytes().to_vec()), screen.clone());
    (Gate::new(approver), screen)
}

fn denial_reason(decision: ApprovalDecision) -> String {
    match decision {
        ApprovalDecision::Deny {
            reason: Some(reason),
        } => reason,
        other => panic!("expected a denial with a reason, got {other:?}"),
    }
}

#[tokio::test]
async fn the_prompt_shows_the_call_and_the_choices() {
    let (gate, screen) = terminal("o\n");
    let request = approval_request(7, "bash", Some("cargo test"));
    assert_eq!(
        gate.request_approval(&request).await,
        ApprovalDecision::Allow
    );
    let shown = screen.text();
    for needle in [
        "approval needed: bash (call call-7)",
        request.reason.describe(),
        r#""command":"cargo test --flag-7""#,
        "allow for session would also allow: later `bash` commands made only of `cargo test`, with plain arguments",
        "allow [o]nce, allow for [s]ession, or [d]eny",
        "allowed once",
    ] {
        assert!(shown.contains(needle), "{needle:?} missing from:\n{shown}");
    }
}

#[tokio::test]
async fn answers_are_read_one_line_per_question() {
    let (gate, screen) = terminal("session\nd too broad\nyes\n");
    let decisions = [
        gate.request_approval(&approval_request(1, "bash", Some("make")))
            .await,
        // Covered by the session grant: no prompt, no line read.
        gate.request_approval(&approval_request(2, "bash", Some("make")))
            .await,
        gate.request_approval(&approval_request(3, "bash", Some("rm")))
            .await,
        gate.request_approval(&approval_request(4, "write", None))
            .await,
    ];
    assert_eq!(
        decisions,
        [
            ApprovalDecision::AllowForSession,
            ApprovalDecision::Allow,
            ApprovalDecision::deny("too broad"),
            ApprovalDecision::Allow,
        ]
    );
    assert_eq!(screen.text().matches("approval needed:").count(), 3);
    assert!(
        screen
            .text()
            .contains("allow for session would also allow: every later `write` call")
    );
}

#[tokio::test]
async fn end_of_input_denies_and_says_so() {
    let (gate, _screen) = terminal("");
    let reason = denial_reason(
        gate.request_approval(&approval_request(1, "bash", None))
            .await,
    );
    assert!(reason.contains("terminal input closed"), "{reason}");
}

#[tokio::test]
async fn garbage_denies() {
    let (gate, screen) = terminal("sure thing\n\u{0}\u{1b}[A\n");
    for n in 0..2 {
        let reason = denial_reason(
            gate.request_approval(&approval_request(n, "bash", None))
                .await,
        );
        assert!(reason.contains("not once, session or deny"), "{reason}");
    }
    assert_eq!(screen.text().matches("denied").count(), 2);
}

#[tokio::test]
async fn an_overlong_line_denies_and_does_not_spill_into_the_next_question() {
    let (gate, _screen) = terminal(&format!("y{}\nonce\n", " ".repeat(5_000)));
    let reason = denial_reason(
        gate.request_approval(&approval_request(1, "bash", None))
            .await,
    );
    assert!(reason.contains("too long"), "{reason}");
    assert_eq!(
        gate.request_approval(&approval_request(2, "bash", None))
            .await,
        ApprovalDecision::Allow
    );
}

#[tokio::test]
async fn a_broken_terminal_denies() {
    let gate = Gate::new(TerminalApprover::new(
        Cursor::new(b"yes\n".to_vec()),
        BrokenScreen,
    ));
    let reason = denial_reason(
        gate.request_approval(&approval_request(1, "bash", None))
            .await,
    );
    assert!(
        reason.contains("the approver failed (terminal I/O: pty closed)"),
        "{reason}"
    );
}
