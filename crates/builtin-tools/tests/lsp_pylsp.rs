//! `lsp` against a real language server: python-lsp-server (`pylsp`), which `.ci/run`
//! installs with pinned versions into `target/ci-venv`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use kun_builtin_tools::lsp::{LspConfig, LspServerConfig, LspTool};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::Tool;
use kun_sandbox::NoConfinement;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

/// The pylsp binary: `$KUN_PYLSP`, the CI venv, or PATH. In CI it must exist.
fn pylsp() -> Option<PathBuf> {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/ci-venv/bin/pylsp");
    let found = std::env::var_os("KUN_PYLSP")
        .map(PathBuf::from)
        .or_else(|| venv.exists().then_some(venv))
        .or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join("pylsp"))
                    .find(|candidate| candidate.exists())
            })
        });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "pylsp must be installed in CI (see .ci/run)"
        );
        eprintln!("skipping: pylsp not installed (run .ci/run or pip install python-lsp-server)");
    }
    found
}

fn tool(pylsp: PathBuf) -> LspTool {
    tool_with(pylsp, Arc::new(NoConfinement))
}

fn tool_with(pylsp: PathBuf, confinement: Arc<dyn kun_ports::CommandConfinement>) -> LspTool {
    let config = LspConfig {
        servers: vec![LspServerConfig {
            language_id: "python".into(),
            command: pylsp.to_string_lossy().into_owned(),
            args: vec![],
            extensions: vec!["py".into()],
        }],
        ..LspConfig::default()
    };
    LspTool::new(config, confinement)
}

fn project() -> TestWorkspace {
    let ws = TestWorkspace::new();
    ws.write("shapes.py", "def area(width, height):\n    return width * height\n\n\nclass Square:\n    def side(self):\n        return 2\n");
    ws.write(
        "main.py",
        "from shapes import area\n\nprint(area(2, 3))\nprint(area(4, 5))\n",
    );
    ws.write("broken.py", "import os\n\ndef f(:\n    pass\n");
    ws
}

async fn ask(tool: &LspTool, ws: &TestWorkspace, args: Value) -> Value {
    ask_with_text(tool, ws, args).await.0
}

/// The output and what the model reads.
async fn ask_with_text(tool: &LspTool, ws: &TestWorkspace, args: Value) -> (Value, String) {
    let result = tool.execute(args, ws.tool_context("call")).await.unwrap();
    assert!(!result.is_error, "{}", result.output);
    let text = result.model_text();
    (result.output, text)
}

#[tokio::test]
async fn definition_references_hover_symbols_diagnostics() {
    let Some(pylsp) = pylsp() else { return };
    let ws = project();
    let tool = tool(pylsp);

    let (def, text) = ask_with_text(
        &tool,
        &ws,
        json!({"action": "definition", "path": "main.py", "line": 3, "column": 7}),
    )
    .await;
    assert_eq!(text, "shapes.py:1:5: def area(width, height):");
    let locations = def["locations"].as_array().unwrap();
    assert_eq!(locations.len(), 1, "{def}");
    assert_eq!(locations[0]["path"], "shapes.py");
    assert_eq!(locations[0]["line"], 1);
    assert_eq!(locations[0]["text"], "def area(width, height):");

    let refs = ask(
        &tool,
        &ws,
        json!({"action": "references", "path": "shapes.py", "line": 1, "column": 5}),
    )
    .await;
    let places: Vec<(String, u64)> = refs["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["path"].as_str().unwrap().to_owned(),
                l["line"].as_u64().unwrap(),
            )
        })
        .collect();
    for expected in [
        ("main.py", 1),
        ("main.py", 3),
        ("main.py", 4),
        ("shapes.py", 1),
    ] {
        assert!(
            places.contains(&(expected.0.to_owned(), expected.1)),
            "{expected:?} not in {places:?}"
        );
    }

    let hover = ask(
        &tool,
        &ws,
        json!({"action": "hover", "path": "main.py", "line": 3, "column": 7}),
    )
    .await;
    assert!(hover["hover"].as_str().unwrap().contains("area"), "{hover}");

    let (symbols, text) = ask_with_text(
        &tool,
        &ws,
        json!({"action": "document_symbols", "path": "shapes.py"}),
    )
    .await;
    assert!(text.lines().any(|l| l == "1:1 function area"), "{text}");
    let names: Vec<&str> = symbols["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"area") && names.contains(&"Square"),
        "{symbols}"
    );

    let diags = ask(
        &tool,
        &ws,
        json!({"action": "diagnostics", "path": "broken.py"}),
    )
    .await;
    let list = diags["diagnostics"].as_array().unwrap();
    assert!(
        list.iter()
            .any(|d| d["severity"] == "error" && d["line"] == 3),
        "{diags}"
    );
}

#[tokio::test]
async fn the_server_runs_under_the_probed_confinement() {
    let Some(pylsp) = pylsp() else { return };
    let ws = project();
    let caps = kun_sandbox::SandboxCapabilities::probe();
    let tool = tool_with(pylsp, caps.confinement());
    let symbols = ask(
        &tool,
        &ws,
        json!({"action": "document_symbols", "path": "shapes.py"}),
    )
    .await;
    assert!(symbols.to_string().contains("Square"), "{caps}: {symbols}");
    let diags = ask(
        &tool,
        &ws,
        json!({"action": "diagnostics", "path": "broken.py"}),
    )
    .await;
    assert!(
        !diags["diagnostics"].as_array().unwrap().is_empty(),
        "{caps}: {diags}"
    );
}

#[tokio::test]
async fn bad_requests_are_error_results() {
    let Some(pylsp) = pylsp() else { return };
    let ws = project();
    let tool = tool(pylsp);
    let no_position = tool
        .execute(
            json!({"action": "hover", "path": "main.py"}),
            ws.tool_context("c"),
        )
        .await
        .unwrap();
    assert_eq!(no_position.error_code(), Some("invalid_arguments"));
    let unknown_lang = tool
        .execute(
            json!({"action": "hover", "path": "x.zig", "line": 1, "column": 1}),
            ws.tool_context("c"),
        )
        .await
        .unwrap();
    assert_eq!(unknown_lang.error_code(), Some("lsp_unavailable"));
    assert!(
        unknown_lang.model_text().contains(".py"),
        "names what is served: {}",
        unknown_lang.model_text()
    );
    let escape = tool
        .execute(
            json!({"action": "document_symbols", "path": "../etc/passwd.py"}),
            ws.tool_context("c"),
        )
        .await
        .unwrap();
    assert!(escape.is_error);
}

#[tokio::test]
async fn a_missing_server_is_lsp_unavailable_before_any_approval() {
    let ws = project();
    let tool = tool(PathBuf::from("/nonexistent/pylsp"));
    let args = json!({"action": "document_symbols", "path": "shapes.py"});
    // The host's preflight (step 10b) answers before anyone is asked to approve.
    let refused = tool.preflight(&args, &ws.ctx).unwrap_err();
    assert_eq!(refused.code, kun_ports::ErrorCode::LspUnavailable);
    assert!(
        refused
            .message
            .contains("`/nonexistent/pylsp` is not installed"),
        "{}",
        refused.message
    );
    assert_eq!(refused.details["server"], "/nonexistent/pylsp");
    let result = tool.execute(args, ws.tool_context("c")).await.unwrap();
    assert_eq!(result.error_code(), Some("lsp_unavailable"));
    assert!(
        result
            .model_text()
            .starts_with("the python language server"),
        "{}",
        result.model_text()
    );
}
