//! Configuration: the Claude Code `hooks` shape from JSON and TOML, and every kind of bad entry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use kun_hooks::{ConfigError, ConfigFormat, DEFAULT_TIMEOUT, HookSpec, HooksConfig, WorkflowMode};
use kun_ports::HookPhase;
use serde::Deserialize;
use std::time::Duration;

const CLAUDE_JSON: &str = r#"{
  "PreToolUse": [
    { "matcher": "Bash",
      "hooks": [ { "type": "command", "command": "./.kun/hooks/check.sh", "timeout": 5 } ] },
    { "matcher": "mcp__.*",
      "hooks": [ { "type": "command", "command": "echo mcp" } ] }
  ],
  "PostToolUse": [
    { "hooks": [ { "type": "workflow", "url": "http://127.0.0.1:9/hook", "mode": "rewrite",
                   "timeout": 2.5, "secret_env": "KUN_HOOK_SECRET" } ] }
  ],
  "UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "./prompt.sh" } ] } ]
}"#;

#[test]
fn claude_code_json_loads_with_defaults_and_compiled_matchers() {
    let config = HooksConfig::from_json_str(CLAUDE_JSON).unwrap();
    let pre = config.groups(HookPhase::PreToolUse);
    assert_eq!(pre.len(), 2);
    assert!(pre[0].matcher.matches("bash"));
    assert!(!pre[0].matcher.matches("read"));
    assert!(pre[1].matcher.matches("mcp_github_search"));
    let HookSpec::Command(check) = &pre[0].hooks[0] else {
        panic!("expected a command hook");
    };
    assert_eq!(check.command, "./.kun/hooks/check.sh");
    assert_eq!(check.timeout, Duration::from_secs(5));
    let HookSpec::Command(echo) = &pre[1].hooks[0] else {
        panic!("expected a command hook");
    };
    assert_eq!(echo.timeout, DEFAULT_TIMEOUT);

    let post = config.groups(HookPhase::PostToolUse);
    assert!(post[0].matcher.is_any());
    let HookSpec::Workflow(flow) = &post[0].hooks[0] else {
        panic!("expected a workflow hook");
    };
    assert_eq!(flow.url.as_str(), "http://127.0.0.1:9/hook");
    assert_eq!(flow.mode, WorkflowMode::Rewrite);
    assert_eq!(flow.timeout, Duration::from_millis(2500));
    assert_eq!(flow.secret_env.as_deref(), Some("KUN_HOOK_SECRET"));

    assert!(config.has_hooks(HookPhase::UserPromptSubmit));
    assert!(!config.has_hooks(HookPhase::TurnEnd));
}

#[test]
fn toml_with_a_top_level_hooks_table_loads() {
    let config = HooksConfig::from_toml_str(
        r#"
        [[PreToolUse]]
        matcher = "write|edit"
        hooks = [{ type = "command", command = "./.kun/hooks/check.sh", timeout = 5 }]

        [[PostToolUse]]
        hooks = [{ type = "workflow", url = "http://localhost:8080/review", mode = "block" }]
        "#,
    )
    .unwrap();
    let pre = &config.groups(HookPhase::PreToolUse)[0];
    assert!(pre.matcher.matches("write") && pre.matcher.matches("edit"));
    assert!(!pre.matcher.matches("rewrite"));
    let HookSpec::Workflow(flow) = &config.groups(HookPhase::PostToolUse)[0].hooks[0] else {
        panic!("expected a workflow hook");
    };
    assert_eq!(flow.mode, WorkflowMode::Block);
    assert_eq!(flow.timeout, DEFAULT_TIMEOUT);
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    hooks: HooksConfig,
}

