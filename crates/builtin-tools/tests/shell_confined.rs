//! The command tools under every confining tier available here (bubblewrap, Landlock +
//! seccomp): work inside the workspace succeeds, a write outside fails and changes nothing,
//! timeouts and kills still take every process, and nothing is left after a call.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::shell::{BackgroundShellTool, BashTool};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::testkit::{marked_processes, none_marked_within};
use kun_ports::{CommandConfinement, ConfinementTier, Tool, ToolResult};
use kun_sandbox::{BubblewrapProgram, LandlockProbe, ProbeOptions, SandboxCapabilities};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Every confining tier usable here.
fn tiers() -> Vec<Arc<dyn CommandConfinement>> {
    let only_bwrap = ProbeOptions {
        landlock: LandlockProbe::Skip,
        ..ProbeOptions::default()
    };
    let only_landlock = ProbeOptions {
        bubblewrap: BubblewrapProgram::Skip,
        ..ProbeOptions::default()
    };
    let found: Vec<_> = [only_bwrap, only_landlock]
        .iter()
        .map(SandboxCapabilities::probe_with)
        .filter(|caps| caps.tier().is_confined())
        .map(|caps| caps.confinement())
        .collect();
    if found.is_empty() {
        eprintln!("SKIPPED: no confining tier is usable here");
    }
    found
}

async fn bash(tool: &BashTool, ws: &TestWorkspace, command: &str) -> ToolResult {
    tool.execute(json!({"command": command}), ws.tool_context("call"))
        .await
        .unwrap()
}

#[tokio::test]
async fn bash_works_inside_and_cannot_write_outside() {
    for confinement in tiers() {
        let tier = confinement.tier();
        let ws = TestWorkspace::new();
        ws.write("given.txt", "given\n");
        let tool = BashTool::new(Arc::clone(&confinement));
        let result = bash(
            &tool,
            &ws,
            "cat given.txt && echo made > made.txt && exit 3",
        )
        .await;
        assert!(result.is_error, "exit 3 is an error result");
        assert_eq!(result.output["exit_code"], 3, "{tier:?}: {}", result.output);
        assert!(result.output["output"].as_str().unwrap().contains("given"));
        assert_eq!(ws.read("made.txt"), "made\n");

        let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let target = outside.path().join("escaped.txt");
        let result = bash(&tool, &ws, &format!("echo x > '{}'", target.display())).await;
        assert!(result.is_error, "{tier:?}: {}", result.output);
        assert!(!target.exists(), "{tier:?} let bash write outside");
        let said = result.output["output"].as_str().unwrap();
        assert!(
            said.contains("Read-only file system") || said.contains("Permission denied"),
            "{tier:?}: the error says why: {said}"
        );
    }
}

#[tokio::test]
async fn nothing_outlives_a_confined_call() {
    for confinement in tiers() {
        let tier = confinement.tier();
        let ws = TestWorkspace::new();
        let mark = format!("kun-confined-bash-{}-{tier:?}", std::process::id());
        let tool = BashTool::new(Arc::clone(&confinement));
        let script = format!(
            "(exec -a {mark} sleep 600) & setsid -f bash -c 'exec -a {mark} sleep 600' \
             </dev/null >/dev/null 2>&1; sleep 0.2; echo started"
        );
        let result = bash(&tool, &ws, &script).await;
        assert!(!result.is_error, "{tier:?}: {}", result.output);
        assert!(
            none_marked_within(&mark, Duration::from_secs(10))
                .await
                .is_ok(),
            "{tier:?}: a process outlived the call"
        );

        let started = Instant::now();
        let result = tool
            .execute(
                json!({"command": format!("exec -a {mark} sleep 600"), "timeout_seconds": 1}),
                ws.tool_context("call"),
            )
            .await
            .unwrap();
        assert_eq!(result.output["code"], "tool_timeout", "{}", result.output);
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(
            none_marked_within(&mark, Duration::from_secs(10))
                .await
                .is_ok(),
            "{tier:?}: the timed-out command lives on"
        );
    }
}

#[tokio::test]
async fn background_jobs_run_confined_and_die_when_killed() {
    for confinement in tiers() {
        let tier = confinement.tier();
        let ws = TestWorkspace::new();
        let mark = format!("kun-confined-job-{}-{tier:?}", std::process::id());
        let tool = BackgroundShellTool::new(Arc::clone(&confinement));
        let call = |args: Value| tool.execute(args, ws.tool_context("call"));
        let started = call(json!({
            "action": "start",
            "command": format!("echo up > up.txt; exec -a {mark} sleep 600")
        }))
        .await
        .unwrap();
        assert!(!started.is_error, "{tier:?}: {}", started.output);
        let id = started.output["id"].as_str().unwrap().to_owned();
        let deadline = Instant::now() + Duration::from_secs(10);
        // The job's shell writes up.txt, then becomes the marked sleep.
        while !ws.path("up.txt").exists() || marked_processes(&mark).is_empty() {
            assert!(Instant::now() < deadline, "{tier:?}: the job never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let killed = call(json!({"action": "kill", "id": id})).await.unwrap();
        assert!(!killed.is_error, "{}", killed.output);
        assert!(
            none_marked_within(&mark, Duration::from_secs(10))
                .await
                .is_ok(),
            "{tier:?}: the killed job lives on"
        );
    }
}

#[test]
fn the_probe_prefers_the_strongest_tier() {
    let caps = SandboxCapabilities::probe();
    let bwrap = SandboxCapabilities::probe_with(&ProbeOptions {
        landlock: LandlockProbe::Skip,
        ..ProbeOptions::default()
    });
    if bwrap.tier() == ConfinementTier::Bubblewrap {
        assert_eq!(caps.tier(), ConfinementTier::Bubblewrap, "{caps}");
    }
}
