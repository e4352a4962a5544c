//! Skills and delegation through the binary: `kun-tools skills`, `serve`'s instructions,
//! prompts and resources, `doctor`, and `delegate_task` through `serve` against a local
//! OpenAI-compatible server with the child's approval asked through elicitation.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use kun_delegation::test_server::{OpenAiTestServer, ServerReply};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorCode, GetPromptRequestParams, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::Env;

const LIMIT: Duration = Duration::from_secs(60);

fn write(root: &std::path::Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A workspace with a Claude Code skill, a Codex skill and a broken one, and a
/// `.claude/agents` file.
fn env_with_skills() -> Env {
    let env = Env::new();
    let ws = env.ws();
    write(
        &ws,
        ".claude/skills/pdf-forms/SKILL.md",
        "---\nname: pdf-forms\ndescription: Fill in PDF forms from a JSON file of values.\n\
         allowed-tools: Read, Bash(python3 scripts/fill.py *), NotebookEdit\n---\n\
         Run `python3 scripts/fill.py $ARGUMENTS` and check the output.\n",
    );
    write(
        &ws,
        ".agents/skills/review/SKILL.md",
        "---\nname: review\ndescription: Review a diff, bugs first.\nrestrict-tools: Read, Grep\n\
         triggers:\n  patterns: ['review (the|this) (diff|pr)']\n---\nRead the diff twice.\n",
    );
    write(
        &ws,
        ".claude/skills/broken/SKILL.md",
        "---\nname: [oops\n---\n",
    );
    write(
        &ws,
        ".claude/agents/explore.md",
        "---\nname: explore\ndescription: Explore, and fix while at it\ntools: Read, Write, Bash\n---\nExplore.\n",
    );
    env
}

#[test]
fn the_skills_command_lists_activates_and_explains() {
    let env = env_with_skills();
    let ws = env.ws_arg();
    let out = env
        .command(&[
            "skills",
            "--workspace",
            &ws,
            "--prompt",
            "please review the diff of parser.rs",
            "--file",
            "src/parser.rs",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["pdf-forms", "review"]);
    let pdf = &report["skills"][0];
    for key in [
        "id",
        "name",
        "description",
        "source",
        "allowed_tools",
        "restrict_tools",
    ] {
        assert!(pdf.get(key).is_some(), "{key}");
    }
    assert_eq!(
        pdf["allowed_tools"],
        json!(["bash(python3 scripts/fill.py *)", "read"])
    );
    assert_eq!(
        report["skills"][1]["restrict_tools"],
        json!(["grep", "read"])
    );
    let messages: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{} {}", d["file"], d["message"]))
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("broken/SKILL.md") && m.contains("YAML"))
    );
    assert!(messages.iter().any(|m| m.contains("NotebookEdit")));
    assert!(messages.iter().any(|m| m.contains("not trusted")));
    assert_eq!(
        report["activations"],
        json!([{"id": "review", "score": 500, "reason": "pattern:review (the|this) (diff|pr)", "injected": true}])
    );
    assert_eq!(report["narrowed_tools"], json!(["grep", "read"]));
    assert_eq!(report["pre_approved_tools"], json!([]));

    // Trusted for this run: the same skills' allowed-tools pre-approve.
    let out = env
        .command(&[
            "skills",
            "--workspace",
            &ws,
            "--trust-workspace",
            "--prompt",
            "/pdf-forms form.pdf",
            "--json",
        ])
        .output()
        .unwrap();
    let trusted: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(trusted["activations"][0]["reason"], "explicit:id");
    assert_eq!(
        trusted["pre_approved_tools"],
        json!(["bash(python3 scripts/fill.py *)", "read"])
    );

    // Text output, without a prompt.
    let out = env
        .command(&["skills", "--workspace", &ws])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("skills (2):"), "{text}");
    assert!(text.contains("pdf-forms"));
    assert!(!text.contains("activations"));
}

