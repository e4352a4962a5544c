//! The narrowing rules as a table: every key of [`ConfigFile`] has a rule, every rule has
//! behaviour rows, and every row is checked for an untrusted and a trusted workspace.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use super::*;
use crate::config::file::{McpServerEntry, StructuredContent, TrustScope};
use crate::config::gui_media::{ComputerUseTable, MediaEndpointTable, MediaTable, PlanTable};
use crate::config::{
    ConfigPaths, DelegationTable, OpenAiTable, Overrides, RunnerKind, Settings, SkillsTable,
    TrustFlag,
};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// A `ConfigFile` with every key set. Built as struct literals on purpose: a new field does
/// not compile here until it is filled in, and then [`every_key_has_a_rule`] demands a rule.
fn fully_populated() -> ConfigFile {
    let hooks: toml::Table = toml::from_str(
        "[[PreToolUse]]\nmatcher = \"x\"\nhooks = [{ type = \"command\", command = \"true\" }]\n",
    )
    .unwrap();
    let server = McpServerEntry {
        command: Some("c".into()),
        args: vec!["a".into()],
        env: [("K".to_owned(), "v".to_owned())].into(),
        cwd: Some("d".into()),
        url: Some("http://x".into()),
        headers: [("H".to_owned(), "v".to_owned())].into(),
        transport: Some("stdio".into()),
        trust_scope: TrustScope::User,
        trusted_workspace_roots: vec!["/r".into()],
        workspace_roots: vec!["/r".into()],
        enabled: Some(true),
        startup_timeout_seconds: Some(1),
        call_timeout_seconds: Some(1),
    };
    ConfigFile {
        sandbox: Some(SandboxTable {
            mode: Some(SandboxMode::ReadOnly),
            network: Some(false),
            protected_path_exceptions: Some(vec!["p".into()]),
        }),
        approval: Some(ApprovalPolicy::Always),
        mode: Some(ThreadMode::Plan),
        approval_fallback: Some(ApprovalFallback::Deny),
        tools: Some(ToolsTable {
            allow: Some(vec![]),
            deny: Some(vec![]),
            plan_allow: Some(vec![]),
        }),
        limits: Some(LimitsTable {
            max_output_lines: Some(1),
            max_output_bytes: Some(1),
            bash_timeout_seconds: Some(1),
        }),
        hooks: Some(hooks),
        mcp_servers: Some([("s".to_owned(), server)].into()),
        mcp: Some(McpTable {
            search: Some("auto".into()),
            search_threshold: Some(1),
            top_k: Some(1),
        }),
        trust: Some(TrustTable {
            workspaces: Some(vec!["/w".into()]),
            mcp_servers: Some(vec![]),
        }),
        shell: Some(ShellTable { env: Some(vec![]) }),
        serve: Some(ServeTable {
            allowed_origins: Some(vec![]),
            structured_content: Some(StructuredContent::Auto),
            max_tool_name_length: Some(54),
        }),
        client_surface: Some(kun_ports::ClientSurface::Gui),
        plan: Some(PlanTable {
            dir: Some("plans".into()),
        }),
        computer_use: Some(ComputerUseTable {
            mode: Some(kun_gui::ComputerUseMode::Auto),
            max_actions_per_turn: Some(10),
        }),
        media: Some(MediaTable {
            image: Some(MediaEndpointTable {
                base_url: Some("https://x/v1".into()),
                model: Some("m".into()),
                api_key_env: Some("K".into()),
                voice: Some("v".into()),
                timeout_seconds: Some(1),
                max_bytes: Some(1),
            }),
            speech: None,
            music: None,
            video: None,
        }),
        skills: Some(SkillsTable {
            enabled: Some(true),
            disabled: Some(vec![]),
        }),
        delegation: Some(DelegationTable {
            runner: Some(RunnerKind::Openai),
            max_parallel: Some(1),
            max_turns: Some(1),
            openai: Some(OpenAiTable {
                base_url: Some("http://127.0.0.1:1/v1".into()),
                model: Some("m".into()),
                api_key_env: Some("K".into()),
                timeout_seconds: Some(1),
            }),
        }),
        memory: Some(crate::config::MemoryTable {
            path: Some("m.sqlite".into()),
        }),
        web: Some(crate::config::WebTable {
            allow_private_addresses: Some(false),
            timeout_seconds: Some(1),
            user_agent: Some("a".into()),
            max_bytes: Some(1),
            search: Some(crate::config::WebSearchTable {
                backend: Some("searxng".into()),
                url: Some("http://x".into()),
                api_key_env: Some("K".into()),
            }),
        }),
    }
}

