//! Data-driven edit cases: every directory under `tests/fixtures/edit/` is one call of the
//! `edit` tool.
//!
//! A case holds:
//! * `input.txt` or `input.bin` — the file before the call (written as `file.txt`);
//! * `args.json` — the arguments (`path` defaults to `file.txt`);
//! * either `expected.txt` / `expected.bin` — the exact bytes after a successful call — or
//!   `expected_error.txt` — one fragment per line that the error's message, code or reason must
//!   contain (and the file must be unchanged);
//! * optionally `expected_output.json` — fields the success output must have.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::fs::{EditTool, LockSettings, MutationQueue};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::Tool;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/edit")
}

fn read_either(dir: &Path, stem: &str) -> Option<Vec<u8>> {
    ["txt", "bin"]
        .iter()
        .find_map(|ext| std::fs::read(dir.join(format!("{stem}.{ext}"))).ok())
}

async fn run_case(dir: &Path, tool: &EditTool) -> Result<(), String> {
    let input = read_either(dir, "input").ok_or("no input.txt or input.bin")?;
    let mut args: Value =
        serde_json::from_slice(&std::fs::read(dir.join("args.json")).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    if let Value::Object(map) = &mut args
        && !map.contains_key("__raw")
    {
        map.entry("path").or_insert_with(|| Value::from("file.txt"));
    }
    let ws = TestWorkspace::new();
    ws.write("file.txt", &input);
    let result = tool
        .execute(args, ws.tool_context("call-1"))
        .await
        .map_err(|e| e.to_string())?;
    let after = std::fs::read(ws.path("file.txt")).map_err(|e| e.to_string())?;
    if let Some(expected) = read_either(dir, "expected") {
        if result.is_error {
            return Err(format!("expected success, got {}", result.output));
        }
        if after != expected {
            return Err(format!(
                "file content differs\n  expected: {:?}\n  actual:   {:?}",
                String::from_utf8_lossy(&expected),
                String::from_utf8_lossy(&after)
            ));
        }
        let revision = result.output["revision"].as_str().unwrap_or_default();
        let revised_size = revision.split(':').next().unwrap_or_default();
        if revised_size != after.len().to_string() {
            return Err(format!(
                "revision {revision} but the file has {} bytes",
                after.len()
            ));
        }
        if let Ok(text) = std::fs::read_to_string(dir.join("expected_output.json")) {
            let wanted: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            for (key, value) in wanted.as_object().into_iter().flatten() {
                // An empty list is left out of the output, never sent empty.
                let got = match (result.output.get(key), value) {
                    (None, Value::Array(items)) if items.is_empty() => value.clone(),
                    (got, _) => got.cloned().unwrap_or(Value::Null),
                };
                if &got != value {
                    return Err(format!("output field {key}: expected {value}, got {got}"));
                }
            }
        }
        return Ok(());
    }
    let fragments = std::fs::read_to_string(dir.join("expected_error.txt"))
        .map_err(|_| "no expected.* or expected_error.txt".to_owned())?;
    if !result.is_error {
        return Err(format!("expected an error, got {}", result.output));
    }
    let message = result.error_message().unwrap_or_default();
    let code = result.output["code"].as_str().unwrap_or_default();
    let reason = result.output["reason"].as_str().unwrap_or_default();
    for fragment in fragments.lines().filter(|l| !l.trim().is_empty()) {
        if !message.contains(fragment) && code != fragment && reason != fragment {
            return Err(format!(
                "error lacks {fragment:?}: code {code:?}, message:\n{message}"
            ));
        }
    }
    if after != input {
        return Err("a failed edit changed the file".to_owned());
    }
    Ok(())
}

#[tokio::test]
async fn every_edit_fixture_passes() {
    let locks = tempfile::tempdir().unwrap();
    let queue = Arc::new(MutationQueue::new(LockSettings {
        root: locks.path().to_path_buf(),
        ..LockSettings::default()
    }));
    let tool = EditTool::new(queue);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 20,
        "expected at least 20 fixture cases, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(why) = run_case(case, &tool).await {
            failures.push(format!(
                "{}: {why}",
                case.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
