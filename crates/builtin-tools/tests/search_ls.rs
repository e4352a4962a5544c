//! `ls`: every entry of one directory (hidden and ignored ones too), sorted by name, with kinds
//! and sizes; symbolic links are described without following them out of the workspace.

#![allow(clippy::expect_used, reason = "test helpers fail loudly")]

mod search_fixture;

use kun_builtin_tools::search::LsTool;
use search_fixture::{call, fixture};
use serde_json::{Value, json};

fn names(output: &Value) -> Vec<String> {
    output["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["name"].as_str().expect("name").to_owned())
        .collect()
}

#[tokio::test]
async fn lists_everything_sorted_with_directories_marked() {
    let ws = fixture();
    let result = call(&LsTool::default(), &ws, json!({})).await;
    assert!(!result.is_error, "{}", result.output);
    assert_eq!(result.output["path"], ".");
    let mut expected = vec![
        ".env",
        ".gitignore",
        ".hidden/",
        ".ignore",
        ".rgignore",
        "README.md",
        "a/",
        "a-c.txt",
        "app.log",
        "bin/",
        "build/",
        "crlf.txt",
        "docs/",
        "données/",
        "ignored_by_dot_ignore.txt",
        "ignored_by_rgignore.txt",
        "keep.log",
        "secret.txt",
        "src/",
        "utf16.txt",
        "日本/",
    ];
    if cfg!(unix) {
        expected.extend(["link.txt", "linkdir"]);
        expected.sort_by(|a, b| a.trim_end_matches('/').cmp(b.trim_end_matches('/')));
    }
    assert_eq!(names(&result.output), expected);
    assert_eq!(result.output["total"], expected.len());
    assert_eq!(result.output.get("next_cursor"), None);
    assert_eq!(
        result.output.get("notice"),
        None,
        "nothing to say: no notice"
    );
    assert_eq!(
        result.model_text(),
        expected
            .join("\n")
            .replace("linkdir", "linkdir -> dir/")
            .replace("link.txt", "link.txt -> file")
    );

    let readme = &result.output["entries"][5];
    assert_eq!(
        readme,
        &json!({"name": "README.md", "kind": "file", "size": 37})
    );
    let dir = result.output["entries"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["name"] == "src/"))
        .cloned();
    assert_eq!(dir, Some(json!({"name": "src/", "kind": "dir"})));
}

#[tokio::test]
async fn lists_a_subdirectory_with_non_ascii_names() {
    let ws = fixture();
    let result = call(&LsTool::default(), &ws, json!({"path": "données"})).await;
    assert_eq!(result.output["path"], "données");
    assert_eq!(
        result.output["entries"],
        json!([{"name": "café.txt", "kind": "file", "size": 26}])
    );
    let empty_dir = ws.path("empty");
    std::fs::create_dir(&empty_dir).expect("mkdir");
    let empty = call(&LsTool::default(), &ws, json!({"path": "empty"})).await;
    assert_eq!(empty.output["entries"], json!([]));
    assert_eq!(empty.output["notice"], "the directory is empty");
    assert_eq!(empty.model_text(), "[the directory is empty]");
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_are_described_without_leaving_the_workspace() {
    let ws = fixture();
    let outside = tempfile::tempdir().expect("outside dir");
    std::fs::write(outside.path().join("secret"), "top secret\n").expect("write outside");
    std::os::unix::fs::symlink(outside.path().join("secret"), ws.path("out"))
        .expect("outside link");
    std::os::unix::fs::symlink("does/not/exist", ws.path("dangling")).expect("dangling link");
    let result = call(&LsTool::default(), &ws, json!({})).await;
    let entry = |name: &str| {
        result.output["entries"]
            .as_array()
            .and_then(|e| e.iter().find(|e| e["name"] == name))
            .cloned()
    };
    assert_eq!(
        entry("link.txt"),
        Some(json!({"name": "link.txt", "kind": "symlink", "target": "file", "size": 62}))
    );
    assert_eq!(
        entry("linkdir"),
        Some(json!({"name": "linkdir", "kind": "symlink", "target": "dir"}))
    );
    assert_eq!(
        entry("out"),
        Some(json!({"name": "out", "kind": "symlink", "target": "outside_workspace"}))
    );
    assert_eq!(
        entry("dangling"),
        Some(json!({"name": "dangling", "kind": "symlink", "target": "missing"}))
    );
}
