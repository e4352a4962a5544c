//! The `read` tool: paging, revisions, images, binaries, long lines and path checks.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::fs::ReadTool;
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{SideEffect, Tool, ToolKind, ToolPolicy, ToolResult};
use serde_json::{Value, json};

async fn read(tool: &ReadTool, ws: &TestWorkspace, args: Value) -> ToolResult {
    tool.execute(args, ws.tool_context("call-read"))
        .await
        .unwrap()
}

#[test]
fn spec_is_an_auto_read_only_tool_call() {
    let tool = ReadTool::default();
    let spec = tool.spec();
    assert_eq!(
        (spec.kind, spec.policy, spec.side_effect),
        (ToolKind::ToolCall, ToolPolicy::Auto, SideEffect::ReadOnly)
    );
    let props = &spec.input_schema["properties"];
    for key in ["path", "offset", "limit", "expected_revision"] {
        assert!(
            props[key]["description"].is_string(),
            "{key} is documented: {}",
            spec.input_schema
        );
    }
    assert_eq!(spec.input_schema["required"], json!(["path"]));
}

#[tokio::test]
async fn pages_concatenate_back_to_the_whole_file() {
    let ws = TestWorkspace::new();
    let text: String = (1..=250)
        .map(|i| format!("line {i} {}\r\n", "x".repeat(i % 17)))
        .collect();
    ws.write("big.txt", &text);
    let tool = ReadTool::new(OutputLimits::new(40, 1_000));
    let mut offset = 1;
    let mut pages = String::new();
    let mut revision = None;
    let mut calls = 0;
    loop {
        let mut args = json!({"path": "big.txt", "offset": offset});
        if let Some(rev) = &revision {
            args["expected_revision"] = json!(rev);
        }
        let out = read(&tool, &ws, args).await;
        assert!(!out.is_error, "{}", out.output);
        let page = out.output.clone();
        assert_eq!(page["start_line"], offset);
        assert_eq!(page["total_lines"], 250);
        assert!(page["content"].as_str().unwrap().len() <= 1_000);
        pages.push_str(page["content"].as_str().unwrap());
        revision = Some(page["revision"].as_str().unwrap().to_owned());
        calls += 1;
        if page.get("next_offset").is_none() {
            assert_eq!(page.get("truncated_by"), None, "no padding: {page}");
            assert_eq!(page["end_line"], 250);
            assert!(
                out.model_text()
                    .starts_with(&format!("lines {offset}–250 of 250\n")),
                "a last page of several says where it is: {}",
                out.model_text()
            );
            break;
        }
        assert!(page["truncated_by"].is_string());
        let next = page["next_offset"].as_u64().unwrap() as usize;
        assert_eq!(next, page["end_line"].as_u64().unwrap() as usize + 1);
        let header = out.model_text().lines().next().unwrap().to_owned();
        assert!(
            header.ends_with(&format!("of 250; continue with offset {next}")),
            "{header}"
        );
        offset = next;
    }
    assert!(
        calls > 6,
        "the byte and line limits split the file into several pages"
    );
    assert_eq!(pages, text.replace("\r\n", "\n"));
}

/// Small files are read on the calling task, large ones (over 256 KiB) in the blocking pool:
/// both give the same pages, on a one-thread runtime as `kun-tools` runs them.
#[tokio::test(flavor = "current_thread")]
async fn small_and_large_files_read_alike_on_one_thread() {
    let ws = TestWorkspace::new();
    for (name, lines) in [("small.txt", 100), ("large.txt", 12_000)] {
        let text: String = (1..=lines)
            .map(|i| format!("line {i} of {name}, padded to be long enough\n"))
            .collect();
        ws.write(name, &text);
        let size = text.len();
        assert_eq!(
            size > 256 * 1024,
            name == "large.txt",
            "{name}: {size} bytes"
        );
        let tool = ReadTool::new(OutputLimits::new(5_000, 200_000));
        let mut offset = 1;
        let mut pages = String::new();
        loop {
            let out = read(&tool, &ws, json!({"path": name, "offset": offset})).await;
            assert!(!out.is_error, "{}", out.output);
            assert_eq!(out.output["total_lines"], lines);
            assert_eq!(out.output["byte_size"], size);
            pages.push_str(out.output["content"].as_str().unwrap());
            match out.output.get("next_offset") {
                Some(next) => offset = next.as_u64().unwrap() as usize,
                None => break,
            }
        }
        assert_eq!(pages, text, "{name}");
    }
}

