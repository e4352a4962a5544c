//! `background_shell` with real processes: start, read, list, kill, bounds, per-thread jobs,
//! and every job killed when the tool is dropped.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::shell::{BackgroundLimits, BackgroundShellTool, ShellConfig};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{
    CommandConfinement, CommandSafety, GrantKey, GrantScope, SandboxRequest, Tool, ToolHostContext,
    ToolResult,
};
use rustix::process::{Pid, test_kill_process};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn unconfined() -> Arc<dyn CommandConfinement> {
    Arc::new(kun_sandbox::NoConfinement)
}

async fn call(tool: &BackgroundShellTool, ws: &TestWorkspace, args: Value) -> ToolResult {
    tool.execute(args, ws.tool_context("call-1")).await.unwrap()
}

async fn ok(tool: &BackgroundShellTool, ws: &TestWorkspace, args: Value) -> Value {
    let result = call(tool, ws, args.clone()).await;
    assert!(!result.is_error, "{args}: {}", result.output);
    result.output
}

/// Reads job `id` until `done` says so (generous deadline); returns the concatenated output
/// and the last result.
async fn read_until(
    tool: &BackgroundShellTool,
    ws: &TestWorkspace,
    id: &str,
    done: impl Fn(&str, &Value) -> bool,
) -> (String, Value) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut text = String::new();
    loop {
        let out = ok(tool, ws, json!({"action": "read", "id": id})).await;
        text.push_str(out["output"].as_str().unwrap());
        if done(&text, &out) {
            return (text, out);
        }
        assert!(
            Instant::now() < deadline,
            "gave up waiting on {id}: {text:?} {out}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn alive(pid: i32) -> bool {
    let Some(pid_t) = Pid::from_raw(pid) else {
        return false;
    };
    test_kill_process(pid_t).is_ok()
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !matches!(
                stat.rsplit(')')
                    .next()
                    .and_then(|s| s.trim().chars().next()),
                Some('Z' | 'X')
            )
        })
}

async fn wait_dead(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    true
}

