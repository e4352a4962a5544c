//! SPEC §5's matrix, every cell: 4 modes × 3 kinds × {unconfined, confined}.

use kun_ports::{ConfinementTier, ErrorCode, SandboxMode, SandboxPolicy, SandboxVerdict, ToolKind};
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
    Approval,
    Blocked(ErrorCode),
}

use Expect::{Allowed, Approval, Blocked};
use SandboxMode::{DangerFullAccess, ExternalSandbox, ReadOnly, WorkspaceWrite};
use Tier::{Confined, Unconfined};
use ToolKind::{CommandExecution, FileChange, ToolCall};

const READ_ONLY: Expect = Blocked(ErrorCode::SandboxReadOnly);
const WRITE_BLOCKED: Expect = Blocked(ErrorCode::SandboxWriteBlocked);
const COMMAND_BLOCKED: Expect = Blocked(ErrorCode::SandboxCommandBlocked);

#[rustfmt::skip]
const MATRIX: &[(SandboxMode, ToolKind, Tier, Expect)] = &[
    (ReadOnly,         ToolCall,         Unconfined, Allowed),
    (ReadOnly,         ToolCall,         Confined,   Allowed),
    (ReadOnly,         FileChange,       Unconfined, READ_ONLY),
    (ReadOnly,         FileChange,       Confined,   READ_ONLY),
    (ReadOnly,         CommandExecution, Unconfined, COMMAND_BLOCKED),
    (ReadOnly,         CommandExecution, Confined,   COMMAND_BLOCKED),
    (WorkspaceWrite,   ToolCall,         Unconfined, Allowed),
    (WorkspaceWrite,   ToolCall,         Confined,   Allowed),
    (WorkspaceWrite,   FileChange,       Unconfined, Allowed),
    (WorkspaceWrite,   FileChange,       Confined,   Allowed),
    (WorkspaceWrite,   CommandExecution, Unconfined, Approval),
    (WorkspaceWrite,   CommandExecution, Confined,   Allowed),
    (DangerFullAccess, ToolCall,         Unconfined, Allowed),
    (DangerFullAccess, ToolCall,         Confined,   Allowed),
    (DangerFullAccess, FileChange,       Unconfined, Allowed),
    (DangerFullAccess, FileChange,       Confined,   Allowed),
    (DangerFullAccess, CommandExecution, Unconfined, Allowed),
    (DangerFullAccess, CommandExecution, Confined,   Allowed),
    (ExternalSandbox,  ToolCall,         Unconfined, Allowed),
    (ExternalSandbox,  ToolCall,         Confined,   Allowed),
    (ExternalSandbox,  FileChange,       Unconfined, WRITE_BLOCKED),
    (ExternalSandbox,  FileChange,       Confined,   WRITE_BLOCKED),
    (ExternalSandbox,  CommandExecution, Unconfined, COMMAND_BLOCKED),
    (ExternalSandbox,  CommandExecution, Confined,   COMMAND_BLOCKED),
];

fn classify(verdict: &SandboxVerdict) -> Expect {
    match verdict {
        SandboxVerdict::Allowed => Allowed,
        SandboxVerdict::ApprovalRequired => Approval,
        SandboxVerdict::Blocked(block) => Blocked(block.code),
    }
}

#[test]
fn the_table_covers_every_cell_once() {
    let mut seen = Vec::new();
    for &(mode, kind, tier, _) in MATRIX {
        let cell = (mode, kind, matches!(tier, Confined));
        assert!(!seen.contains(&cell), "duplicate cell {cell:?}");
        seen.push(cell);
    }
    assert_eq!(seen.len(), SandboxMode::ALL.len() * ToolKind::ALL.len() * 2);
}

#[test]
fn every_cell_of_the_matrix() {
    for &(mode, kind, tier, expected) in MATRIX {
        for &concrete in tier.tiers() {
            let policy = WorkspaceSandbox::new(concrete);
            let verdict = policy.check_tool("probe", kind, mode);
            assert_eq!(
                classify(&verdict),
                expected,
                "{mode} / {kind} / {concrete:?}: {verdict:?}"
            );
            assert_eq!(verdict, tool_verdict("probe", kind, mode, concrete));
        }
    }
}

#[test]
fn blocked_messages_name_the_tool_the_kind_of_refusal_and_the_setting() {
    for &(mode, kind, _, expected) in MATRIX {
        let SandboxVerdict::Blocked(block) =
            WorkspaceSandbox::default().check_tool("write", kind, mode)
        else {
            continue;
        };
        assert_eq!(Blocked(block.code), expected);
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
