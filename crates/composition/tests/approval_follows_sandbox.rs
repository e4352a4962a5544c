//! Approval follows the sandbox, through the real host (`assemble`, the probed tier, the real
//! `bash` and `background_shell`), under workspace-write:
//!
//! | tier | call | approval policy | asked? | what happens |
//! |---|---|---|---|---|
//! | bubblewrap or Landlock | `bash` | on-request | no | runs confined: the workspace is writable, a directory outside is not |
//! | none | `bash` | on-request | yes (`unconfined_command`) | runs once approved |
//! | bubblewrap or Landlock | `bash`, `"sandbox": "escalated"` | on-request | yes (`escalated_command`, with the justification) | runs unconfined once approved: writes outside the workspace; still the allow-listed environment, its own session, its group killed at the end |
//! | bubblewrap or Landlock | `bash`, `"sandbox": "escalated"` | on-request, denied | yes | nothing runs |
//! | bubblewrap or Landlock | `bash`, `"sandbox": "escalated"` | never | no | `approval_policy_blocked`, nothing runs |
//! | bubblewrap or Landlock | `background_shell` start, `"sandbox": "escalated"` | on-request | yes | the job runs unconfined |
//!
//! Every confining tier usable here is tried (bubblewrap, then Landlock + seccomp); `.ci/run`
//! installs bubblewrap.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use async_trait::async_trait;
use kun_composition::config::Settings;
use kun_composition::{AssembleOptions, Assembly, assemble};
use kun_ports::testkit::none_marked_within;
use kun_ports::{
    ApprovalDecision, ApprovalGate, ApprovalPolicy, ApprovalReason, ApprovalRequest,
    ConfinementTier, SandboxMode, ToolCall, ToolHost, ToolResult,
};
use kun_sandbox::{BubblewrapProgram, LandlockProbe, ProbeOptions};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// An approver that records every request and answers with its decision, or fails the test
/// when it was not meant to be asked.
struct RecordingGate {
    answer: Option<ApprovalDecision>,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl RecordingGate {
    /// Fails the test if it is ever asked.
    fn never_asked() -> Arc<Self> {
        Arc::new(Self {
            answer: None,
            asked: Mutex::new(Vec::new()),
        })
    }

    /// Answers every request with `decision`.
    fn answering(decision: ApprovalDecision) -> Arc<Self> {
        Arc::new(Self {
            answer: Some(decision),
            asked: Mutex::new(Vec::new()),
        })
    }

    fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked.lock().unwrap().clone()
    }
}

#[async_trait]
impl ApprovalGate for RecordingGate {
    async fn request_approval(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.asked.lock().unwrap().push(request.clone());
        match &self.answer {
            Some(decision) => decision.clone(),
            None => panic!("nobody should have been asked, but was: {request:?}"),
        }
    }
}

/// The probe options of each confining tier usable here.
fn confining_tiers() -> Vec<(ConfinementTier, ProbeOptions)> {
    let only_bwrap = ProbeOptions {
        landlock: LandlockProbe::Skip,
        ..ProbeOptions::default()
    };
    let only_landlock = ProbeOptions {
        bubblewrap: BubblewrapProgram::Skip,
        ..ProbeOptions::default()
    };
    let found: Vec<_> = [only_bwrap, only_landlock]
        .into_iter()
        .filter_map(|options| {
            let tier = kun_sandbox::SandboxCapabilities::probe_with(&options).tier();
            tier.is_confined().then_some((tier, options))
        })
        .collect();
    if found.is_empty() {
        eprintln!("SKIPPED: no confining tier is usable here");
    }
    found
}

/// No tier at all.
fn no_tier() -> ProbeOptions {
    ProbeOptions {
        bubblewrap: BubblewrapProgram::Skip,
        landlock: LandlockProbe::Skip,
        ..ProbeOptions::default()
    }
}

