//! `bash` with real processes: exit codes, timeouts and aborts that kill the whole process
//! group, long output spilled to a file, confinement, progress and the approval scope.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::output::Spill;
use kun_builtin_tools::shell::{BashTool, ProgressForwarding, ShellConfig};
use kun_builtin_tools::testing::{SimpleSandbox, TestWorkspace};
use kun_ports::process::EnvAllowList;
use kun_ports::{
    CommandConfinement, ConfinedCommand, ConfinementError, FileSystemScope, MockCommandConfinement,
    NetworkAccess, ProgressSink, Tool, ToolContext, ToolResult,
};
use rustix::process::{Pid, test_kill_process};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn unconfined() -> Arc<dyn CommandConfinement> {
    Arc::new(kun_sandbox::NoConfinement)
}

async fn bash(tool: &BashTool, ws: &TestWorkspace, args: Value) -> ToolResult {
    tool.execute(args, ws.tool_context("call-1")).await.unwrap()
}

/// Whether `pid` is a live process (a zombie waiting for its reaper counts as dead).
fn alive(pid: i32) -> bool {
    let Some(pid_t) = Pid::from_raw(pid) else {
        return false;
    };
    if test_kill_process(pid_t).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !matches!(
            stat.rsplit(')')
                .next()
                .and_then(|s| s.trim().chars().next()),
            Some('Z' | 'X')
        ),
        Err(_) => false,
    }
}

