//! Retrieval for runtimes: at most 8, ranked, rendered, within the byte budget, from the
//! turn's workspace only.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use kun_memory::{RetrievalOptions, SqliteMemoryStore, place_for, prompt_query, retrieve};
use kun_ports::{MemoryScope, MemoryStore, NewMemory, SandboxMode, ThreadMode};

async fn remember(
    store: &SqliteMemoryStore,
    workspace: &std::path::Path,
    scope: MemoryScope,
    content: &str,
) -> String {
    store
        .create(
            &place_for(workspace),
            NewMemory {
                scope,
                content: content.to_owned(),
                tags: Vec::new(),
            },
        )
        .await
        .unwrap()
        .id
}

#[tokio::test]
async fn at_most_eight_ranked_and_rendered() {
    let data = tempfile::tempdir().unwrap();
    let store = SqliteMemoryStore::open(&data.path().join("memory.sqlite")).unwrap();
    let ws = support::workspace(None);
    for i in 0..12 {
        remember(
            &store,
            ws.path(),
            MemoryScope::Workspace,
            &format!("deploy note {i}"),
        )
        .await;
    }
    let best = remember(
        &store,
        ws.path(),
        MemoryScope::User,
        "deploy with the blue green script",
    )
    .await;
    let ctx = support::context(ws.path(), SandboxMode::WorkspaceWrite, ThreadMode::Agent);
    let found = retrieve(
        &store,
        "How do I deploy with blue green?",
        &ctx,
        RetrievalOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(found.memories.len(), 8, "at most 8");
    assert_eq!(found.memories[0].id, best, "most words matched ranks first");
    let lines: Vec<&str> = found.text.lines().collect();
    assert_eq!(lines.len(), 8);
    assert_eq!(
        lines[0],
        format!("- [{best}] (user) deploy with the blue green script")
    );
    assert!(
        lines[1].starts_with("- [m") && lines[1].contains("(workspace) deploy note"),
        "{}",
        lines[1]
    );
    // Among equals, the newest first: note 11 was written last.
    assert!(lines[1].ends_with("deploy note 11"), "{}", lines[1]);
}

#[tokio::test]
async fn the_byte_budget_is_kept() {
    let data = tempfile::tempdir().unwrap();
    let store = SqliteMemoryStore::open(&data.path().join("memory.sqlite")).unwrap();
    let ws = support::workspace(None);
    remember(
        &store,
        ws.path(),
        MemoryScope::User,
        &format!("cache {}", "long ".repeat(200)),
    )
    .await;
    let short = remember(&store, ws.path(), MemoryScope::User, "cache lives in redis").await;
    let ctx = support::context(ws.path(), SandboxMode::WorkspaceWrite, ThreadMode::Agent);
    let options = RetrievalOptions {
        limit: 8,
        byte_budget: 120,
    };
    let found = retrieve(&store, "where is the cache", &ctx, options)
        .await
        .unwrap();
    assert!(found.text.len() <= 120, "{}", found.text.len());
    assert_eq!(
        found
            .memories
            .iter()
            .map(|m| m.id.as_str())
            .collect::<Vec<_>>(),
        [short.as_str()],
        "the long one is skipped, the short one kept"
    );
}

#[tokio::test]
async fn other_workspaces_and_empty_prompts_retrieve_nothing() {
    let data = tempfile::tempdir().unwrap();
    let store = SqliteMemoryStore::open(&data.path().join("memory.sqlite")).unwrap();
    let mine = support::workspace(None);
    let theirs = support::workspace(None);
    remember(
        &store,
        theirs.path(),
        MemoryScope::Workspace,
        "their secret token location",
    )
    .await;
    let ctx = support::context(mine.path(), SandboxMode::WorkspaceWrite, ThreadMode::Agent);
    let found = retrieve(&store, "token location", &ctx, RetrievalOptions::default())
        .await
        .unwrap();
    assert!(
        found.memories.is_empty() && found.text.is_empty(),
        "{found:?}"
    );
    let nothing = retrieve(&store, "how do I do it?", &ctx, RetrievalOptions::default())
        .await
        .unwrap();
    assert!(nothing.memories.is_empty());
}

#[test]
fn prompts_lose_their_common_words() {
    assert_eq!(
        prompt_query("How do I run the integration tests?"),
        "run integration tests"
    );
    assert_eq!(prompt_query("怎么部署到预发环境？"), "怎么部署到预发环境");
    assert_eq!(prompt_query("what is it"), "");
}

#[tokio::test]
async fn long_queries_are_searched_by_their_most_selective_words() {
    use kun_ports::MemoryQuery;
    let data = tempfile::tempdir().unwrap();
    let store = SqliteMemoryStore::open(&data.path().join("memory.sqlite")).unwrap();
    let ws = support::workspace(None);
    let place = place_for(ws.path());
    for i in 0..30 {
        remember(
            &store,
            ws.path(),
            MemoryScope::User,
            &format!("alpha beta gamma delta epsilon zeta eta theta {i}"),
        )
        .await;
    }
    let rare = remember(
        &store,
        ws.path(),
        MemoryScope::User,
        "alpha beta gamma quokka",
    )
    .await;
    // Twelve words: eight common ones, the rare one, three that are in no memory.
    let text = "alpha beta gamma delta epsilon zeta eta theta quokka wombat numbat bilby";
    let found = store
        .search(
            &place,
            &MemoryQuery {
                text: text.to_owned(),
                scopes: Vec::new(),
                limit: 3,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        found.first().map(|m| m.id.as_str()),
        Some(rare.as_str()),
        "the rare word decides: {found:?}"
    );
    let absent = "wombat numbat bilby dingo emu kookaburra platypus echidna quoll possum";
    let none = store
        .search(
            &place,
            &MemoryQuery {
                text: absent.to_owned(),
                scopes: Vec::new(),
                limit: 3,
            },
        )
        .await
        .unwrap();
    assert!(none.is_empty(), "words in no memory find nothing: {none:?}");
}