/// A workspace and, beside it (outside), a directory a command may try to write to.
struct Scene {
    _temp: tempfile::TempDir,
    workspace: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn scene() -> Scene {
    let temp = tempfile::tempdir().unwrap();
    let workspace = temp.path().join("ws");
    let outside = temp.path().join("outside");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    Scene {
        _temp: temp,
        workspace,
        outside,
    }
}

fn host(scene: &Scene, probe: ProbeOptions, approval: ApprovalPolicy) -> Assembly {
    let mut settings = Settings::defaults(&scene.workspace);
    settings.sandbox = SandboxMode::WorkspaceWrite;
    settings.approval = approval;
    assemble(
        settings,
        AssembleOptions {
            probe,
            ..AssembleOptions::default()
        },
    )
    .unwrap()
}

async fn call(
    assembly: &Assembly,
    gate: Arc<RecordingGate>,
    tool: &str,
    args: Value,
) -> ToolResult {
    let ctx = assembly.context("thread", "turn").approver(gate).build();
    assembly
        .host
        .execute(ToolCall::new("call-1", tool, args), &ctx)
        .await
        .unwrap()
}

fn touch_both(scene: &Scene) -> String {
    format!(
        "touch {} && touch {}",
        scene.workspace.join("inside.txt").display(),
        scene.outside.join("escaped.txt").display()
    )
}

fn escalated(command: &str) -> Value {
    json!({
        "command": command,
        "sandbox": "escalated",
        "justification": "writes the build cache next to the workspace",
    })
}

#[tokio::test]
async fn a_confined_bash_runs_unasked_and_cannot_write_outside_the_workspace() {
    for (tier, probe) in confining_tiers() {
        let scene = scene();
        let assembly = host(&scene, probe, ApprovalPolicy::OnRequest);
        assert_eq!(assembly.capabilities.tier(), tier);
        let gate = RecordingGate::never_asked();
        let inside = scene.workspace.join("inside.txt");
        let result = call(
            &assembly,
            Arc::clone(&gate),
            "bash",
            json!({"command": format!("touch {}", inside.display())}),
        )
        .await;
        assert!(!result.is_error, "{tier:?}: {result:?}");
        assert!(inside.exists(), "{tier:?}");

        let result = call(
            &assembly,
            Arc::clone(&gate),
            "bash",
            json!({"command": touch_both(&scene)}),
        )
        .await;
        assert!(
            result.is_error,
            "{tier:?}: a write outside must fail: {result:?}"
        );
        assert_eq!(result.output["exit_code"], 1, "{tier:?}: {result:?}");
        assert!(!scene.outside.join("escaped.txt").exists(), "{tier:?}");
        assert!(gate.asked().is_empty());
    }
}

#[tokio::test]
async fn without_a_tier_every_bash_call_asks() {
    let scene = scene();
    let assembly = host(&scene, no_tier(), ApprovalPolicy::OnRequest);
    assert_eq!(assembly.capabilities.tier(), ConfinementTier::None);
    let gate = RecordingGate::answering(ApprovalDecision::Allow);
    let inside = scene.workspace.join("inside.txt");
    let result = call(
        &assembly,
        Arc::clone(&gate),
        "bash",
        json!({"command": format!("touch {}", inside.display())}),
    )
    .await;
    assert!(!result.is_error, "{result:?}");
    assert!(inside.exists());
    let asked = gate.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].reason, ApprovalReason::UnconfinedCommand);

    // Denied: nothing runs.
    let gate = RecordingGate::answering(ApprovalDecision::Deny { reason: None });
    let marker = scene.workspace.join("denied.txt");
    let result = call(
        &assembly,
        Arc::clone(&gate),
        "bash",
        json!({"command": format!("touch {}", marker.display())}),
    )
    .await;
    assert_eq!(result.error_code(), Some("approval_denied"), "{result:?}");
    assert!(!marker.exists());
    assert_eq!(gate.asked().len(), 1);
}

#[tokio::test]
async fn an_escalated_bash_asks_and_once_approved_writes_outside_the_workspace() {
    for (tier, probe) in confining_tiers() {
        let scene = scene();
        let assembly = host(&scene, probe, ApprovalPolicy::OnRequest);
        let gate = RecordingGate::answering(ApprovalDecision::Allow);
        let result = call(
            &assembly,
            Arc::clone(&gate),
            "bash",
            escalated(&touch_both(&scene)),
        )
        .await;
        assert!(!result.is_error, "{tier:?}: {result:?}");
        assert!(scene.outside.join("escaped.txt").exists(), "{tier:?}");
        assert!(scene.workspace.join("inside.txt").exists(), "{tier:?}");
        let asked = gate.asked();
        assert_eq!(asked.len(), 1, "{tier:?}: {asked:?}");
        assert_eq!(asked[0].reason, ApprovalReason::EscalatedCommand);
        assert_eq!(
            asked[0].justification.as_deref(),
            Some("writes the build cache next to the workspace")
        );
    }
}

