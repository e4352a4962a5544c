//! What every built-in tool (but `git_inspect`) returns, on a realistic call: the text the model
//! reads (a table of exact renderings), and a structured `output` that validates against the
//! tool's declared output schema. Error results are not held to the schema.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use async_trait::async_trait;
use kun_builtin_tools::fs::{EditTool, MutationQueue, ReadTool, SendImAttachmentTool, WriteTool};
use kun_builtin_tools::lsp::{LspConfig, LspTool};
use kun_builtin_tools::repo_map::RepoMapTool;
use kun_builtin_tools::search::{FindTool, GlobTool, GrepTool, LsTool};
use kun_builtin_tools::shell::{
    BackgroundShellTool, BashTool, CheckSource, ShellConfig, VerifyChangesTool, VerifyConfig,
};
use kun_builtin_tools::testing::TestWorkspace;
use kun_builtin_tools::{LspAnswer, LspOutput, OutputLimits};
use kun_ports::{ContentBlock, ImBridge, ImError, Tool, ToolResult};
use kun_sandbox::NoConfinement;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A bridge that accepts every file.
struct Accepting;

#[async_trait]
impl ImBridge for Accepting {
    async fn send_attachment(
        &self,
        _path: &Path,
        _caption: Option<String>,
    ) -> Result<String, ImError> {
        Ok("42".to_owned())
    }
}

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0,
    1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0d, 0x49, 0x44, 0x41, 0x54,
    0x78, 0x9c, 0x63, 0, 1, 0, 0, 5, 0, 1, 0x0d, 0x0a, 0x2d, 0xb4, 0, 0, 0, 0, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

fn project() -> TestWorkspace {
    let ws = TestWorkspace::new();
    ws.write(
        "src/lib.rs",
        "pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n\npub fn perimeter(w: u32, h: u32) -> u32 {\n    2 * (w + h)\n}\n",
    );
    ws.write(
        "src/main.rs",
        "fn main() {\n    println!(\"{}\", demo::area(2, 3));\n}\n",
    );
    ws.write("README.md", "# demo\n\nArea and perimeter, café ✓.\n");
    ws.write("shot.png", PNG);
    ws
}

/// One call and what the model must read.
struct Case {
    name: &'static str,
    tool: Arc<dyn Tool>,
    args: Value,
    /// The exact text; `<ROOT>` stands for the workspace root, `<CURSOR>` for the output's
    /// `next_cursor`.
    text: &'static str,
    is_error: bool,
}

fn case(name: &'static str, tool: Arc<dyn Tool>, args: Value, text: &'static str) -> Case {
    Case {
        name,
        tool,
        args,
        text,
        is_error: false,
    }
}

fn queue(locks: &Path) -> Arc<MutationQueue> {
    Arc::new(MutationQueue::new(kun_builtin_tools::fs::LockSettings {
        root: locks.to_path_buf(),
        ..kun_builtin_tools::fs::LockSettings::default()
    }))
}

fn shell() -> ShellConfig {
    ShellConfig::default()
}

