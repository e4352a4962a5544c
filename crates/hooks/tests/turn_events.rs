//! Loop phases (UserPromptSubmit, TurnStart, TurnEnd, PreCompact): deny, context, fail open.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{commands, engine, script, turn};
use kun_ports::{HookPhase, HookRunner, HookTurnEvent};
use serde_json::{Value, json};

fn event(cwd: &std::path::Path, phase: HookPhase, prompt: Option<&str>) -> HookTurnEvent {
    HookTurnEvent {
        phase,
        turn: turn(cwd),
        prompt: prompt.map(str::to_owned),
    }
}

#[tokio::test]
async fn user_prompt_submit_exit_2_denies_the_turn() {
    let ws = tempfile::tempdir().unwrap();
    script(
        ws.path(),
        "prompt.sh",
        r#"input=$(cat)
case "$input" in
  *'"prompt":"deploy to prod"'*) echo 'deploys need a ticket' >&2; exit 2 ;;
esac"#,
    );
    let engine = engine(&commands("UserPromptSubmit", "", &["./prompt.sh"]));
    let denied = engine
        .turn_event(&event(
            ws.path(),
            HookPhase::UserPromptSubmit,
            Some("deploy to prod"),
        ))
        .await;
    assert_eq!(denied.denied.as_deref(), Some("deploys need a ticket"));
    let allowed = engine
        .turn_event(&event(
            ws.path(),
            HookPhase::UserPromptSubmit,
            Some("fix the tests"),
        ))
        .await;
    assert_eq!(allowed.denied, None);
    assert!(allowed.warnings.is_empty(), "{:?}", allowed.warnings);
}

#[tokio::test]
async fn user_prompt_submit_json_block_and_context() {
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(&commands(
        "UserPromptSubmit",
        "",
        &[
            r#"echo '{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "branch: main"}}'"#,
            "echo 'plain text becomes context'",
            r#"echo '{"decision": "block", "reason": "quota exhausted"}'"#,
            "touch ran-after-block",
        ],
    ));
    let outcome = engine
        .turn_event(&event(ws.path(), HookPhase::UserPromptSubmit, Some("hi")))
        .await;
    assert_eq!(outcome.denied.as_deref(), Some("quota exhausted"));
    assert_eq!(
        outcome.additional_context,
        ["branch: main", "plain text becomes context"]
    );
    assert!(!ws.path().join("ran-after-block").exists());
}

#[tokio::test]
async fn loop_phase_timeouts_fail_open_with_a_warning() {
    let ws = tempfile::tempdir().unwrap();
    let config = json!({"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "sleep 30", "timeout": 1},
        {"type": "command", "command": "echo '{\"additionalContext\": \"still ran\"}'"}
    ]}]});
    let engine = engine(&config.to_string());
    let outcome = engine
        .turn_event(&event(ws.path(), HookPhase::UserPromptSubmit, Some("hi")))
        .await;
    assert_eq!(outcome.denied, None);
    assert_eq!(outcome.warnings.len(), 1, "{:?}", outcome.warnings);
    assert!(
        outcome.warnings[0].contains("did not finish"),
        "{:?}",
        outcome.warnings
    );
    assert_eq!(outcome.additional_context, ["still ran"]);
}

#[tokio::test]
async fn observer_phases_cannot_block_and_see_their_event_name() {
    let ws = tempfile::tempdir().unwrap();
    script(
        ws.path(),
        "observe.sh",
        r#"cat > "event-$(date +%s%N).json"
echo 'not now' >&2
exit 2"#,
    );
    let mut config = serde_json::Map::new();
    for phase in ["TurnStart", "TurnEnd", "PreCompact"] {
        config.insert(
            phase.into(),
            json!([{"hooks": [{"type": "command", "command": "./observe.sh"}]}]),
        );
    }
    let engine = engine(&Value::Object(config).to_string());
    assert!(
        kun_ports::HookRunner::is_empty(&engine),
        "loop-phase hooks alone leave the tool phases empty"
    );
    for phase in [
        HookPhase::TurnStart,
        HookPhase::TurnEnd,
        HookPhase::PreCompact,
    ] {
        let outcome = engine.turn_event(&event(ws.path(), phase, None)).await;
        assert_eq!(outcome.denied, None, "{phase:?}");
        assert_eq!(
            outcome.warnings.len(),
            1,
            "{phase:?}: {:?}",
            outcome.warnings
        );
        assert!(
            outcome.warnings[0].contains("not now"),
            "{:?}",
            outcome.warnings
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(ws.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("event-"))
        .map(|e| {
            let doc: Value =
                serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap();
            doc["hook_event_name"].as_str().unwrap().to_owned()
        })
        .collect();
    names.sort();
    assert_eq!(names, ["PreCompact", "TurnEnd", "TurnStart"]);
}

#[tokio::test]
async fn tool_phases_are_refused_by_turn_event() {
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(&commands("PreToolUse", "", &["exit 2"]));
    let outcome = engine
        .turn_event(&event(ws.path(), HookPhase::PreToolUse, None))
        .await;
    assert_eq!(outcome.denied, None);
    assert_eq!(outcome.warnings.len(), 1);
}
