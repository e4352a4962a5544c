//! Contract suite for [`WebSearchBackend`]: a backend is run against a local server that plays
//! each [`SearchScenario`] in the engine's own wire format (the adapter's test starts it and
//! serves a recorded sample for [`SearchScenario::Results`]).
//!
//! | rule | scenario | what the backend must do |
//! |------|----------|--------------------------|
//! | 1 | `Results` | parse the sample: the expected number of hits, the first one exactly, every url `http(s)`, every title non-empty, snippets plain text (no tags) |
//! | 2 | `Results` | honour `limit`: at most that many, the same first hits in the same order |
//! | 3 | `Empty` | no results is `Ok` and empty, not an error |
//! | 4 | `RateLimited` | `RateLimited` with the server's `Retry-After` seconds |
//! | 5 | `Unavailable` | a 503 with `Retry-After` is also `RateLimited`, with its seconds |
//! | 6 | `ServerError` | a 500 is `Failed`, naming the status |
//! | 7 | `Unauthorized` | a 401 is `Rejected { status: 401 }` |
//! | 8 | `Garbage` | a body that is not the engine's response is `BadResponse` |

use crate::{SearchHit, WebSearchBackend, WebSearchErrorKind};

/// What the local server plays for one backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchScenario {
    /// 200 with the recorded sample.
    Results,
    /// 200 with the engine's shape for "nothing found".
    Empty,
    /// 429 with `Retry-After: <seconds>`.
    RateLimited {
        /// The header's value.
        retry_after_seconds: u64,
    },
    /// 503 with `Retry-After: <seconds>`.
    Unavailable {
        /// The header's value.
        retry_after_seconds: u64,
    },
    /// 500 with a short text body.
    ServerError,
    /// 401 with a short JSON error.
    Unauthorized,
    /// 200 with a body that is not the engine's JSON.
    Garbage,
}

/// What the recorded sample holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedSample {
    /// How many hits the sample parses to.
    pub hits: usize,
    /// The first hit, exactly.
    pub first: SearchHit,
}

/// Runs every rule. `make` builds a backend talking to a server that plays the scenario.
pub async fn web_search_backend_contract<F>(make: F, sample: &RecordedSample)
where
    F: Fn(SearchScenario) -> Box<dyn WebSearchBackend>,
{
    let name = make(SearchScenario::Results).name().to_owned();
    assert!(!name.is_empty(), "search contract: a backend has a name");
    let rule = |n: u8, text: &str| format!("search contract ({name}, rule {n}): {text}");

    let backend = make(SearchScenario::Results);
    let hits = backend
        .search("rust async runtime", 20)
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", rule(1, "the sample must parse")));
    assert_eq!(
        hits.len(),
        sample.hits,
        "{}",
        rule(1, "every hit of the sample")
    );
    assert_eq!(
        hits.first(),
        Some(&sample.first),
        "{}",
        rule(1, "the first hit exactly")
    );
    for hit in &hits {
        assert!(
            hit.url.starts_with("http://") || hit.url.starts_with("https://"),
            "{}: {hit:?}",
            rule(1, "urls are http(s)")
        );
        assert!(
            !hit.title.trim().is_empty(),
            "{}: {hit:?}",
            rule(1, "titles are not empty")
        );
        assert!(
            !hit.snippet.contains('<') || !hit.snippet.contains('>'),
            "{}: {hit:?}",
            rule(1, "snippets are plain text")
        );
    }

    let limited = make(SearchScenario::Results)
        .search("rust async runtime", 2)
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", rule(2, "a limited search must work")));
    assert_eq!(
        limited.len(),
        2.min(sample.hits),
        "{}",
        rule(2, "at most `limit` hits")
    );
    assert_eq!(
        limited[..],
        hits[..limited.len()],
        "{}",
        rule(2, "the same first hits")
    );

    let empty = make(SearchScenario::Empty)
        .search("nothing matches this", 5)
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", rule(3, "no results is not an error")));
    assert!(empty.is_empty(), "{}", rule(3, "no results is empty"));

    for (n, scenario, seconds) in [
        (
            4,
            SearchScenario::RateLimited {
                retry_after_seconds: 17,
            },
            17,
        ),
        (
            5,
            SearchScenario::Unavailable {
                retry_after_seconds: 9,
            },
            9,
        ),
    ] {
        let err = make(scenario)
            .search("rust", 5)
            .await
            .expect_err(&rule(n, "a slow-down answer is an error"));
        assert_eq!(
            err.kind,
            WebSearchErrorKind::RateLimited {
                retry_after_seconds: Some(seconds)
            },
            "{}: {err}",
            rule(n, "rate limited, with the server's delay")
        );
    }

    let err = make(SearchScenario::ServerError)
        .search("rust", 5)
        .await
        .expect_err(&rule(6, "a 500 is an error"));
    assert_eq!(
        err.kind,
        WebSearchErrorKind::Failed,
        "{}: {err}",
        rule(6, "a 500 is Failed")
    );
    assert!(
        err.message.contains("500"),
        "{}: {err}",
        rule(6, "the message names the status")
    );

    let err = make(SearchScenario::Unauthorized)
        .search("rust", 5)
        .await
        .expect_err(&rule(7, "a 401 is an error"));
    assert_eq!(
        err.kind,
        WebSearchErrorKind::Rejected { status: 401 },
        "{}: {err}",
        rule(7, "a 401 is Rejected")
    );

    let err = make(SearchScenario::Garbage)
        .search("rust", 5)
        .await
        .expect_err(&rule(
            8,
            "a body that is not the engine's answer is an error",
        ));
    assert_eq!(
        err.kind,
        WebSearchErrorKind::BadResponse,
        "{}: {err}",
        rule(8, "BadResponse")
    );
}