#[test]
fn a_config_file_with_hooks_tables_deserialises_the_field() {
    let file: ConfigFile = toml::from_str(
        r#"
        [[hooks.PreToolUse]]
        matcher = "write|edit"
        hooks = [{ type = "command", command = "./.kun/hooks/check.sh", timeout = 5 }]
        "#,
    )
    .unwrap();
    assert_eq!(file.hooks.groups(HookPhase::PreToolUse).len(), 1);

    let empty: ConfigFile = toml::from_str("").unwrap();
    assert!(empty.hooks.is_empty());

    let err = toml::from_str::<ConfigFile>(
        r#"
        [[hooks.PreToolUse]]
        hooks = [{ type = "command", comand = "x" }]
        "#,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("hooks.PreToolUse[0].hooks[0]"), "{err}");
    assert!(err.contains("comand"), "{err}");
}

#[test]
fn claude_settings_files_are_read_for_their_hooks_key() {
    let settings = format!(r#"{{"permissions": {{"allow": []}}, "hooks": {CLAUDE_JSON}}}"#);
    let config = HooksConfig::from_claude_settings_str(&settings).unwrap();
    assert_eq!(config.groups(HookPhase::PreToolUse).len(), 2);
    assert!(
        HooksConfig::from_claude_settings_str("{}")
            .unwrap()
            .is_empty()
    );
}

fn json_err(text: &str) -> ConfigError {
    HooksConfig::from_json_str(text).unwrap_err()
}

fn pre(hook: &str) -> String {
    format!(r#"{{"PreToolUse": [{{"hooks": [{hook}]}}]}}"#)
}

#[test]
fn syntax_errors_name_the_format() {
    assert!(matches!(
        json_err("{"),
        ConfigError::Syntax {
            format: ConfigFormat::Json,
            ..
        }
    ));
    assert!(matches!(
        HooksConfig::from_toml_str("[[PreToolUse]\n").unwrap_err(),
        ConfigError::Syntax {
            format: ConfigFormat::Toml,
            ..
        }
    ));
}

#[test]
fn unknown_events_are_rejected() {
    let err = json_err(r#"{"Stop": []}"#);
    assert_eq!(
        err,
        ConfigError::UnknownEvent {
            event: "Stop".into()
        }
    );
    assert!(err.to_string().contains("PreToolUse"));
}

#[test]
fn unknown_keys_are_rejected_with_the_entry_and_key() {
    let err = json_err(&pre(r#"{"type": "command", "command": "x", "timout": 5}"#));
    assert!(
        matches!(&err, ConfigError::UnknownKey { at, key, .. }
            if at == "hooks.PreToolUse[0].hooks[0]" && key == "timout"),
        "{err:?}"
    );
    let err = json_err(r#"{"PostToolUse": [{"hooks": [], "matchers": "x"}]}"#);
    assert!(
        matches!(&err, ConfigError::UnknownKey { at, key, .. }
            if at == "hooks.PostToolUse[0]" && key == "matchers"),
        "{err:?}"
    );
    let err = json_err(&pre(
        r#"{"type": "workflow", "url": "http://h/", "command": "x"}"#,
    ));
    assert!(
        matches!(&err, ConfigError::UnknownKey { key, .. } if key == "command"),
        "{err:?}"
    );
}

#[test]
fn bad_regexes_are_rejected_at_load() {
    let err = json_err(r#"{"PreToolUse": [{"matcher": "write|(edit", "hooks": []}]}"#);
    assert!(
        matches!(&err, ConfigError::BadMatcher { at, source } if at == "hooks.PreToolUse[0]"
            && source.pattern == "write|(edit"),
        "{err:?}"
    );
    assert!(err.to_string().contains("matcher"));
}

#[test]
fn zero_negative_and_absurd_timeouts_are_rejected() {
    for timeout in ["0", "-1", "0.0", "1e9", "\"5\""] {
        let err = json_err(&pre(&format!(
            r#"{{"type": "command", "command": "x", "timeout": {timeout}}}"#
        )));
        assert!(
            matches!(&err, ConfigError::BadTimeout { at, .. } if at == "hooks.PreToolUse[0].hooks[0]"),
            "timeout {timeout}: {err:?}"
        );
    }
}

#[test]
fn missing_and_mistyped_fields_are_rejected() {
    let cases = [
        (pre(r#"{"command": "x"}"#), "missing type"),
        (pre(r#"{"type": "command"}"#), "missing command"),
        (
            pre(r#"{"type": "command", "command": 5}"#),
            "command not a string",
        ),
        (pre(r#"{"type": "workflow"}"#), "missing url"),
        (
            r#"{"PreToolUse": [{"matcher": "x"}]}"#.to_owned(),
            "missing hooks",
        ),
        (
            r#"{"PreToolUse": {"hooks": []}}"#.to_owned(),
            "groups not a list",
        ),
        (
            r#"{"PreToolUse": [{"matcher": 3, "hooks": []}]}"#.to_owned(),
            "matcher not a string",
        ),
        ("[]".to_owned(), "not a table"),
    ];
    for (text, what) in cases {
        let err = json_err(&text);
        assert!(
            matches!(
                err,
                ConfigError::MissingKey { .. } | ConfigError::WrongType { .. }
            ),
            "{what}: {err:?}"
        );
    }
}

#[test]
fn hook_types_modes_commands_urls_and_env_names_are_checked() {
    assert!(matches!(
        json_err(&pre(r#"{"type": "prompt", "prompt": "x"}"#)),
        ConfigError::UnknownHookType { found, .. } if found == "prompt"
    ));
    assert!(matches!(
        json_err(&pre(r#"{"type": "command", "command": "   "}"#)),
        ConfigError::EmptyCommand { .. }
    ));
    assert!(matches!(
        json_err(&pre(r#"{"type": "workflow", "url": "http://h/", "mode": "veto"}"#)),
        ConfigError::UnknownMode { found, .. } if found == "veto"
    ));
    for url in ["not a url", "ftp://host/x", "file:///etc/passwd"] {
        let err = json_err(&pre(&format!(r#"{{"type": "workflow", "url": "{url}"}}"#)));
        assert!(matches!(&err, ConfigError::BadUrl { .. }), "{url}: {err:?}");
    }
    for name in ["", "MY-SECRET", "1ABC", "A B"] {
        let err = json_err(&pre(&format!(
            r#"{{"type": "workflow", "url": "http://h/", "secret_env": "{name}"}}"#
        )));
        assert!(
            matches!(&err, ConfigError::BadEnvName { .. }),
            "{name}: {err:?}"
        );
    }
}

#[test]
fn errors_read_well() {
    let err = json_err(&pre(r#"{"type": "command", "command": "x", "timeout": 0}"#));
    assert_eq!(
        err.to_string(),
        "`hooks.PreToolUse[0].hooks[0].timeout` must be a number of seconds above zero and at \
         most 86400; found 0"
    );
}
