//! Contract suite for [`MemoryStore`]: validation, updates and deletes, scope isolation between
//! places, prefix and CJK search, ranking, scope filters and listing.
//!
//! | rule | what a store must do |
//! |------|----------------------|
//! | 1 | `create` returns the memory: an id, its scope, content, normalised tags, timestamps |
//! | 2 | blank content, content over 16 KiB, bad tags → `Invalid`, and nothing is stored; exactly 16 KiB is fine |
//! | 3 | `update` replaces only the given fields, keeps the id, moves `updated_at_ms` forward; an empty change is `Invalid`; an unknown id is `NotFound` |
//! | 4 | `delete` answers `true` once, then `false`; a deleted memory is gone from search and list |
//! | 5 | English words match as prefixes, case-insensitively |
//! | 6 | Chinese and Japanese text is found by a word inside a sentence (no spaces) |
//! | 7 | another workspace's memories are invisible: not searched, not listed, not updatable, not deletable; `user` memories are seen everywhere; `project` memories by every place with the same project key |
//! | 8 | a scope filter returns only those scopes |
//! | 9 | more matching words rank first; among equally relevant memories the newer comes first; `limit` is honoured |
//! | 10 | query syntax characters are plain text: no error, no injection |
//! | 11 | `list` is newest first, with scope filter, limit and offset |

use crate::{
    MAX_MEMORY_BYTES, MAX_TAGS, Memory, MemoryChange, MemoryErrorKind, MemoryListing, MemoryPlace,
    MemoryQuery, MemoryScope, MemoryStore, NewMemory,
};
use std::time::Duration;

/// A place for the suite: workspace `/contract/<name>`, project `git.example/<project>`.
#[must_use]
pub fn memory_place(workspace: &str, project: &str) -> MemoryPlace {
    MemoryPlace::new(
        format!("/contract/{workspace}"),
        format!("git.example/{project}"),
    )
}

/// Runs every rule of the memory-store contract. `make` must build a new, empty store each
/// call.
pub async fn memory_store_contract<F: Fn() -> Box<dyn MemoryStore>>(make: F) {
    creates_what_it_was_given(&*make()).await;
    refuses_bad_input_and_stores_nothing(&*make()).await;
    updates_only_given_fields(&*make()).await;
    deletes_once(&*make()).await;
    english_words_match_as_prefixes(&*make()).await;
    chinese_and_japanese_are_searchable(&*make()).await;
    places_are_isolated(&*make()).await;
    scope_filters_narrow(&*make()).await;
    ranks_by_relevance_then_recency(&*make()).await;
    query_syntax_is_plain_text(&*make()).await;
    lists_newest_first(&*make()).await;
}

async fn create(
    store: &dyn MemoryStore,
    place: &MemoryPlace,
    scope: MemoryScope,
    text: &str,
) -> Memory {
    store
        .create(
            place,
            NewMemory {
                scope,
                content: text.to_owned(),
                tags: Vec::new(),
            },
        )
        .await
        .unwrap_or_else(|e| panic!("memory contract: create({text:?}) failed: {e}"))
}

async fn search(store: &dyn MemoryStore, place: &MemoryPlace, text: &str) -> Vec<Memory> {
    search_in(store, place, text, &[], 20).await
}

async fn search_in(
    store: &dyn MemoryStore,
    place: &MemoryPlace,
    text: &str,
    scopes: &[MemoryScope],
    limit: usize,
) -> Vec<Memory> {
    store
        .search(
            place,
            &MemoryQuery {
                text: text.to_owned(),
                scopes: scopes.to_vec(),
                limit,
            },
        )
        .await
        .unwrap_or_else(|e| panic!("memory contract: search({text:?}) failed: {e}"))
}

async fn list(store: &dyn MemoryStore, place: &MemoryPlace, scopes: &[MemoryScope]) -> Vec<Memory> {
    store
        .list(
            place,
            &MemoryListing {
                scopes: scopes.to_vec(),
                limit: 100,
                offset: 0,
            },
        )
        .await
        .unwrap_or_else(|e| panic!("memory contract: list failed: {e}"))
}

fn ids(memories: &[Memory]) -> Vec<&str> {
    memories.iter().map(|m| m.id.as_str()).collect()
}

