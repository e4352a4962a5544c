//! The `HookRunner` contract suite from kun-ports, run against `HookEngine` with real scripts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::script;
use kun_hooks::{HookEngine, HooksConfig};
use kun_ports::HookRunner;
use kun_ports::testkit::{HookScenario, hook_runner_contract};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

fn engine_for(dir: &Path, scenario: HookScenario) -> Arc<dyn HookRunner> {
    let name = format!("hook-{}.sh", std::fs::read_dir(dir).unwrap().count());
    let (phase, body, timeout) = match scenario {
        HookScenario::None => {
            return Arc::new(HookEngine::builder().build().unwrap());
        }
        HookScenario::DenyPre { reason } => {
            let reason_file = dir.join(format!("{name}.reason"));
            std::fs::write(&reason_file, reason).unwrap();
            let body = format!("cat >/dev/null\ncat '{}' >&2\nexit 2", reason_file.display());
            ("PreToolUse", body, 10.0)
        }
        HookScenario::AllowPre => (
            "PreToolUse",
            r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'"#.to_owned(),
            10.0,
        ),
        HookScenario::RewritePre(value) => (
            "PreToolUse",
            format!("cat <<'JSON'\n{}\nJSON", json!({"updatedInput": value})),
            10.0,
        ),
        HookScenario::FailPre => ("PreToolUse", "sleep 30".to_owned(), 1.0),
        HookScenario::ReplacePost(value) => (
            "PostToolUse",
            format!("cat <<'JSON'\n{}\nJSON", json!({"output": value})),
            10.0,
        ),
        HookScenario::FlipPostError => (
            "PostToolUse",
            r#"input=$(cat)
case "$input" in
  *'"is_error":false'*) echo '{"is_error": true}' ;;
  *) echo '{"is_error": false}' ;;
esac"#
                .to_owned(),
            10.0,
        ),
    };
    script(dir, &name, &body);
    let command = dir.join(&name);
    let config = json!({ phase: [{"matcher": "*", "hooks": [
        {"type": "command", "command": command.to_str().unwrap(), "timeout": timeout}
    ]}]});
    Arc::new(
        HookEngine::builder()
            .config(HooksConfig::from_value(&config).unwrap())
            .build()
            .unwrap(),
    )
}

#[tokio::test]
async fn hook_engine_with_command_hooks_honours_the_contract() {
    let scripts = tempfile::tempdir().unwrap();
    hook_runner_contract(|scenario| engine_for(scripts.path(), scenario)).await;
}
