//! The corpus of real MCP servers' tools (`tests/fixtures/corpus/*.json`) and the search
//! queries over it (`tests/fixtures/search_queries.json`).

use kun_mcp::{McpToolRecord, RemoteTool, SchemaSanitizer, records_for_catalog};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The builtin tools' sanitiser, as the assembly root passes it.
pub fn real_sanitizer() -> SchemaSanitizer {
    Arc::new(kun_builtin_tools::sanitize_schema)
}

/// `(server, tools)` of every corpus file, sorted by server name.
pub fn corpus_servers() -> Vec<(String, Vec<RemoteTool>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures().join("corpus"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    // The corpus is the test: an emptied fixture directory must fail, not pass vacuously.
    assert!(
        files.len() >= 10,
        "the MCP corpus has only {} files in {}",
        files.len(),
        fixtures().join("corpus").display()
    );
    files
        .into_iter()
        .map(|path| {
            let value: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let server = value["server"].as_str().unwrap().to_owned();
            let tools = value["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    RemoteTool::from_json(t.clone())
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                })
                .collect::<Vec<RemoteTool>>();
            assert!(!tools.is_empty(), "{}: no tools", path.display());
            (server, tools)
        })
        .collect()
}

pub fn corpus_records() -> Vec<McpToolRecord> {
    records_for_catalog(corpus_servers(), &real_sanitizer())
}

pub struct QueryCase {
    pub query: String,
    /// `server/tool` of every acceptable answer.
    pub expect: Vec<String>,
    /// `tuning` (the lexicon was grown while looking at these) or `holdout` (written after
    /// the ranking was frozen, never tuned on; `search_holdout.json`).
    pub set: String,
}

/// The tuning queries (`search_queries.json`).
pub fn queries() -> Vec<QueryCase> {
    query_file("search_queries.json")
}

/// The held-out queries (`search_holdout.json`): written after the ranking was frozen (round 2,
/// commit 772b4e0), never tuned on. Their `set` is `holdout`.
pub fn holdout_queries() -> Vec<QueryCase> {
    query_file("search_holdout.json")
}

fn query_file(name: &str) -> Vec<QueryCase> {
    let value: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join(name)).unwrap()).unwrap();
    assert!(
        value.as_array().is_some_and(|cases| !cases.is_empty()),
        "{name} has no queries"
    );
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|q| QueryCase {
            query: q["query"].as_str().unwrap().to_owned(),
            expect: q["expect"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap().to_owned())
                .collect(),
            set: q["set"].as_str().unwrap_or("holdout").to_owned(),
        })
        .collect()
}

pub fn address(record: &McpToolRecord) -> String {
    format!("{}/{}", record.address.server, record.address.tool)
}
