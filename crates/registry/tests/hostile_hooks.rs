//! The model as an attacker of the guards around a write (issue 9): a `{"__raw": …}` envelope
//! must not hide the arguments from a path-guard hook, a crashing hook stops the call, and a
//! write to the agent's own guards is refused before anything runs.
//!
//! Real parts: a real host over the real `kun-sandbox` policy, real command hooks from
//! `kun-hooks` (shell scripts that read the Claude Code hook JSON), and a write tool that
//! writes real files through the sandbox's path resolution. Each row asserts the code, that
//! the file was not written (nothing outside changed either), and what the hook saw.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use async_trait::async_trait;
use kun_hooks::{HookEngine, HooksConfig};
use kun_ports::{
    ApprovalPolicy, PathAccess, ProviderKind, ProviderPolicy, Tool, ToolCall, ToolContext,
    ToolError, ToolHost, ToolHostContext, ToolKind, ToolPolicy, ToolProvider, ToolResult, ToolSpec,
};
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::WorkspaceSandbox;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Writes `content` to `path`, resolved by the sandbox for writing.
struct WriteFile(ToolSpec);

impl WriteFile {
    fn new() -> Self {
        Self(
            ToolSpec::new(
                "write",
                "Writes a file.",
                json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}),
            )
            .with_kind(ToolKind::FileChange)
            .with_policy(ToolPolicy::Auto),
        )
    }
}

#[async_trait]
impl Tool for WriteFile {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn write_paths(&self, arguments: &Value) -> Vec<String> {
        arguments["path"]
            .as_str()
            .map(str::to_owned)
            .into_iter()
            .collect()
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        let (Some(path), Some(content)) =
            (arguments["path"].as_str(), arguments["content"].as_str())
        else {
            return Ok(ToolResult::failure(
                kun_ports::ErrorCode::InvalidArguments,
                format!("write needs path and content, got {arguments}"),
            ));
        };
        let resolved = match ctx.resolve_path(path, PathAccess::Write) {
            Ok(resolved) => resolved,
            Err(err) => return Ok(ToolResult::failure(err.code, err.message)),
        };
        std::fs::write(&resolved.lexical, content).map_err(|e| ToolError::new(e.to_string()))?;
        Ok(ToolResult::ok(json!({"path": resolved.relative})))
    }
}

struct Provider(Vec<Arc<dyn Tool>>);

impl ToolProvider for Provider {
    fn id(&self) -> &str {
        "builtin"
    }
    fn kind(&self) -> ProviderKind {
        ProviderKind::BuiltIn
    }
    fn policy(&self) -> ProviderPolicy {
        ProviderPolicy::ready()
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.0.clone()
    }
}

/// A workspace `ws` beside a `hooks` directory holding the hook scripts and what they saw.
struct Fixture {
    _temp: tempfile::TempDir,
    ws: PathBuf,
    hooks: PathBuf,
}

/// The path-guard hook: records its stdin, then blocks (exit 2) any call whose `tool_input`
/// names `secret.txt` — the way a user's guard script greps the hook JSON.
const PATH_GUARD: &str = r#"input=$(cat)
printf '%s' "$input" > "$(dirname "$0")/seen.json"
case "$input" in
  *'"path":"secret.txt"'*) echo "secret.txt is off limits" >&2; exit 2 ;;
esac
exit 0"#;

/// A hook whose guard crashes inside `sh -c` (the shell reports 139).
const CRASHING_GUARD: &str = "cat >/dev/null\nsh -c 'kill -SEGV $$'\nexit $?";

impl Fixture {
    fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path().join("ws");
        let hooks = temp.path().join("hooks");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::create_dir_all(&hooks).unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        for (name, body) in [("guard.sh", PATH_GUARD), ("crash.sh", CRASHING_GUARD)] {
            let path = hooks.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Self {
            _temp: temp,
            ws,
            hooks,
        }
    }

    fn host(&self, hook: Option<&str>) -> Host {
        let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()));
        let provider: Arc<dyn ToolProvider> = Arc::new(Provider(vec![Arc::new(WriteFile::new())]));
        let registry =
            Arc::new(CapabilityRegistry::with_providers(filters, vec![provider]).unwrap());
        let builder = Host::builder(registry);
        let Some(script) = hook else {
            return builder.build();
        };
        let command = self.hooks.join(script).display().to_string();
        let config = json!({"PreToolUse": [{"matcher": "write", "hooks": [{"type": "command", "command": command}]}]});
        let engine = HookEngine::builder()
            .config(HooksConfig::from_json_str(&config.to_string()).unwrap())
            .build()
            .unwrap();
        builder.hooks(Arc::new(engine)).build()
    }

    fn ctx(&self) -> ToolHostContext {
        ToolHostContext::builder("thread-1", "turn-1")
            .workspace(&self.ws)
            .approval(ApprovalPolicy::Auto)
            .build()
    }

    fn seen(&self) -> Option<Value> {
        let text = std::fs::read_to_string(self.hooks.join("seen.json")).ok()?;
        Some(serde_json::from_str::<Value>(&text).unwrap()["tool_input"].clone())
    }

    /// Every file under the fixture, with its content: nothing else may change.
    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        fn walk(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.file_name().is_some_and(|n| n != "seen.json") {
                    out.push((path.clone(), std::fs::read(&path).unwrap()));
                }
            }
        }
        let mut out = Vec::new();
        walk(self.ws.parent().unwrap(), &mut out);
        out.sort();
        out
    }
}

