//! The escape corpus against the Landlock + seccomp tier (skipped with a message
//! where the kernel has no usable Landlock).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod escapes;
mod tiers;

use kun_sandbox::ProbeOptions;

/// The bound the fork bomb meets.
const MAX_PROCESSES: u32 = 64;

#[test]
fn landlock_escape_corpus() {
    if tiers::landlock(ProbeOptions::default()).is_some() {
        escapes::run_outer("landlock_escape_corpus_inner");
    }
}

/// Runs only as the child of `landlock_escape_corpus`.
#[test]
fn landlock_escape_corpus_inner() {
    if std::env::var_os("KUN_ESCAPE_INNER").is_none() {
        return;
    }
    let caps = tiers::landlock(ProbeOptions {
        max_processes: MAX_PROCESSES,
        ..ProbeOptions::default()
    });
    let confinement = caps.as_ref().map(|c| c.confinement());
    escapes::run_inner(escapes::CorpusTier::Landlock, confinement.as_deref());
}
