//! `grep` and `glob` give ripgrep's results on a tree that exercises its rules. The expected
//! results are written out here (derived from ripgrep's documented rules); when `rg` is
//! installed, each case is also compared with ripgrep live on the same tree.

#![allow(clippy::expect_used, reason = "test helpers fail loudly")]

mod search_fixture;

use kun_builtin_tools::search::{FindTool, GlobTool, GrepTool};
use search_fixture::{
    call, fixture, glob_files, grep_lines, paths, rg_available, rg_files, rg_grep, rows,
};
use serde_json::{Value, json};

/// A grep case: tool arguments, the matching `rg` flags, and the expected `(path, line, text)`.
struct GrepCase {
    args: Value,
    rg: &'static [&'static str],
    expected: &'static [(&'static str, u64, &'static str)],
}

const NEEDLE_EVERYWHERE: &[(&str, u64, &str)] = &[
    ("README.md", 2, "The needle is here."),
    ("a/b.txt", 1, "needle a/b"),
    ("a-c.txt", 1, "needle a-c"),
    ("crlf.txt", 1, "needle crlf"),
    ("docs/secret.txt", 1, "needle docs secret"),
    ("données/café.txt", 1, "needle café"),
    ("keep.log", 1, "needle kept"),
    ("src/lib.rs", 1, "pub fn find_needle(hay: &str) -> bool {"),
    ("src/main.rs", 2, "    let needle = 1;"),
    ("src/main.rs", 3, "    println!(\"{}\", needle);"),
    ("src/nested/mod.rs", 1, "// needle nested"),
    ("utf16.txt", 1, "needle utf16"),
    ("日本/名前.md", 1, "needle 日本"),
];

fn grep_cases() -> Vec<GrepCase> {
    vec![
        // Hidden, ignored (.gitignore, nested .gitignore, .ignore, .rgignore), binary and
        // symlinked files are skipped; `!keep.log` re-includes; UTF-16 is transcoded.
        GrepCase {
            args: json!({"pattern": "needle"}),
            rg: &["needle"],
            expected: NEEDLE_EVERYWHERE,
        },
        GrepCase {
            args: json!({"pattern": "needle caf[eé]", "ignoreCase": true}),
            rg: &["-i", "needle caf[eé]"],
            expected: &[
                ("données/café.txt", 1, "needle café"),
                ("données/café.txt", 2, "NEEDLE CAFÉ"),
            ],
        },
        GrepCase {
            args: json!({"pattern": "find_needle(hay", "literal": true}),
            rg: &["-F", "find_needle(hay"],
            expected: &[("src/lib.rs", 1, "pub fn find_needle(hay: &str) -> bool {")],
        },
        GrepCase {
            args: json!({"pattern": r"^\s+\w+!?\(", "path": "src"}),
            rg: &[r"^\s+\w+!?\(", "src"],
            expected: &[("src/main.rs", 3, "    println!(\"{}\", needle);")],
        },
        // A glob whitelists matching files over ignore files (as `rg -g`), but ignored and
        // hidden directories are still not entered.
        GrepCase {
            args: json!({"pattern": "needle", "glob": "*.txt"}),
            rg: &["-g", "*.txt", "needle"],
            expected: &[
                ("a/b.txt", 1, "needle a/b"),
                ("a-c.txt", 1, "needle a-c"),
                ("crlf.txt", 1, "needle crlf"),
                ("docs/secret.txt", 1, "needle docs secret"),
                ("données/café.txt", 1, "needle café"),
                ("ignored_by_dot_ignore.txt", 1, "needle"),
                ("ignored_by_rgignore.txt", 1, "needle"),
                ("secret.txt", 1, "needle secret"),
                ("utf16.txt", 1, "needle utf16"),
            ],
        },
        GrepCase {
            args: json!({"pattern": "needle", "glob": "!*.{txt,md}"}),
            rg: &["-g", "!*.{txt,md}", "needle"],
            expected: &[
                ("keep.log", 1, "needle kept"),
                ("src/lib.rs", 1, "pub fn find_needle(hay: &str) -> bool {"),
                ("src/main.rs", 2, "    let needle = 1;"),
                ("src/main.rs", 3, "    println!(\"{}\", needle);"),
                ("src/nested/mod.rs", 1, "// needle nested"),
            ],
        },
        // Naming a hidden or ignored directory searches it.
        GrepCase {
            args: json!({"pattern": "needle", "path": ".hidden"}),
            rg: &["needle", ".hidden"],
            expected: &[(".hidden/inside.txt", 1, "needle hidden")],
        },
        GrepCase {
            args: json!({"pattern": "needle", "path": "build"}),
            rg: &["needle", "build"],
            expected: &[("build/out.txt", 1, "needle build")],
        },
        GrepCase {
            args: json!({"pattern": "no such text anywhere"}),
            rg: &["no such text anywhere"],
            expected: &[],
        },
    ]
}

#[tokio::test]
async fn grep_matches_ripgrep() {
    let ws = fixture();
    let live = rg_available();
    for case in grep_cases() {
        let result = call(&GrepTool::default(), &ws, case.args.clone()).await;
        assert!(!result.is_error, "{}: {}", case.args, result.output);
        let ours = grep_lines(&result.output);
        assert_eq!(ours, rows(case.expected), "{}", case.args);
        assert_eq!(result.output["total"], case.expected.len(), "{}", case.args);
        if live {
            assert_eq!(ours, rg_grep(ws.root(), case.rg), "rg {:?}", case.rg);
        }
    }
}