/// Rule 1.
async fn creates_what_it_was_given(store: &dyn MemoryStore) {
    let place = memory_place("one", "one");
    let made = store
        .create(
            &place,
            NewMemory {
                scope: MemoryScope::Workspace,
                content: "The tests need Docker running".to_owned(),
                tags: vec![
                    " Testing ".to_owned(),
                    "docker".to_owned(),
                    "testing".to_owned(),
                ],
            },
        )
        .await
        .expect("memory contract (rule 1): create failed");
    assert!(
        !made.id.is_empty(),
        "memory contract (rule 1): ids are not empty"
    );
    assert_eq!(
        made.scope,
        MemoryScope::Workspace,
        "memory contract (rule 1): scope"
    );
    assert_eq!(
        made.content, "The tests need Docker running",
        "memory contract (rule 1)"
    );
    assert_eq!(
        made.tags,
        ["testing", "docker"],
        "memory contract (rule 1): tags are normalised (trimmed, lower-cased, deduplicated)"
    );
    assert!(
        made.created_at_ms > 0 && made.updated_at_ms >= made.created_at_ms,
        "memory contract (rule 1): timestamps are set"
    );
    let second = create(store, &place, MemoryScope::User, "another fact").await;
    assert_ne!(
        made.id, second.id,
        "memory contract (rule 1): ids are unique"
    );
    let listed = list(store, &place, &[]).await;
    assert!(
        listed.contains(&made),
        "memory contract (rule 1): list returns the memory exactly as create did"
    );
}

/// Rule 2.
async fn refuses_bad_input_and_stores_nothing(store: &dyn MemoryStore) {
    let place = memory_place("two", "two");
    let too_long = "é".repeat(MAX_MEMORY_BYTES / 2) + "x";
    let too_many_tags: Vec<String> = (0..=MAX_TAGS).map(|i| format!("t{i}")).collect();
    let cases: Vec<(&str, String, Vec<String>)> = vec![
        ("blank content", "  \n\t ".to_owned(), vec![]),
        ("content over 16 KiB of UTF-8", too_long, vec![]),
        ("a blank tag", "fine".to_owned(), vec![" ".to_owned()]),
        (
            "a tag over 64 bytes",
            "fine".to_owned(),
            vec!["x".repeat(65)],
        ),
        ("too many tags", "fine".to_owned(), too_many_tags),
    ];
    for (case, content, tags) in cases {
        let err = store
            .create(
                &place,
                NewMemory {
                    scope: MemoryScope::User,
                    content,
                    tags,
                },
            )
            .await
            .expect_err(&format!("memory contract (rule 2): {case} must be refused"));
        assert_eq!(
            err.kind,
            MemoryErrorKind::Invalid,
            "memory contract (rule 2): {case} is Invalid, got {err}"
        );
        assert!(
            !err.message.is_empty(),
            "memory contract (rule 2): {case} says why"
        );
    }
    assert!(
        list(store, &place, &[]).await.is_empty(),
        "memory contract (rule 2): refused input stores nothing"
    );
    let exact = "a".repeat(MAX_MEMORY_BYTES);
    let made = create(store, &place, MemoryScope::User, &exact).await;
    assert_eq!(
        made.content.len(),
        MAX_MEMORY_BYTES,
        "memory contract (rule 2): exactly 16 KiB is accepted whole"
    );
    let err = store
        .update(
            &place,
            &made.id,
            MemoryChange {
                content: Some(exact + "b"),
                tags: None,
            },
        )
        .await
        .expect_err("memory contract (rule 2): an update over 16 KiB must be refused");
    assert_eq!(
        err.kind,
        MemoryErrorKind::Invalid,
        "memory contract (rule 2)"
    );
    let kept = list(store, &place, &[]).await;
    assert_eq!(
        kept[0].content.len(),
        MAX_MEMORY_BYTES,
        "memory contract (rule 2): a refused update changes nothing"
    );
}