#[tokio::test]
async fn limit_and_line_limits_are_reported() {
    let ws = TestWorkspace::new();
    ws.write("f.txt", "a\nb\nc\nd\ne\n");
    let out = read(
        &ReadTool::new(OutputLimits::new(3, 10_000)),
        &ws,
        json!({"path": "f.txt", "offset": 2, "limit": 2}),
    )
    .await;
    let page = out.output.clone();
    assert_eq!(page["content"], "b\nc\n");
    assert_eq!(
        (page["end_line"].clone(), page["next_offset"].clone()),
        (json!(3), json!(4))
    );
    assert_eq!(page["truncated_by"], "requested_limit");
    assert_eq!(
        out.model_text(),
        "lines 2–3 of 5; continue with offset 4\n2│b\n3│c"
    );
    let out = read(
        &ReadTool::new(OutputLimits::new(3, 10_000)),
        &ws,
        json!({"path": "f.txt"}),
    )
    .await;
    let page = &out.output;
    assert_eq!(page["content"], "a\nb\nc\n");
    assert_eq!(page["truncated_by"], "max_lines");
    assert_eq!(
        out.model_text(),
        "lines 1–3 of 5; continue with offset 4\n1│a\n2│b\n3│c"
    );
}

#[tokio::test]
async fn a_changed_file_fails_the_revision_check() {
    let ws = TestWorkspace::new();
    ws.write("f.txt", "one\n");
    let tool = ReadTool::default();
    let first = read(&tool, &ws, json!({"path": "f.txt"})).await.output;
    let revision = first["revision"].as_str().unwrap().to_owned();
    let same = read(
        &tool,
        &ws,
        json!({"path": "f.txt", "expected_revision": revision}),
    )
    .await;
    assert!(!same.is_error);
    ws.write("f.txt", "one\ntwo\n");
    let changed = read(
        &tool,
        &ws,
        json!({"path": "f.txt", "offset": 2, "expected_revision": revision}),
    )
    .await;
    assert!(changed.is_error);
    assert_eq!(changed.output["reason"], "file_revision_mismatch");
    assert_eq!(changed.output["expected_revision"], revision.as_str());
    assert_ne!(changed.output["revision"], revision.as_str());
    assert!(changed.error_message().unwrap().contains("changed"));
    assert_eq!(
        tool.observed_read(&json!({"path": "f.txt"}), &changed.output, &ws.ctx),
        None,
        "errors are not reads"
    );
}

#[tokio::test]
async fn binary_files_are_refused() {
    let ws = TestWorkspace::new();
    ws.write("a.out", b"\x7fELF\x02\x01\x01\0\0\0\0\0");
    let out = read(&ReadTool::default(), &ws, json!({"path": "a.out"})).await;
    assert!(out.is_error);
    assert_eq!(out.output["reason"], "binary_file");
}

