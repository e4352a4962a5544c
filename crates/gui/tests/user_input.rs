//! `user_input` and `request_user_input`: the terminal channel runs the contract; the tools,
//! through a real host, are listed everywhere (plan mode, every surface), skip the sandbox
//! and approval, and say clearly when nobody can be asked.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use async_trait::async_trait;
use kun_gui::{TerminalUserInput, UserInputProvider};
use kun_ports::testkit::{PersonReply, user_input_channel_contract};
use kun_ports::{
    ApprovalPolicy, ClientSurface, SandboxMode, ThreadMode, UserAnswer, UserInputChannel,
    UserQuestion,
};
use serde_json::{Map, Value, json};
use std::io::Cursor;
use std::sync::{Arc, Mutex};
use support::{call, ctx, host, listed};

/// The lines a person types for a script of replies.
fn typed(replies: Vec<PersonReply>) -> String {
    let mut text = String::new();
    for reply in replies {
        match reply {
            PersonReply::Typed(lines) => {
                for line in lines {
                    text.push_str(&line);
                    text.push('\n');
                }
            }
            PersonReply::Decline => text.push_str("/decline\n"),
            PersonReply::Dismiss => text.push_str("/cancel\n"),
        }
    }
    text
}

#[tokio::test]
async fn the_terminal_channel_honours_the_contract() {
    user_input_channel_contract(|replies| {
        Box::new(TerminalUserInput::new(
            Cursor::new(typed(replies)),
            std::io::sink(),
        ))
    })
    .await;
}

#[tokio::test]
async fn the_terminal_shows_options_and_explains_bad_entries() {
    let output = Arc::new(Mutex::new(Vec::new()));
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let terminal = TerminalUserInput::new(Cursor::new("mysql\n2\n"), Shared(Arc::clone(&output)));
    let question = UserQuestion::new("Which database?").field(kun_ports::InputField::new(
        "answer",
        kun_ports::FieldKind::choice(["postgres", "sqlite"]),
    ));
    let answer = terminal.ask(&question).await;
    assert_eq!(
        answer,
        UserAnswer::Answered {
            values: Map::from_iter([("answer".to_owned(), json!("sqlite"))])
        }
    );
    let shown = String::from_utf8(output.lock().unwrap().clone()).unwrap();
    assert!(
        shown.contains("Which database?")
            && shown.contains("1) postgres")
            && shown.contains("2) sqlite"),
        "{shown}"
    );
    assert!(shown.contains("\"mysql\" is not an option"), "{shown}");
}

/// A channel that answers from a fixed reply and remembers the question.
struct Fixed {
    reply: UserAnswer,
    asked: Mutex<Vec<UserQuestion>>,
}

#[async_trait]
impl UserInputChannel for Fixed {
    async fn ask(&self, question: &UserQuestion) -> UserAnswer {
        self.asked.lock().unwrap().push(question.clone());
        self.reply.clone()
    }
}

fn fixed(reply: UserAnswer) -> Arc<Fixed> {
    Arc::new(Fixed {
        reply,
        asked: Mutex::new(Vec::new()),
    })
}