/// Waits (generously) for every pid to die; returns those still alive.
async fn survivors(pids: &[i32]) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let alive: Vec<i32> = pids.iter().copied().filter(|pid| alive(*pid)).collect();
        if alive.is_empty() || Instant::now() > deadline {
            return alive;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn read_pids(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

/// Writes the pids of two background sleeps and of the shell, then waits on them.
const SPAWN_GRANDCHILDREN: &str = "sleep 600 & echo $! > pids.txt; sleep 600 & echo $! >> pids.txt; \
                                   echo $$ >> pids.txt; echo started; wait";

#[tokio::test]
async fn a_successful_command_returns_its_output_and_exit_code() {
    let ws = TestWorkspace::new();
    ws.write("hello.txt", "hi there\n");
    let tool = BashTool::new(unconfined());
    let result = bash(
        &tool,
        &ws,
        json!({"command": "cat hello.txt; pwd; echo err >&2"}),
    )
    .await;
    assert!(!result.is_error, "{}", result.output);
    let out = &result.output;
    assert_eq!(out["exit_code"], 0);
    let text = out["output"].as_str().unwrap();
    assert!(text.contains("hi there"), "{text}");
    assert!(
        text.contains(&ws.root().display().to_string()),
        "runs in the workspace root: {text}"
    );
    assert!(text.contains("err"), "stderr is included: {text}");
    assert!(out.get("notice").is_none(), "nothing was cut: {out}");
    assert!(out.get("full_output_path").is_none());
    assert!(out["duration_ms"].is_u64());
    assert_eq!(
        result.model_text(),
        format!("hi there\n{}\nerr\nexit code 0", ws.root().display())
    );
}

#[tokio::test]
async fn a_non_zero_exit_is_an_error_result_with_the_code() {
    let ws = TestWorkspace::new();
    let result = bash(
        &BashTool::new(unconfined()),
        &ws,
        json!({"command": "echo failing; exit 3"}),
    )
    .await;
    assert!(result.is_error);
    assert_eq!(result.output["exit_code"], 3);
    assert!(
        result.output["output"]
            .as_str()
            .unwrap()
            .contains("failing")
    );
    assert_eq!(result.error_code(), None);
    assert_eq!(result.model_text(), "failing\nexit code 3");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let ws = TestWorkspace::new();
    let tool = BashTool::new(unconfined());
    let result = bash(
        &tool,
        &ws,
        json!({"command": SPAWN_GRANDCHILDREN, "timeout_seconds": 2}),
    )
    .await;
    assert!(result.is_error);
    assert_eq!(
        result.error_code(),
        Some("tool_timeout"),
        "{}",
        result.output
    );
    assert_eq!(result.output["timeout_seconds"], 2);
    assert!(
        result.output["output"]
            .as_str()
            .unwrap()
            .contains("started"),
        "output so far: {}",
        result.output
    );
    let pids = read_pids(&ws.path("pids.txt"));
    assert_eq!(pids.len(), 3);
    assert_eq!(
        survivors(&pids).await,
        Vec::<i32>::new(),
        "every process of the group is gone"
    );
}

#[tokio::test]
async fn an_abort_kills_the_group_and_returns_promptly() {
    let ws = TestWorkspace::new();
    let tool = BashTool::new(unconfined());
    let abort = ws.ctx.abort.clone();
    let pid_file = ws.path("pids.txt");
    let aborter = tokio::spawn(async move {
        while std::fs::read_to_string(&pid_file).map_or(0, |s| s.lines().count()) < 3 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        abort.abort();
    });
    let started = Instant::now();
    let result = tokio::time::timeout(
        Duration::from_secs(120),
        bash(&tool, &ws, json!({"command": SPAWN_GRANDCHILDREN})),
    )
    .await
    .expect("the call returns long before the 600 s sleeps end");
    aborter.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(120));
    assert!(result.is_error);
    assert!(
        result.error_message().unwrap().contains("aborted"),
        "{}",
        result.output
    );
    let pids = read_pids(&ws.path("pids.txt"));
    assert_eq!(survivors(&pids).await, Vec::<i32>::new());
}

#[tokio::test]
async fn background_leftovers_are_killed_when_the_command_exits() {
    let ws = TestWorkspace::new();
    let result = bash(
        &BashTool::new(unconfined()),
        &ws,
        json!({"command": "sleep 600 & echo $! > pid.txt; echo done"}),
    )
    .await;
    assert!(!result.is_error, "{}", result.output);
    assert!(result.output["output"].as_str().unwrap().contains("done"));
    let pids = read_pids(&ws.path("pid.txt"));
    assert_eq!(survivors(&pids).await, Vec::<i32>::new());
}

#[tokio::test]
async fn long_output_returns_the_tail_a_notice_and_the_spill_file() {
    let ws = TestWorkspace::new();
    let spill = tempfile::tempdir().unwrap();
    let config = ShellConfig {
        limits: OutputLimits::new(10, 4_096),
        spill: Spill::Dir(spill.path().to_path_buf()),
        ..ShellConfig::default()
    };
    let tool = BashTool::with_config(unconfined(), config);
    let result = bash(&tool, &ws, json!({"command": "seq 1 5000"})).await;
    assert!(!result.is_error, "{}", result.output);
    let out = &result.output;
    let expected_tail: Vec<String> = (4991..=5000).map(|n| n.to_string()).collect();
    assert_eq!(out["output"], expected_tail.join("\n"));
    let path = out["full_output_path"].as_str().unwrap();
    assert!(Path::new(path).starts_with(spill.path()));
    let full: String = (1..=5000).map(|n| format!("{n}\n")).collect();
    assert_eq!(std::fs::read_to_string(path).unwrap(), full);
    let notice = out["notice"].as_str().unwrap();
    assert!(
        notice.contains("showing the last 10 of 5,000 lines"),
        "{notice}"
    );
    assert!(notice.contains(path), "{notice}");
    assert_eq!(
        result.model_text(),
        format!("{notice}\n{}\nexit code 0", expected_tail.join("\n"))
    );
}

#[tokio::test]
async fn a_command_that_cannot_be_confined_does_not_run() {
    let ws = TestWorkspace::new();
    let mut mock = MockCommandConfinement::new();
    mock.expect_command()
        .times(1)
        .returning(|_| Err(ConfinementError::new("bubblewrap is broken")));
    let tool = BashTool::new(Arc::new(mock));
    let result = bash(&tool, &ws, json!({"command": "touch ran.txt"})).await;
    assert_eq!(
        result.error_code(),
        Some("sandbox_command_blocked"),
        "{}",
        result.output
    );
    assert!(
        result
            .error_message()
            .unwrap()
            .contains("bubblewrap is broken")
    );
    assert!(!ws.path("ran.txt").exists());
}

#[tokio::test]
async fn confinement_sees_the_workspace_scope() {
    let ws = TestWorkspace::new();
    std::fs::create_dir(ws.path(".git")).unwrap();
    let root = ws.root().to_path_buf();
    let mut mock = MockCommandConfinement::new();
    mock.expect_command().times(1).returning(move |spec| {
        assert_eq!(
            spec.scope.files,
            FileSystemScope::Workspace(vec![root.clone()])
        );
        assert_eq!(spec.scope.network, NetworkAccess::Disabled);
        assert_eq!(spec.cwd, root);
        assert_eq!(spec.args.first().map(|a| a.to_str()), Some(Some("-c")));
        let allowed = EnvAllowList::default();
        for (name, _) in spec.env.iter() {
            assert!(allowed.allows(name), "{name:?} is not on the allow-list");
        }
        Ok(ConfinedCommand::bare(spec.unconfined_command()))
    });
    let result = bash(
        &BashTool::new(Arc::new(mock)),
        &ws,
        json!({"command": "true"}),
    )
    .await;
    assert!(!result.is_error, "{}", result.output);
}

#[tokio::test]
async fn bad_arguments_are_invalid_arguments() {
    let ws = TestWorkspace::new();
    let tool = BashTool::new(unconfined());
    for args in [
        json!({}),
        json!({"command": "  "}),
        json!({"command": "ls", "timeout_seconds": 0}),
        json!({"cmd": "ls"}),
    ] {
        let result = bash(&tool, &ws, args.clone()).await;
        assert_eq!(
            result.error_code(),
            Some("invalid_arguments"),
            "{args}: {}",
            result.output
        );
    }
}

#[derive(Default)]
struct Recorder(Mutex<Vec<Value>>);

impl ProgressSink for Recorder {
    fn update(&self, _call_id: &str, partial: &Value) {
        self.0.lock().unwrap().push(partial.clone());
    }
}

#[tokio::test]
async fn live_output_is_forwarded_as_progress() {
    let ws = TestWorkspace::new();
    let recorder = Recorder::default();
    let ctx = ToolContext {
        turn: kun_ports::ToolTurn::of(&ws.ctx, &kun_ports::OpenCatalog),
        call_id: "call-1",
        sandbox: &SimpleSandbox,
        progress: &recorder,
    };
    let tool = BashTool::new(unconfined());
    let result = tool
        .execute(json!({"command": "echo one; echo two"}), ctx)
        .await
        .unwrap();
    assert!(!result.is_error);
    let streamed: String = recorder
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|u| u["output"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(streamed, "one\ntwo\n");

    let silent = BashTool::with_config(
        unconfined(),
        ShellConfig {
            progress: ProgressForwarding::Silent,
            ..ShellConfig::default()
        },
    );
    let quiet = Recorder::default();
    let ctx = ToolContext {
        turn: kun_ports::ToolTurn::of(&ws.ctx, &kun_ports::OpenCatalog),
        call_id: "call-2",
        sandbox: &SimpleSandbox,
        progress: &quiet,
    };
    silent
        .execute(json!({"command": "echo one"}), ctx)
        .await
        .unwrap();
    assert!(quiet.0.lock().unwrap().is_empty());
}

#[test]
fn approval_scope_is_the_command_prefix() {
    let tool = BashTool::new(unconfined());
    let table = [
        ("git status -s", Some("git status")),
        ("ls -la", Some("ls")),
        ("cargo test --workspace", Some("cargo test")),
        ("python -m pytest -q tests/", Some("python -m pytest")),
        ("rm -rf x; curl https://example.com", None),
        ("cat a | grep b", None),
        ("make && make install", None),
        ("echo hi > f", None),
    ];
    for (command, scope) in table {
        assert_eq!(
            tool.approval_scope(&json!({"command": command})).as_deref(),
            scope,
            "{command}"
        );
    }
    assert_eq!(tool.approval_scope(&json!({})), None);
}

#[test]
fn the_spec_is_a_command_execution_on_request() {
    let tool = BashTool::new(unconfined());
    let spec = tool.spec();
    assert_eq!(spec.name, "bash");
    assert_eq!(spec.kind, kun_ports::ToolKind::CommandExecution);
    assert_eq!(spec.policy, kun_ports::ToolPolicy::OnRequest);
    assert_eq!(spec.input_schema["required"], json!(["command"]));
}
