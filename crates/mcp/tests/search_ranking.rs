//! Search quality over a corpus of real MCP servers' tools: recall@1 and recall@5 over a
//! query set written the way models phrase needs (English and Chinese, often without the
//! words of the target's description), plus specific ranking cases.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use common::corpus::{QueryCase, address, corpus_records, holdout_queries, queries};
use kun_mcp::search::{SearchDoc, SearchIndex};

fn rank_of(
    index: &SearchIndex,
    records: &[kun_mcp::McpToolRecord],
    query: &str,
    expect: &[String],
) -> Option<usize> {
    let hits = index.search(query, 10, |_| true);
    hits.iter()
        .position(|hit| expect.contains(&address(&records[hit.doc])))
}

/// recall@1 and recall@5 of one query set; prints the queries not ranked first.
fn measure(
    index: &SearchIndex,
    records: &[kun_mcp::McpToolRecord],
    cases: &[&QueryCase],
    label: &str,
) -> (f64, f64) {
    let (mut at1, mut at5) = (0usize, 0usize);
    let mut misses = Vec::new();
    for case in cases {
        match rank_of(index, records, &case.query, &case.expect) {
            Some(0) => {
                at1 += 1;
                at5 += 1;
            }
            Some(rank) if rank < 5 => {
                at5 += 1;
                misses.push(format!(
                    "  #{}: {:?} (want {:?})",
                    rank + 1,
                    case.query,
                    case.expect
                ));
            }
            other => {
                let top: Vec<String> = index
                    .search(&case.query, 3, |_| true)
                    .iter()
                    .map(|h| address(&records[h.doc]))
                    .collect();
                misses.push(format!(
                    "  {}: {:?} (want {:?}, got {top:?})",
                    other.map_or("miss".to_owned(), |r| format!("#{}", r + 1)),
                    case.query,
                    case.expect
                ));
            }
        }
    }
    #[expect(clippy::cast_precision_loss, reason = "small counts")]
    let ratio = |a: usize| a as f64 / cases.len().max(1) as f64;
    let chinese = cases
        .iter()
        .filter(|c| c.query.chars().any(kun_mcp::search::tokenize::is_han))
        .count();
    println!(
        "{label}: {} queries ({chinese} Chinese): recall@1 = {:.3}, recall@5 = {:.3}",
        cases.len(),
        ratio(at1),
        ratio(at5)
    );
    println!("{label}, not ranked first:\n{}", misses.join("\n"));
    (ratio(at1), ratio(at5))
}

#[test]
fn recall_over_the_query_set() {
    let records = corpus_records();
    assert!(records.len() >= 100, "corpus has {} tools", records.len());
    let index = SearchIndex::build(records.iter().map(SearchDoc::from));
    let cases = queries();
    assert!(cases.len() >= 150, "only {} tuning queries", cases.len());
    let holdout = holdout_queries();
    assert!(
        holdout.len() >= 60,
        "only {} held-out queries",
        holdout.len()
    );
    let known: Vec<String> = records.iter().map(address).collect();
    for case in cases.iter().chain(&holdout) {
        for target in &case.expect {
            assert!(
                known.contains(target),
                "query {:?} expects unknown tool {target}",
                case.query
            );
        }
    }
    println!(
        "corpus: {} tools of {} servers",
        records.len(),
        common::corpus::corpus_servers().len()
    );
    let is_chinese = |c: &&QueryCase| c.query.chars().any(kun_mcp::search::tokenize::is_han);
    let tuning: Vec<&QueryCase> = cases.iter().collect();
    let held: Vec<&QueryCase> = holdout.iter().collect();
    let held_chinese: Vec<&QueryCase> = holdout.iter().filter(is_chinese).collect();
    let (_, tuning5) = measure(&index, &records, &tuning, "tuning set");
    let (_, held5) = measure(&index, &records, &held, "held-out set");
    let (_, held_chinese5) = measure(&index, &records, &held_chinese, "held-out, Chinese");
    assert!(tuning5 >= 0.95, "tuning recall@5 = {tuning5:.3} < 0.95");
    assert!(held5 >= 0.90, "held-out recall@5 = {held5:.3} < 0.90");
    assert!(
        held_chinese5 >= 0.85,
        "held-out Chinese recall@5 = {held_chinese5:.3} < 0.85"
    );
}

/// (query, the tool that must rank first)
const FIRST: &[(&str, &str)] = &[
    ("create an issue", "github/create_issue"),
    ("创建议题", "github/create_issue"),
    ("make a new directory", "filesystem/create_directory"),
    ("delete entities from memory", "memory/delete_entities"),
    ("删除知识图谱里的实体", "memory/delete_entities"),
    ("git status", "git/git_status"),
    ("查看提交历史", "git/git_log"),
    ("current time in a timezone", "time/get_current_time"),
    ("时区转换", "time/convert_time"),
    ("take a screenshot", "puppeteer/puppeteer_screenshot"),
    ("截图", "puppeteer/puppeteer_screenshot"),
    ("post a slack message", "slack/slack_post_message"),
    ("发消息到 slack 频道", "slack/slack_post_message"),
    ("search_issues", "github/search_issues"),
    ("listPullRequests", "github/list_pull_requests"),
];

#[test]
fn ranking_cases_in_english_and_chinese() {
    let records = corpus_records();
    let index = SearchIndex::build(records.iter().map(SearchDoc::from));
    let mut wrong = Vec::new();
    for (query, want) in FIRST {
        let hits = index.search(query, 5, |_| true);
        let got = hits.first().map(|h| address(&records[h.doc]));
        if got.as_deref() != Some(*want) {
            let top: Vec<String> = hits.iter().map(|h| address(&records[h.doc])).collect();
            wrong.push(format!("{query:?}: want {want}, got {top:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "ranking cases failed:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn results_are_deterministic_and_explain_matches() {
    let records = corpus_records();
    let index = SearchIndex::build(records.iter().map(SearchDoc::from));
    let first = index.search("list open pull requests", 5, |_| true);
    let again = index.search("list open pull requests", 5, |_| true);
    assert_eq!(first, again);
    assert!(first.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(
        first[0].matched.iter().any(|m| m == "pull"),
        "{:?}",
        first[0].matched
    );
    assert!(index.search("", 5, |_| true).is_empty());
    assert!(index.search("the of and", 5, |_| true).is_empty());
    // The filter is applied before ranking: excluding the best answer promotes the next.
    let best = first[0].doc;
    let filtered = index.search("list open pull requests", 5, |doc| doc != best);
    assert!(filtered.iter().all(|h| h.doc != best));
}
