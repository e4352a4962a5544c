//! MCP tool annotations → our policy, kind and side effect (SPEC §9).
//!
//! Annotations are hints a server gives about its own tools. Only hints the server states
//! count; an absent hint asserts nothing. The mapping, first match wins:
//!
//! | hints | policy | kind | side effect |
//! |---|---|---|---|
//! | no annotations at all | on-request | command_execution | unknown |
//! | `openWorldHint: true` | untrusted | tool_call if read-only, else command_execution | read-only if read-only |
//! | `destructiveHint: true` | on-request | command_execution | unknown |
//! | `readOnlyHint: true` ∧ `openWorldHint: false` | **auto** | tool_call | read-only |
//! | `readOnlyHint: true` (open world not stated) | on-request | tool_call | read-only |
//! | anything else | on-request | command_execution | unknown |
//!
//! "Read-only" means `readOnlyHint: true` and not `destructiveHint: true`. Non-read-only MCP
//! tools are `command_execution`: they run outside our confinement, so the sandbox's
//! workspace-write mode forces an approval for each call. Only a tool the server calls
//! read-only *and* closed-world runs without asking under the default approval policy.
//!
//! ```
//! use kun_mcp::annotations::{ToolHints, classify};
//! use kun_ports::{ToolKind, ToolPolicy};
//! let hints = ToolHints { read_only: Some(true), destructive: Some(false), open_world: Some(false), ..ToolHints::default() };
//! let class = classify(Some(&hints));
//! assert_eq!((class.policy, class.kind), (ToolPolicy::Auto, ToolKind::ToolCall));
//! assert_eq!(classify(None).policy, ToolPolicy::OnRequest);
//! ```

use kun_ports::{SideEffect, ToolKind, ToolPolicy};
use serde::Serialize;

/// The annotation hints of one MCP tool (`None`: not stated).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolHints {
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `readOnlyHint`.
    #[serde(rename = "readOnlyHint", skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    #[serde(rename = "destructiveHint", skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    #[serde(rename = "idempotentHint", skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    #[serde(rename = "openWorldHint", skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolHints {
    /// Stated read-only and not stated destructive.
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.read_only == Some(true) && self.destructive != Some(true)
    }
}

/// How the catalog and the gates treat an MCP tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolClass {
    /// The approval column.
    pub policy: ToolPolicy,
    /// The sandbox discriminator.
    pub kind: ToolKind,
    /// Whether plan mode admits it.
    pub side_effect: SideEffect,
}

/// Maps annotations (`None`: the tool has none) to a [`ToolClass`]; see the module table.
#[must_use]
pub fn classify(hints: Option<&ToolHints>) -> ToolClass {
    let command = ToolClass {
        policy: ToolPolicy::OnRequest,
        kind: ToolKind::CommandExecution,
        side_effect: SideEffect::Unknown,
    };
    let Some(hints) = hints else {
        return command;
    };
    let read_only = hints.is_read_only();
    let reading = ToolClass {
        policy: ToolPolicy::OnRequest,
        kind: ToolKind::ToolCall,
        side_effect: SideEffect::ReadOnly,
    };
    if hints.open_world == Some(true) {
        let base = if read_only { reading } else { command };
        return ToolClass {
            policy: ToolPolicy::Untrusted,
            ..base
        };
    }
    if hints.destructive == Some(true) && !read_only {
        return command;
    }
    if read_only && hints.open_world == Some(false) {
        return ToolClass {
            policy: ToolPolicy::Auto,
            ..reading
        };
    }
    if read_only {
        return reading;
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(
        read_only: Option<bool>,
        destructive: Option<bool>,
        open_world: Option<bool>,
    ) -> ToolHints {
        ToolHints {
            read_only,
            destructive,
            open_world,
            ..ToolHints::default()
        }
    }

    #[test]
    fn classification_table() {
        use SideEffect::{ReadOnly as R, Unknown as U};
        use ToolKind::{CommandExecution as Cmd, ToolCall as Call};
        use ToolPolicy::{Auto, OnRequest, Untrusted};
        let t = Some(true);
        let f = Some(false);
        let n = None;
        // (readOnly, destructive, openWorld) → (policy, kind, side effect)
        let cases = [
            ((t, f, f), (Auto, Call, R)),
            ((t, n, f), (Auto, Call, R)),
            ((t, f, n), (OnRequest, Call, R)),
            ((t, f, t), (Untrusted, Call, R)),
            ((t, t, f), (OnRequest, Cmd, U)), // contradictory: trust the worse hint
            ((f, t, f), (OnRequest, Cmd, U)),
            ((f, t, t), (Untrusted, Cmd, U)),
            ((f, f, f), (OnRequest, Cmd, U)),
            ((f, f, t), (Untrusted, Cmd, U)),
            ((n, n, t), (Untrusted, Cmd, U)),
            ((n, n, n), (OnRequest, Cmd, U)),
        ];
        for ((ro, de, ow), (policy, kind, side_effect)) in cases {
            let got = classify(Some(&hints(ro, de, ow)));
            assert_eq!(
                got,
                ToolClass {
                    policy,
                    kind,
                    side_effect
                },
                "readOnly={ro:?} destructive={de:?} openWorld={ow:?}"
            );
        }
        assert_eq!(
            classify(None),
            ToolClass {
                policy: OnRequest,
                kind: Cmd,
                side_effect: U
            }
        );
    }

    #[test]
    fn hints_serialise_with_mcp_names() {
        let json = serde_json::to_value(hints(Some(true), None, Some(false))).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"readOnlyHint": true, "openWorldHint": false})
        );
    }
}
