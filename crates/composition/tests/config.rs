//! Configuration layers, precedence, provenance and errors that name file, line and key.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use kun_composition::config::{
    ApprovalFallback, ConfigPaths, Overrides, Settings, Source, TrustFlag,
};
use kun_ports::{ApprovalPolicy, HookPhase, SandboxMode, ThreadMode};
use std::path::{Path, PathBuf};

struct Layers {
    dir: tempfile::TempDir,
}

impl Layers {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/.kun")).unwrap();
        std::fs::create_dir_all(dir.path().join("user")).unwrap();
        Self { dir }
    }
    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }
    fn user_file(&self) -> PathBuf {
        self.dir.path().join("user/config.toml")
    }
    fn ws_file(&self) -> PathBuf {
        self.ws().join(".kun/config.toml")
    }
    fn flag_file(&self) -> PathBuf {
        self.dir.path().join("flag.toml")
    }
    fn write(&self, path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
    }
    fn paths(&self, explicit: bool) -> ConfigPaths {
        ConfigPaths {
            workspace: self.ws(),
            user: Some(self.user_file()),
            explicit: explicit.then(|| self.flag_file()),
        }
    }
}

#[test]
fn defaults_without_any_file() {
    let layers = Layers::new();
    let s = Settings::load(&layers.paths(false), &Overrides::default()).unwrap();
    assert_eq!(s.sandbox, SandboxMode::WorkspaceWrite);
    assert_eq!(s.approval, ApprovalPolicy::OnRequest);
    assert_eq!(s.mode, ThreadMode::Agent);
    assert_eq!(s.approval_fallback, ApprovalFallback::Deny);
    assert_eq!(s.source_of("sandbox"), Source::Default);
}

/// Flags that trust the workspace for the run: its layer then counts as the user's own.
fn trusted() -> Overrides {
    Overrides {
        trust: TrustFlag::ThisRun,
        ..Overrides::default()
    }
}

#[test]
fn four_layers_later_wins_key_by_key() {
    let layers = Layers::new();
    layers.write(
        &layers.user_file(),
        "sandbox = \"read-only\"\napproval = \"always\"\nmode = \"plan\"\n[limits]\nmax_output_lines = 10\nmax_output_bytes = 100\n",
    );
    layers.write(
        &layers.ws_file(),
        "approval = \"untrusted\"\n[limits]\nmax_output_lines = 20\n[tools]\ndeny = [\"bash\"]\n",
    );
    layers.write(
        &layers.flag_file(),
        "mode = \"agent\"\n[tools]\nallow = [\"read\", \"grep\"]\n",
    );
    let overrides = Overrides {
        sandbox: Some(SandboxMode::DangerFullAccess),
        ..trusted()
    };
    let s = Settings::load(&layers.paths(true), &overrides).unwrap();
    assert_eq!(s.sandbox, SandboxMode::DangerFullAccess);
    assert_eq!(s.source_of("sandbox"), Source::CommandLine);
    assert_eq!(s.approval, ApprovalPolicy::Untrusted);
    assert_eq!(s.source_of("approval"), Source::Workspace(layers.ws_file()));
    assert_eq!(s.mode, ThreadMode::Agent);
    assert_eq!(s.source_of("mode"), Source::ConfigFlag(layers.flag_file()));
    assert_eq!(s.limits.max_output_lines, Some(20));
    assert_eq!(s.limits.max_output_bytes, Some(100));
    assert_eq!(
        s.source_of("limits.max_output_bytes"),
        Source::User(layers.user_file())
    );
    assert_eq!(
        s.tools.allow.as_deref(),
        Some(&["read".to_owned(), "grep".to_owned()][..])
    );
    assert_eq!(s.tools.deny.as_deref(), Some(&["bash".to_owned()][..]));
}

fn error_of(text: &str) -> kun_composition::ConfigError {
    let layers = Layers::new();
    layers.write(&layers.ws_file(), text);
    let err = Settings::load(&layers.paths(false), &Overrides::default()).unwrap_err();
    assert_eq!(err.file, layers.ws_file(), "{err}");
    err
}

#[test]
fn unknown_top_level_key() {
    let err = error_of("sandbox = \"read-only\"\nsandboxx = 1\n");
    assert_eq!(err.line, Some(2), "{err}");
    assert_eq!(err.key.as_deref(), Some("sandboxx"), "{err}");
    assert!(err.message.contains("unknown field"), "{err}");
}

#[test]
fn unknown_key_in_a_table() {
    let err = error_of("[tools]\nallow = [\"read\"]\nalow = []\n");
    assert_eq!(err.line, Some(3), "{err}");
    assert_eq!(err.key.as_deref(), Some("tools.alow"), "{err}");
}

