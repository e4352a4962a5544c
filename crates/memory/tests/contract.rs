//! The SQLite store honours the memory-store contract, and the provider the provider contract.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use kun_memory::{MemoryProvider, SqliteMemoryStore};
use kun_ports::MemoryStore;
use kun_ports::testkit::{memory_store_contract, tool_provider_contract};
use std::cell::RefCell;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_store_honours_the_contract() {
    let dirs = RefCell::new(Vec::new());
    memory_store_contract(|| {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteMemoryStore::open(&dir.path().join("memory.sqlite")).unwrap();
        dirs.borrow_mut().push(dir);
        Box::new(store) as Box<dyn MemoryStore>
    })
    .await;
}

#[test]
fn provider_honours_the_provider_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteMemoryStore::open(&dir.path().join("memory.sqlite")).unwrap();
    tool_provider_contract(&MemoryProvider::new(Arc::new(store)));
    tool_provider_contract(&MemoryProvider::unavailable("no file"));
}