fn raw(arguments: &Value) -> Value {
    json!({"__raw": arguments.to_string()})
}

/// One row: what the model sends, which hook runs, the code it must end with, the file that
/// must not exist (or keep its content) afterwards, and what the hook must have seen.
struct Row {
    name: &'static str,
    hook: Option<&'static str>,
    arguments: Value,
    code: &'static str,
    untouched: &'static str,
    hook_sees: Option<Value>,
}

fn rows() -> Vec<Row> {
    let secret = json!({"path": "secret.txt", "content": "leaked"});
    vec![
        Row {
            name: "plain arguments: the guard blocks",
            hook: Some("guard.sh"),
            arguments: secret.clone(),
            code: "hook_denied",
            untouched: "secret.txt",
            hook_sees: Some(secret.clone()),
        },
        Row {
            name: "a __raw envelope does not hide the path from the guard",
            hook: Some("guard.sh"),
            arguments: raw(&secret),
            code: "hook_denied",
            untouched: "secret.txt",
            hook_sees: Some(secret.clone()),
        },
        Row {
            name: "an envelope with transport keys beside it",
            hook: Some("guard.sh"),
            arguments: json!({"__raw": secret.to_string(), "toolName": "write", "call_id": "c"}),
            code: "hook_denied",
            untouched: "secret.txt",
            hook_sees: Some(secret.clone()),
        },
        Row {
            name: "an envelope inside an envelope",
            hook: Some("guard.sh"),
            arguments: raw(&raw(&secret)),
            code: "hook_denied",
            untouched: "secret.txt",
            hook_sees: Some(secret.clone()),
        },
        Row {
            name: "a guard that crashes inside sh -c stops the write",
            hook: Some("crash.sh"),
            arguments: json!({"path": "notes.txt", "content": "x"}),
            code: "hook_failed",
            untouched: "notes.txt",
            hook_sees: None,
        },
        Row {
            name: "the agent cannot rewrite git's config, enveloped or not",
            hook: None,
            arguments: raw(
                &json!({"path": ".git/config", "content": "[core]\n\tfsmonitor = ./evil.sh\n"}),
            ),
            code: "sandbox_protected_path",
            untouched: ".git/config",
            hook_sees: None,
        },
        Row {
            name: "the agent cannot write its own config",
            hook: Some("guard.sh"),
            arguments: json!({"path": ".kun/config.toml", "content": "sandbox = \"danger-full-access\"\n"}),
            code: "sandbox_protected_path",
            untouched: ".kun/config.toml",
            hook_sees: Some(
                json!({"path": ".kun/config.toml", "content": "sandbox = \"danger-full-access\"\n"}),
            ),
        },
        Row {
            name: "a write outside the workspace, to the hook script itself",
            hook: None,
            arguments: json!({"path": "../hooks/guard.sh", "content": "exit 0"}),
            code: "sandbox_write_blocked",
            untouched: "../hooks/guard.sh",
            hook_sees: None,
        },
    ]
}

#[tokio::test]
async fn hostile_calls_are_stopped_and_change_nothing() {
    let mut held = 0;
    let rows = rows();
    for row in &rows {
        let fx = Fixture::new();
        let before = fx.snapshot();
        let target = fx.ws.join(row.untouched);
        let existed = target.exists();
        let host = fx.host(row.hook);
        let result = host
            .execute(
                ToolCall::new("call-1", "write", row.arguments.clone()),
                &fx.ctx(),
            )
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", row.name));
        assert_eq!(
            result.error_code(),
            Some(row.code),
            "{}: {}",
            row.name,
            result.output
        );
        assert!(
            existed || !target.exists(),
            "{}: {} was created",
            row.name,
            row.untouched
        );
        assert_eq!(fx.snapshot(), before, "{}: files changed", row.name);
        assert_eq!(fx.seen(), row.hook_sees, "{}: what the hook saw", row.name);
        held += 1;
    }
    assert_eq!(held, rows.len());
}

#[tokio::test]
async fn the_same_tool_writes_an_ordinary_file_through_an_envelope() {
    let fx = Fixture::new();
    let host = fx.host(Some("guard.sh"));
    let args = json!({"path": "notes.txt", "content": "fine"});
    let result = host
        .execute(ToolCall::new("call-1", "write", raw(&args)), &fx.ctx())
        .await
        .unwrap();
    assert!(!result.is_error, "{}", result.output);
    assert_eq!(
        std::fs::read_to_string(fx.ws.join("notes.txt")).unwrap(),
        "fine"
    );
    assert_eq!(fx.seen(), Some(args));
}