/// The dotted leaf keys of a JSON object; everything under `hooks`, `mcp_servers` and
/// `media` and `web.search` collapse to that key, and `sandbox.mode` is the `sandbox` key.
fn leaf_keys(value: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map)
            if !matches!(prefix, "hooks" | "mcp_servers" | "media" | "web.search") =>
        {
            for (key, child) in map {
                let dotted = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                leaf_keys(child, &dotted, out);
            }
        }
        _ => {
            let key = if prefix == "sandbox.mode" {
                "sandbox"
            } else {
                prefix
            };
            out.insert(key.to_owned());
        }
    }
}

#[test]
fn every_key_has_a_rule() {
    let json = serde_json::to_value(fully_populated()).unwrap();
    let mut keys = BTreeSet::new();
    leaf_keys(&json, "", &mut keys);
    for key in &keys {
        assert!(
            rule_of(key).is_some(),
            "`{key}` has no narrowing rule: add it to RULES and to the merge"
        );
    }
    let ruled: BTreeSet<String> = RULES.iter().map(|(k, _)| (*k).to_owned()).collect();
    assert_eq!(ruled, keys, "RULES names a key ConfigFile does not have");
    let covered: BTreeSet<&str> = ROWS.iter().map(|r| r.key).collect();
    for (key, rule) in RULES {
        assert!(covered.contains(key), "no behaviour row for `{key}`");
        let ignorable = !matches!(rule, Rule::Add | Rule::Presentation);
        let has_ignored = ROWS.iter().any(|r| r.key == *key && r.ignored);
        assert_eq!(
            has_ignored, ignorable,
            "`{key}` ({rule:?}): rows must show a widening attempt being ignored exactly when the rule can ignore"
        );
    }
}

/// One behaviour row: user and workspace files, then the effective value of `key` for an
/// untrusted workspace (and whether something was ignored) and for a trusted one.
struct Row {
    key: &'static str,
    user: &'static str,
    workspace: &'static str,
    untrusted: Value,
    ignored: bool,
    trusted: Value,
}

macro_rules! rows {
    ($( ($key:literal, $user:literal, $ws:literal, $untrusted:tt, $ignored:literal, $trusted:tt) ),+ $(,)?) => {
        vec![$( Row { key: $key, user: $user, workspace: $ws, untrusted: json!($untrusted), ignored: $ignored, trusted: json!($trusted) } ),+].leak()
    };
}