async fn wait_for_pid(path: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "the job never wrote {}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn start_read_list_kill() {
    let ws = TestWorkspace::new();
    let tool = BackgroundShellTool::new(unconfined());
    let started = ok(
        &tool,
        &ws,
        json!({"action": "start", "command": "echo $$ > pid.txt; echo hello; sleep 600"}),
    )
    .await;
    assert_eq!(started["id"], "bg-1");
    assert_eq!(started["status"], "running");
    let pid = wait_for_pid(&ws.path("pid.txt")).await;

    let (text, last) = read_until(&tool, &ws, "bg-1", |text, _| text.contains("hello")).await;
    assert_eq!(text, "hello\n");
    assert_eq!(last["status"], "running");
    let again = ok(&tool, &ws, json!({"action": "read", "id": "bg-1"})).await;
    assert_eq!(again["output"], "", "a second read returns only new output");

    let listed = ok(&tool, &ws, json!({"action": "list"})).await;
    let jobs = listed["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0]["id"], "bg-1");
    assert_eq!(jobs[0]["status"], "running");
    assert_eq!(jobs[0]["unread_bytes"], 0);

    let killed = ok(&tool, &ws, json!({"action": "kill", "id": "bg-1"})).await;
    assert_eq!(killed["status"], "killed");
    assert!(wait_dead(pid).await, "the job's process is gone");
    let listed = ok(&tool, &ws, json!({"action": "list"})).await;
    assert_eq!(listed["jobs"][0]["status"], "killed");
}

#[tokio::test]
async fn a_finished_job_reports_its_exit_code_and_all_its_output() {
    let ws = TestWorkspace::new();
    let tool = BackgroundShellTool::new(unconfined());
    ok(
        &tool,
        &ws,
        json!({"action": "start", "command": "for i in 1 2 3; do echo line $i; done; exit 4"}),
    )
    .await;
    let (text, last) = read_until(&tool, &ws, "bg-1", |_, out| out["status"] != "running").await;
    assert_eq!(text, "line 1\nline 2\nline 3\n");
    assert_eq!(last["status"], "exited");
    assert_eq!(last["exit_code"], 4);
}

#[tokio::test]
async fn tail_lines_limits_what_a_read_returns() {
    let ws = TestWorkspace::new();
    let tool = BackgroundShellTool::new(unconfined());
    ok(
        &tool,
        &ws,
        json!({"action": "start", "command": "seq 1 100"}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while ok(&tool, &ws, json!({"action": "list"})).await["jobs"][0]["status"] == "running" {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = ok(
        &tool,
        &ws,
        json!({"action": "read", "id": "bg-1", "tail_lines": 3}),
    )
    .await;
    assert_eq!(out["output"], "98\n99\n100");
    assert!(
        out["notice"]
            .as_str()
            .unwrap()
            .contains("showing the last 3 of 100 lines"),
        "{out}"
    );
}

#[tokio::test]
async fn jobs_belong_to_their_thread() {
    let ws = TestWorkspace::new();
    let tool = BackgroundShellTool::new(unconfined());
    ok(
        &tool,
        &ws,
        json!({"action": "start", "command": "sleep 600"}),
    )
    .await;
    let mut other = TestWorkspace::new();
    other.ctx.thread_id = "another-thread".into();
    let listed = ok(&tool, &other, json!({"action": "list"})).await;
    assert_eq!(listed["jobs"], json!([]));
    let read = call(&tool, &other, json!({"action": "read", "id": "bg-1"})).await;
    assert_eq!(
        read.error_code(),
        Some("invalid_arguments"),
        "{}",
        read.output
    );
    let kill = call(&tool, &other, json!({"action": "kill", "id": "bg-1"})).await;
    assert!(kill.is_error);
    assert_eq!(
        ok(&tool, &ws, json!({"action": "list"})).await["jobs"][0]["status"],
        "running"
    );
}

#[tokio::test]
async fn the_number_of_running_jobs_is_bounded() {
    let ws = TestWorkspace::new();
    let limits = BackgroundLimits {
        max_live_per_thread: 2,
        ..BackgroundLimits::default()
    };
    let tool = BackgroundShellTool::with_config(unconfined(), ShellConfig::default(), limits);
    ok(
        &tool,
        &ws,
        json!({"action": "start", "command": "sleep 600"}),
    )
    .await;
    ok(
        &tool,
        &ws,
        json!({"action": "start", "command": "sleep 600"}),
    )
    .await;
    let third = call(
        &tool,
        &ws,
        json!({"action": "start", "command": "sleep 600"}),
    )
    .await;
    assert!(third.is_error);
    assert!(
        third.error_message().unwrap().contains("too many"),
        "{}",
        third.output
    );
    ok(&tool, &ws, json!({"action": "kill", "id": "bg-1"})).await;
    ok(
        &tool,
        &ws,
        json!({"action": "start", "command": "sleep 600"}),
    )
    .await;
}

#[tokio::test]
async fn dropping_the_tool_kills_every_job() {
    let ws = TestWorkspace::new();
    let tool = BackgroundShellTool::new(unconfined());
    ok(&tool, &ws, json!({"action": "start", "command": "sleep 600 & echo $! > child.txt; echo $$ > pid.txt; wait"}))
        .await;
    let pid = wait_for_pid(&ws.path("pid.txt")).await;
    let child = wait_for_pid(&ws.path("child.txt")).await;
    assert!(alive(pid) && alive(child));
    drop(tool);
    assert!(wait_dead(pid).await, "the job's shell is gone");
    assert!(wait_dead(child).await, "the job's child is gone");
}

#[tokio::test]
async fn killing_an_escalated_job_ends_its_whole_group() {
    let ws = TestWorkspace::new();
    let tool = BackgroundShellTool::new(unconfined());
    let started = ok(
        &tool,
        &ws,
        json!({
            "action": "start",
            "command": "sleep 600 & echo $! > child.txt; echo $$ > pid.txt; wait",
            "sandbox": "escalated",
            "justification": "test"
        }),
    )
    .await;
    let id = started["id"].as_str().unwrap().to_owned();
    let pid = wait_for_pid(&ws.path("pid.txt")).await;
    let child = wait_for_pid(&ws.path("child.txt")).await;
    assert!(alive(pid) && alive(child));
    let killed = ok(&tool, &ws, json!({"action": "kill", "id": id})).await;
    assert_eq!(killed["status"], "killed");
    assert!(wait_dead(pid).await, "the job's shell is gone");
    assert!(
        wait_dead(child).await,
        "the job's child is gone with its group"
    );
}

#[tokio::test]
async fn bad_requests_say_what_is_missing() {
    let ws = TestWorkspace::new();
    let tool = BackgroundShellTool::new(unconfined());
    for args in [
        json!({"action": "start"}),
        json!({"action": "read"}),
        json!({"action": "kill", "id": "bg-99"}),
        json!({"action": "read", "id": "nonsense"}),
        json!({"action": "explode"}),
    ] {
        let result = call(&tool, &ws, args.clone()).await;
        assert_eq!(
            result.error_code(),
            Some("invalid_arguments"),
            "{args}: {}",
            result.output
        );
    }
}

#[test]
fn approval_scopes() {
    let tool = BackgroundShellTool::new(unconfined());
    let ctx = ToolHostContext::builder("t", "u").workspace("/ws").build();
    let scope = |args: Value| tool.approval_scope(&args, &ctx);
    let start = scope(json!({"action": "start", "command": "npm run dev"})).unwrap();
    assert_eq!(
        start.grant,
        GrantKey::command("background_shell", "npm run").scope
    );
    assert_eq!(start.sandbox, SandboxRequest::Confined);
    let compound = scope(json!({"action": "start", "command": "a; $(b)"})).unwrap();
    assert!(matches!(compound.grant, GrantScope::OneCall { .. }));
    let read = scope(json!({"action": "read", "id": "bg-1"})).unwrap();
    assert_eq!(
        read.grant,
        GrantScope::Action {
            action: "read".into()
        }
    );
    assert_eq!(read.safety, CommandSafety::KnownSafe);
    let kill = scope(json!({"action": "kill", "id": "bg-1"})).unwrap();
    assert_eq!(kill.safety, CommandSafety::NotKnownSafe);
    let escalated = scope(json!({
        "action": "start",
        "command": "npm run dev",
        "sandbox": "escalated",
        "justification": "binds a port the sandbox blocks",
    }))
    .unwrap();
    assert_eq!(escalated.sandbox, SandboxRequest::Escalated);
    assert_eq!(
        escalated.justification.as_deref(),
        Some("binds a port the sandbox blocks")
    );
    assert_eq!(scope(json!({"action": "nope"})), None);
    assert!(
        tool.explicit_approval(
            &json!({"action": "start", "command": "x", "sandbox": "escalated"}),
            &ctx
        )
        .is_err()
    );
}

/// | action | approval | grant scope |
/// |---|---|---|
/// | list | not needed (runs nothing) | `list` |
/// | read | not needed (runs nothing) | `read` |
/// | start | as declared (on-request) | the command's keys (`npm run`) |
/// | kill | as declared (on-request) | `kill` |
#[test]
fn list_and_read_need_no_approval() {
    use kun_ports::CallApproval;
    let tool = BackgroundShellTool::new(Arc::new(kun_sandbox::NoConfinement));
    let ctx = ToolHostContext::builder("t", "u").workspace("/ws").build();
    let action = |name: &str| GrantScope::Action {
        action: name.into(),
    };
    let cases = [
        (
            json!({"action": "list"}),
            CallApproval::NotNeeded,
            Some(action("list")),
        ),
        (
            json!({"action": "read", "id": "bg-1"}),
            CallApproval::NotNeeded,
            Some(action("read")),
        ),
        (
            json!({"action": "start", "command": "npm run dev"}),
            CallApproval::AsDeclared,
            Some(GrantKey::command("background_shell", "npm run").scope),
        ),
        (
            json!({"action": "kill", "id": "bg-1"}),
            CallApproval::AsDeclared,
            Some(action("kill")),
        ),
        // Arguments that do not parse are judged as declared (the run reports them).
        (json!({"action": "dance"}), CallApproval::AsDeclared, None),
    ];
    for (args, approval, scope) in cases {
        assert_eq!(tool.call_approval(&args), approval, "{args}");
        let grant = tool.approval_scope(&args, &ctx).map(|c| c.grant);
        assert_eq!(grant, scope, "{args}");
    }
}
