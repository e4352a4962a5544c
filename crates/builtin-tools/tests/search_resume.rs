//! Resuming pages: a cursor carries the last entry shown, and the next page resumes after it in
//! the files as they are now. Hostile cursors are refused; pages joined equal `rg --sort path`.

#![allow(
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod search_fixture;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::search::{GlobTool, GrepTool, LsTool};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::Tool;
use search_fixture::{call, glob_files, grep_lines, rg_available, rg_files, rg_grep};
use serde_json::{Value, json};

fn unlimited() -> OutputLimits {
    OutputLimits::new(1_000_000, 1 << 30)
}

/// `f00.txt` … `f19.txt` under `d/`, each with two matching lines.
fn twenty_files() -> TestWorkspace {
    let ws = TestWorkspace::new();
    for i in 0..20 {
        ws.write(
            &format!("d/f{i:02}.txt"),
            format!("hit {i} a\nmiss\nhit {i} b\n"),
        );
    }
    ws
}

/// Every page from `args` on, following `next_cursor`, starting at `cursor` when given;
/// returns the `key` entries joined and the last page's output.
async fn pages_from(
    tool: &dyn Tool,
    ws: &TestWorkspace,
    args: &Value,
    key: &str,
    mut cursor: Option<String>,
) -> (Vec<Value>, Value) {
    let mut entries = Vec::new();
    for _ in 0..10_000 {
        let mut args = args.clone();
        if let Some(cursor) = &cursor {
            args["cursor"] = json!(cursor);
        }
        let result = call(tool, ws, args).await;
        assert!(!result.is_error, "{}", result.output);
        entries.extend(result.output[key].as_array().expect("entries").clone());
        match result.output["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (entries, result.output),
        }
    }
    panic!("paging does not end");
}

/// A cursor with its path replaced by `path` (the query id kept, so only the path is judged).
fn forge(cursor: &str, path: &[u8]) -> String {
    let body = URL_SAFE_NO_PAD
        .decode(cursor)
        .expect("a cursor is base64url");
    let mut body: Value = serde_json::from_slice(&body).expect("a cursor is JSON");
    body["a"] = json!(URL_SAFE_NO_PAD.encode(path));
    URL_SAFE_NO_PAD.encode(body.to_string())
}

#[tokio::test]
async fn hostile_cursors_are_invalid_arguments() {
    let ws = twenty_files();
    let outside = tempfile::tempdir().expect("outside dir");
    std::fs::write(outside.path().join("secret.txt"), "hit outside\n").expect("write");
    let cases: [(&dyn Tool, Value, &str); 3] = [
        (
            &GrepTool::default(),
            json!({"pattern": "hit", "limit": 3}),
            "matches",
        ),
        (
            &GlobTool::default(),
            json!({"pattern": "*.txt", "limit": 3}),
            "files",
        ),
        (
            &LsTool::default(),
            json!({"path": "d", "limit": 3}),
            "entries",
        ),
    ];
    for (tool, args, key) in cases {
        let first = call(tool, &ws, args.clone()).await;
        let cursor = first.output["next_cursor"]
            .as_str()
            .expect("a next page")
            .to_owned();
        let absolute = outside.path().join("secret.txt");
        let mut hostile = vec![
            "garbled!!".to_owned(),
            format!("{cursor}x"),
            cursor[..cursor.len() / 2].to_owned(),
            "A".repeat(1 << 20),
            forge(&cursor, absolute.as_os_str().as_encoded_bytes()),
            forge(&cursor, b"/etc/passwd"),
            forge(&cursor, b".."),
            forge(&cursor, b"../outside/secret.txt"),
            forge(&cursor, b"d/../../x"),
            forge(&cursor, b"d//f01.txt"),
            forge(&cursor, b"d/\0"),
            forge(&cursor, &vec![b'a'; 100_000]),
        ];
        hostile.push(URL_SAFE_NO_PAD.encode(b"{\"q\":1}"));
        for bad in &hostile {
            let mut args = args.clone();
            args["cursor"] = json!(bad);
            let refused = call(tool, &ws, args).await;
            assert!(refused.is_error, "{key}: {}", &bad[..bad.len().min(60)]);
            assert_eq!(refused.error_code(), Some("invalid_arguments"), "{key}");
            let message = refused.error_message().unwrap_or_default();
            assert!(message.contains("cursor"), "{message}");
            assert!(
                refused.output.to_string().len() < 2_000,
                "a refused cursor is quoted briefly: {}",
                refused.output.to_string().len()
            );
            assert!(!refused.output.to_string().contains("outside"));
        }
        // A well-formed cursor naming a path that does not exist resumes after it: nothing
        // is read outside, and only entries sorting after it come back.
        let mut args = args.clone();
        args["cursor"] = json!(forge(&cursor, b"zzz/none"));
        let after = call(tool, &ws, args).await;
        assert!(!after.is_error, "{}", after.output);
        assert_eq!(after.output[key], json!([]), "{key}");
    }
}

