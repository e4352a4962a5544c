//! kun-sandbox's adapters against the kun-ports contract suites: every tier available on this
//! machine.

#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

mod tiers;

use kun_ports::ConfinementTier;
use kun_ports::testkit::{command_confinement_contract, sandbox_policy_contract};
use kun_sandbox::{
    BubblewrapProgram, LandlockProbe, NoConfinement, ProbeOptions, ProbeStatus,
    SandboxCapabilities, WorkspaceSandbox,
};
use std::os::unix::fs::PermissionsExt;

#[test]
fn workspace_sandbox_honours_the_policy_contract_under_every_tier() {
    for tier in [
        ConfinementTier::None,
        ConfinementTier::Landlock,
        ConfinementTier::Bubblewrap,
    ] {
        sandbox_policy_contract(&WorkspaceSandbox::new(tier));
    }
    sandbox_policy_contract(&WorkspaceSandbox::default());
}

#[test]
fn no_confinement_honours_the_confinement_contract() {
    command_confinement_contract(&NoConfinement);
}

#[test]
fn bubblewrap_honours_the_confinement_contract() {
    if let Some(caps) = tiers::bubblewrap(ProbeOptions::default()) {
        command_confinement_contract(caps.confinement().as_ref());
    }
}

#[test]
fn landlock_honours_the_confinement_contract() {
    if let Some(caps) = tiers::landlock(ProbeOptions::default()) {
        command_confinement_contract(caps.confinement().as_ref());
    }
}

#[test]
fn the_probed_confinement_honours_the_contract() {
    let caps = SandboxCapabilities::probe();
    let confinement = caps.confinement();
    assert_eq!(confinement.tier(), caps.tier());
    command_confinement_contract(confinement.as_ref());
    sandbox_policy_contract(&WorkspaceSandbox::for_confinement(confinement.as_ref()));
}

#[test]
fn a_skipped_probe_reports_no_confinement_and_says_why() {
    let caps = SandboxCapabilities::probe_with(&ProbeOptions {
        bubblewrap: BubblewrapProgram::Skip,
        landlock: LandlockProbe::Skip,
        ..ProbeOptions::default()
    });
    assert_eq!(caps.tier(), ConfinementTier::None);
    assert_eq!(caps.confinement().tier(), ConfinementTier::None);
    assert_eq!(caps.report().bubblewrap.status, ProbeStatus::NotTried);
    assert!(
        caps.reason().contains("asks before every command"),
        "{}",
        caps.reason()
    );
    let shown = caps.to_string();
    assert!(shown.starts_with("command confinement: none ("), "{shown}");
    assert_eq!(
        WorkspaceSandbox::for_confinement(&NoConfinement),
        WorkspaceSandbox::default()
    );
}

#[test]
fn a_bubblewrap_that_cannot_make_namespaces_falls_back_with_a_clear_reason() {
    // A stand-in `bwrap` that fails the way bubblewrap does where user namespaces are denied
    // (confinement.md V20).
    let temp = tempfile::tempdir().unwrap();
    let fake = temp.path().join("bwrap");
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'bubblewrap 0.8.0'; exit 0; }\n\
         echo 'bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let caps = SandboxCapabilities::probe_with(&ProbeOptions {
        bubblewrap: BubblewrapProgram::At(fake),
        ..ProbeOptions::default()
    });
    assert_ne!(caps.tier(), ConfinementTier::Bubblewrap);
    let bubblewrap = &caps.report().bubblewrap;
    assert_eq!(bubblewrap.status, ProbeStatus::Unusable);
    assert!(
        bubblewrap.detail.contains("user namespaces are denied")
            && bubblewrap.detail.contains("using the next tier"),
        "{}",
        bubblewrap.detail
    );
    assert!(
        caps.reason().contains("user namespaces are denied"),
        "the chosen tier's reason says why bubblewrap is not used: {}",
        caps.reason()
    );
}