/// Every tool's realistic calls, in order (later cases see what earlier ones changed).
fn cases(locks: &Path) -> Vec<Case> {
    let queue = queue(locks);
    let edit: Arc<dyn Tool> = Arc::new(EditTool::new(Arc::clone(&queue)));
    let write: Arc<dyn Tool> = Arc::new(WriteTool::new(queue));
    let bash: Arc<dyn Tool> = Arc::new(BashTool::with_config(Arc::new(NoConfinement), shell()));
    let verify: Arc<dyn Tool> = Arc::new(VerifyChangesTool::with_config(
        Arc::new(NoConfinement),
        shell(),
        VerifyConfig {
            source: CheckSource::Configured(vec![
                "true".to_owned(),
                "echo compiling; echo 'error: mismatched types' >&2; exit 1".to_owned(),
            ]),
            ..VerifyConfig::default()
        },
    ));
    let small_pages = OutputLimits::new(2, 50 * 1024);
    vec![
        case(
            "read: a whole file, numbered, no header",
            Arc::new(ReadTool::default()),
            json!({"path": "src/main.rs"}),
            "1│fn main() {\n2│    println!(\"{}\", demo::area(2, 3));\n3│}",
        ),
        case(
            "read: a page, with where to continue",
            Arc::new(ReadTool::default()),
            json!({"path": "src/lib.rs", "offset": 5, "limit": 2}),
            "lines 5–6 of 7; continue with offset 7\n5│pub fn perimeter(w: u32, h: u32) -> u32 {\n6│    2 * (w + h)",
        ),
        case(
            "read: an image is a line plus the image block",
            Arc::new(ReadTool::default()),
            json!({"path": "shot.png"}),
            "image/png, 1×1, 67B",
        ),
        case(
            "grep: path:line:col:text, sorted",
            Arc::new(GrepTool::default()),
            json!({"pattern": "fn \\w+"}),
            "src/lib.rs:1:5:pub fn area(w: u32, h: u32) -> u32 {\nsrc/lib.rs:5:5:pub fn perimeter(w: u32, h: u32) -> u32 {\nsrc/main.rs:1:1:fn main() {",
        ),
        case(
            "grep: context and a next page",
            Arc::new(GrepTool::new(small_pages)),
            json!({"pattern": "w \\* h|w \\+ h|area", "context": 1}),
            "src/lib.rs:1:8:pub fn area(w: u32, h: u32) -> u32 {\nsrc/lib.rs:2:5:    w * h\nsrc/lib.rs-3-}\n[matches 1–2 (2 matches per page); more follow; next page: the same grep call with cursor \"<CURSOR>\", or narrow the search]",
        ),
        case(
            "grep: nothing found says why",
            Arc::new(GrepTool::default()),
            json!({"pattern": "no such text"}),
            "[no matches; hidden files, files ignored by .gitignore, .ignore or .rgignore, and binary files are not searched: name a hidden or ignored directory in path to search inside it]",
        ),
        case(
            "glob: one path per line",
            Arc::new(GlobTool::default()),
            json!({"pattern": "*.rs"}),
            "src/lib.rs\nsrc/main.rs",
        ),
        case(
            "find: the same as glob",
            Arc::new(FindTool::default()),
            json!({"pattern": "*.md"}),
            "README.md",
        ),
        case(
            "ls: names, directories marked",
            Arc::new(LsTool::default()),
            json!({}),
            "README.md\nshot.png\nsrc/",
        ),
        case(
            "edit: the unified diff",
            Arc::clone(&edit),
            json!({"path": "src/lib.rs", "oldText": "    w * h\n", "newText": "    w.saturating_mul(h)\n"}),
            "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,6 +1,6 @@\n pub fn area(w: u32, h: u32) -> u32 {\n-    w * h\n+    w.saturating_mul(h)\n }\n \n pub fn perimeter(w: u32, h: u32) -> u32 {\n     2 * (w + h)",
        ),
        case(
            "write: a new file",
            Arc::clone(&write),
            json!({"path": "docs/notes.md", "content": "# Notes\n\nTwo lines of text.\n"}),
            "created docs/notes.md (3 lines, 28B)",
        ),
        case(
            "write: a replaced file is its diff",
            Arc::clone(&write),
            json!({"path": "docs/notes.md", "content": "# Notes\n\nThree lines of text.\n"}),
            "--- a/docs/notes.md\n+++ b/docs/notes.md\n@@ -1,3 +1,3 @@\n # Notes\n \n-Two lines of text.\n+Three lines of text.",
        ),
        case(
            "bash: output, then the exit code",
            Arc::clone(&bash),
            json!({"command": "printf 'one\\ntwo\\n'; echo three"}),
            "one\ntwo\nthree\nexit code 0",
        ),
        Case {
            is_error: true,
            ..case(
                "bash: a non-zero exit is an error that keeps the output",
                bash,
                json!({"command": "echo 'cargo: not found'; exit 127"}),
                "cargo: not found\nexit code 127",
            )
        },
        case(
            "background_shell: start",
            Arc::new(BackgroundShellTool::new(Arc::new(NoConfinement))),
            json!({"action": "start", "command": "echo ready"}),
            "started bg-1: echo ready",
        ),
        Case {
            is_error: true,
            ..case(
                "verify_changes: passes and failures with their error lines",
                verify,
                json!({}),
                "PASS true\nFAIL echo compiling; echo 'error: mismatched types' >&2; exit 1: exit code 1\n  error: mismatched types",
            )
        },
        case(
            "repo_map: the map",
            Arc::new(RepoMapTool::new()),
            json!({"path": "src"}),
            "lib.rs:\n  1: pub fn area(w: u32, h: u32) -> u32\n  5: pub fn perimeter(w: u32, h: u32) -> u32\nmain.rs:\n  1: fn main()",
        ),
        case(
            "send_im_attachment: one line",
            Arc::new(SendImAttachmentTool::new(Arc::new(Accepting))),
            json!({"path": "README.md", "caption": "the readme"}),
            "sent README.md (39B) to the chat as message 42",
        ),
    ]
}