/// Rule 3.
async fn updates_only_given_fields(store: &dyn MemoryStore) {
    let place = memory_place("three", "three");
    let made = store
        .create(
            &place,
            NewMemory {
                scope: MemoryScope::Project,
                content: "release from the main branch".to_owned(),
                tags: vec!["release".to_owned()],
            },
        )
        .await
        .expect("memory contract (rule 3): create failed");
    tokio::time::sleep(Duration::from_millis(5)).await;
    let retagged = store
        .update(
            &place,
            &made.id,
            MemoryChange {
                content: None,
                tags: Some(vec!["Git".to_owned()]),
            },
        )
        .await
        .expect("memory contract (rule 3): a tag update failed");
    assert_eq!(
        retagged.id, made.id,
        "memory contract (rule 3): the id stays"
    );
    assert_eq!(
        retagged.content, made.content,
        "memory contract (rule 3): content kept"
    );
    assert_eq!(
        retagged.tags,
        ["git"],
        "memory contract (rule 3): tags replaced, normalised"
    );
    assert_eq!(
        retagged.scope,
        MemoryScope::Project,
        "memory contract (rule 3): scope kept"
    );
    assert!(
        retagged.updated_at_ms > made.updated_at_ms,
        "memory contract (rule 3): updated_at moves forward"
    );
    assert_eq!(
        retagged.created_at_ms, made.created_at_ms,
        "memory contract (rule 3)"
    );
    let rewritten = store
        .update(
            &place,
            &made.id,
            MemoryChange {
                content: Some("release from the stable branch".to_owned()),
                tags: None,
            },
        )
        .await
        .expect("memory contract (rule 3): a content update failed");
    assert_eq!(
        rewritten.tags,
        ["git"],
        "memory contract (rule 3): tags kept"
    );
    assert_eq!(rewritten.content, "release from the stable branch");
    assert_eq!(
        ids(&search(store, &place, "stable").await),
        [made.id.as_str()],
        "memory contract (rule 3): search sees the new content"
    );
    assert!(
        search(store, &place, "main").await.is_empty(),
        "memory contract (rule 3): search forgets the old content"
    );
    let empty = store
        .update(&place, &made.id, MemoryChange::default())
        .await
        .expect_err("memory contract (rule 3): an empty change must be refused");
    assert_eq!(
        empty.kind,
        MemoryErrorKind::Invalid,
        "memory contract (rule 3)"
    );
    let unknown = store
        .update(
            &place,
            "no-such-memory",
            MemoryChange {
                content: Some("x".to_owned()),
                tags: None,
            },
        )
        .await
        .expect_err("memory contract (rule 3): an unknown id must fail");
    assert_eq!(
        unknown.kind,
        MemoryErrorKind::NotFound,
        "memory contract (rule 3)"
    );
}

/// Rule 4.
async fn deletes_once(store: &dyn MemoryStore) {
    let place = memory_place("four", "four");
    let made = create(store, &place, MemoryScope::User, "use pnpm, not npm").await;
    let kept = create(
        store,
        &place,
        MemoryScope::User,
        "pnpm store lives in the home dir",
    )
    .await;
    assert!(
        store
            .delete(&place, &made.id)
            .await
            .expect("memory contract (rule 4)"),
        "memory contract (rule 4): the first delete answers true"
    );
    assert!(
        !store
            .delete(&place, &made.id)
            .await
            .expect("memory contract (rule 4)"),
        "memory contract (rule 4): the second delete answers false"
    );
    assert!(
        !store
            .delete(&place, "no-such-memory")
            .await
            .expect("memory contract (rule 4)"),
        "memory contract (rule 4): an unknown id answers false"
    );
    assert_eq!(
        ids(&search(store, &place, "pnpm").await),
        [kept.id.as_str()],
        "memory contract (rule 4): a deleted memory is not found"
    );
    assert_eq!(
        ids(&list(store, &place, &[]).await),
        [kept.id.as_str()],
        "memory contract (rule 4): a deleted memory is not listed"
    );
}

/// Rule 5.
async fn english_words_match_as_prefixes(store: &dyn MemoryStore) {
    let place = memory_place("five", "five");
    let deploy = create(
        store,
        &place,
        MemoryScope::User,
        "Deployments go through the staging cluster",
    )
    .await;
    create(store, &place, MemoryScope::User, "The linter runs on save").await;
    for query in ["deploy", "DEPLOY", "staging", "stag clust"] {
        assert_eq!(
            ids(&search(store, &place, query).await),
            [deploy.id.as_str()],
            "memory contract (rule 5): `{query}` finds the deployment memory by prefix"
        );
    }
    assert!(
        search(store, &place, "ployment").await.is_empty(),
        "memory contract (rule 5): English matches word prefixes, not arbitrary substrings"
    );
}

