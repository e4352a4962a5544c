//! Commands and language servers get the environment by allow-list: secrets under any name stay
//! out, `PATH`/`HOME`/`LANG` and the configured extra names come in. This file holds a single
//! test because it changes the test process's environment before any other thread exists.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::lsp::{LspConfig, LspServerConfig, LspTool};
use kun_builtin_tools::shell::{BashTool, ShellConfig};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::process::EnvAllowList;
use kun_ports::{CommandConfinement, Tool};
use kun_sandbox::{NoConfinement, SandboxCapabilities};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Secrets as they are really named: none ends in `_TOKEN`, `_KEY` or `_SECRET` but the last.
const SECRETS: [(&str, &str); 6] = [
    ("AWS_ACCESS_KEY_ID", "AKIAKUNTEST"),
    ("PGPASSWORD", "pg-kun-test"),
    ("DATABASE_URL", "postgres://kun:pw@db/kun"),
    ("GITHUB_PAT", "ghp_kuntest"),
    ("FOO_APIKEY", "apikey-kun-test"),
    ("OPENAI_API_KEY", "sk-kun-test"),
];

fn parse(env: &str) -> BTreeMap<String, String> {
    env.lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

fn assert_allow_listed(seen: &BTreeMap<String, String>, who: &str) {
    for (name, _) in SECRETS {
        assert!(!seen.contains_key(name), "{name} reached {who}");
    }
    assert!(
        !seen.contains_key("KUN_VISIBLE_SETTING"),
        "a name not on the allow-list reached {who}"
    );
    for name in ["PATH", "HOME", "LANG"] {
        assert!(seen.contains_key(name), "{name} must reach {who}: {seen:?}");
    }
    assert_eq!(seen.get("LANG").map(String::as_str), Some("C.UTF-8"));
}

#[test]
fn secrets_never_reach_commands_or_language_servers() {
    let home = std::env::var_os("HOME")
        .map_or_else(|| "/tmp".into(), |home| home.to_string_lossy().into_owned());
    for (name, value) in SECRETS.into_iter().chain([
        ("KUN_VISIBLE_SETTING", "stays"),
        ("LANG", "C.UTF-8"),
        ("HOME", home.as_str()),
    ]) {
        #[allow(unsafe_code)]
        // SAFETY: this is the only test in this binary, and it runs before the runtime (or any
        // other thread of ours) starts, so nothing reads the environment concurrently.
        unsafe {
            std::env::set_var(name, value);
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let probed = SandboxCapabilities::probe();
    let tiers: [(&str, Arc<dyn CommandConfinement>); 2] = [
        ("an unconfined command", Arc::new(NoConfinement)),
        ("a command of the probed tier", probed.confinement()),
    ];
    for (who, confinement) in tiers {
        let ws = TestWorkspace::new();
        let bash = BashTool::new(Arc::clone(&confinement));
        let result = runtime
            .block_on(bash.execute(json!({"command": "env"}), ws.tool_context("call-1")))
            .unwrap();
        assert!(!result.is_error, "{}", result.output);
        assert_allow_listed(&parse(result.output["output"].as_str().unwrap()), who);

        // `[shell] env` adds names.
        let config = ShellConfig {
            env: EnvAllowList::new(["KUN_VISIBLE_SETTING"]),
            ..ShellConfig::default()
        };
        let bash = BashTool::with_config(Arc::clone(&confinement), config);
        let result = runtime
            .block_on(bash.execute(json!({"command": "env"}), ws.tool_context("call-2")))
            .unwrap();
        let seen = parse(result.output["output"].as_str().unwrap());
        assert_eq!(
            seen.get("KUN_VISIBLE_SETTING").map(String::as_str),
            Some("stays"),
            "a configured name reaches {who}"
        );
        assert!(!seen.contains_key("OPENAI_API_KEY"));

        // A "language server" that writes its environment down and exits.
        ws.write("notes.kuntxt", "hello\n");
        let lsp = LspTool::new(
            LspConfig {
                servers: vec![LspServerConfig {
                    language_id: "plaintext".into(),
                    command: "/bin/sh".into(),
                    args: vec!["-c".into(), "env > lsp-env.txt".into()],
                    extensions: vec!["kuntxt".into()],
                }],
                request_timeout: std::time::Duration::from_secs(10),
                ..LspConfig::default()
            },
            Arc::clone(&confinement),
        );
        let result = runtime
            .block_on(lsp.execute(
                json!({"action": "document_symbols", "path": "notes.kuntxt"}),
                ws.tool_context("call-3"),
            ))
            .unwrap();
        assert!(result.is_error, "the stand-in server answers nothing");
        let written = std::fs::read_to_string(ws.path("lsp-env.txt")).unwrap();
        assert_allow_listed(&parse(&written), &format!("a language server ({who})"));
    }
}
