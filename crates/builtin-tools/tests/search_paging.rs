//! Paging: pages joined through their cursors give exactly the full, sorted result, whatever
//! the page size or byte budget; cursors are bound to their query.

#![allow(clippy::expect_used, reason = "test helpers fail loudly")]

mod search_fixture;

use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::search::{FindTool, GlobTool, GrepTool, LsTool};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::Tool;
use search_fixture::call;
use serde_json::{Value, json};

/// 120 files in nested directories, 1–9 matching lines each, with non-matching lines between.
fn many_matches() -> TestWorkspace {
    let ws = TestWorkspace::new();
    for i in 0..120 {
        let mut text = String::new();
        for j in 0..(1 + i % 9) {
            text.push_str(&format!("line {j} of file {i}: hit here\nfiller {j}\n"));
        }
        ws.write(&format!("d{}/sub{}/f{i:03}.txt", i % 4, i % 3), text);
    }
    ws
}

fn unlimited() -> OutputLimits {
    OutputLimits::new(1_000_000, 1 << 30)
}

/// Calls `tool` page by page, following `next_cursor`, and returns every page's `key` array.
async fn all_pages(
    tool: &dyn Tool,
    ws: &TestWorkspace,
    args: Value,
    key: &str,
) -> (Vec<Value>, usize) {
    let mut entries = Vec::new();
    let mut pages = 0;
    let mut cursor: Option<String> = None;
    loop {
        let mut args = args.clone();
        if let Some(cursor) = &cursor {
            args["cursor"] = json!(cursor);
        }
        let result = call(tool, ws, args).await;
        assert!(!result.is_error, "{}", result.output);
        let page = result.output[key].as_array().expect("entries").clone();
        assert!(
            !page.is_empty(),
            "a page always advances: {}",
            result.output
        );
        entries.extend(page);
        pages += 1;
        assert!(pages < 10_000, "paging does not terminate");
        match result.output["next_cursor"].as_str() {
            Some(next) => {
                // The model reads the cursor in the last line of the rendering.
                let text = result.model_text();
                let last = text.lines().last().unwrap_or_default();
                assert!(
                    last.starts_with('[') && last.contains(&format!("cursor \"{next}\"")),
                    "{last}"
                );
                cursor = Some(next.to_owned());
            }
            None => return (entries, pages),
        }
    }
}

#[tokio::test]
async fn grep_pages_concatenate_to_the_full_result() {
    let ws = many_matches();
    let args = json!({"pattern": "hit", "context": 1});
    let full = call(&GrepTool::new(unlimited()), &ws, args.clone()).await;
    let full_matches = full.output["matches"].as_array().expect("matches").clone();
    assert_eq!(full.output["total"], full_matches.len());
    assert_eq!(
        full_matches.len(),
        (0..120).map(|i| 1 + i % 9).sum::<usize>()
    );
    assert_eq!(full.output.get("next_cursor"), None);
    let again = call(&GrepTool::new(unlimited()), &ws, args.clone()).await;
    assert_eq!(
        again.output, full.output,
        "the same search gives the same output"
    );

    // Small pages by count (the engine then keeps only a window of matches per thread).
    for limit in [3, 7, 50] {
        let mut paged = args.clone();
        paged["limit"] = json!(limit);
        let (entries, pages) = all_pages(&GrepTool::new(unlimited()), &ws, paged, "matches").await;
        assert_eq!(entries, full_matches, "limit {limit}");
        assert_eq!(pages, full_matches.len().div_ceil(limit), "limit {limit}");
    }
    // Pages cut by bytes.
    let (entries, pages) = all_pages(
        &GrepTool::new(OutputLimits::new(1000, 700)),
        &ws,
        args,
        "matches",
    )
    .await;
    assert_eq!(entries, full_matches);
    assert!(pages > 5, "{pages} pages");
}

