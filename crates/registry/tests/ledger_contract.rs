//! Both ledgers honour the `OperationLedger` contract.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use kun_ports::OperationLedger;
use kun_ports::testkit::operation_ledger_contract;
use kun_registry::ledger::{Durability, InMemoryLedger, JournalLedger, JournalOptions};
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn in_memory_ledger_honours_the_contract() {
    operation_ledger_contract(|| Box::new(InMemoryLedger::default()) as Box<dyn OperationLedger>);
}

fn journal_contract(options: JournalOptions) {
    let dir = tempfile::tempdir().unwrap();
    let counter = AtomicUsize::new(0);
    operation_ledger_contract(|| {
        let n = counter.fetch_add(1, Ordering::Relaxed);
        let path = dir.path().join(format!("journal-{n}.jsonl"));
        Box::new(JournalLedger::open_with(path, options).unwrap()) as Box<dyn OperationLedger>
    });
}

#[test]
fn journal_ledger_honours_the_contract() {
    journal_contract(JournalOptions::default());
}

#[test]
fn synced_journal_ledger_honours_the_contract() {
    journal_contract(JournalOptions {
        durability: Durability::Synced,
        ..JournalOptions::default()
    });
}

#[test]
fn journal_ledger_honours_the_contract_while_compacting_constantly() {
    journal_contract(JournalOptions {
        compact_after_bytes: 1,
        ..JournalOptions::default()
    });
}