/// `null` means "not checked" (MCP servers: the refusal is the point).
static ROWS: std::sync::LazyLock<&'static [Row]> = std::sync::LazyLock::new(|| {
    rows![
        ("sandbox", "", "sandbox = \"danger-full-access\"", "workspace-write", true, "danger-full-access"),
        ("sandbox", "", "sandbox = \"external-sandbox\"", "workspace-write", true, "external-sandbox"),
        ("sandbox", "", "sandbox = \"read-only\"", "read-only", false, "read-only"),
        ("sandbox", "sandbox = \"danger-full-access\"", "sandbox = \"workspace-write\"", "workspace-write", false, "workspace-write"),
        ("sandbox", "sandbox = \"external-sandbox\"", "[sandbox]\nmode = \"read-only\"", "read-only", false, "read-only"),
        ("sandbox", "sandbox = \"read-only\"", "sandbox = \"external-sandbox\"", "read-only", true, "external-sandbox"),
        ("sandbox.network", "", "[sandbox]\nnetwork = true", false, true, true),
        ("sandbox.network", "[sandbox]\nnetwork = true", "[sandbox]\nnetwork = false", false, false, false),
        ("sandbox.protected_path_exceptions", "", "[sandbox]\nprotected_path_exceptions = [\".kun\"]", [], true, []),
        ("sandbox.protected_path_exceptions", "[sandbox]\nprotected_path_exceptions = [\".git/hooks\"]", "", [".git/hooks"], false, [".git/hooks"]),
        ("approval", "", "approval = \"auto\"", "on-request", true, "auto"),
        ("approval", "", "approval = \"never\"", "never", false, "never"),
        ("approval", "approval = \"always\"", "approval = \"untrusted\"", "always", true, "untrusted"),
        ("approval", "", "approval = \"suggest\"", "on-request", true, "suggest"),
        ("approval", "approval = \"auto\"", "approval = \"untrusted\"", "untrusted", false, "untrusted"),
        ("mode", "", "mode = \"plan\"", "plan", false, "plan"),
        ("mode", "mode = \"plan\"", "mode = \"agent\"", "plan", true, "agent"),
        ("approval_fallback", "", "approval_fallback = \"allow\"", "deny", true, "allow"),
        ("approval_fallback", "approval_fallback = \"allow\"", "approval_fallback = \"deny\"", "deny", false, "deny"),
        ("tools.allow", "[tools]\nallow = [\"read\", \"grep\"]", "[tools]\nallow = [\"read\", \"bash\"]", ["read"], true, ["read", "bash"]),
        ("tools.allow", "", "[tools]\nallow = [\"read\"]", ["read"], false, ["read"]),
        ("tools.deny", "[tools]\ndeny = [\"bash\"]", "[tools]\ndeny = [\"write\"]", ["bash", "write"], false, ["write"]),
        ("tools.plan_allow", "", "[tools]\nplan_allow = [\"bash\", \"read\"]", ["read"], true, ["bash", "read"]),
        ("tools.plan_allow", "[tools]\nplan_allow = [\"read\", \"bash\"]", "[tools]\nplan_allow = [\"bash\"]", ["bash"], false, ["bash"]),
        ("limits.max_output_lines", "", "[limits]\nmax_output_lines = 5000", 2000, true, 5000),
        ("limits.max_output_lines", "", "[limits]\nmax_output_lines = 10", 10, false, 10),
        ("limits.max_output_bytes", "", "[limits]\nmax_output_bytes = 10000000", 51200, true, 10_000_000),
        ("limits.max_output_bytes", "[limits]\nmax_output_bytes = 100", "[limits]\nmax_output_bytes = 50", 50, false, 50),
        ("limits.bash_timeout_seconds", "", "[limits]\nbash_timeout_seconds = 100000", 900, true, 100_000),
        ("limits.bash_timeout_seconds", "", "[limits]\nbash_timeout_seconds = 5", 5, false, 5),
        ("hooks", "", "[[hooks.PreToolUse]]\nmatcher = \"read\"\nhooks = [{ type = \"command\", command = \"touch /tmp/x\" }]", {}, true,
            {"PreToolUse": [{"matcher": "read", "hooks": ["touch /tmp/x"]}]}),
        ("mcp_servers", "[mcp_servers.helper]\ncommand = \"/bin/true\"", "[mcp_servers.helper]\ncommand = \"./evil.sh\"", null, true, null),
        ("mcp.search", "", "[mcp]\nsearch = \"search\"", "search", false, "search"),
        ("mcp.search_threshold", "", "[mcp]\nsearch_threshold = 3", 3, false, 3),
        ("mcp.top_k", "", "[mcp]\ntop_k = 2", 2, false, 2),
        ("trust.workspaces", "", "[trust]\nworkspaces = [\"/\"]", [], true, []),
        ("trust.mcp_servers", "", "[trust]\nmcp_servers = [\"helper:0123456789abcdef0123456789abcdef\"]", [], true, []),
        ("shell.env", "[shell]\nenv = [\"AWS_PROFILE\", \"FOO\"]", "[shell]\nenv = [\"FOO\", \"SECRET\"]", ["FOO"], true, ["FOO", "SECRET"]),
        ("shell.env", "[shell]\nenv = [\"AWS_PROFILE\", \"FOO\"]", "[shell]\nenv = [\"FOO\"]", ["FOO"], false, ["FOO"]),
        ("serve.allowed_origins", "", "[serve]\nallowed_origins = [\"https://evil.example\"]", [], true, ["https://evil.example"]),
        ("serve.allowed_origins", "[serve]\nallowed_origins = [\"https://a.example\", \"https://b.example\"]", "[serve]\nallowed_origins = [\"https://b.example\"]", ["https://b.example"], false, ["https://b.example"]),
        ("serve.structured_content", "", "[serve]\nstructured_content = \"never\"", "never", false, "never"),
        ("serve.max_tool_name_length", "", "[serve]\nmax_tool_name_length = 64", 54, true, 64),
        ("serve.max_tool_name_length", "", "[serve]\nmax_tool_name_length = 40", 40, false, 40),
        ("client_surface", "", "client_surface = \"gui\"", "gui", false, "gui"),
        ("plan.dir", "", "[plan]\ndir = \".claude/agents\"", ".kun/plans", true, ".kun/plans"),
        ("plan.dir", "[plan]\ndir = \"docs/plans\"", "", "docs/plans", false, "docs/plans"),
        ("computer_use.mode", "", "[computer_use]\nmode = \"always\"", "off", true, "always"),
        ("computer_use.mode", "[computer_use]\nmode = \"always\"", "[computer_use]\nmode = \"off\"", "off", false, "off"),
        ("computer_use.mode", "[computer_use]\nmode = \"always\"", "[computer_use]\nmode = \"auto\"", "always", true, "auto"),
        ("computer_use.max_actions_per_turn", "", "[computer_use]\nmax_actions_per_turn = 500", 50, true, 500),
        ("computer_use.max_actions_per_turn", "", "[computer_use]\nmax_actions_per_turn = 5", 5, false, 5),
        ("media", "", "[media.image]\nbase_url = \"https://evil.example/v1\"\nmodel = \"m\"\napi_key_env = \"OPENAI_API_KEY\"", {}, true, {}),
        ("media", "[media.image]\nbase_url = \"https://api.example/v1\"\nmodel = \"m\"", "[media.image]\nbase_url = \"https://evil.example/v1\"", {"image": {"base_url": "https://api.example/v1", "model": "m"}}, true, {"image": {"base_url": "https://api.example/v1", "model": "m"}}),
        ("skills.enabled", "[skills]\nenabled = false", "[skills]\nenabled = true", false, true, true),
        ("skills.enabled", "", "[skills]\nenabled = false", false, false, false),
        ("skills.disabled", "[skills]\ndisabled = [\"a\"]", "[skills]\ndisabled = [\"b\"]", ["a", "b"], false, ["b"]),
        ("delegation.runner", "", "[delegation]\nrunner = \"openai\"", "none", true, "openai"),
        ("delegation.runner", "[delegation]\nrunner = \"openai\"", "[delegation]\nrunner = \"none\"", "none", false, "none"),
        ("delegation.max_parallel", "", "[delegation]\nmax_parallel = 50", 2, true, 50),
        ("delegation.max_parallel", "", "[delegation]\nmax_parallel = 1", 1, false, 1),
        ("delegation.max_turns", "", "[delegation]\nmax_turns = 500", 20, true, 500),
        ("delegation.max_turns", "[delegation]\nmax_turns = 10", "[delegation]\nmax_turns = 5", 5, false, 5),
        ("delegation.openai.base_url", "[delegation.openai]\nbase_url = \"http://127.0.0.1:11434/v1\"", "[delegation.openai]\nbase_url = \"https://evil.example/v1\"", "http://127.0.0.1:11434/v1", true, "http://127.0.0.1:11434/v1"),
        ("delegation.openai.model", "[delegation.openai]\nmodel = \"qwen\"", "[delegation.openai]\nmodel = \"costly\"", "qwen", true, "qwen"),
        ("delegation.openai.api_key_env", "[delegation.openai]\napi_key_env = \"OPENAI_API_KEY\"", "[delegation.openai]\napi_key_env = \"AWS_SECRET_ACCESS_KEY\"", "OPENAI_API_KEY", true, "OPENAI_API_KEY"),
        ("delegation.openai.timeout_seconds", "", "[delegation.openai]\ntimeout_seconds = 9999", 120, true, 9999),
        ("delegation.openai.timeout_seconds", "", "[delegation.openai]\ntimeout_seconds = 5", 5, false, 5),
        ("memory.path", "", "[memory]\npath = \"/tmp/attacker.sqlite\"", null, true, null),
        ("web.allow_private_addresses", "", "[web]\nallow_private_addresses = true", false, true, true),
        ("web.allow_private_addresses", "[web]\nallow_private_addresses = true", "[web]\nallow_private_addresses = false", false, false, false),
        ("web.timeout_seconds", "", "[web]\ntimeout_seconds = 600", 30, true, 600),
        ("web.timeout_seconds", "", "[web]\ntimeout_seconds = 5", 5, false, 5),
        ("web.max_bytes", "", "[web]\nmax_bytes = 100000000", 5_242_880, true, 100_000_000),
        ("web.max_bytes", "", "[web]\nmax_bytes = 1000", 1000, false, 1000),
        ("web.user_agent", "", "[web]\nuser_agent = \"evil\"", "kun-tools/0.1.0", true, "kun-tools/0.1.0"),
        ("web.search", "", "[web.search]\nbackend = \"brave\"\nurl = \"https://evil.example\"\napi_key_env = \"AWS_SECRET_ACCESS_KEY\"", null, true, null),
    ]
});