#[tokio::test]
async fn grep_order_is_by_path_then_line() {
    let ws = many_matches();
    let full = call(&GrepTool::new(unlimited()), &ws, json!({"pattern": "hit"})).await;
    let keys: Vec<(Vec<String>, u64)> = full.output["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .map(|m| {
            let path = m["path"]
                .as_str()
                .expect("path")
                .split('/')
                .map(str::to_owned)
                .collect();
            (path, m["line"].as_u64().expect("line"))
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
}

#[tokio::test]
async fn glob_find_and_ls_pages_concatenate() {
    let ws = many_matches();
    let full = call(
        &GlobTool::new(unlimited()),
        &ws,
        json!({"pattern": "*.txt"}),
    )
    .await;
    let files = full.output["files"].as_array().expect("files").clone();
    assert_eq!(files.len(), 120);
    assert_eq!(full.output["total"], 120);
    for tool in [
        &GlobTool::new(unlimited()) as &dyn Tool,
        &FindTool::new(unlimited()),
    ] {
        let (entries, pages) =
            all_pages(tool, &ws, json!({"pattern": "*.txt", "limit": 11}), "files").await;
        assert_eq!(entries, files);
        assert_eq!(pages, 11);
    }
    let (entries, _) = all_pages(
        &GlobTool::new(OutputLimits::new(1000, 100)),
        &ws,
        json!({"pattern": "*.txt"}),
        "files",
    )
    .await;
    assert_eq!(entries, files);

    for i in 0..25 {
        ws.write(&format!("flat/e{i:02}"), "x");
    }
    let listing = call(&LsTool::new(unlimited()), &ws, json!({"path": "flat"})).await;
    let all = listing.output["entries"]
        .as_array()
        .expect("entries")
        .clone();
    assert_eq!(all.len(), 25);
    let (entries, pages) = all_pages(
        &LsTool::new(unlimited()),
        &ws,
        json!({"path": "flat", "limit": 4}),
        "entries",
    )
    .await;
    assert_eq!((entries, pages), (all, 7));
}

#[tokio::test]
async fn cursors_belong_to_their_query() {
    let ws = many_matches();
    let grep = GrepTool::default();
    let first = call(&grep, &ws, json!({"pattern": "hit", "limit": 2})).await;
    let cursor = first.output["next_cursor"]
        .as_str()
        .expect("a next page")
        .to_owned();

    // The same query with another page size continues where the cursor points.
    let next = call(
        &grep,
        &ws,
        json!({"pattern": "hit", "limit": 3, "cursor": cursor}),
    )
    .await;
    assert!(!next.is_error, "{}", next.output);

    for other in [
        json!({"pattern": "filler", "cursor": cursor}),
        json!({"pattern": "hit", "ignoreCase": true, "cursor": cursor}),
        json!({"pattern": "hit", "path": "d1", "cursor": cursor}),
        json!({"pattern": "hit", "context": 2, "cursor": cursor}),
    ] {
        let refused = call(&grep, &ws, other.clone()).await;
        assert!(refused.is_error, "{other}");
        assert_eq!(refused.error_code(), Some("invalid_arguments"), "{other}");
        assert!(
            refused
                .error_message()
                .unwrap_or_default()
                .contains("cursor does not belong to this query")
        );
    }
    let glob_cursor = call(
        &GlobTool::default(),
        &ws,
        json!({"pattern": "*.txt", "limit": 5}),
    )
    .await
    .output["next_cursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let via_find = call(
        &FindTool::default(),
        &ws,
        json!({"pattern": "*.txt", "limit": 5, "cursor": glob_cursor}),
    )
    .await;
    assert!(
        !via_find.is_error,
        "glob and find share cursors: {}",
        via_find.output
    );
    let refused = call(&LsTool::default(), &ws, json!({"cursor": glob_cursor})).await;
    assert_eq!(refused.error_code(), Some("invalid_arguments"));

    for bad in ["not a cursor", "eyJxIjoxfQ", "!!"] {
        let malformed = call(&grep, &ws, json!({"pattern": "hit", "cursor": bad})).await;
        assert_eq!(malformed.error_code(), Some("invalid_arguments"), "{bad}");
        assert!(
            malformed
                .error_message()
                .unwrap_or_default()
                .contains("malformed"),
            "{bad}"
        );
    }
}

#[tokio::test]
async fn a_cursor_past_the_end_gives_an_empty_last_page() {
    let ws = many_matches();
    let first = call(
        &GlobTool::default(),
        &ws,
        json!({"pattern": "*.txt", "limit": 119}),
    )
    .await;
    let cursor = first.output["next_cursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    std::fs::remove_file(ws.path("d3/sub2/f119.txt")).expect("remove a file");
    let last = call(
        &GlobTool::default(),
        &ws,
        json!({"pattern": "*.txt", "cursor": cursor}),
    )
    .await;
    assert!(!last.is_error, "{}", last.output);
    assert_eq!(last.output["files"], json!([]));
    assert_eq!(last.output.get("next_cursor"), None);
    assert!(
        last.output["notice"]
            .as_str()
            .unwrap_or_default()
            .contains("changed"),
        "{}",
        last.output
    );
}
