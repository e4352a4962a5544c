//! `load_skill` and the skills provider.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use kun_ports::MockSandboxPolicy;
use kun_ports::testkit::tool_provider_contract;
use kun_ports::{
    NoProgress, OpenCatalog, ProviderKind, ToolContext, ToolHostContext, ToolPolicy, ToolProvider,
    ToolResult, ToolTurn, WorkspaceStanding,
};
use kun_skills::{
    DiscoveryOptions, INJECTION_BUDGET_BYTES, LoadedSkills, SkillsProvider, discover,
};
use serde_json::{Value, json};
use std::fs;
use std::path::Path;
use std::sync::Arc;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn provider(root: &Path) -> (SkillsProvider, Arc<LoadedSkills>) {
    write(
        root,
        ".claude/skills/pdf-forms/SKILL.md",
        "---\nname: PDF forms\ndescription: Fill PDF forms\nallowed-tools: Read\nrestrict-tools: read, bash\n---\nUse scripts/fill.py.\n",
    );
    write(
        root,
        "skills/huge/SKILL.md",
        &format!("---\ndescription: huge\n---\n{}", "y".repeat(100_000)),
    );
    let catalog = discover(&DiscoveryOptions::new(root).with_standing(WorkspaceStanding::Trusted));
    let loaded = Arc::new(LoadedSkills::new());
    (
        SkillsProvider::new(Arc::new(catalog), Arc::clone(&loaded)),
        loaded,
    )
}

async fn call(provider: &SkillsProvider, ctx: &ToolHostContext, args: Value) -> ToolResult {
    let tool = provider.tools().remove(0);
    let sandbox = MockSandboxPolicy::new();
    let tool_ctx = ToolContext {
        turn: ToolTurn::of(ctx, &OpenCatalog),
        call_id: "c1",
        sandbox: &sandbox,
        progress: &NoProgress,
    };
    tool.execute(args, tool_ctx).await.unwrap()
}

fn ctx() -> ToolHostContext {
    ToolHostContext::builder("thread-1", "turn-1")
        .workspace("/ws")
        .build()
}

#[tokio::test]
async fn the_provider_honours_the_contract_and_declares_itself() {
    let ws = tempfile::tempdir().unwrap();
    let (provider, _) = provider(ws.path());
    tool_provider_contract(&provider);
    assert_eq!(provider.kind(), ProviderKind::Skill);
    let tools = provider.tools();
    let spec = tools[0].spec();
    assert_eq!(spec.name, "load_skill");
    assert_eq!(spec.policy, ToolPolicy::Auto);
    assert!(spec.description.contains("pdf-forms"));

    let empty = tempfile::tempdir().unwrap();
    let none = SkillsProvider::new(
        Arc::new(discover(&DiscoveryOptions::new(empty.path()))),
        Arc::new(LoadedSkills::new()),
    );
    assert!(!none.policy().is_usable());
    assert!(
        none.policy()
            .reason
            .unwrap()
            .contains("no skills were found")
    );
    tool_provider_contract(&none);
}

#[tokio::test]
async fn loads_by_any_form_of_the_id_and_records_the_turn() {
    let ws = tempfile::tempdir().unwrap();
    let (provider, loaded) = provider(ws.path());
    for given in ["pdf-forms", "$pdf-forms", "skill:PDF-Forms", "PDF forms"] {
        let result = call(&provider, &ctx(), json!({"skill_id": given})).await;
        assert!(!result.is_error, "{given}: {result:?}");
        assert_eq!(result.output["skill_id"], "pdf-forms");
        assert_eq!(result.output["truncated"], false);
        assert_eq!(result.output["allowed_tools"], json!(["read"]));
        assert_eq!(result.output["restrict_tools"], json!(["bash", "read"]));
        assert!(result.model_text().contains("Use scripts/fill.py."));
    }
    assert_eq!(loaded.loaded("thread-1", "turn-1"), ["pdf-forms"]);
}

#[tokio::test]
async fn a_long_skill_is_truncated_to_the_budget_with_a_marker() {
    let ws = tempfile::tempdir().unwrap();
    let (provider, _) = provider(ws.path());
    let result = call(&provider, &ctx(), json!({"skill_id": "huge"})).await;
    assert_eq!(result.output["truncated"], true);
    let instruction = result.output["instruction"].as_str().unwrap();
    assert_eq!(instruction.len(), INJECTION_BUDGET_BYTES);
    assert!(instruction.ends_with("…(truncated)"));
}

#[tokio::test]
async fn unknown_blank_and_blocked_ids_are_clear_errors() {
    let ws = tempfile::tempdir().unwrap();
    let (provider, loaded) = provider(ws.path());
    let unknown = call(&provider, &ctx(), json!({"skill_id": "nope"})).await;
    assert!(unknown.is_error);
    assert_eq!(unknown.output["code"], "invalid_arguments");
    assert!(unknown.model_text().contains("Available: huge, pdf-forms"));
    let blank = call(&provider, &ctx(), json!({"skill_id": "  "})).await;
    assert!(blank.model_text().contains("skill_id is required"));
    let missing = call(&provider, &ctx(), json!({})).await;
    assert_eq!(missing.output["code"], "invalid_arguments");

    let mut blocked = ctx();
    blocked.lists.blocked_skill_ids = ["pdf-forms"].into_iter().collect();
    let result = call(&provider, &blocked, json!({"skill_id": "pdf-forms"})).await;
    assert!(result.is_error);
    assert!(result.model_text().contains("blocked in this turn"));
    assert!(loaded.loaded("thread-1", "turn-1").is_empty());
}