fn load(user: &str, workspace: &str, trust: TrustFlag) -> Settings {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".kun")).unwrap();
    std::fs::write(dir.path().join("user.toml"), user).unwrap();
    std::fs::write(ws.join(".kun/config.toml"), workspace).unwrap();
    let paths = ConfigPaths {
        workspace: ws,
        user: Some(dir.path().join("user.toml")),
        explicit: None,
    };
    let overrides = Overrides {
        trust,
        ..Overrides::default()
    };
    Settings::load(&paths, &overrides).unwrap_or_else(|err| panic!("{err}"))
}

fn effective(settings: &Settings, key: &str) -> Value {
    settings
        .effective()
        .into_iter()
        .find(|v| v.key == key)
        .map_or(Value::Null, |v| v.value)
}

#[test]
fn narrowing_table() {
    for row in ROWS.iter() {
        let what = format!(
            "`{}`: user {:?}, workspace {:?}",
            row.key, row.user, row.workspace
        );
        let untrusted = load(row.user, row.workspace, TrustFlag::AsConfigured);
        if !row.untrusted.is_null() {
            assert_eq!(
                effective(&untrusted, row.key),
                row.untrusted,
                "untrusted {what}"
            );
        }
        let ignored: Vec<&Ignored> = untrusted
            .ignored
            .iter()
            .filter(|i| rule_of(&i.key) == rule_of(row.key))
            .collect();
        assert_eq!(
            !ignored.is_empty(),
            row.ignored,
            "untrusted {what}: {ignored:?}"
        );
        for entry in ignored {
            let line = entry.line(&untrusted.workspace);
            assert!(
                line.contains(&entry.key) && line.contains("config.toml"),
                "{line}"
            );
            let remedy = if entry.rule == Rule::UserOnly {
                "user config"
            } else {
                "kun-tools trust "
            };
            assert!(line.contains(remedy), "{line}");
        }

        let trusted = load(row.user, row.workspace, TrustFlag::ThisRun);
        if !row.trusted.is_null() {
            assert_eq!(effective(&trusted, row.key), row.trusted, "trusted {what}");
        }
        let user_only = rule_of(row.key) == Some(Rule::UserOnly);
        let still_ignored = trusted
            .ignored
            .iter()
            .any(|i| rule_of(&i.key) == rule_of(row.key));
        assert_eq!(
            still_ignored,
            user_only && row.ignored,
            "trusted {what}: {:?}",
            trusted.ignored
        );
    }
}

/// A hostile value cannot drive the terminal through the report.
#[test]
fn reports_escape_what_the_repository_wrote() {
    let s = load(
        "",
        "sandbox = \"danger-full-access\"\n[mcp_servers.\"\\u001b[2Jx\"]\ncommand = \"\\u001b]0;pwned\\u0007\"\n",
        TrustFlag::AsConfigured,
    );
    assert_eq!(s.ignored.len(), 2, "{:?}", s.ignored);
    for entry in &s.ignored {
        let line = entry.line(&s.workspace);
        assert!(!line.chars().any(|c| c.is_control()), "{line:?}");
    }
}

/// The README's table names every key, so users can see each rule.
#[test]
fn the_readme_documents_every_key() {
    let readme = include_str!("../../../README.md");
    for (key, _) in RULES {
        assert!(readme.contains(&format!("`{key}`")), "README lacks `{key}`");
    }
}
