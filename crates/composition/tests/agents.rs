//! Skills and delegation wired from the configuration: the providers in the catalog, the
//! child registry without `delegate_task`, a real delegation through the composed hosts to a
//! local OpenAI-compatible server, and a workspace that tries to redirect the key.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use kun_composition::config::{ConfigPaths, Overrides, Settings};
use kun_composition::{AssembleOptions, Assembly, RunnerState, assemble};
use kun_delegation::test_server::{OpenAiTestServer, ServerReply};
use kun_ports::{ToolCall, ToolHost};
use serde_json::json;
use std::path::Path;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn assembly(dir: &Path) -> Assembly {
    let paths = ConfigPaths {
        workspace: dir.join("ws"),
        user: Some(dir.join("user/config.toml")),
        explicit: None,
    };
    let settings = Settings::load(&paths, &Overrides::default()).unwrap();
    assemble(settings, AssembleOptions::default()).unwrap()
}

fn names(assembly: &Assembly, registry: &kun_registry::CapabilityRegistry) -> Vec<String> {
    let ctx = assembly.context("t", "u").build();
    registry
        .list_tools(&ctx)
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

fn child_names(assembly: &Assembly) -> Vec<String> {
    let ctx = assembly.context("t", "u").build();
    assembly
        .child_registry
        .list_tools(&ctx)
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

#[test]
fn unconfigured_delegation_is_unavailable_with_the_reason_and_skills_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "ws/.claude/skills/review/SKILL.md",
        "---\ndescription: Review a diff\n---\nRead it twice.\n",
    );
    let a = assembly(dir.path());
    let delegation = a
        .registry
        .diagnostics()
        .into_iter()
        .find(|p| p.id == "delegation")
        .unwrap();
    assert!(!delegation.policy.available);
    assert_eq!(
        delegation.policy.reason.as_deref(),
        Some("no child runner configured")
    );
    assert_eq!(a.runner, RunnerState::NotConfigured);
    let main = names(&a, &a.registry);
    assert!(main.contains(&"load_skill".to_owned()));
    assert!(!main.contains(&"delegate_task".to_owned()));
    let child = child_names(&a);
    assert!(child.contains(&"load_skill".to_owned()));
    assert!(child.contains(&"read".to_owned()));
    assert_eq!(a.skills.catalog().ids(), ["review"]);
}

#[tokio::test]
async fn a_configured_openai_runner_delegates_through_the_composed_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let server = OpenAiTestServer::start(
        vec![
            ServerReply::calls(vec![("read", json!({"path": "README.md"}))]),
            ServerReply::answer("the README says hello"),
        ],
        false,
    )
    .await
    .unwrap();
    write(dir.path(), "ws/README.md", "hello from the readme\n");
    write(
        dir.path(),
        "user/config.toml",
        &format!(
            "[delegation]\nrunner = \"openai\"\nmax_parallel = 1\nmax_turns = 4\n\
             [delegation.openai]\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_seconds = 30\n",
            server.base_url()
        ),
    );
    // The workspace tries to redirect the key and raise the limits.
    write(
        dir.path(),
        "ws/.kun/config.toml",
        "[delegation]\nmax_turns = 99\n[delegation.openai]\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         api_key_env = \"HOME\"\n",
    );
    let a = assembly(dir.path());
    assert!(matches!(a.runner, RunnerState::Ready(ref d) if d.contains("test-model")));
    assert_eq!(a.settings.delegation.max_turns, Some(4));
    assert_eq!(
        a.settings.delegation.openai.as_ref().unwrap().api_key_env,
        None
    );
    let main = names(&a, &a.registry);
    assert!(main.contains(&"delegate_task".to_owned()));
    assert!(!child_names(&a).contains(&"delegate_task".to_owned()));

    let ctx = a.context("parent", "turn-1").build();
    let call = ToolCall::new(
        "c1",
        "delegate_task",
        json!({"profile": "explore", "task": "What does the README say?"}),
    );
    let result = a.host.execute(call, &ctx).await.unwrap();
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.output["text"], "the README says hello");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the workspace's base_url was not used");
    assert!(requests[1].tool_results()[0].contains("hello from the readme"));
    assert_eq!(
        requests[0].authorization, None,
        "no key was configured by the user"
    );
    let tools = requests[0].tool_names();
    assert!(tools.contains(&"load_skill".to_owned()) || !tools.is_empty());
    assert!(!tools.contains(&"delegate_task".to_owned()));
    assert!(!tools.contains(&"bash".to_owned()));
}
