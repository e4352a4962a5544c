//! The memory and web providers from `[memory]` and `[web]`, and their state for `doctor`.
//! Both are registered in the main and the child registries (`MemoryProvider`,
//! `WebProvider` and `WebSearchProvider` are `Delegable`; see their docs for why).

use crate::config::Settings;
use kun_memory::{MemoryProvider, SqliteMemoryStore};
use kun_web::{WebProvider, WebSearchProvider};
use serde_json::{Value, json};
use std::sync::Arc;

/// Why memory is off when there is no file to use.
const NO_DATA_DIR: &str =
    "no data directory: set XDG_DATA_HOME or HOME, or [memory] path in your user config";

/// The `memory` provider for these settings.
#[must_use]
pub fn memory_provider(settings: &Settings) -> Arc<MemoryProvider> {
    Arc::new(match settings.memory.file() {
        Some(path) => MemoryProvider::open_sqlite(&path),
        None => MemoryProvider::unavailable(NO_DATA_DIR),
    })
}

/// The `web` and `web-search` providers for these settings (API keys read from the
/// environment of this process).
#[must_use]
pub fn web_providers(settings: &Settings) -> (Arc<WebProvider>, Arc<WebSearchProvider>) {
    let options = settings.web.options();
    let fetch = Arc::new(WebProvider::new(&options));
    let search = Arc::new(WebSearchProvider::from_config(
        settings.web.search.as_ref(),
        &options,
        &|name| std::env::var(name).ok(),
    ));
    (fetch, search)
}

/// The memory file for `doctor`: `{path, exists, schema_version?, memories?, error?}`.
#[must_use]
pub fn memory_status(settings: &Settings) -> Value {
    let Some(path) = settings.memory.file() else {
        return json!({"path": null, "error": NO_DATA_DIR});
    };
    if !path.exists() {
        return json!({
            "path": path,
            "exists": false,
            "schema_version": null,
            "note": format!(
                "created on first use (schema version {})",
                kun_memory::schema::SCHEMA_VERSION
            ),
        });
    }
    match SqliteMemoryStore::open(&path).and_then(|store| store.status()) {
        Ok(status) => json!({
            "path": path,
            "exists": true,
            "schema_version": status.schema_version,
            "memories": status.memories,
        }),
        Err(err) => json!({"path": path, "exists": true, "error": err.message}),
    }
}

/// The web providers for `doctor`: `[{id, tool, available, backend?, reason?}]` and the
/// guard's setting.
#[must_use]
pub fn web_status(settings: &Settings) -> Value {
    let (fetch, search) = web_providers(settings);
    let row = |provider: &dyn kun_ports::ToolProvider, tool: &str, backend: Option<&str>| {
        let policy = provider.policy();
        json!({
            "id": provider.id(),
            "tool": tool,
            "available": policy.is_usable(),
            "backend": backend,
            "reason": policy.reason,
        })
    };
    json!({
        "allow_private_addresses": settings.web.allow_private_addresses,
        "providers": [
            row(fetch.as_ref(), "web_fetch", None),
            row(search.as_ref(), "web_search", search.backend()),
        ],
    })
}