fn values(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

#[tokio::test]
async fn listed_everywhere_and_exempt_from_the_gates() {
    let host = host(vec![Arc::new(UserInputProvider::new())]);
    let dir = tempfile::tempdir().unwrap();
    for surface in [ClientSurface::Cli, ClientSurface::Gui, ClientSurface::Api] {
        for mode in [ThreadMode::Agent, ThreadMode::Plan] {
            let ctx = ctx(dir.path(), "t")
                .surface(surface)
                .mode(mode)
                .sandbox(SandboxMode::ReadOnly)
                .build();
            assert_eq!(
                listed(&host, &ctx),
                ["request_user_input", "user_input"],
                "{surface:?} {mode:?}"
            );
        }
    }
    // Approval `never`, a read-only sandbox and no approver: it still asks the person.
    let channel = fixed(UserAnswer::Answered {
        values: values(&[("answer", json!("blue"))]),
    });
    let ctx = ctx(dir.path(), "t")
        .approval(ApprovalPolicy::Never)
        .sandbox(SandboxMode::ReadOnly)
        .user_input(channel.clone())
        .build();
    let result = call(
        &host,
        &ctx,
        "user_input",
        json!({"question": "Which colour?"}),
    )
    .await;
    assert_eq!(
        result.output,
        json!({"status": "answered", "answer": "blue"})
    );
    assert_eq!(result.model_text(), "The user answered: blue");
    let asked = channel.asked.lock().unwrap();
    assert_eq!(asked[0].message, "Which colour?");
    assert_eq!(asked[0].fields[0].kind, kun_ports::FieldKind::Text);
}

#[tokio::test]
async fn options_become_a_choice_and_replies_come_back_as_such() {
    let host = host(vec![Arc::new(UserInputProvider::new())]);
    let dir = tempfile::tempdir().unwrap();
    for (reply, output, text) in [
        (
            UserAnswer::Declined,
            json!({"status": "declined"}),
            "The user declined to answer.",
        ),
        (
            UserAnswer::Cancelled,
            json!({"status": "cancelled"}),
            "The user dismissed the question without answering.",
        ),
    ] {
        let channel = fixed(reply);
        let ctx = ctx(dir.path(), "t").user_input(channel.clone()).build();
        let result = call(
            &host,
            &ctx,
            "user_input",
            json!({"question": "Deploy?", "options": ["yes", "no"]}),
        )
        .await;
        assert!(!result.is_error);
        assert_eq!(result.output, output);
        assert_eq!(result.model_text(), text);
        assert_eq!(
            channel.asked.lock().unwrap()[0].fields[0].kind,
            kun_ports::FieldKind::choice(["yes", "no"])
        );
    }
    // An answer outside the options is not passed on as an answer.
    let channel = fixed(UserAnswer::Answered {
        values: values(&[("answer", json!("maybe"))]),
    });
    let ctx = ctx(dir.path(), "t").user_input(channel).build();
    let result = call(
        &host,
        &ctx,
        "user_input",
        json!({"question": "Deploy?", "options": ["yes", "no"]}),
    )
    .await;
    assert_eq!(result.error_code(), Some("tool_execution_failed"));
}

#[tokio::test]
async fn nobody_to_ask_is_a_clear_error_result() {
    let host = host(vec![Arc::new(UserInputProvider::new())]);
    let dir = tempfile::tempdir().unwrap();
    let no_channel = ctx(dir.path(), "t").build();
    let unavailable = ctx(dir.path(), "t")
        .user_input(fixed(UserAnswer::Unavailable {
            reason: "the client has no elicitation".into(),
        }))
        .build();
    for (ctx, reason) in [
        (no_channel, "nobody can be asked"),
        (unavailable, "no elicitation"),
    ] {
        for (tool, args) in [
            ("user_input", json!({"question": "?"})),
            (
                "request_user_input",
                json!({"fields": [{"name": "a", "type": "text"}]}),
            ),
        ] {
            let result = call(&host, &ctx, tool, args).await;
            assert!(result.is_error);
            assert_eq!(result.error_code(), Some("user_input_unavailable"));
            let text = result.model_text();
            assert!(
                text.starts_with("structured user input is not available in this client context"),
                "{text}"
            );
            assert!(text.contains(reason), "{text}");
        }
    }
}

#[tokio::test]
async fn request_user_input_builds_a_flat_form() {
    let host = host(vec![Arc::new(UserInputProvider::new())]);
    let dir = tempfile::tempdir().unwrap();
    let channel = fixed(UserAnswer::Answered {
        values: values(&[
            ("name", json!("svc")),
            ("replicas", json!(3)),
            ("public", json!(false)),
        ]),
    });
    let ctx = ctx(dir.path(), "t").user_input(channel.clone()).build();
    let result = call(
        &host,
        &ctx,
        "request_user_input",
        json!({
            "message": "New service",
            "fields": [
                {"name": "name", "type": "text", "title": "Name"},
                {"name": "replicas", "type": "number"},
                {"name": "public", "type": "boolean"},
                {"name": "region", "type": "choice", "options": ["eu", "us"], "required": false}
            ]
        }),
    )
    .await;
    assert_eq!(
        result.output,
        json!({"status": "answered", "values": {"name": "svc", "replicas": 3, "public": false}})
    );
    assert_eq!(
        result.model_text(),
        "The user answered:\nname: svc\npublic: false\nreplicas: 3"
    );
    {
        let asked = channel.asked.lock().unwrap();
        assert_eq!(asked[0].message, "New service");
        assert_eq!(asked[0].fields.len(), 4);
        assert!(!asked[0].fields[3].required);
    }

    for bad in [
        json!({"fields": []}),
        json!({"fields": [{"name": "a b", "type": "text"}]}),
        json!({"fields": [{"name": "a", "type": "choice"}]}),
        json!({"fields": [{"name": "a", "type": "choice", "options": []}]}),
        json!({"fields": [{"name": "a", "type": "text", "options": ["x"]}]}),
        json!({"fields": [{"name": "a", "type": "text"}, {"name": "a", "type": "number"}]}),
        json!({"fields": [{"name": "a", "type": "object"}]}),
        json!({"fields": (0..21).map(|i| json!({"name": format!("f{i}"), "type": "text"})).collect::<Vec<_>>()}),
    ] {
        let result = call(&host, &ctx, "request_user_input", bad.clone()).await;
        assert_eq!(result.error_code(), Some("invalid_arguments"), "{bad}");
    }
    assert_eq!(
        channel.asked.lock().unwrap().len(),
        1,
        "bad forms are never shown"
    );
}

/// A person who never answers.
struct Silent;

#[async_trait]
impl UserInputChannel for Silent {
    async fn ask(&self, _question: &UserQuestion) -> UserAnswer {
        std::future::pending().await
    }
}

#[tokio::test]
async fn an_abort_stops_waiting_for_the_person() {
    use kun_ports::{AbortSignal, ToolCall, ToolHost as _};
    let host = host(vec![Arc::new(UserInputProvider::new())]);
    let dir = tempfile::tempdir().unwrap();
    let abort = AbortSignal::new();
    let ctx = ctx(dir.path(), "t")
        .user_input(Arc::new(Silent))
        .abort(abort.clone())
        .build();
    let aborter = abort.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        aborter.abort();
    });
    let call = ToolCall::new("c1", "user_input", json!({"question": "Proceed?"}));
    let outcome =
        tokio::time::timeout(std::time::Duration::from_secs(10), host.execute(call, &ctx))
            .await
            .expect("the call still waits for the person after the abort");
    match outcome {
        Err(kun_ports::HostError::Aborted { .. }) => {}
        Ok(result) => assert_eq!(result.output["status"], "cancelled", "{result:?}"),
        Err(other) => panic!("unexpected refusal: {other}"),
    }
}
