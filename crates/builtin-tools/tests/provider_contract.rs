//! The built-in provider honours the provider contract, in every preset.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use kun_builtin_tools::{BuiltinOptions, BuiltinProvider, Preset};
use kun_ports::testkit::tool_provider_contract;
use kun_ports::{Delegable, ToolProvider};
use kun_sandbox::NoConfinement;
use std::sync::Arc;

fn provider(preset: Preset) -> BuiltinProvider {
    let mut options = BuiltinOptions::new(Arc::new(NoConfinement));
    options.preset = preset;
    BuiltinProvider::new(options)
}

fn names(provider: &BuiltinProvider) -> Vec<String> {
    let mut names: Vec<String> = provider
        .tools()
        .iter()
        .map(|t| t.spec().name.clone())
        .collect();
    names.sort();
    names
}

#[test]
fn every_preset_honours_the_contract() {
    for preset in [Preset::Full, Preset::Coding, Preset::ReadOnly] {
        tool_provider_contract(&provider(preset));
    }
}

#[test]
fn presets_hold_the_spec_tools() {
    assert_eq!(
        names(&provider(Preset::Coding)),
        ["bash", "edit", "read", "write"]
    );
    assert_eq!(
        names(&provider(Preset::ReadOnly)),
        [
            "find",
            "git_inspect",
            "glob",
            "grep",
            "ls",
            "read",
            "repo_map"
        ]
    );
    let full = names(&provider(Preset::Full));
    for tool in [
        "background_shell",
        "bash",
        "edit",
        "find",
        "git_inspect",
        "glob",
        "grep",
        "ls",
        "lsp",
        "read",
        "repo_map",
        "verify_changes",
        "write",
    ] {
        assert!(
            full.contains(&tool.to_owned()),
            "{tool} missing from the full preset"
        );
    }
    assert!(
        !full.contains(&"send_im_attachment".to_owned()),
        "listed only with an IM bridge"
    );
}

#[test]
fn kinds_and_policies_follow_the_spec_table() {
    use kun_ports::{SideEffect as S, ToolKind as K, ToolPolicy as P};
    let expected: &[(&str, K, P, S, bool)] = &[
        ("read", K::ToolCall, P::Auto, S::ReadOnly, true),
        ("grep", K::ToolCall, P::Auto, S::ReadOnly, true),
        ("glob", K::ToolCall, P::Auto, S::ReadOnly, true),
        ("find", K::ToolCall, P::Auto, S::ReadOnly, false),
        ("ls", K::ToolCall, P::Auto, S::ReadOnly, true),
        ("repo_map", K::ToolCall, P::Auto, S::ReadOnly, true),
        ("git_inspect", K::ToolCall, P::Auto, S::ReadOnly, true),
        ("lsp", K::CommandExecution, P::OnRequest, S::ReadOnly, true),
        ("edit", K::FileChange, P::OnRequest, S::Unknown, true),
        ("write", K::FileChange, P::OnRequest, S::Unknown, true),
        ("bash", K::CommandExecution, P::OnRequest, S::Unknown, true),
        (
            "background_shell",
            K::CommandExecution,
            P::OnRequest,
            S::Unknown,
            true,
        ),
        (
            "verify_changes",
            K::CommandExecution,
            P::OnRequest,
            S::Unknown,
            true,
        ),
    ];
    let full = provider(Preset::Full);
    let tools = full.tools();
    for (name, kind, policy, side_effect, advertised) in expected {
        let spec = tools
            .iter()
            .map(|t| t.spec())
            .find(|s| s.name == *name)
            .unwrap();
        assert_eq!(
            (
                spec.kind,
                spec.policy,
                spec.side_effect,
                spec.model_advertised
            ),
            (*kind, *policy, *side_effect, *advertised),
            "{name}"
        );
    }
}

#[test]
fn the_builtin_provider_is_delegable() {
    fn delegable<P: Delegable>(_: &P) {}
    delegable(&provider(Preset::Full));
}