#[tokio::test]
async fn grep_reports_columns_and_context() {
    let ws = fixture();
    let result = call(
        &GrepTool::default(),
        &ws,
        json!({"pattern": "needle", "path": "src/main.rs", "context": 1}),
    )
    .await;
    assert_eq!(
        result.output["matches"],
        json!([
            {"path": "src/main.rs", "line": 2, "column": 9, "text": "    let needle = 1;",
             "context_before": ["fn main() {"]},
            {"path": "src/main.rs", "line": 3, "column": 20, "text": "    println!(\"{}\", needle);",
             "context_after": ["}"]},
        ])
    );
    let accents = call(
        &GrepTool::default(),
        &ws,
        json!({"pattern": "café", "path": "données"}),
    )
    .await;
    assert_eq!(
        accents.output["matches"][0]["column"], 8,
        "columns count characters"
    );
}

/// A glob case: the pattern, extra tool arguments and the expected paths.
struct GlobCase {
    args: Value,
    rg: &'static [&'static str],
    expected: &'static [&'static str],
}

fn glob_cases() -> Vec<GlobCase> {
    vec![
        GlobCase {
            args: json!({"pattern": "*.txt"}),
            rg: &["-g", "*.txt"],
            expected: &[
                "a/b.txt",
                "a-c.txt",
                "crlf.txt",
                "docs/secret.txt",
                "données/café.txt",
                "ignored_by_dot_ignore.txt",
                "ignored_by_rgignore.txt",
                "secret.txt",
                "utf16.txt",
            ],
        },
        GlobCase {
            args: json!({"pattern": "*.rs"}),
            rg: &["-g", "*.rs"],
            expected: &[
                "src/lib.rs",
                "src/main.rs",
                "src/nested/generated.rs",
                "src/nested/mod.rs",
            ],
        },
        GlobCase {
            args: json!({"pattern": "nested/*.rs", "path": "src"}),
            rg: &["-g", "nested/*.rs", "src"],
            expected: &[],
        },
        GlobCase {
            args: json!({"pattern": "*.log"}),
            rg: &["-g", "*.log"],
            expected: &["app.log", "keep.log"],
        },
        GlobCase {
            args: json!({"pattern": "*.md"}),
            rg: &["-g", "*.md"],
            expected: &["README.md", "日本/名前.md"],
        },
        GlobCase {
            args: json!({"pattern": "名前.md"}),
            rg: &["-g", "名前.md"],
            expected: &["日本/名前.md"],
        },
        GlobCase {
            args: json!({"pattern": "!*.{rs,txt,md}"}),
            rg: &["-g", "!*.{rs,txt,md}"],
            expected: &["bin/data.bin", "bin/image.png", "keep.log"],
        },
        GlobCase {
            args: json!({"pattern": "*.nothing"}),
            rg: &["-g", "*.nothing"],
            expected: &[],
        },
    ]
}

#[tokio::test]
async fn glob_and_find_match_ripgrep_files() {
    let ws = fixture();
    let live = rg_available();
    for case in glob_cases() {
        let glob = call(&GlobTool::default(), &ws, case.args.clone()).await;
        assert!(!glob.is_error, "{}: {}", case.args, glob.output);
        let ours = glob_files(&glob.output);
        assert_eq!(ours, paths(case.expected), "{}", case.args);
        let find = call(&FindTool::default(), &ws, case.args.clone()).await;
        assert_eq!(find.output, glob.output, "find behaves exactly like glob");
        if live {
            assert_eq!(ours, rg_files(ws.root(), case.rg), "rg {:?}", case.rg);
        }
    }
}

#[tokio::test]
async fn anchored_globs_match_workspace_relative_paths() {
    let ws = fixture();
    let anchored = call(&GlobTool::default(), &ws, json!({"pattern": "src/**/*.rs"})).await;
    assert_eq!(
        glob_files(&anchored.output),
        paths(&[
            "src/lib.rs",
            "src/main.rs",
            "src/nested/generated.rs",
            "src/nested/mod.rs"
        ])
    );
    // With a search path, a glob with `/` still matches the workspace-relative path (as `rg -g`
    // run from the workspace root), so `nested/*.rs` finds nothing under `src` above.
    let inside = call(
        &GlobTool::default(),
        &ws,
        json!({"pattern": "src/nested/*.rs", "path": "src"}),
    )
    .await;
    assert_eq!(
        glob_files(&inside.output),
        paths(&["src/nested/generated.rs", "src/nested/mod.rs"])
    );
    let grep = call(
        &GrepTool::default(),
        &ws,
        json!({"pattern": "needle", "path": "src", "glob": "src/*.rs"}),
    )
    .await;
    assert_eq!(
        grep_lines(&grep.output)
            .into_iter()
            .map(|(path, _, _)| path)
            .collect::<Vec<_>>(),
        paths(&["src/lib.rs", "src/main.rs", "src/main.rs"])
    );
}