#[tokio::test]
async fn images_come_back_as_base64_with_dimensions() {
    let ws = TestWorkspace::new();
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    png.extend_from_slice(&640u32.to_be_bytes());
    png.extend_from_slice(&480u32.to_be_bytes());
    png.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    ws.write("shot.png", &png);
    let tool = ReadTool::default();
    let out = read(&tool, &ws, json!({"path": "shot.png"})).await;
    assert!(!out.is_error, "{}", out.output);
    assert_eq!(out.output["kind"], "image");
    assert_eq!(out.output["mime_type"], "image/png");
    assert_eq!(out.model_text(), "image/png, 640×480, 33B");
    assert_eq!(
        out.content[1],
        kun_ports::ContentBlock::image(out.output["data_base64"].as_str().unwrap(), "image/png")
    );
    assert_eq!(
        (out.output["width"].clone(), out.output["height"].clone()),
        (json!(640), json!(480))
    );
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD
        .decode(out.output["data_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(data, png);
    let seen = tool
        .observed_read(&json!({"path": "shot.png"}), &out.output, &ws.ctx)
        .unwrap();
    assert_eq!(seen.content, None);

    let mut gif = b"GIF89a".to_vec();
    gif.extend_from_slice(&[3, 0, 2, 0, 0, 0, 0]);
    ws.write("a.gif", &gif);
    let out = read(&tool, &ws, json!({"path": "a.gif"})).await;
    assert_eq!(
        (out.output["mime_type"].clone(), out.output["width"].clone()),
        (json!("image/gif"), json!(3))
    );
    let small = ReadTool::default().with_max_image_bytes(10);
    assert_eq!(
        read(&small, &ws, json!({"path": "shot.png"})).await.output["reason"],
        "file_too_large"
    );
}

#[tokio::test]
async fn a_line_longer_than_the_budget_becomes_a_placeholder() {
    let ws = TestWorkspace::new();
    ws.write("min.js", format!("{}\nshort\n", "y".repeat(5_000)));
    let tool = ReadTool::new(OutputLimits::new(100, 1_024));
    let result = read(&tool, &ws, json!({"path": "min.js"})).await;
    let out = result.output.clone();
    assert_eq!(out["omitted_line_bytes"], 5_000);
    assert_eq!(out["content"], "");
    let text = result.model_text();
    assert!(!text.contains("yyyy"));
    assert!(text.contains("grep") && text.contains("offset 2"), "{text}");
    assert_eq!(out["next_offset"], 2);
    let seen = tool
        .observed_read(&json!({"path": "min.js"}), &out, &ws.ctx)
        .unwrap();
    assert!(seen.partial);
    let rest = read(&tool, &ws, json!({"path": "min.js", "offset": 2}))
        .await
        .output;
    assert_eq!(rest["content"], "short\n");
}

#[tokio::test]
async fn observed_read_reports_path_content_and_partiality() {
    let ws = TestWorkspace::new();
    ws.write("src/a.rs", "fn a() {}\nfn b() {}\n");
    let tool = ReadTool::default();
    let args = json!({"path": "src/a.rs"});
    let full = read(&tool, &ws, args.clone()).await.output;
    let seen = tool.observed_read(&args, &full, &ws.ctx).unwrap();
    // The path as the call named it: the host resolves it like an edit's path.
    assert_eq!(seen.path, std::path::Path::new("src/a.rs"));
    assert_eq!(seen.content.as_deref(), Some("fn a() {}\nfn b() {}\n"));
    assert!(!seen.partial);
    let on_disk = std::fs::metadata(ws.path("src/a.rs")).unwrap();
    assert_eq!(seen.revision, Some(kun_ports::FileRevision::of(&on_disk)));
    assert_eq!(full["path"], "src/a.rs", "no absolute path in the output");
    let args = json!({"path": "src/a.rs", "offset": 2});
    let tail = read(&tool, &ws, args.clone()).await.output;
    assert!(
        tool.observed_read(&args, &tail, &ws.ctx).unwrap().partial,
        "a page not starting at line 1 is partial"
    );
    let args = json!({"path": "src/a.rs", "limit": 1});
    let head = read(&tool, &ws, args.clone()).await.output;
    assert!(
        tool.observed_read(&args, &head, &ws.ctx).unwrap().partial,
        "a page not reaching the end is partial"
    );
}

#[tokio::test]
async fn bad_requests_get_clear_errors() {
    let ws = TestWorkspace::new();
    ws.write("f.txt", "a\nb\n");
    ws.write("dir/x.txt", "x");
    let tool = ReadTool::default();
    let past = read(&tool, &ws, json!({"path": "f.txt", "offset": 9})).await;
    assert!(
        past.error_message().unwrap().contains("2 lines"),
        "{}",
        past.output
    );
    let missing = read(&tool, &ws, json!({"path": "nope.txt"})).await;
    assert_eq!(missing.output["reason"], "file_not_found");
    assert_eq!(missing.output["code"], "tool_execution_failed");
    let dir = read(&tool, &ws, json!({"path": "dir"})).await;
    assert!(
        dir.error_message().unwrap().contains("directory"),
        "{}",
        dir.output
    );
    let blank = read(&tool, &ws, json!({"path": " "})).await;
    assert_eq!(blank.output["code"], "invalid_arguments");
    let unknown = read(&tool, &ws, json!({"path": "f.txt", "lines": 3})).await;
    assert_eq!(unknown.output["code"], "invalid_arguments");
    let empty = {
        ws.write("empty.txt", "");
        read(&tool, &ws, json!({"path": "empty.txt"})).await
    };
    assert_eq!(
        (
            empty.output["content"].clone(),
            empty.output["total_lines"].clone(),
            empty.output.get("next_offset")
        ),
        (json!(""), json!(0), None)
    );
    assert_eq!(empty.model_text(), "(empty file)");
}

#[tokio::test]
async fn reads_outside_the_workspace_are_refused() {
    let ws = TestWorkspace::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), ws.path("link.txt")).unwrap();
    let tool = ReadTool::default();
    for path in [
        "link.txt",
        "../secret.txt",
        outside.path().join("secret.txt").to_str().unwrap(),
    ] {
        let out = read(&tool, &ws, json!({"path": path})).await;
        assert!(out.is_error, "{path}: {}", out.output);
        assert_eq!(out.output["code"], "sandbox_read_blocked", "{path}");
        assert!(!out.output.to_string().contains("\"secret\""));
    }
}