/// Rule 6.
async fn chinese_and_japanese_are_searchable(store: &dyn MemoryStore) {
    let place = memory_place("six", "six");
    let zh = create(
        store,
        &place,
        MemoryScope::User,
        "数据库迁移之前必须先备份生产数据",
    )
    .await;
    let ja = create(
        store,
        &place,
        MemoryScope::User,
        "テストは並列で実行するとタイムアウトしやすい",
    )
    .await;
    let mixed = create(
        store,
        &place,
        MemoryScope::User,
        "用 cargo nextest 跑测试，比 cargo test 快",
    )
    .await;
    for (query, expected) in [
        ("迁移", &zh),
        ("备份", &zh),
        ("数据库迁移", &zh),
        ("生产数据", &zh),
        ("並列", &ja),
        ("タイムアウト", &ja),
        ("テスト", &ja),
        ("测试", &mixed),
        ("nextest", &mixed),
    ] {
        assert_eq!(
            ids(&search(store, &place, query).await),
            [expected.id.as_str()],
            "memory contract (rule 6): `{query}` finds `{}`",
            expected.content
        );
    }
    assert!(
        search(store, &place, "迁备").await.is_empty(),
        "memory contract (rule 6): CJK queries match text that is there, not scattered characters"
    );
}

/// Rule 7.
async fn places_are_isolated(store: &dyn MemoryStore) {
    let alpha = memory_place("alpha", "shared");
    let beta = memory_place("beta", "shared");
    let gamma = memory_place("gamma", "other");
    let mine = create(
        store,
        &alpha,
        MemoryScope::Workspace,
        "secret workspace note kiwi",
    )
    .await;
    let everyone = create(store, &alpha, MemoryScope::User, "user note kiwi").await;
    let project = create(store, &alpha, MemoryScope::Project, "project note kiwi").await;
    let mut alpha_sees = ids(&search(store, &alpha, "kiwi").await)
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    alpha_sees.sort();
    let mut expected = vec![mine.id.clone(), everyone.id.clone(), project.id.clone()];
    expected.sort();
    assert_eq!(
        alpha_sees, expected,
        "memory contract (rule 7): a place sees its own memories"
    );
    let mut beta_sees = ids(&search(store, &beta, "kiwi").await)
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    beta_sees.sort();
    let mut expected = vec![everyone.id.clone(), project.id.clone()];
    expected.sort();
    assert_eq!(
        beta_sees, expected,
        "memory contract (rule 7): another workspace of the same project sees user and project memories only"
    );
    assert_eq!(
        ids(&search(store, &gamma, "kiwi").await),
        [everyone.id.as_str()],
        "memory contract (rule 7): another project sees only user memories"
    );
    assert!(
        !ids(&list(store, &gamma, &[]).await).contains(&mine.id.as_str()),
        "memory contract (rule 7): another workspace's memories are not listed"
    );
    let err = store
        .update(
            &gamma,
            &mine.id,
            MemoryChange {
                content: Some("overwritten".to_owned()),
                tags: None,
            },
        )
        .await
        .expect_err("memory contract (rule 7): updating another workspace's memory must fail");
    assert_eq!(
        err.kind,
        MemoryErrorKind::NotFound,
        "memory contract (rule 7)"
    );
    assert!(
        !store
            .delete(&gamma, &mine.id)
            .await
            .expect("memory contract (rule 7)"),
        "memory contract (rule 7): deleting another workspace's memory answers false"
    );
    assert!(
        !store
            .delete(&gamma, &project.id)
            .await
            .expect("memory contract (rule 7)"),
        "memory contract (rule 7): deleting another project's memory answers false"
    );
    let still = search(store, &alpha, "secret").await;
    assert_eq!(
        still.first().map(|m| m.content.as_str()),
        Some("secret workspace note kiwi"),
        "memory contract (rule 7): the owner's memory is unchanged"
    );
}