#[test]
fn bad_enum_value_lists_the_choices() {
    let err = error_of("\n\nsandbox = \"full\"\n");
    assert_eq!(err.line, Some(3), "{err}");
    assert_eq!(err.key.as_deref(), Some("sandbox"), "{err}");
    assert!(err.message.contains("workspace-write"), "{err}");
    assert!(
        err.to_string().contains("config.toml:3: `sandbox`"),
        "{err}"
    );
}

#[test]
fn wrong_type_and_zero_limit() {
    let err = error_of("[limits]\nmax_output_lines = \"many\"\n");
    assert_eq!(
        (err.line, err.key.as_deref()),
        (Some(2), Some("limits.max_output_lines")),
        "{err}"
    );
    let err = error_of("[limits]\nbash_timeout_seconds = 0\n");
    assert_eq!(
        (err.line, err.key.as_deref()),
        (Some(2), Some("limits.bash_timeout_seconds")),
        "{err}"
    );
}

#[test]
fn syntax_error_names_the_line() {
    let err = error_of("approval = \"auto\"\n[tools\n");
    assert_eq!(err.line, Some(2), "{err}");
}

#[test]
fn bad_hook_names_the_event() {
    let err = error_of(
        "\n[[hooks.PreToolUse]]\nmatcher = \"write|edit\"\nhooks = [{ type = \"command\", comand = \"x\" }]\n",
    );
    assert_eq!(err.line, Some(2), "{err}");
    assert_eq!(err.key.as_deref(), Some("hooks"), "{err}");
    assert!(err.message.contains("comand"), "{err}");
}

#[test]
fn hooks_from_every_layer_run_user_first() {
    let layers = Layers::new();
    layers.write(&layers.user_file(), "[[hooks.PreToolUse]]\nmatcher = \"bash\"\nhooks = [{ type = \"command\", command = \"user.sh\" }]\n");
    layers.write(&layers.ws_file(), "[[hooks.PreToolUse]]\nmatcher = \"write|edit\"\nhooks = [{ type = \"command\", command = \"./.kun/hooks/check.sh\", timeout = 5 }]\n");
    let s = Settings::load(&layers.paths(false), &trusted()).unwrap();
    let groups = s.hooks.groups(HookPhase::PreToolUse);
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0].hooks[0].label(), "user.sh");
    assert_eq!(groups[1].hooks[0].label(), "./.kun/hooks/check.sh");

    // An untrusted workspace's hooks do not run; the report names them.
    let s = Settings::load(&layers.paths(false), &Overrides::default()).unwrap();
    let groups = s.hooks.groups(HookPhase::PreToolUse);
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].hooks[0].label(), "user.sh");
    assert_eq!(s.ignored.len(), 1, "{:?}", s.ignored);
    assert_eq!(s.ignored[0].key, "hooks.PreToolUse");
    assert!(s.ignored[0].given.contains("check.sh"), "{:?}", s.ignored);
}

#[test]
fn mcp_servers_from_mcp_json_and_config() {
    let layers = Layers::new();
    layers.write(
        &layers.ws().join(".mcp.json"),
        r#"{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}, "docs": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}"#,
    );
    layers.write(&layers.ws_file(), "[mcp_servers.time]\ncommand = \"mcp-server-time\"\ntrust_scope = \"user\"\nenabled = false\n");
    let s = Settings::load(&layers.paths(false), &Overrides::default()).unwrap();
    assert_eq!(s.mcp_servers.len(), 2);
    assert_eq!(
        s.mcp_servers["time"].command.as_deref(),
        Some("mcp-server-time")
    );
    assert_eq!(s.mcp_servers["time"].enabled, Some(false));
    assert_eq!(
        s.mcp_servers["docs"].url.as_deref(),
        Some("http://127.0.0.1:9/mcp")
    );
    assert_eq!(
        s.source_of("mcp_servers.docs"),
        Source::McpJson(layers.ws().join(".mcp.json"))
    );
    layers.write(&layers.ws().join(".mcp.json"), "{\"mcpServers\": [}");
    let err = Settings::load(&layers.paths(false), &Overrides::default()).unwrap_err();
    assert!(err.file.ends_with(".mcp.json"), "{err}");
}

#[test]
fn missing_explicit_config_is_an_error() {
    let layers = Layers::new();
    let err = Settings::load(&layers.paths(true), &Overrides::default()).unwrap_err();
    assert_eq!(err.file, layers.flag_file());
    assert!(err.message.contains("cannot read"), "{err}");
}

