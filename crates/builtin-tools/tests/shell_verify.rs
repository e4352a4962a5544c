//! `verify_changes` on small fixtures: a failing npm test script, configured shell checks, and
//! a project with nothing to check.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::shell::{CheckSource, ShellConfig, VerifyChangesTool, VerifyConfig};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{CommandConfinement, Tool, ToolResult};
use serde_json::{Value, json};
use std::sync::Arc;

fn unconfined() -> Arc<dyn CommandConfinement> {
    Arc::new(kun_sandbox::NoConfinement)
}

async fn verify(tool: &VerifyChangesTool, ws: &TestWorkspace, args: Value) -> ToolResult {
    tool.execute(args, ws.tool_context("call-1")).await.unwrap()
}

fn configured(commands: &[&str]) -> VerifyChangesTool {
    let verify = VerifyConfig {
        source: CheckSource::Configured(commands.iter().map(|c| (*c).to_owned()).collect()),
        ..VerifyConfig::default()
    };
    VerifyChangesTool::with_config(unconfined(), ShellConfig::default(), verify)
}

#[tokio::test]
async fn a_failing_npm_test_script_is_summarised() {
    let ws = TestWorkspace::new();
    ws.write(
        "package.json",
        r#"{"name": "fixture", "version": "1.0.0", "scripts": {"test": "echo 'running 2 tests' && echo 'FAILED adds numbers: expected 4, got 5' >&2 && exit 1"}}"#,
    );
    let result = verify(&VerifyChangesTool::new(unconfined()), &ws, json!({})).await;
    assert!(result.is_error, "a failed check is an error result");
    let out = &result.output;
    assert_eq!(out["passed"], false);
    let checks = out["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1);
    let check = &checks[0];
    assert_eq!(check["command"], "npm test");
    assert_eq!(check["passed"], false);
    assert_ne!(check["exit_code"], 0);
    let summary = check["summary"].as_str().unwrap();
    assert!(
        summary.contains("FAILED adds numbers: expected 4, got 5"),
        "{summary}"
    );
    assert!(
        check["output_tail"]
            .as_str()
            .unwrap()
            .contains("running 2 tests"),
        "{check}"
    );
}

#[tokio::test]
async fn configured_checks_run_in_order_and_report_each() {
    let ws = TestWorkspace::new();
    let tool = configured(&[
        "echo all good",
        "echo 'compiling'; echo 'error[E0308]: mismatched types' >&2; echo '  --> src/lib.rs:3:5'; exit 101",
        "echo 'no recognisable lines here'; exit 2",
    ]);
    let result = verify(&tool, &ws, json!({})).await;
    assert!(result.is_error);
    let checks = result.output["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 3);
    assert_eq!(checks[0]["passed"], true);
    assert_eq!(checks[0]["exit_code"], 0);
    assert_eq!(checks[0]["summary"], "passed");
    assert_eq!(checks[1]["exit_code"], 101);
    assert_eq!(
        checks[1]["summary"],
        "failed with exit code 101:\nerror[E0308]: mismatched types"
    );
    assert_eq!(checks[2]["exit_code"], 2);
    assert!(
        checks[2]["summary"]
            .as_str()
            .unwrap()
            .contains("no error lines recognised")
    );
    assert_eq!(result.output["passed"], false);
}

#[tokio::test]
async fn all_checks_passing_is_a_success() {
    let ws = TestWorkspace::new();
    let result = verify(&configured(&["true", "echo fine"]), &ws, json!({})).await;
    assert!(!result.is_error, "{}", result.output);
    assert_eq!(result.output["passed"], true);
}

#[tokio::test]
async fn a_check_over_its_timeout_fails_as_timed_out() {
    let ws = TestWorkspace::new();
    let result = verify(
        &configured(&["echo begin; sleep 600"]),
        &ws,
        json!({"timeout_seconds": 1}),
    )
    .await;
    assert!(result.is_error);
    let check = &result.output["checks"][0];
    assert_eq!(check["exit_code"], Value::Null);
    assert!(
        check["summary"].as_str().unwrap().contains("timed out"),
        "{check}"
    );
    assert!(check["output_tail"].as_str().unwrap().contains("begin"));
}

#[tokio::test]
async fn nothing_to_check_says_so() {
    let ws = TestWorkspace::new();
    ws.write("README.md", "no project files\n");
    let tool = VerifyChangesTool::new(unconfined());
    // The host's preflight (step 10b) answers before anyone is asked to approve the call.
    let refused = tool.preflight(&json!({}), &ws.ctx).unwrap_err();
    assert_eq!(refused.code, kun_ports::ErrorCode::NoChecksFound);
    let result = verify(&tool, &ws, json!({})).await;
    assert!(result.is_error);
    assert_eq!(result.error_code(), Some("no_checks_found"));
    assert!(
        result.error_message().unwrap().contains("found no checks"),
        "{}",
        result.output
    );
    // A project with checks passes the preflight.
    ws.write("Cargo.toml", "[package]\n");
    assert!(tool.preflight(&json!({}), &ws.ctx).is_ok());
}
