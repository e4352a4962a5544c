//! The child environment is scrubbed of secrets. This file holds a single test because it
//! changes the test process's environment before any other thread exists.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::shell::BashTool;
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{MockCommandConfinement, Tool};
use serde_json::json;
use std::sync::Arc;

#[test]
fn secrets_are_removed_from_the_child_environment() {
    let planted = [
        ("FOO_TOKEN", "t"),
        ("X_KEY", "k"),
        ("DB_PASSWORD", "p"),
        ("API_SECRET", "s"),
        ("lower_case_token", "l"),
        ("KUN_VISIBLE_SETTING", "stays"),
    ];
    let home = std::env::var_os("HOME")
        .map_or_else(|| "/tmp".into(), |home| home.to_string_lossy().into_owned());
    for (name, value) in planted.into_iter().chain([("HOME", home.as_str())]) {
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
    let ws = TestWorkspace::new();
    let mut mock = MockCommandConfinement::new();
    mock.expect_confine().returning(|_, _| Ok(()));
    let tool = BashTool::new(Arc::new(mock));
    let result = runtime
        .block_on(tool.execute(json!({"command": "env"}), ws.tool_context("call-1")))
        .unwrap();
    assert!(!result.is_error, "{}", result.output);
    let env = result.output["output"].as_str().unwrap();
    let names: Vec<&str> = env
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect();
    for secret in [
        "FOO_TOKEN",
        "X_KEY",
        "DB_PASSWORD",
        "API_SECRET",
        "lower_case_token",
    ] {
        assert!(
            !names.contains(&secret),
            "{secret} leaked into the child environment"
        );
    }
    assert!(names.contains(&"PATH"), "PATH stays");
    assert!(names.contains(&"HOME"), "HOME stays");
    assert!(env.contains("KUN_VISIBLE_SETTING=stays"));
}