async fn run(tool: &dyn Tool, ws: &TestWorkspace, args: Value) -> ToolResult {
    tool.execute(args, ws.tool_context("call")).await.unwrap()
}

fn schema_errors(tool: &dyn Tool, output: &Value) -> Vec<String> {
    let schema = tool
        .spec()
        .output_schema
        .clone()
        .unwrap_or_else(|| panic!("{} declares an output schema", tool.spec().name));
    assert_eq!(
        schema["type"],
        "object",
        "{}: root is an object",
        tool.spec().name
    );
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(output)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[tokio::test]
async fn every_tool_renders_a_realistic_case_and_its_output_fits_its_schema() {
    let ws = project();
    let locks = tempfile::tempdir().unwrap();
    for case in cases(locks.path()) {
        let result = run(case.tool.as_ref(), &ws, case.args.clone()).await;
        assert_eq!(
            result.is_error, case.is_error,
            "{}: {}",
            case.name, result.output
        );
        assert_eq!(
            result.error_code(),
            None,
            "{}: {}",
            case.name,
            result.output
        );
        let mut expected = case
            .text
            .replace("<ROOT>", &ws.root().display().to_string());
        if let Some(cursor) = result.output["next_cursor"].as_str() {
            expected = expected.replace("<CURSOR>", cursor);
        }
        assert_eq!(result.model_text(), expected, "{}", case.name);
        let errors = schema_errors(case.tool.as_ref(), &result.output);
        assert!(
            errors.is_empty(),
            "{}: {errors:?}\n{}",
            case.name,
            result.output
        );
        let text = serde_json::to_string(&result.output).unwrap();
        assert_eq!(
            padding(&result.output),
            Vec::<String>::new(),
            "{}: {text}",
            case.name
        );
        assert!(
            !text.contains(&ws.root().display().to_string()),
            "{}: no absolute path: {text}",
            case.name
        );
    }
}

/// Keys holding `null`, or `false` where false is only the absence of something (`passed`
/// and `published` are answers, so they may be false).
fn padding(value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                let answer = matches!(key.as_str(), "passed" | "published");
                if value.is_null() || (value == &Value::Bool(false) && !answer) {
                    found.push(key.clone());
                }
                found.extend(padding(value));
            }
        }
        Value::Array(items) => items.iter().for_each(|item| found.extend(padding(item))),
        _ => {}
    }
    found
}

#[tokio::test]
async fn an_image_is_a_media_block_after_its_line() {
    let ws = project();
    let result = run(&ReadTool::default(), &ws, json!({"path": "shot.png"})).await;
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(PNG);
    assert_eq!(
        result.content,
        vec![
            ContentBlock::text("image/png, 1×1, 67B"),
            ContentBlock::image(data, "image/png")
        ]
    );
}

