//! Shared helpers for the integration tests: scratch workspaces, executable scripts, calls.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use kun_hooks::{HookEngine, HooksConfig};
use kun_ports::{
    ApprovalPolicy, ClientSurface, HookToolCall, HookTurn, SandboxMode, ThreadMode, ToolRole,
};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

/// Writes an executable `sh` script into `dir`.
pub fn script(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn turn(cwd: &Path) -> HookTurn {
    HookTurn {
        thread_id: "thread-7".into(),
        turn_id: "turn-3".into(),
        cwd: cwd.to_path_buf(),
        sandbox: SandboxMode::WorkspaceWrite,
        approval: ApprovalPolicy::OnRequest,
        thread_mode: ThreadMode::Agent,
        client_surface: ClientSurface::Cli,
    }
}

pub fn call(cwd: &Path, tool: &str, arguments: Value) -> HookToolCall {
    call_as(cwd, tool, ToolRole::General, arguments)
}

/// A call of a tool that declares `role` (e.g. `write` and `edit` are file editors).
pub fn call_as(cwd: &Path, tool: &str, role: ToolRole, arguments: Value) -> HookToolCall {
    HookToolCall {
        turn: turn(cwd),
        call_id: "call-42".into(),
        tool_name: tool.into(),
        role,
        arguments,
    }
}

/// An engine from a JSON `hooks` map.
pub fn engine(json: &str) -> HookEngine {
    HookEngine::builder()
        .config(HooksConfig::from_json_str(json).unwrap())
        .build()
        .unwrap()
}

/// One command hook per phase group: `{"<phase>": [{"matcher": m, "hooks": [cmd...]}]}`.
pub fn commands(phase: &str, matcher: &str, commands: &[&str]) -> String {
    let hooks: Vec<Value> = commands
        .iter()
        .map(|c| serde_json::json!({"type": "command", "command": c}))
        .collect();
    serde_json::json!({ phase: [{"matcher": matcher, "hooks": hooks}] }).to_string()
}

/// Whether a process still runs (a zombie counts as gone).
pub fn alive(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    if rustix::process::test_kill_process(pid).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// Whether any live (non-zombie) process is in the group.
pub fn group_alive(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            return false;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        let rest: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        // rest[0] = state, rest[1] = ppid, rest[2] = pgrp
        rest.len() > 2 && rest[2] == pgid.to_string() && !matches!(rest[0], "Z" | "X") && pid > 0
    })
}

/// Polls `check` until it is true or `limit` passes.
pub async fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if check() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Reads a number written by a script, waiting for the file to appear.
pub async fn read_pid(path: &Path) -> i32 {
    for _ in 0..200 {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} was never written", path.display());
}
