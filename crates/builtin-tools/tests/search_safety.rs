//! Bad input gets a clear `invalid_arguments`, paths cannot escape the workspace, symbolic links
//! out of it are never followed, and an aborted turn stops the search.

#![allow(clippy::expect_used, reason = "test helpers fail loudly")]

mod search_fixture;

use kun_builtin_tools::search::{FindTool, GlobTool, GrepTool, LsTool};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::Tool;
use search_fixture::{call, fixture, glob_files, grep_lines};
use serde_json::json;

#[tokio::test]
async fn invalid_regex_quotes_the_regex_error() {
    let ws = fixture();
    let result = call(
        &GrepTool::default(),
        &ws,
        json!({"pattern": "find_needle(hay"}),
    )
    .await;
    assert!(result.is_error);
    assert_eq!(result.error_code(), Some("invalid_arguments"));
    let message = result.error_message().unwrap_or_default();
    assert!(message.contains("unclosed group"), "{message}");
    assert!(
        message.contains("literal"),
        "says how to search for plain text: {message}"
    );
}

#[tokio::test]
async fn bad_arguments_are_invalid_arguments() {
    let ws = fixture();
    let grep = GrepTool::default();
    for args in [
        json!({}),
        json!({"pattern": ""}),
        json!({"pattern": "x", "unknown": 1}),
        json!({"pattern": 3}),
        json!({"pattern": "x", "context": -1}),
        json!({"pattern": "x", "glob": "[z-a"}),
        json!({"pattern": "x", "glob": ""}),
        json!({"pattern": "x", "path": "no/such/dir"}),
        json!({"pattern": "a\nb"}),
    ] {
        let result = call(&grep, &ws, args.clone()).await;
        assert!(result.is_error, "{args}");
        assert_eq!(
            result.error_code(),
            Some("invalid_arguments"),
            "{args}: {}",
            result.output
        );
        assert!(!result.error_message().unwrap_or_default().is_empty());
    }
    for args in [
        json!({}),
        json!({"pattern": " "}),
        json!({"pattern": "a/[", "path": "."}),
        json!({"pattern": "*", "x": 1}),
    ] {
        for tool in [&GlobTool::default() as &dyn Tool, &FindTool::default()] {
            let result = call(tool, &ws, args.clone()).await;
            assert_eq!(
                result.error_code(),
                Some("invalid_arguments"),
                "{args}: {}",
                result.output
            );
        }
    }
    let on_file = call(&LsTool::default(), &ws, json!({"path": "README.md"})).await;
    assert_eq!(on_file.error_code(), Some("invalid_arguments"));
    assert!(
        on_file.error_message().unwrap_or_default().contains("read"),
        "{}",
        on_file.output
    );
}

