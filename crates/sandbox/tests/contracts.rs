//! kun-sandbox's adapters against the kun-ports contract suites.

use kun_ports::ConfinementTier;
use kun_ports::testkit::{command_confinement_contract, sandbox_policy_contract};
use kun_sandbox::{NoConfinement, SandboxCapabilities, WorkspaceSandbox};

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
fn the_probed_confinement_honours_the_contract() {
    let caps = SandboxCapabilities::probe();
    let confinement = caps.confinement();
    command_confinement_contract(confinement.as_ref());
    sandbox_policy_contract(&WorkspaceSandbox::for_confinement(confinement.as_ref()));
}

#[test]
fn the_probe_reports_no_confinement_and_says_why() {
    let caps = SandboxCapabilities::probe();
    assert_eq!(caps.tier(), ConfinementTier::None);
    assert_eq!(caps.confinement().tier(), ConfinementTier::None);
    assert!(caps.reason().contains("not built yet"), "{}", caps.reason());
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
