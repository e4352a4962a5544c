//! The three search engines against local servers playing their wire formats (recorded-shape
//! samples in `tests/samples/`), the search contract, and `web_search` through the host.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use kun_ports::testkit::{
    LocalHttpServer, RecordedRequest, RecordedSample, Reply, SearchScenario,
    web_search_backend_contract,
};
use kun_ports::{SearchHit, ToolHost as _, ToolProvider, WebSearchBackend};
use kun_web::search::{Brave, Searxng, Tavily, client};
use kun_web::{SearchConfig, SearchEngine, WebSearchProvider};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn sample(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/samples/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn http() -> reqwest::Client {
    client(Duration::from_secs(10), "kun-tools-test/1").unwrap()
}

/// What a server answers for a scenario, in the engine's format.
fn reply(scenario: SearchScenario, results: &str, empty: &str) -> Reply {
    match scenario {
        SearchScenario::Results => Reply::ok("application/json", results.to_owned()),
        SearchScenario::Empty => Reply::ok("application/json", empty.to_owned()),
        SearchScenario::RateLimited {
            retry_after_seconds,
        } => Reply::status(429, r#"{"error":"rate limited"}"#)
            .header("Retry-After", &retry_after_seconds.to_string()),
        SearchScenario::Unavailable {
            retry_after_seconds,
        } => Reply::status(503, "busy").header("Retry-After", &retry_after_seconds.to_string()),
        SearchScenario::ServerError => Reply::status(500, "internal error"),
        SearchScenario::Unauthorized => Reply::status(401, r#"{"detail":"invalid key"}"#),
        SearchScenario::Garbage => {
            Reply::ok("text/html", "<html><body>502 Bad Gateway</body></html>")
        }
    }
}

/// Servers stay alive for the whole contract run.
type Servers = Mutex<Vec<LocalHttpServer>>;

fn serve(
    servers: &Servers,
    handler: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
) -> String {
    let server = LocalHttpServer::start(handler);
    let url = server.url("");
    servers.lock().unwrap().push(server);
    url
}

#[tokio::test]
async fn searxng_honours_the_contract() {
    let servers = Servers::default();
    let results = sample("searxng");
    web_search_backend_contract(
        |scenario| {
            let results = results.clone();
            let base = serve(&servers, move |request| {
                assert_eq!(request.route(), "/search");
                assert_eq!(request.query("format").as_deref(), Some("json"));
                reply(scenario, &results, r#"{"query":"x","number_of_results":0,"results":[],"answers":[],"suggestions":[]}"#)
            });
            Box::new(Searxng::new(&base, http())) as Box<dyn WebSearchBackend>
        },
        &RecordedSample {
            hits: 5,
            first: SearchHit {
                title: "Tokio - An asynchronous Rust runtime".into(),
                url: "https://tokio.rs/".into(),
                snippet: "Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing network applications.".into(),
            },
        },
    )
    .await;
}

#[tokio::test]
async fn brave_honours_the_contract() {
    let servers = Servers::default();
    let results = sample("brave");
    web_search_backend_contract(
        |scenario| {
            let results = results.clone();
            let base = serve(&servers, move |request| {
                assert_eq!(request.route(), "/res/v1/web/search");
                assert_eq!(request.header("x-subscription-token"), Some("brave-test-key"));
                reply(scenario, &results, r#"{"type":"search","query":{"original":"x"},"mixed":{"type":"mixed","main":[]}}"#)
            });
            Box::new(Brave::new(&base, "brave-test-key".into(), http())) as Box<dyn WebSearchBackend>
        },
        &RecordedSample {
            hits: 4,
            first: SearchHit {
                title: "Tokio - An asynchronous Rust runtime".into(),
                url: "https://tokio.rs/".into(),
                snippet: "Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing network applications.".into(),
            },
        },
    )
    .await;
}

#[tokio::test]
async fn tavily_honours_the_contract() {
    let servers = Servers::default();
    let results = sample("tavily");
    web_search_backend_contract(
        |scenario| {
            let results = results.clone();
            let base = serve(&servers, move |request| {
                assert_eq!((request.method.as_str(), request.route()), ("POST", "/search"));
                assert_eq!(request.header("authorization"), Some("Bearer tvly-test"));
                reply(scenario, &results, r#"{"query":"x","results":[],"response_time":0.2}"#)
            });
            Box::new(Tavily::new(&base, "tvly-test".into(), http())) as Box<dyn WebSearchBackend>
        },
        &RecordedSample {
            hits: 3,
            first: SearchHit {
                title: "Tutorial | Tokio - An asynchronous Rust runtime".into(),
                url: "https://tokio.rs/tokio/tutorial".into(),
                snippet: "Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing networking applications.".into(),
            },
        },
    )
    .await;
}

#[tokio::test]
async fn requests_carry_the_query_and_count() {
    let brave = LocalHttpServer::start(|_| Reply::ok("application/json", sample("brave")));
    let tavily = LocalHttpServer::start(|_| Reply::ok("application/json", sample("tavily")));
    Brave::new(&brave.url(""), "k".into(), http())
        .search("数据库 迁移 & more", 3)
        .await
        .unwrap();
    let request = &brave.requests()[0];
    assert_eq!(request.query("q").as_deref(), Some("数据库 迁移 & more"));
    assert_eq!(request.query("count").as_deref(), Some("3"));
    Tavily::new(&tavily.url(""), "k".into(), http())
        .search("tokio", 50)
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&tavily.requests()[0].body).unwrap();
    assert_eq!(
        body,
        json!({"query": "tokio", "max_results": 20, "search_depth": "basic"})
    );
}

#[tokio::test]
async fn web_search_renders_hits_and_reports_rate_limits() {
    let server = LocalHttpServer::start(|request| match request.query("q").as_deref() {
        Some("slow down") => Reply::status(429, "{}").header("Retry-After", "30"),
        _ => Reply::ok("application/json", sample("searxng")),
    });
    let config = SearchConfig {
        engine: SearchEngine::Searxng,
        url: Some(server.url("")),
        api_key_env: None,
    };
    let provider = WebSearchProvider::from_config(Some(&config), &support::options(), &|_| None);
    assert!(provider.policy().is_usable(), "{:?}", provider.policy());
    let host = support::host_for(vec![Arc::new(provider)]);

    let found = support::call(
        &host,
        "web_search",
        json!({"query": "rust async runtime", "count": 2}),
    )
    .await;
    assert!(!found.is_error, "{found:?}");
    assert_eq!(found.output["backend"], "searxng");
    assert_eq!(
        found.model_text(),
        "1. Tokio - An asynchronous Rust runtime\n   https://tokio.rs/\n   Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing network applications.\n\
         2. tokio::runtime - Rust\n   https://docs.rs/tokio/latest/tokio/runtime/index.html\n   The Tokio runtime. Unlike other Rust programs, asynchronous applications require runtime support."
    );
    let limited = support::call(&host, "web_search", json!({"query": "slow down"})).await;
    assert_eq!(limited.error_code(), Some("rate_limited"), "{limited:?}");
    assert_eq!(limited.output["retry_after_seconds"], 30);
    for (args, needle) in [
        (json!({"query": "  "}), "empty"),
        (json!({"query": "x", "count": 0}), "between 1 and 20"),
        (json!({"query": "x", "count": 21}), "between 1 and 20"),
    ] {
        let bad = support::call(&host, "web_search", args.clone()).await;
        assert_eq!(bad.error_code(), Some("invalid_arguments"), "{args}");
        assert!(
            bad.model_text().contains(needle),
            "{args}: {}",
            bad.model_text()
        );
    }
}

#[tokio::test]
async fn an_unconfigured_or_keyless_search_is_unavailable_and_not_advertised() {
    let options = support::options();
    let cases: Vec<(Option<SearchConfig>, &str)> = vec![
        (None, "no search engine is configured"),
        (
            Some(SearchConfig {
                engine: SearchEngine::Searxng,
                url: None,
                api_key_env: None,
            }),
            "needs url",
        ),
        (
            Some(SearchConfig {
                engine: SearchEngine::Brave,
                url: None,
                api_key_env: None,
            }),
            "BRAVE_API_KEY",
        ),
        (
            Some(SearchConfig {
                engine: SearchEngine::Tavily,
                url: None,
                api_key_env: Some("MY_TAVILY".into()),
            }),
            "MY_TAVILY",
        ),
    ];
    for (config, needle) in cases {
        let provider = WebSearchProvider::from_config(config.as_ref(), &options, &|name| {
            (name == "EMPTY_KEY").then(String::new)
        });
        let policy = provider.policy();
        assert!(policy.enabled && !policy.available, "{policy:?}");
        assert!(
            policy.reason.as_deref().unwrap().contains(needle),
            "{policy:?}"
        );
        let host = support::host_for(vec![Arc::new(provider)]);
        assert!(
            host.list_tools(&support::context()).is_empty(),
            "web_search not advertised"
        );
    }
    let keyed = WebSearchProvider::from_config(
        Some(&SearchConfig {
            engine: SearchEngine::Brave,
            url: None,
            api_key_env: None,
        }),
        &options,
        &|name| (name == "BRAVE_API_KEY").then(|| "secret".to_owned()),
    );
    assert!(keyed.policy().is_usable());
    assert_eq!(keyed.backend(), Some("brave"));
    assert!(
        !format!("{keyed:?}").contains("secret"),
        "keys never show in debug output"
    );
}
