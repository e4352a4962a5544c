//! How many bytes the model reads for ten typical calls: before the typed boundary (the
//! compact JSON of `output`, which was `serve`'s text block at commit 121dbff) and after it
//! (each tool's rendering), with the JSON of today's typed outputs for reference.
//!
//! ```text
//! cargo run -p kun-builtin-tools --example model_bytes           # the table
//! cargo run -p kun-builtin-tools --example model_bytes -- --show # and each rendering
//! ```
//!
//! The "before" column was measured by running these same ten calls (this file with the
//! rendering column taken out) against the tree at commit 121dbff; the calls, files and
//! arguments are fixed, so the numbers are reproducible to a byte or two (a temporary
//! directory's absolute path appeared in some old outputs; a duration's digits vary).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a measuring program"
)]

use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::fs::{EditTool, LockSettings, MutationQueue, ReadTool, WriteTool};
use kun_builtin_tools::repo_map::RepoMapTool;
use kun_builtin_tools::search::{GlobTool, GrepTool, LsTool};
use kun_builtin_tools::shell::BashTool;
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{ContentBlock, Tool, ToolResult};
use kun_sandbox::NoConfinement;
use serde_json::{Value, json};
use std::sync::Arc;

/// Bytes of the compact JSON text block at commit 121dbff, per call (in [`calls`] order).
const BEFORE: [usize; 10] = [6_278, 5_812, 317, 327, 838, 292, 530, 106, 3_640, 4_342];

/// A workspace like a small service: a 200-line module, ten handler files, a README.
fn workspace() -> TestWorkspace {
    let ws = TestWorkspace::new();
    let module: String = (1..=200)
        .map(|i| match i % 10 {
            1 => format!("/// Handles request kind {i}.\n"),
            2 => format!("pub fn handle_{i}(req: &Request) -> Response {{\n"),
            3 => "    let body = req.body().trim();\n".to_owned(),
            4 => "    if body.is_empty() {\n".to_owned(),
            5 => "        return Response::bad_request(\"empty body\");\n".to_owned(),
            6 => "    }\n".to_owned(),
            7 => format!("    log::debug!(\"kind {i}: {{}} bytes\", body.len());\n"),
            8 => "    Response::ok(body.to_uppercase())\n".to_owned(),
            9 => "}\n".to_owned(),
            _ => "\n".to_owned(),
        })
        .collect();
    ws.write("src/service.rs", module);
    for n in 0..10 {
        let handlers: String = (0..5)
            .map(|k| {
                format!(
                    "pub fn handle_request_{n}_{k}(req: &Request) -> Response {{\n    route(req)\n}}\n\n"
                )
            })
            .collect();
        ws.write(&format!("src/handlers/h{n}.rs"), handlers);
    }
    ws.write(
        "README.md",
        "# service\n\nA small request router.\n\n## Run\n\n    cargo run\n",
    );
    ws.write(
        "Cargo.toml",
        "[package]\nname = \"service\"\nversion = \"0.1.0\"\n",
    );
    ws.write(
        "docs/design.md",
        "# Design\n\nRequests go through `route`.\n",
    );
    ws.write(".gitignore", "target/\n");
    let long: String = (1..=3_000).map(|i| format!("entry {i}: ok\n")).collect();
    ws.write("logs/run.log", long);
    ws
}

/// The ten calls: a name, the tool and its arguments.
fn calls(locks: &std::path::Path) -> Vec<(&'static str, Arc<dyn Tool>, Value)> {
    let queue = Arc::new(MutationQueue::new(LockSettings {
        root: locks.to_path_buf(),
        ..LockSettings::default()
    }));
    vec![
        (
            "read a 200-line file",
            Arc::new(ReadTool::new(OutputLimits::default())),
            json!({"path": "src/service.rs"}),
        ),
        (
            "grep, 50 matches",
            Arc::new(GrepTool::default()),
            json!({"pattern": "fn handle_request_", "path": "src/handlers"}),
        ),
        (
            "glob *.rs (11 files)",
            Arc::new(GlobTool::default()),
            json!({"pattern": "*.rs"}),
        ),
        ("ls of the root", Arc::new(LsTool::default()), json!({})),
        (
            "failing edit (not found)",
            Arc::new(EditTool::new(Arc::clone(&queue))),
            json!({"path": "src/service.rs", "oldText": "pub fn handle_12(req: &Request) -> Response {\n    let body = req.body();\n    if body.is_empty() {", "newText": "x"}),
        ),
        (
            "bash (10 lines, exit 0)",
            Arc::new(BashTool::new(Arc::new(NoConfinement))),
            json!({"command": "for i in $(seq 1 10); do echo \"test handler_$i ... ok\"; done"}),
        ),
        (
            "edit (one line)",
            Arc::new(EditTool::new(Arc::clone(&queue))),
            json!({"path": "src/service.rs", "oldText": "pub fn handle_12(req: &Request) -> Response {", "newText": "pub fn handle_12(req: &Request) -> Reply {"}),
        ),
        (
            "write a new file",
            Arc::new(WriteTool::new(queue)),
            json!({"path": "src/router.rs", "content": "pub fn route(req: &Request) -> Response {\n    todo()\n}\n"}),
        ),
        (
            "read a page of a 3000-line log",
            Arc::new(ReadTool::new(OutputLimits::new(200, 50 * 1024))),
            json!({"path": "logs/run.log", "offset": 1000}),
        ),
        (
            "repo_map of src",
            Arc::new(RepoMapTool::new()),
            json!({"path": "src"}),
        ),
    ]
}

/// Bytes the model reads of a result after the typed boundary: its text blocks (media
/// counted as the placeholder `kun-tools call --text` prints).
fn rendered_bytes(result: &ToolResult) -> usize {
    result
        .model_content()
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.len(),
            other => serde_json::to_string(other).map_or(0, |s| s.len()),
        })
        .sum()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let ws = workspace();
    let locks = tempfile::tempdir().unwrap();
    println!(
        "| call | before: JSON text block at 121dbff | typed output JSON now | rendering (what the model reads) | change |"
    );
    println!("|---|---:|---:|---:|---:|");
    let show = std::env::args().any(|arg| arg == "--show");
    let mut shown = Vec::new();
    let (mut before_total, mut after_total) = (0, 0);
    for ((name, tool, args), before) in calls(locks.path()).into_iter().zip(BEFORE) {
        let result = tool
            .execute(args, ws.tool_context("measure"))
            .await
            .unwrap();
        let json_now = serde_json::to_string(&result.output).unwrap().len();
        let after = rendered_bytes(&result);
        before_total += before;
        after_total += after;
        if show {
            shown.push(format!("## {name}\n{}\n", result.model_text()));
        }
        println!(
            "| {name} | {before} | {json_now} | {after} | {:+.0}% |",
            change(before, after)
        );
    }
    println!(
        "| **total** | **{before_total}** | | **{after_total}** | **{:+.0}%** |",
        change(before_total, after_total)
    );
    for text in shown {
        println!("\n{text}");
    }
}

fn change(before: usize, after: usize) -> f64 {
    (after as f64 - before as f64) * 100.0 / before.max(1) as f64
}