/// What an escalated command keeps of the supervision: the allow-listed environment (the test
/// process has `CARGO_*` and friends; the child must not), its own session, and its process
/// group killed when the call returns (a `sleep` left in the background does not survive).
#[tokio::test]
async fn an_escalated_bash_keeps_the_allow_listed_environment_its_session_and_group_kill() {
    const ALLOWED: &[&str] = &[
        "PATH", "HOME", "LANG", "TERM", "USER", "SHELL", "TMPDIR", "TZ",
        // Set by bash itself.
        "PWD", "SHLVL", "_", "OLDPWD",
    ];
    for (tier, probe) in confining_tiers() {
        let scene = scene();
        let assembly = host(&scene, probe, ApprovalPolicy::OnRequest);
        let gate = RecordingGate::answering(ApprovalDecision::Allow);
        let script = "sleep 61.125 & env; awk '{print \"session\", $6, \"pid\", $1}' /proc/$$/stat";
        let result = call(&assembly, Arc::clone(&gate), "bash", escalated(script)).await;
        assert!(!result.is_error, "{tier:?}: {result:?}");
        let output = result.output["output"].as_str().unwrap().to_owned();
        assert!(output.contains("PATH="), "{tier:?}: {output}");
        for line in output.lines().filter(|l| l.contains('=')) {
            let name = line.split('=').next().unwrap();
            assert!(
                ALLOWED.contains(&name) || name.starts_with("LC_"),
                "{tier:?}: `{name}` is not on the allow-list: {output}"
            );
        }
        // The shell leads its own session: its session id is its pid.
        let session = output
            .lines()
            .find_map(|l| l.strip_prefix("session "))
            .unwrap();
        let words: Vec<&str> = session.split_whitespace().collect();
        assert_eq!(words.len(), 3, "{tier:?}: {output}");
        assert_eq!(words[0], words[2], "{tier:?}: {output}");
        assert!(
            none_marked_within("61.125", Duration::from_secs(10))
                .await
                .is_ok(),
            "{tier:?}: the background sleep outlived the call"
        );
    }
}

#[tokio::test]
async fn an_escalated_bash_that_is_denied_or_under_never_runs_nothing() {
    for (tier, probe) in confining_tiers() {
        let scene = scene();
        let denied = host(&scene, probe.clone(), ApprovalPolicy::OnRequest);
        let gate = RecordingGate::answering(ApprovalDecision::Deny { reason: None });
        let result = call(
            &denied,
            Arc::clone(&gate),
            "bash",
            escalated(&touch_both(&scene)),
        )
        .await;
        assert_eq!(
            result.error_code(),
            Some("approval_denied"),
            "{tier:?}: {result:?}"
        );
        assert_eq!(gate.asked().len(), 1);

        let never = host(&scene, probe, ApprovalPolicy::Never);
        let gate = RecordingGate::never_asked();
        let result = call(
            &never,
            Arc::clone(&gate),
            "bash",
            escalated(&touch_both(&scene)),
        )
        .await;
        assert_eq!(
            result.error_code(),
            Some("approval_policy_blocked"),
            "{tier:?}: {result:?}"
        );
        assert!(!scene.outside.join("escaped.txt").exists(), "{tier:?}");
        assert!(!scene.workspace.join("inside.txt").exists(), "{tier:?}");
    }
}

#[tokio::test]
async fn an_escalated_background_job_asks_and_runs_unconfined() {
    for (tier, probe) in confining_tiers() {
        let scene = scene();
        let assembly = host(&scene, probe, ApprovalPolicy::OnRequest);
        let gate = RecordingGate::answering(ApprovalDecision::Allow);
        let marker = scene.outside.join("job.txt");
        let mut args = escalated(&format!("touch {}", marker.display()));
        args["action"] = json!("start");
        let result = call(&assembly, Arc::clone(&gate), "background_shell", args).await;
        assert!(!result.is_error, "{tier:?}: {result:?}");
        assert!(
            wait_for(&marker).await,
            "{tier:?}: the job did not write outside"
        );
        let asked = gate.asked();
        assert_eq!(asked.len(), 1, "{tier:?}: {asked:?}");
        assert_eq!(asked[0].reason, ApprovalReason::EscalatedCommand);
    }
}

async fn wait_for(path: &Path) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !path.exists() {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}
