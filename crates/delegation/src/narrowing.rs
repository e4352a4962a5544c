//! A child's lists (SPEC §9): never wider than the parent's.
//!
//! | list | child |
//! |---|---|
//! | allowed tools | the intersection of every list that is defined: the profile's (explicit tools, or the read-only set), the parent's; none defined → none (inherit) |
//! | blocked tools | the parent's + the profile's + `delegate_task` (always: one level of delegation) |
//! | allowed providers | the parent's |
//! | blocked providers | the parent's + `mcp:<server>` per server the profile blocks (its future tools too) |
//! | allowed skills | the parent's |
//! | blocked skills | the parent's + the profile's |

use crate::profile::AgentProfile;
use kun_ports::{NameSet, ToolLists};

/// The tool children can never call.
pub const DELEGATE_TASK: &str = "delegate_task";

/// The provider id of an MCP server (`mcp:<server>`).
#[must_use]
pub fn mcp_provider_id(server: &str) -> String {
    format!("mcp:{server}")
}

/// The child's lists for `profile` under a parent's `lists`; see the module table.
#[must_use]
pub fn child_lists(parent: &ToolLists, profile: &AgentProfile) -> ToolLists {
    let own: Option<NameSet> = profile
        .tools
        .allowed()
        .map(|names| names.iter().map(String::as_str).collect());
    let allowed_tool_names = match (own, &parent.allowed_tool_names) {
        (None, None) => None,
        (Some(own), None) => Some(own),
        (None, Some(parent)) => Some(parent.clone()),
        (Some(own), Some(parent)) => Some(own.intersect(parent)),
    };
    let mut blocked_tool_names = parent.blocked_tool_names.clone();
    blocked_tool_names.insert(DELEGATE_TASK);
    for name in &profile.blocked_tools {
        blocked_tool_names.insert(name.as_str());
    }
    let mut blocked_provider_ids = parent.blocked_provider_ids.clone();
    for server in &profile.blocked_mcp_servers {
        blocked_provider_ids.insert(mcp_provider_id(server));
    }
    let mut blocked_skill_ids = parent.blocked_skill_ids.clone();
    for skill in &profile.blocked_skills {
        blocked_skill_ids.insert(skill.as_str());
    }
    ToolLists {
        allowed_tool_names,
        blocked_tool_names,
        allowed_provider_ids: parent.allowed_provider_ids.clone(),
        blocked_provider_ids,
        allowed_skill_ids: parent.allowed_skill_ids.clone(),
        blocked_skill_ids,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{ProfileOrigin, ToolChoice};

    fn profile(tools: ToolChoice) -> AgentProfile {
        let mut p = AgentProfile::new("p", "d", "s", tools, ProfileOrigin::BuiltIn);
        p.blocked_tools = vec!["grep".into()];
        p.blocked_mcp_servers = vec!["github".into()];
        p.blocked_skills = vec!["deploy".into()];
        p
    }

    /// Every row of the module table.
    #[test]
    fn the_table() {
        let parent = ToolLists {
            allowed_tool_names: Some(["read", "bash", "web_search"].into_iter().collect()),
            blocked_tool_names: ["write"].into_iter().collect(),
            allowed_provider_ids: Some(["builtin", "web"].into_iter().collect()),
            blocked_provider_ids: ["mcp:slack"].into_iter().collect(),
            allowed_skill_ids: Some(["review"].into_iter().collect()),
            blocked_skill_ids: ["pdf"].into_iter().collect(),
        };
        let read_only = child_lists(&parent, &profile(ToolChoice::ReadOnly));
        assert_eq!(
            read_only.allowed_tool_names.unwrap().sorted(),
            ["read", "web_search"]
        );
        assert_eq!(
            read_only.blocked_tool_names.sorted(),
            ["delegate_task", "grep", "write"]
        );
        assert_eq!(
            read_only.allowed_provider_ids.unwrap().sorted(),
            ["builtin", "web"]
        );
        assert_eq!(
            read_only.blocked_provider_ids.sorted(),
            ["mcp:github", "mcp:slack"]
        );
        assert_eq!(read_only.allowed_skill_ids.unwrap().sorted(), ["review"]);
        assert_eq!(read_only.blocked_skill_ids.sorted(), ["deploy", "pdf"]);

        // A profile asking for more than the parent has gets only the overlap.
        let greedy = ToolChoice::explicit(vec!["bash".into(), "write".into(), "edit".into()]);
        let child = child_lists(&parent, &profile(greedy));
        assert_eq!(child.allowed_tool_names.unwrap().sorted(), ["bash"]);

        // Inherit under a parent without an allow-list: no allow-list, deny lists still grow.
        let open = child_lists(&ToolLists::default(), &profile(ToolChoice::Inherit));
        assert!(open.allowed_tool_names.is_none());
        assert!(open.blocked_tool_names.contains(DELEGATE_TASK));
        let inherit = child_lists(&parent, &profile(ToolChoice::Inherit));
        assert_eq!(
            inherit.allowed_tool_names.unwrap().sorted(),
            ["bash", "read", "web_search"]
        );
    }
}
