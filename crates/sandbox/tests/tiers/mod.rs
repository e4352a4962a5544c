//! The confining tiers available on this machine, for the tests that run against each.
//!
//! The bubblewrap tier must be there under `CI=true` (`.ci/run` installs bubblewrap): a test
//! asking for it then fails instead of skipping. Elsewhere a missing tier skips its test with
//! a message saying why.

#![allow(dead_code, reason = "each test file uses part of this module")]

use kun_ports::ConfinementTier;
use kun_sandbox::{BubblewrapProgram, LandlockProbe, ProbeOptions, SandboxCapabilities};

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The bubblewrap tier, probed alone.
pub fn bubblewrap(options: ProbeOptions) -> Option<SandboxCapabilities> {
    let caps = SandboxCapabilities::probe_with(&ProbeOptions {
        landlock: LandlockProbe::Skip,
        ..options
    });
    if caps.tier() == ConfinementTier::Bubblewrap {
        return Some(caps);
    }
    let why = &caps.report().bubblewrap.detail;
    assert!(
        !under_ci(),
        "CI=true needs the bubblewrap tier (.ci/run installs bubblewrap), but: {why}"
    );
    eprintln!("SKIPPED: the bubblewrap tier is not usable here: {why}");
    None
}

/// The Landlock tier, probed alone.
pub fn landlock(options: ProbeOptions) -> Option<SandboxCapabilities> {
    let caps = SandboxCapabilities::probe_with(&ProbeOptions {
        bubblewrap: BubblewrapProgram::Skip,
        ..options
    });
    if caps.tier() == ConfinementTier::Landlock {
        return Some(caps);
    }
    eprintln!(
        "SKIPPED: the Landlock tier is not usable here: {}",
        caps.report().landlock.detail
    );
    None
}