#[tokio::test]
async fn pages_resume_in_the_files_as_they_are_now() {
    let ws = twenty_files();
    let grep = GrepTool::default();
    let glob = GlobTool::default();
    let args = json!({"pattern": "hit", "limit": 10});
    let first = call(&grep, &ws, args.clone()).await;
    let cursor = first.output["next_cursor"]
        .as_str()
        .expect("more")
        .to_owned();
    assert_eq!(first.output.get("total"), None, "not counted past the page");
    let glob_args = json!({"pattern": "*.txt", "limit": 5});
    let glob_first = call(&glob, &ws, glob_args.clone()).await;
    let glob_cursor = glob_first.output["next_cursor"]
        .as_str()
        .expect("more")
        .to_owned();
    let ls_args = json!({"path": "d", "limit": 5});
    let ls_first = call(&LsTool::default(), &ws, ls_args.clone()).await;
    let ls_cursor = ls_first.output["next_cursor"]
        .as_str()
        .expect("more")
        .to_owned();
    assert_eq!(ls_first.output["total"], 20, "ls reads the whole directory");

    // Before the cursors (f00–f04 shown): not seen. After: seen. Removed after: gone.
    ws.write("d/f02b.txt", "hit new before\n");
    ws.write("d/f10b.txt", "hit new after\n");
    std::fs::remove_file(ws.path("d/f15.txt")).expect("remove");
    let mut expected_files: Vec<String> = (5..20)
        .filter(|i| *i != 15)
        .map(|i| format!("d/f{i:02}.txt"))
        .collect();
    expected_files.insert(6, "d/f10b.txt".to_owned());

    let (matches, last) = pages_from(&grep, &ws, &args, "matches", Some(cursor)).await;
    let seen: Vec<String> = matches
        .iter()
        .map(|m| m["path"].as_str().expect("path").to_owned())
        .collect();
    let mut expected_matches: Vec<String> = Vec::new();
    for path in &expected_files {
        let lines = if path.ends_with("b.txt") { 1 } else { 2 };
        expected_matches.extend(std::iter::repeat_n(path.clone(), lines));
    }
    assert_eq!(seen, expected_matches);
    assert_eq!(last["total"], 10 + expected_matches.len(), "{last}");

    let (files, _) = pages_from(&glob, &ws, &glob_args, "files", Some(glob_cursor)).await;
    assert_eq!(
        files,
        json!(expected_files).as_array().expect("array").clone()
    );

    let (entries, last) = pages_from(
        &LsTool::default(),
        &ws,
        &ls_args,
        "entries",
        Some(ls_cursor),
    )
    .await;
    let names: Vec<String> = entries
        .iter()
        .map(|e| format!("d/{}", e["name"].as_str().expect("name")))
        .collect();
    assert_eq!(names, expected_files);
    assert_eq!(last["total"], 21, "ls counts the directory as it is now");
}

#[tokio::test]
async fn paged_results_equal_rg_line_for_line() {
    let ws = TestWorkspace::new();
    for i in 0..60 {
        let mut text = String::new();
        for j in 0..(i % 7) {
            text.push_str(&format!("fn handler_{j}() {{}} // file {i}\nother\n"));
        }
        ws.write(&format!("p{}/q{}/r{i:02}.rs", i % 3, i % 5), text);
    }
    ws.write("big.txt", "hit\n".repeat(95));
    ws.write("p0-x.rs", "fn handler_x() {}\n");
    let grep = GrepTool::new(unlimited());
    let pattern = r"fn handler_\w+\(";
    let full = call(&grep, &ws, json!({"pattern": pattern})).await;
    let full_rows = grep_lines(&full.output);
    assert!(full_rows.len() > 100, "{}", full_rows.len());
    for (limit, context) in [(7, 0), (7, 2), (50, 1)] {
        let args = json!({"pattern": pattern, "limit": limit, "context": context});
        let (matches, last) = pages_from(&grep, &ws, &args, "matches", None).await;
        let joined = grep_lines(&json!({ "matches": matches }));
        assert_eq!(joined, full_rows, "limit {limit}, context {context}");
        assert_eq!(last["total"], full_rows.len());
        if context > 0 {
            let whole = call(&grep, &ws, json!({"pattern": pattern, "context": context})).await;
            assert_eq!(json!(matches), whole.output["matches"], "context {context}");
        }
    }
    // A single file as the root: the cursor resumes inside it.
    let args = json!({"pattern": "hit", "path": "big.txt", "limit": 10});
    let (matches, last) = pages_from(&grep, &ws, &args, "matches", None).await;
    let lines: Vec<u64> = matches
        .iter()
        .map(|m| m["line"].as_u64().expect("line"))
        .collect();
    assert_eq!(lines, (1..=95).collect::<Vec<u64>>());
    assert_eq!(last["total"], 95);

    let glob = GlobTool::new(unlimited());
    let (files, _) = pages_from(
        &glob,
        &ws,
        &json!({"pattern": "*.rs", "limit": 4}),
        "files",
        None,
    )
    .await;
    let files = glob_files(&json!({ "files": files }));
    if rg_available() {
        assert_eq!(full_rows, rg_grep(ws.root(), &[pattern]));
        assert_eq!(files, rg_files(ws.root(), &["-g", "*.rs"]));
    }
    let whole = call(&glob, &ws, json!({"pattern": "*.rs"})).await;
    assert_eq!(files, glob_files(&whole.output));
}