#[tokio::test]
async fn large_context_is_capped_at_twenty_lines() {
    let ws = TestWorkspace::new();
    let text: String = (1..=100)
        .map(|i| {
            if i == 50 {
                "target\n".to_owned()
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    ws.write("long.txt", text);
    let result = call(
        &GrepTool::default(),
        &ws,
        json!({"pattern": "target", "context": 500}),
    )
    .await;
    assert!(!result.is_error, "{}", result.output);
    assert_eq!(
        result.output["matches"][0]["context_before"]
            .as_array()
            .map(Vec::len),
        Some(20)
    );
    assert_eq!(
        result.output["matches"][0]["context_after"]
            .as_array()
            .map(Vec::len),
        Some(20)
    );
    assert_eq!(result.output["matches"][0]["context_before"][0], "line 30");
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let ws = fixture();
    let outside = tempfile::tempdir().expect("outside dir");
    std::fs::write(outside.path().join("loot.txt"), "needle outside\n").expect("write outside");
    let outside_path = outside.path().to_string_lossy().into_owned();
    for path in ["../", "..", "src/../../", outside_path.as_str(), "/etc"] {
        let grep = call(
            &GrepTool::default(),
            &ws,
            json!({"pattern": "needle", "path": path}),
        )
        .await;
        assert!(grep.is_error, "grep {path}: {}", grep.output);
        assert!(grep.output.get("matches").is_none());
        let glob = call(
            &GlobTool::default(),
            &ws,
            json!({"pattern": "*", "path": path}),
        )
        .await;
        assert!(glob.is_error, "glob {path}: {}", glob.output);
        let ls = call(&LsTool::default(), &ws, json!({"path": path})).await;
        assert!(ls.is_error, "ls {path}: {}", ls.output);
    }
}

#[cfg(unix)]
#[tokio::test]
async fn links_out_of_the_workspace_are_not_followed() {
    let ws = fixture();
    let outside = tempfile::tempdir().expect("outside dir");
    std::fs::write(outside.path().join("loot.txt"), "needle outside\n").expect("write outside");
    std::os::unix::fs::symlink(outside.path(), ws.path("escape")).expect("dir link");
    std::os::unix::fs::symlink(outside.path().join("loot.txt"), ws.path("loot.txt"))
        .expect("file link");

    let grep = call(&GrepTool::default(), &ws, json!({"pattern": "outside"})).await;
    assert_eq!(grep.output["total"], 0, "{}", grep.output);
    let glob = call(&GlobTool::default(), &ws, json!({"pattern": "loot.txt"})).await;
    assert_eq!(glob_files(&glob.output), Vec::<String>::new());
    let through = call(
        &GrepTool::default(),
        &ws,
        json!({"pattern": "needle", "path": "escape"}),
    )
    .await;
    assert!(through.is_error, "{}", through.output);
    let through_file = call(
        &GrepTool::default(),
        &ws,
        json!({"pattern": "needle", "path": "loot.txt"}),
    )
    .await;
    assert!(through_file.is_error, "{}", through_file.output);
    let ls = call(&LsTool::default(), &ws, json!({"path": "escape"})).await;
    assert!(ls.is_error, "{}", ls.output);
}

#[tokio::test]
async fn long_lines_are_clipped_around_the_match() {
    let ws = TestWorkspace::new();
    ws.write(
        "min.js",
        format!("{}NEEDLE{}\n", "a".repeat(20_000), "b".repeat(20_000)),
    );
    let result = call(&GrepTool::default(), &ws, json!({"pattern": "NEEDLE"})).await;
    let text = result.output["matches"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("NEEDLE") && text.len() < 1000, "{text}");
    assert!(text.contains("line clipped: 40006 bytes"), "{text}");
    assert_eq!(result.output["matches"][0]["column"], 20_001);
    assert_eq!(result.output.get("next_cursor"), None);
    assert!(
        result.output["notice"]
            .as_str()
            .unwrap_or_default()
            .contains("clipped"),
        "{}",
        result.output
    );
    assert!(
        result
            .model_text()
            .ends_with("read the file for the full line]"),
        "{}",
        result.model_text()
    );
}

#[tokio::test]
async fn an_explicit_binary_file_is_named_in_the_notice() {
    let ws = fixture();
    let result = call(
        &GrepTool::default(),
        &ws,
        json!({"pattern": "needle", "path": "bin/data.bin"}),
    )
    .await;
    assert!(!result.is_error, "{}", result.output);
    assert_eq!(result.output["total"], 0);
    assert!(
        result.output["notice"]
            .as_str()
            .unwrap_or_default()
            .contains("binary"),
        "{}",
        result.output
    );
    let text = call(
        &GrepTool::default(),
        &ws,
        json!({"pattern": "needle", "path": "a/b.txt"}),
    )
    .await;
    assert_eq!(
        grep_lines(&text.output),
        vec![("a/b.txt".to_owned(), 1, "needle a/b".to_owned())]
    );
}

#[tokio::test]
async fn an_aborted_turn_stops_the_search() {
    let ws = fixture();
    ws.ctx.abort.abort();
    let grep = call(&GrepTool::default(), &ws, json!({"pattern": "needle"})).await;
    assert!(grep.is_error);
    assert!(
        grep.error_message().unwrap_or_default().contains("aborted"),
        "{}",
        grep.output
    );
    let glob = call(&GlobTool::default(), &ws, json!({"pattern": "*"})).await;
    assert!(glob.is_error);
}
