//! repo_map on small fixture projects in Rust, Python, TypeScript and Go.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use kun_builtin_tools::repo_map::RepoMapTool;
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::Tool;
use serde_json::{Value, json};

fn fixture() -> TestWorkspace {
    let ws = TestWorkspace::new();
    ws.write(
        "core/src/lib.rs",
        "pub struct Registry { tools: Vec<String> }\n\nimpl Registry {\n    pub fn list_tools(&self) -> usize { self.tools.len() }\n}\n\npub trait Provider {\n    fn provide(&self) -> Registry;\n}\n\npub enum Lane { Serial, ReadOnly }\n",
    );
    ws.write(
        "core/src/main.rs",
        "use core::Registry;\nfn main() { let r: Registry = todo(); r.list_tools(); }\n",
    );
    ws.write(
        "tools/search.py",
        "class Searcher:\n    def search(self, query):\n        return Registry()\n\ndef build_index(paths):\n    return Searcher()\n",
    );
    ws.write(
        "web/app.ts",
        "export interface Shape { x: number }\nexport class Canvas {\n  draw(shape: Shape): void {}\n}\nexport const render = (c: Canvas) => c.draw({x: 1});\ntype Id = string;\n",
    );
    ws.write(
        "svc/server.go",
        "package svc\n\ntype Server struct{}\n\nfunc (s *Server) Serve() error { return nil }\n\nfunc NewServer() *Server { return &Server{} }\n",
    );
    ws.write(".gitignore", "generated/\n");
    ws.write("generated/big.rs", "pub fn hidden_by_gitignore() {}\n");
    ws
}

async fn map(ws: &TestWorkspace, args: Value) -> Value {
    let result = RepoMapTool::new()
        .execute(args, ws.tool_context("call-1"))
        .await
        .unwrap();
    assert!(!result.is_error, "{}", result.output);
    result.output
}

#[tokio::test]
async fn lists_definitions_of_every_language() {
    let ws = fixture();
    let out = map(&ws, json!({})).await;
    let text = out["map"].as_str().unwrap();
    for expected in [
        "core/src/lib.rs:",
        "  1: pub struct Registry",
        "  4: pub fn list_tools(&self) -> usize",
        "  7: pub trait Provider",
        "tools/search.py:",
        "  1: class Searcher:",
        "  2: def search(self, query):",
        "  5: def build_index(paths):",
        "web/app.ts:",
        "  1: export interface Shape",
        "  3: draw(shape: Shape): void {}",
        "  5: export const render = (c: Canvas) => c.draw({x: 1});",
        "svc/server.go:",
        "  3: type Server struct{}",
        "  5: func (s *Server) Serve() error",
        "  7: func NewServer() *Server",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    assert!(
        !text.contains("hidden_by_gitignore"),
        "gitignored file listed:\n{text}"
    );
    assert_eq!(out.get("omitted_files"), None, "nothing left out: {out}");
    assert_eq!(out.get("file_cap_reached"), None);
    assert_eq!(out["files_scanned"], 5);
}

#[tokio::test]
async fn most_referenced_file_comes_first() {
    let ws = fixture();
    let text = map(&ws, json!({})).await["map"]
        .as_str()
        .unwrap()
        .to_owned();
    // `Registry` is mentioned by main.rs and search.py, so lib.rs leads the map.
    assert!(text.starts_with("core/src/lib.rs:"), "{text}");
}

#[tokio::test]
async fn budget_drops_whole_files_and_says_so() {
    let ws = fixture();
    let out = map(&ws, json!({"max_bytes": 300})).await;
    assert!(out["omitted_files"].as_u64().unwrap() >= 1);
    assert!(out["map"].as_str().unwrap().len() <= 300);
}

#[tokio::test]
async fn subdirectory_and_escape() {
    let ws = fixture();
    let out = map(&ws, json!({"path": "svc"})).await;
    assert!(
        out["map"].as_str().unwrap().starts_with("server.go:"),
        "{out}"
    );
    let escaped = RepoMapTool::new()
        .execute(json!({"path": "../"}), ws.tool_context("c"))
        .await
        .unwrap();
    assert!(escaped.is_error);
    let unknown = RepoMapTool::new()
        .execute(json!({"depth": 3}), ws.tool_context("c"))
        .await
        .unwrap();
    assert_eq!(unknown.error_code(), Some("invalid_arguments"));
}