/// Rule 8.
async fn scope_filters_narrow(store: &dyn MemoryStore) {
    let place = memory_place("eight", "eight");
    let user = create(store, &place, MemoryScope::User, "format with rustfmt").await;
    let workspace = create(
        store,
        &place,
        MemoryScope::Workspace,
        "format with prettier",
    )
    .await;
    let project = create(store, &place, MemoryScope::Project, "format with black").await;
    for (scopes, expected) in [
        (vec![MemoryScope::User], vec![&user]),
        (vec![MemoryScope::Workspace], vec![&workspace]),
        (vec![MemoryScope::Project], vec![&project]),
    ] {
        assert_eq!(
            ids(&search_in(store, &place, "format", &scopes, 10).await),
            ids(&expected.iter().map(|m| (*m).clone()).collect::<Vec<_>>()),
            "memory contract (rule 8): search filtered to {scopes:?}"
        );
        assert_eq!(
            ids(&list(store, &place, &scopes).await),
            ids(&expected.iter().map(|m| (*m).clone()).collect::<Vec<_>>()),
            "memory contract (rule 8): list filtered to {scopes:?}"
        );
    }
    let two = search_in(
        store,
        &place,
        "format",
        &[MemoryScope::User, MemoryScope::Project],
        10,
    )
    .await;
    assert_eq!(
        two.len(),
        2,
        "memory contract (rule 8): two scopes give two memories"
    );
}

/// Rule 9.
async fn ranks_by_relevance_then_recency(store: &dyn MemoryStore) {
    let place = memory_place("nine", "nine");
    let older = create(store, &place, MemoryScope::User, "cache note alpha").await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let newer = create(store, &place, MemoryScope::User, "cache note gamma").await;
    let both = create(
        store,
        &place,
        MemoryScope::User,
        "cache note kept in redis cluster",
    )
    .await;
    let found = search(store, &place, "redis cache").await;
    assert_eq!(
        found.first().map(|m| m.id.as_str()),
        Some(both.id.as_str()),
        "memory contract (rule 9): the memory matching more words ranks first"
    );
    let equal = search(store, &place, "note alpha gamma").await;
    let position = |id: &str| equal.iter().position(|m| m.id == id);
    assert!(
        position(&newer.id) < position(&older.id),
        "memory contract (rule 9): among equally relevant memories the newer ranks first: {equal:?}"
    );
    assert_eq!(
        search_in(store, &place, "cache", &[], 2).await.len(),
        2,
        "memory contract (rule 9): limit is honoured"
    );
}

/// Rule 10.
async fn query_syntax_is_plain_text(store: &dyn MemoryStore) {
    let place = memory_place("ten", "ten");
    let made = create(
        store,
        &place,
        MemoryScope::User,
        "run \"make check\" before pushing (always)",
    )
    .await;
    for query in [
        "\"make",
        "make AND check OR",
        "NEAR(make check)",
        "check*",
        "content:make",
        "^make",
        "(always",
        "make -check",
        "make'; DROP TABLE memories; --",
        "{make}",
    ] {
        let found = store
            .search(
                &place,
                &MemoryQuery {
                    text: query.to_owned(),
                    scopes: Vec::new(),
                    limit: 5,
                },
            )
            .await
            .unwrap_or_else(|e| panic!("memory contract (rule 10): `{query}` must not fail: {e}"));
        assert_eq!(
            ids(&found),
            [made.id.as_str()],
            "memory contract (rule 10): `{query}` is searched as plain words"
        );
    }
    for query in ["", "   ", "\"\"", "*", "()"] {
        match store
            .search(
                &place,
                &MemoryQuery {
                    text: query.to_owned(),
                    scopes: Vec::new(),
                    limit: 5,
                },
            )
            .await
        {
            Err(err) => assert_eq!(
                err.kind,
                MemoryErrorKind::Invalid,
                "memory contract (rule 10): a query with no words (`{query}`) is Invalid"
            ),
            Ok(found) => panic!("memory contract (rule 10): `{query}` has no words, got {found:?}"),
        }
    }
    assert_eq!(
        list(store, &place, &[]).await.len(),
        1,
        "memory contract (rule 10): nothing dropped"
    );
}

/// Rule 11.
async fn lists_newest_first(store: &dyn MemoryStore) {
    let place = memory_place("eleven", "eleven");
    let mut made = Vec::new();
    for i in 0..5 {
        made.push(
            create(
                store,
                &place,
                MemoryScope::User,
                &format!("fact number {i}"),
            )
            .await,
        );
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let listed = list(store, &place, &[]).await;
    let newest_first: Vec<&str> = made.iter().rev().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids(&listed),
        newest_first,
        "memory contract (rule 11): newest first"
    );
    let page = store
        .list(
            &place,
            &MemoryListing {
                scopes: Vec::new(),
                limit: 2,
                offset: 1,
            },
        )
        .await
        .expect("memory contract (rule 11): list failed");
    assert_eq!(
        ids(&page),
        newest_first[1..3],
        "memory contract (rule 11): limit and offset"
    );
}