/// Every kind of bad file, in every layer, names its file, line and key.
#[test]
fn bad_files_in_every_layer_name_file_line_and_key() {
    let cases: [(&str, usize, &str); 6] = [
        (
            "mode = \"agent\"\napproval = \"sometimes\"\n",
            2,
            "approval",
        ),
        (
            "[limits]\nmax_output_bytes = -1\n",
            2,
            "limits.max_output_bytes",
        ),
        ("[tools]\nallow = \"read\"\n", 2, "tools.allow"),
        (
            "[mcp_servers.time]\ncommand = \"uvx\"\ntrust_scope = \"everyone\"\n",
            3,
            "mcp_servers.time.trust_scope",
        ),
        (
            "[mcp_servers.time]\ncomand = \"uvx\"\n",
            2,
            "mcp_servers.time.comand",
        ),
        ("approval_fallback = \"ask\"\n", 1, "approval_fallback"),
    ];
    for (text, line, key) in cases {
        for layer in ["user", "workspace", "flag"] {
            let layers = Layers::new();
            let path = match layer {
                "user" => layers.user_file(),
                "workspace" => layers.ws_file(),
                _ => layers.flag_file(),
            };
            layers.write(&path, text);
            let err =
                Settings::load(&layers.paths(layer == "flag"), &Overrides::default()).unwrap_err();
            assert_eq!(err.file, path, "{layer}: {err}");
            assert_eq!(err.line, Some(line), "{layer}: {err}");
            assert_eq!(err.key.as_deref(), Some(key), "{layer}: {err}");
            let shown = err.to_string();
            assert!(
                shown.contains(&format!(":{line}: `{key}`")),
                "{layer}: {shown}"
            );
        }
    }
}

#[test]
fn check_reports_every_bad_file_at_once() {
    let layers = Layers::new();
    layers.write(&layers.user_file(), "sandbox = \"nope\"\n");
    layers.write(&layers.ws_file(), "[tools]\ndeny = [\"bash\"]\n");
    layers.write(&layers.flag_file(), "\n[limits]\nmax_output_lines = 0\n");
    layers.write(&layers.ws().join(".mcp.json"), "{\"mcpServers\": 3}");
    let errors = Settings::check(&layers.paths(true));
    let files: Vec<PathBuf> = errors.iter().map(|e| e.file.clone()).collect();
    assert_eq!(
        files,
        [
            layers.ws().join(".mcp.json"),
            layers.user_file(),
            layers.flag_file()
        ],
        "{errors:?}"
    );
    assert_eq!(errors[2].line, Some(3));
    assert_eq!(errors[2].key.as_deref(), Some("limits.max_output_lines"));

    let clean = Layers::new();
    clean.write(&clean.ws_file(), "approval = \"auto\"\n");
    assert!(Settings::check(&clean.paths(false)).is_empty());
    let missing = Settings::check(&clean.paths(true));
    assert_eq!(missing.len(), 1);
    assert_eq!(missing[0].file, clean.flag_file());
}

#[test]
fn effective_values_say_where_they_came_from() {
    let layers = Layers::new();
    layers.write(&layers.user_file(), "[limits]\nmax_output_lines = 10\n");
    layers.write(
        &layers.ws_file(),
        "approval = \"untrusted\"\n[[hooks.PostToolUse]]\nmatcher = \".*\"\nhooks = [{ type = \"command\", command = \"./audit.sh\" }]\n[mcp_servers.time]\ncommand = \"uvx\"\n",
    );
    let overrides = Overrides {
        approval_fallback: Some(ApprovalFallback::Allow),
        ..trusted()
    };
    let s = Settings::load(&layers.paths(false), &overrides).unwrap();
    let effective = s.effective();
    let find = |key: &str| {
        effective
            .iter()
            .find(|v| v.key == key)
            .unwrap_or_else(|| panic!("{key} missing"))
            .clone()
    };
    assert_eq!(find("sandbox").value, "workspace-write");
    assert_eq!(find("sandbox").source, Source::Default);
    assert_eq!(find("approval").value, "untrusted");
    assert_eq!(find("approval").source, Source::Workspace(layers.ws_file()));
    assert_eq!(find("approval_fallback").value, "allow");
    assert_eq!(find("approval_fallback").source, Source::CommandLine);
    assert_eq!(find("limits.max_output_lines").value, 10);
    assert_eq!(
        find("limits.max_output_lines").source,
        Source::User(layers.user_file())
    );
    assert_eq!(find("limits.max_output_bytes").value, 51_200);
    assert_eq!(find("limits.bash_timeout_seconds").value, 900);
    assert_eq!(
        find("hooks").value,
        serde_json::json!({"PostToolUse": [{"matcher": ".*", "hooks": ["./audit.sh"]}]})
    );
    assert_eq!(find("mcp_servers.time").value["command"], "uvx");
    let keys: Vec<&str> = effective.iter().map(|v| v.key.as_str()).collect();
    assert_eq!(keys.first(), Some(&"sandbox"));
    assert_eq!(keys.last(), Some(&"mcp_servers.time"));
}
