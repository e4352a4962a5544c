//! Configuration layers, precedence, provenance and errors that name file, line and key.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use kun_composition::config::{ApprovalFallback, ConfigPaths, Overrides, Settings, Source};
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
        ..Overrides::default()
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
    let s = Settings::load(&layers.paths(false), &Overrides::default()).unwrap();
    let groups = s.hooks.groups(HookPhase::PreToolUse);
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0].hooks[0].label(), "user.sh");
    assert_eq!(groups[1].hooks[0].label(), "./.kun/hooks/check.sh");
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
