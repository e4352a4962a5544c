//! Agent profiles: who a child agent is and which tools it may ask for.
//!
//! | built-in | tools | for |
//! |---|---|---|
//! | `explore` | read-only | finding things in the code base |
//! | `design-reviewer` | read-only | reviewing a design or a diff for problems |
//! | `over-engineering-reviewer` | read-only | finding what can be removed or simplified |
//! | `general` | inherit | any task |
//!
//! The read-only set is [`READ_ONLY_TOOLS`]. Whatever a profile asks for, the child's
//! allow-list is always intersected with the parent's ([`crate::child_lists`]).

use kun_ports::ChildModel;
use serde::Serialize;
use std::path::PathBuf;

/// The tools of a read-only profile (SPEC §9).
pub const READ_ONLY_TOOLS: [&str; 7] = [
    "read",
    "grep",
    "glob",
    "ls",
    "repo_map",
    "web_fetch",
    "web_search",
];

/// Which tools a profile asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "policy", content = "tools", rename_all = "snake_case")]
pub enum ToolChoice {
    /// [`READ_ONLY_TOOLS`].
    ReadOnly,
    /// Whatever the parent may use.
    Inherit,
    /// These tools (sorted, unique).
    Explicit(Vec<String>),
}

impl ToolChoice {
    /// The names this choice allows; `None` means no limit of its own.
    #[must_use]
    pub fn allowed(&self) -> Option<Vec<String>> {
        match self {
            Self::ReadOnly => Some(READ_ONLY_TOOLS.iter().map(|s| (*s).to_owned()).collect()),
            Self::Inherit => None,
            Self::Explicit(names) => Some(names.clone()),
        }
    }

    /// The narrower of `self` and `other`: the intersection of what both allow.
    #[must_use]
    pub fn narrowed_by(&self, other: &Self) -> Self {
        match (self.allowed(), other.allowed()) {
            (None, None) => Self::Inherit,
            (Some(names), None) | (None, Some(names)) => Self::explicit(names),
            (Some(a), Some(b)) => Self::explicit(a.into_iter().filter(|n| b.contains(n)).collect()),
        }
    }

    /// An explicit list, sorted and unique.
    #[must_use]
    pub fn explicit(mut names: Vec<String>) -> Self {
        names.sort();
        names.dedup();
        Self::Explicit(names)
    }
}

/// Where a profile was defined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "layer", content = "path", rename_all = "snake_case")]
pub enum ProfileOrigin {
    /// Built into kun.
    BuiltIn,
    /// Given by the host program (a runtime embedding kun).
    Host,
    /// A workspace file (`.kun/agents/*.md`, `.claude/agents/**/*.md`).
    Workspace(PathBuf),
}

/// A profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentProfile {
    /// Its name (what `delegate_task` takes).
    pub name: String,
    /// When to use it.
    pub description: String,
    /// The child's system prompt.
    pub system_prompt: String,
    /// Which model.
    pub model: ChildModel,
    /// Which tools it asks for.
    pub tools: ToolChoice,
    /// Tools it must never have.
    pub blocked_tools: Vec<String>,
    /// MCP servers it must never reach (blocked as providers `mcp:<id>`).
    pub blocked_mcp_servers: Vec<String>,
    /// Skills it must never load.
    pub blocked_skills: Vec<String>,
    /// Where it was defined.
    pub origin: ProfileOrigin,
}

impl AgentProfile {
    /// A profile with no deny lists.
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        system_prompt: impl Into<String>,
        tools: ToolChoice,
        origin: ProfileOrigin,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            system_prompt: system_prompt.into(),
            model: ChildModel::Inherit,
            tools,
            blocked_tools: Vec::new(),
            blocked_mcp_servers: Vec::new(),
            blocked_skills: Vec::new(),
            origin,
        }
    }

    /// What a runner needs.
    #[must_use]
    pub fn child_profile(&self) -> kun_ports::ChildProfile {
        kun_ports::ChildProfile {
            name: self.name.clone(),
            system_prompt: self.system_prompt.clone(),
            model: self.model.clone(),
        }
    }
}

/// The closing part of every built-in system prompt.
const REPORT: &str = "You are a sub-agent: another agent delegated this task to you and will \
    read only your final message. Work with the tools you have; when a call is refused, do not \
    retry it, work around it or say what you could not do. End with a concise report: what you \
    found or did, with file paths and line numbers, and anything left open.";

/// The built-in profiles, in name order.
#[must_use]
pub fn builtin_profiles() -> Vec<AgentProfile> {
    let profile = |name: &str, description: &str, role: &str, tools: ToolChoice| {
        AgentProfile::new(
            name,
            description,
            format!("{role}\n\n{REPORT}"),
            tools,
            ProfileOrigin::BuiltIn,
        )
    };
    vec![
        profile(
            "design-reviewer",
            "Reviews a design, a plan or a diff for correctness, missing cases and risky \
             choices. Read-only.",
            "You review designs and changes. Look for wrong assumptions, missing error handling \
             and edge cases, security problems and places where the change disagrees with the \
             surrounding code. Rank findings by severity.",
            ToolChoice::ReadOnly,
        ),
        profile(
            "explore",
            "Finds where things are in the code base and how they fit together. Read-only; \
             use it for searches that would take many reads.",
            "You explore a code base to answer a question. Search broadly first (grep, glob), \
             then read the few files that matter.",
            ToolChoice::ReadOnly,
        ),
        profile(
            "general",
            "Does a self-contained task with the same tools as the delegating agent.",
            "You carry out a self-contained task.",
            ToolChoice::Inherit,
        ),
        profile(
            "over-engineering-reviewer",
            "Finds what a change or module could do with less: needless layers, options, \
             abstractions and code. Read-only.",
            "You look for over-engineering: indirection without a second user, options nobody \
             sets, abstractions that hide one call, code that duplicates a library. Say what to \
             remove and what it would cost.",
            ToolChoice::ReadOnly,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrowing_intersects() {
        let read_only = ToolChoice::ReadOnly;
        let wide = ToolChoice::explicit(vec!["bash".into(), "read".into(), "write".into()]);
        assert_eq!(
            read_only.narrowed_by(&wide),
            ToolChoice::Explicit(vec!["read".into()])
        );
        assert_eq!(
            ToolChoice::Inherit.narrowed_by(&ToolChoice::Inherit),
            ToolChoice::Inherit
        );
        assert_eq!(
            ToolChoice::Inherit.narrowed_by(&wide),
            ToolChoice::explicit(vec!["write".into(), "read".into(), "bash".into()])
        );
    }

    #[test]
    fn builtins_are_the_four_of_the_spec() {
        let names: Vec<String> = builtin_profiles().into_iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "design-reviewer",
                "explore",
                "general",
                "over-engineering-reviewer"
            ]
        );
        assert!(
            builtin_profiles()
                .iter()
                .filter(|p| p.name != "general")
                .all(|p| p.tools == ToolChoice::ReadOnly)
        );
    }
}