#[tokio::test]
async fn background_jobs_render_per_action_and_fit_the_schema() {
    let ws = project();
    let tool = BackgroundShellTool::new(Arc::new(NoConfinement));
    let started = run(
        &tool,
        &ws,
        json!({"action": "start", "command": "echo ready"}),
    )
    .await;
    assert_eq!(started.model_text(), "started bg-1: echo ready");
    // `list` does not consume output: wait with it, then read.
    let list = loop {
        let list = run(&tool, &ws, json!({"action": "list"})).await;
        if list.output["jobs"][0]["status"] != "running" {
            break list;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        list.model_text(),
        "bg-1 exited with code 0, 6 bytes unread: echo ready"
    );
    let read = run(&tool, &ws, json!({"action": "read", "id": "bg-1"})).await;
    assert_eq!(read.model_text(), "ready\nbg-1 exited with code 0");
    run(
        &tool,
        &ws,
        json!({"action": "start", "command": "sleep 30"}),
    )
    .await;
    let killed = run(&tool, &ws, json!({"action": "kill", "id": "bg-2"})).await;
    assert_eq!(killed.model_text(), "bg-2 killed");
    for result in [started, read, list, killed] {
        assert!(!result.is_error, "{}", result.output);
        let errors = schema_errors(&tool, &result.output);
        assert!(errors.is_empty(), "{errors:?}: {}", result.output);
    }
    let empty = BackgroundShellTool::new(Arc::new(NoConfinement));
    let none = run(&empty, &ws, json!({"action": "list"})).await;
    assert_eq!(none.model_text(), "no background jobs in this thread");
}

#[test]
fn lsp_answers_fit_the_lsp_schema() {
    // Without a language server installed the shapes are checked from values.
    let tool = LspTool::new(LspConfig::default(), Arc::new(NoConfinement));
    let answers = [
        LspAnswer::Definition {
            locations: vec![kun_builtin_tools::lsp::Location {
                path: "shapes.py".into(),
                line: 1,
                column: 5,
                text: Some("def area():".into()),
            }],
        },
        LspAnswer::Hover {
            hover: "area(width, height)".into(),
        },
        LspAnswer::DocumentSymbols {
            symbols: vec![kun_builtin_tools::lsp::Symbol {
                name: "Square".into(),
                kind: "class".into(),
                line: 5,
                column: 7,
                depth: 0,
            }],
        },
        LspAnswer::Diagnostics {
            diagnostics: vec![kun_builtin_tools::lsp::Diagnostic {
                line: 3,
                column: 7,
                severity: "error".into(),
                message: "invalid syntax".into(),
                source: None,
            }],
            published: true,
        },
    ];
    for answer in answers {
        let output = serde_json::to_value(LspOutput {
            path: "a.py".into(),
            server: "pylsp".into(),
            answer,
        })
        .unwrap();
        let errors = schema_errors(&tool, &output);
        assert!(errors.is_empty(), "{errors:?}: {output}");
    }
}

#[tokio::test]
async fn error_results_are_not_held_to_the_schema() {
    let ws = project();
    let locks = tempfile::tempdir().unwrap();
    let edit = EditTool::new(queue(locks.path()));
    let failed = run(
        &edit,
        &ws,
        json!({"path": "src/lib.rs", "oldText": "fn volume(", "newText": "x"}),
    )
    .await;
    assert!(failed.is_error);
    assert_eq!(failed.error_code(), Some("edit_not_found"));
    assert!(
        !schema_errors(&edit, &failed.output).is_empty(),
        "an error output is {{code, error, …}}, not the success shape: {}",
        failed.output
    );
    // What the model reads: the message with the closest region, not JSON.
    let text = failed.model_text();
    assert!(
        text.starts_with("oldText was not found in src/lib.rs"),
        "{text}"
    );
    assert!(!text.contains("\"code\""), "{text}");
}
