//! SPEC §5's matrix, every cell: 4 modes × 3 kinds × {unconfined, confined tier} × who runs
//! the commands {our confinement, the provider} × what the call asks {confined, escalated}.

use kun_ports::{
    CommandRunner, ConfinementTier, ErrorCode, SandboxMode, SandboxPolicy, SandboxQuery,
    SandboxRequest, SandboxVerdict, ToolKind, Unconfined,
};
use kun_sandbox::{WorkspaceSandbox, tool_verdict};

/// Whether commands run confined, for the table.
#[derive(Debug, Clone, Copy)]
enum Tier {
    Unconfined,
    Confined,
}

impl Tier {
    /// The concrete tiers this column stands for.
    fn tiers(self) -> &'static [ConfinementTier] {
        match self {
            Self::Unconfined => &[ConfinementTier::None],
            Self::Confined => &[ConfinementTier::Landlock, ConfinementTier::Bubblewrap],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Allowed,
    Confined,
    Approval(Unconfined),
    Blocked(ErrorCode),
}

use CommandRunner::{Confinement as Ours, Provider};
use Expect::{Allowed, Approval, Blocked};
use SandboxMode::{DangerFullAccess, ExternalSandbox, ReadOnly, WorkspaceWrite};
use SandboxRequest::{Confined as Plain, Escalated};
use ToolKind::{CommandExecution, FileChange, ToolCall};

const READ_ONLY: Expect = Blocked(ErrorCode::SandboxReadOnly);
const WRITE_BLOCKED: Expect = Blocked(ErrorCode::SandboxWriteBlocked);
const COMMAND_BLOCKED: Expect = Blocked(ErrorCode::SandboxCommandBlocked);
const NO_TIER: Expect = Approval(Unconfined::NoTier);
const BY_PROVIDER: Expect = Approval(Unconfined::Provider);
const ESCALATED: Expect = Approval(Unconfined::Escalated);

/// The columns, in order: (tier, who runs the commands, what the call asks).
const COLUMNS: [(Tier, CommandRunner, SandboxRequest); 8] = [
    (Tier::Unconfined, Ours, Plain),
    (Tier::Unconfined, Ours, Escalated),
    (Tier::Unconfined, Provider, Plain),
    (Tier::Unconfined, Provider, Escalated),
    (Tier::Confined, Ours, Plain),
    (Tier::Confined, Ours, Escalated),
    (Tier::Confined, Provider, Plain),
    (Tier::Confined, Provider, Escalated),
];

#[rustfmt::skip]
const MATRIX: &[(SandboxMode, ToolKind, [Expect; 8])] = &[
    //                                  ---------------- tier none ----------------   ------------- confining tier --------------
    //                                  ours         ours+esc    provider     prov+esc     ours        ours+esc   provider     prov+esc
    (ReadOnly,         ToolCall,         [Allowed,     Allowed,    Allowed,     Allowed,     Allowed,    Allowed,   Allowed,     Allowed]),
    (ReadOnly,         FileChange,       [READ_ONLY,   READ_ONLY,  READ_ONLY,   READ_ONLY,   READ_ONLY,  READ_ONLY, READ_ONLY,   READ_ONLY]),
    (ReadOnly,         CommandExecution, [COMMAND_BLOCKED; 8]),
    (WorkspaceWrite,   ToolCall,         [Allowed; 8]),
    (WorkspaceWrite,   FileChange,       [Allowed; 8]),
    (WorkspaceWrite,   CommandExecution, [NO_TIER,     ESCALATED,  BY_PROVIDER, BY_PROVIDER, Expect::Confined, ESCALATED, BY_PROVIDER, BY_PROVIDER]),
    (DangerFullAccess, ToolCall,         [Allowed; 8]),
    (DangerFullAccess, FileChange,       [Allowed; 8]),
    (DangerFullAccess, CommandExecution, [Allowed; 8]),
    (ExternalSandbox,  ToolCall,         [Allowed; 8]),
    (ExternalSandbox,  FileChange,       [WRITE_BLOCKED; 8]),
    (ExternalSandbox,  CommandExecution, [COMMAND_BLOCKED; 8]),
];

fn classify(verdict: &SandboxVerdict) -> Expect {
    match verdict {
        SandboxVerdict::Allowed => Allowed,
        SandboxVerdict::Confined => Expect::Confined,
        SandboxVerdict::ApprovalRequired(why) => Approval(*why),
        SandboxVerdict::Blocked(block) => Blocked(block.code),
    }
}

#[test]
fn the_table_covers_every_cell_once() {
    let mut seen = Vec::new();
    for &(mode, kind, _) in MATRIX {
        assert!(
            !seen.contains(&(mode, kind)),
            "duplicate row {mode} / {kind}"
        );
        seen.push((mode, kind));
    }
    assert_eq!(seen.len(), SandboxMode::ALL.len() * ToolKind::ALL.len());
    assert_eq!(COLUMNS.len(), 2 * 2 * 2, "tier x runner x request");
}

#[test]
fn every_cell_of_the_matrix() {
    for &(mode, kind, row) in MATRIX {
        for ((tier, runner, request), expected) in COLUMNS.into_iter().zip(row) {
            let query = SandboxQuery {
                kind,
                runner,
                request,
            };
            for &concrete in tier.tiers() {
                let policy = WorkspaceSandbox::new(concrete);
                let verdict = policy.check_tool("probe", query, mode);
                assert_eq!(
                    classify(&verdict),
                    expected,
                    "{mode} / {query:?} / {concrete:?}: {verdict:?}"
                );
                assert_eq!(verdict, tool_verdict("probe", query, mode, concrete));
            }
        }
    }
}

/// MCP command tools never run under our confinement: under workspace-write they always
/// need an approval, whatever the tier (issue 8: the decision lives in the sandbox).
#[test]
fn provider_commands_always_need_approval_under_workspace_write() {
    for &tier in &[
        ConfinementTier::None,
        ConfinementTier::Landlock,
        ConfinementTier::Bubblewrap,
    ] {
        let query = SandboxQuery::kind(CommandExecution);
        assert_eq!(
            WorkspaceSandbox::new(tier).check_tool("mcp__x__run", query, WorkspaceWrite),
            SandboxVerdict::ApprovalRequired(Unconfined::Provider),
            "{tier:?}"
        );
    }
}

#[test]
fn blocked_messages_name_the_tool_the_kind_of_refusal_and_the_setting() {
    for &(mode, kind, row) in MATRIX {
        let SandboxVerdict::Blocked(block) =
            WorkspaceSandbox::default().check_tool("write", SandboxQuery::kind(kind), mode)
        else {
            continue;
        };
        assert_eq!(Blocked(block.code), row[0]);
        let text = &block.message;
        assert!(text.contains("`write`"), "{text}");
        assert!(
            text.contains("--sandbox"),
            "the message must say what to change: {text}"
        );
        assert!(
            text.contains(mode.as_str()),
            "the message must name the mode: {text}"
        );
    }
}

#[test]
fn the_policy_reports_its_tier() {
    assert_eq!(
        WorkspaceSandbox::default().confinement_tier(),
        ConfinementTier::None
    );
    for &tier in &[
        ConfinementTier::Landlock,
        ConfinementTier::Bubblewrap,
        ConfinementTier::None,
    ] {
        assert_eq!(WorkspaceSandbox::new(tier).confinement_tier(), tier);
    }
}
