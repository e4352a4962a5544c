//! MCP stdio servers get the allow-listed base environment plus their configured `env`: a
//! secret of ours under any name never reaches them. This file holds a single test because it
//! changes the test process's environment before any other thread exists.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use common::servers::{time, wait_gone};
use kun_mcp::{McpManager, McpServerConfig, SearchMode, SearchSettings};
use kun_ports::ToolProvider;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

const SECRETS: [(&str, &str); 6] = [
    ("AWS_ACCESS_KEY_ID", "AKIAKUNTEST"),
    ("PGPASSWORD", "pg-kun-test"),
    ("DATABASE_URL", "postgres://kun:pw@db/kun"),
    ("GITHUB_PAT", "ghp_kuntest"),
    ("FOO_APIKEY", "apikey-kun-test"),
    ("OPENAI_API_KEY", "sk-kun-test"),
];

#[test]
fn a_stdio_server_gets_the_base_environment_and_its_own_env_only() {
    let Some(server) = time() else { return };
    let home = std::env::var("HOME").unwrap_or_else(|_| "/tmp".to_owned());
    for (name, value) in SECRETS
        .into_iter()
        .chain([("LANG", "C.UTF-8"), ("HOME", home.as_str())])
    {
        #[allow(unsafe_code)]
        // SAFETY: the only test of this binary; no other thread of ours exists yet.
        unsafe {
            std::env::set_var(name, value);
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let written = dir.path().join("server-env.txt");
    // The server writes its environment down, then becomes mcp-server-time.
    let config = McpServerConfig::stdio("time", "/bin/sh")
        .with_args([
            "-c".to_owned(),
            "env > \"$KUN_ENV_OUT\"; exec \"$0\"".to_owned(),
            server.to_string_lossy().into_owned(),
        ])
        .with_env("KUN_ENV_OUT", written.to_string_lossy())
        .with_env("SERVER_SETTING", "configured")
        .with_timeouts(Duration::from_secs(60), Duration::from_secs(60));
    let pid = runtime.block_on(async {
        let manager = McpManager::builder()
            .server(config)
            .search(SearchSettings {
                mode: SearchMode::Direct,
                ..SearchSettings::default()
            })
            .sanitizer(Arc::new(kun_builtin_tools::sanitize_schema))
            .start()
            .await
            .unwrap();
        let status = manager.statuses().remove(0);
        assert!(
            manager.providers()[0].policy().is_usable(),
            "the server started: {status:?}"
        );
        let pid = status.pid.expect("a stdio server has a pid");
        drop(manager);
        wait_gone(pid).await;
        pid
    });
    assert!(pid > 1);
    let seen: BTreeMap<String, String> = std::fs::read_to_string(&written)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    for (name, _) in SECRETS {
        assert!(!seen.contains_key(name), "{name} reached the MCP server");
    }
    for name in ["PATH", "HOME", "LANG"] {
        assert!(seen.contains_key(name), "{name} must reach the server");
    }
    assert_eq!(
        seen.get("SERVER_SETTING").map(String::as_str),
        Some("configured"),
        "the configured env reaches the server"
    );
}