#[test]
fn doctor_shows_skills_profiles_and_the_runner_state() {
    let env = env_with_skills();
    let ws = env.ws_arg();
    let out = env
        .command(&["doctor", "--workspace", &ws, "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["skills"]["ids"], json!(["pdf-forms", "review"]));
    assert_eq!(report["delegation"]["runner"]["state"], "not_configured");
    assert!(
        report["delegation"]["runner_state"]
            .as_str()
            .unwrap()
            .contains("no child runner configured")
    );
    let explore = report["delegation"]["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "explore")
        .unwrap();
    assert_eq!(
        explore["tools"],
        json!({"policy": "explicit", "tools": ["read"]})
    );
    let delegation = report["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "delegation")
        .unwrap();
    assert_eq!(delegation["reason"], "no child runner configured");
    let text = env
        .command(&["doctor", "--workspace", &ws])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("delegation runner: no child runner configured"),
        "{text}"
    );
    assert!(text.contains("explore [read]"), "{text}");
    assert!(text.contains("skills: 2 (pdf-forms, review)"), "{text}");
}

/// A client that accepts every elicitation with `allow` and records the messages.
#[derive(Clone, Default)]
struct Client {
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("skills-test", "0"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        let mut result = ElicitResult::new(ElicitationAction::Accept);
        result.content = Some(json!({"decision": "allow"}));
        Ok(result)
    }
}

async fn serve(env: &Env, client: Client) -> RunningService<RoleClient, Client> {
    let ws = env.ws_arg();
    let cmd = tokio::process::Command::from(env.command(&["serve", "--workspace", &ws]));
    let transport = TokioChildProcess::new(cmd).unwrap();
    tokio::time::timeout(LIMIT, client.serve(transport))
        .await
        .expect("initialize timed out")
        .expect("initialize failed")
}

#[tokio::test]
async fn serve_has_skills_in_instructions_prompts_and_an_empty_resource_list() {
    let env = env_with_skills();
    let session = serve(&env, Client::default()).await;
    let info = session.peer_info().unwrap();
    let instructions = info.instructions.clone().unwrap();
    assert!(instructions.starts_with("kun-tools:"), "{instructions}");
    // How commands run on this machine, before the skills.
    assert!(
        instructions.contains("Commands run confined") || instructions.contains("not confined"),
        "{instructions}"
    );
    assert!(
        instructions.contains("- pdf-forms: Fill in PDF forms"),
        "{instructions}"
    );
    assert!(instructions.len() <= 2048);
    assert!(info.capabilities.prompts.is_some());

    let prompts = session.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["pdf-forms", "review"]);

    let mut request = GetPromptRequestParams::new("pdf-forms");
    request.arguments = Some(
        json!({"arguments": "form.pdf values.json"})
            .as_object()
            .unwrap()
            .clone(),
    );
    let prompt = session.get_prompt(request).await.unwrap();
    let text = serde_json::to_value(&prompt.messages[0]).unwrap();
    let text = text["content"]["text"].as_str().unwrap().to_owned();
    assert!(
        text.contains("python3 scripts/fill.py form.pdf values.json"),
        "{text}"
    );

    let unknown = session
        .get_prompt(GetPromptRequestParams::new("nope"))
        .await
        .unwrap_err();
    let rmcp::service::ServiceError::McpError(err) = unknown else {
        panic!("{unknown:?}")
    };
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("pdf-forms, review"));

    let resources = session.list_all_resources().await.unwrap();
    assert!(resources.is_empty());

    let tools = session.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "load_skill"));
    assert!(!tools.iter().any(|t| t.name == "delegate_task"));
    session.cancel().await.unwrap();
}

#[tokio::test]
async fn delegate_task_through_serve_asks_the_client_naming_the_sub_agent() {
    let env = env_with_skills();
    let server = OpenAiTestServer::start(
        vec![
            ServerReply::calls(vec![(
                "write",
                json!({"path": "report.md", "content": "# findings\n"}),
            )]),
            ServerReply::answer("wrote report.md"),
        ],
        false,
    )
    .await
    .unwrap();
    write(
        &env.dir.path().join("config"),
        "kun/config.toml",
        &format!(
            "[delegation]\nrunner = \"openai\"\n[delegation.openai]\nbase_url = \"{}\"\n\
             model = \"m\"\ntimeout_seconds = 30\n",
            server.base_url()
        ),
    );
    let client = Client::default();
    let session = serve(&env, client.clone()).await;
    let tools = session.list_all_tools().await.unwrap();
    let delegate = tools.iter().find(|t| t.name == "delegate_task").unwrap();
    assert_eq!(
        delegate.input_schema["properties"]["profile"]["enum"],
        json!([
            "design-reviewer",
            "explore",
            "general",
            "over-engineering-reviewer"
        ])
    );
    let result = session
        .call_tool(
            CallToolRequestParams::new("delegate_task").with_arguments(
                json!({"profile": "general", "task": "Write report.md"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let asked = client.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("`write`"), "{}", asked[0]);
    assert!(asked[0].contains("sub-agent `general`"), "{}", asked[0]);
    assert_eq!(
        std::fs::read_to_string(env.ws().join("report.md")).unwrap(),
        "# findings\n"
    );
    // The workspace's explore asked for write and bash: its child catalog has neither.
    let result = session
        .call_tool(
            CallToolRequestParams::new("delegate_task").with_arguments(
                json!({"profile": "explore", "task": "look"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true), "the script has no third reply");
    let third = &server.requests()[2];
    assert_eq!(third.tool_names(), ["read"]);
    session.cancel().await.unwrap();
}
