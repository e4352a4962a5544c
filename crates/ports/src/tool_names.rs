//! Tool names written for Claude Code, in skill and sub-agent files, mapped to ours.
//!
//! | Claude Code | kun |
//! |---|---|
//! | `Read` | `read` |
//! | `Grep` | `grep` |
//! | `Glob` | `glob` |
//! | `LS` | `ls` |
//! | `Edit`, `MultiEdit` | `edit` |
//! | `Write` | `write` |
//! | `Bash` | `bash` |
//! | `WebFetch` | `web_fetch` |
//! | `WebSearch` | `web_search` |
//!
//! A name already in our form (`[a-z0-9_]+`) is taken as ours. Anything else (`NotebookEdit`,
//! `TodoWrite`, Claude Code's `mcp__server__tool`) is not a kun tool: callers report it.

/// Claude Code's built-in tool names and ours.
pub const CLAUDE_CODE_TOOL_NAMES: [(&str, &str); 10] = [
    ("Read", "read"),
    ("Grep", "grep"),
    ("Glob", "glob"),
    ("LS", "ls"),
    ("Edit", "edit"),
    ("MultiEdit", "edit"),
    ("Write", "write"),
    ("Bash", "bash"),
    ("WebFetch", "web_fetch"),
    ("WebSearch", "web_search"),
];

/// Our name for a tool named in a skill file, or `None` when it is not a kun tool.
///
/// ```
/// assert_eq!(kun_ports::kun_tool_name("MultiEdit"), Some("edit".to_owned()));
/// assert_eq!(kun_ports::kun_tool_name("repo_map"), Some("repo_map".to_owned()));
/// assert_eq!(kun_ports::kun_tool_name("NotebookEdit"), None);
/// ```
#[must_use]
pub fn kun_tool_name(name: &str) -> Option<String> {
    let name = name.trim();
    if let Some((_, ours)) = CLAUDE_CODE_TOOL_NAMES
        .iter()
        .find(|(theirs, _)| *theirs == name)
    {
        return Some((*ours).to_owned());
    }
    // `mcp__server__tool` is Claude Code's name for its own MCP connection, not ours.
    let ours = !name.is_empty()
        && !name.starts_with("mcp__")
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    ours.then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_claude_code_name_maps() {
        for (theirs, ours) in CLAUDE_CODE_TOOL_NAMES {
            assert_eq!(kun_tool_name(theirs).as_deref(), Some(ours), "{theirs}");
        }
        assert_eq!(kun_tool_name("mcp__github__search"), None);
        assert_eq!(kun_tool_name("TodoWrite"), None);
        assert_eq!(kun_tool_name(""), None);
        assert_eq!(kun_tool_name(" grep "), Some("grep".to_owned()));
    }
}
