//! The escape corpus against the bubblewrap tier. Under `CI=true` the tier must be usable
//! (`.ci/run` installs bubblewrap); elsewhere a missing bwrap skips with a message.
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
fn bubblewrap_escape_corpus() {
    if tiers::bubblewrap(ProbeOptions::default()).is_some() {
        escapes::run_outer("bubblewrap_escape_corpus_inner");
    }
}

/// Runs only as the child of `bubblewrap_escape_corpus`.
#[test]
fn bubblewrap_escape_corpus_inner() {
    if std::env::var_os("KUN_ESCAPE_INNER").is_none() {
        return;
    }
    let caps = tiers::bubblewrap(ProbeOptions {
        max_processes: MAX_PROCESSES,
        ..ProbeOptions::default()
    });
    let confinement = caps.as_ref().map(|c| c.confinement());
    escapes::run_inner(escapes::CorpusTier::Bubblewrap, confinement.as_deref());
}
