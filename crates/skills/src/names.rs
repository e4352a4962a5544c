//! `allowed-tools` entries are permission rules (`Bash(git add *)`), not just names; the names
//! map to ours by [`kun_tool_name`] (kun-ports: `Read` → `read`, `MultiEdit` → `edit`, …).
//! An entry that is not a kun tool (`NotebookEdit`, `mcp__server__tool`, …) is a diagnostic,
//! never a failure.

pub use kun_ports::{CLAUDE_CODE_TOOL_NAMES, kun_tool_name};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One `allowed-tools` entry: a tool, and for shell tools optionally the command prefix it
/// covers (`Bash(git add *)` → `bash` scoped to `git add`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ToolRule {
    /// Our tool name.
    pub tool: String,
    /// The command prefix, when the rule has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl fmt::Display for ToolRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.scope {
            Some(scope) => write!(f, "{}({scope} *)", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

impl ToolRule {
    /// Parses `Name` or `Name(specifier)`; `None` when the name is not a kun tool or the
    /// specifier is malformed.
    ///
    /// ```
    /// use kun_skills::ToolRule;
    /// let rule = ToolRule::parse("Bash(git add:*)").unwrap();
    /// assert_eq!((rule.tool.as_str(), rule.scope.as_deref()), ("bash", Some("git add")));
    /// assert_eq!(ToolRule::parse("Read").unwrap().scope, None);
    /// ```
    #[must_use]
    pub fn parse(entry: &str) -> Option<Self> {
        let entry = entry.trim();
        let Some((name, rest)) = entry.split_once('(') else {
            return kun_tool_name(entry).map(|tool| Self { tool, scope: None });
        };
        let tool = kun_tool_name(name)?;
        let specifier = rest.strip_suffix(')')?.trim();
        // `git add *`, `git add:*` and `git add` all mean "commands starting with git add".
        let prefix = specifier
            .strip_suffix(":*")
            .or_else(|| specifier.strip_suffix('*'))
            .unwrap_or(specifier)
            .trim();
        let scope = (!prefix.is_empty() && prefix != "*").then(|| prefix.to_owned());
        Some(Self { tool, scope })
    }

    /// Whether the rule covers a call of `tool` whose approval scope (the parsed command
    /// prefix, e.g. `git add`) is `scope`. A scoped rule never covers a call without a safe
    /// prefix.
    #[must_use]
    pub fn covers(&self, tool: &str, scope: Option<&str>) -> bool {
        if self.tool != tool {
            return false;
        }
        match (&self.scope, scope) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(prefix), Some(scope)) => {
                let mut want = prefix.split_whitespace();
                let mut have = scope.split_whitespace();
                want.all(|word| have.next() == Some(word))
            }
        }
    }
}

/// A tool list as skill files write it: a YAML list, or one string separated by commas
/// and/or spaces (parentheses keep their spaces: `Bash(git add *), Read`).
#[must_use]
pub fn split_tool_list(text: &str) -> Vec<String> {
    let mut entries = Vec::new();
    let mut current = String::new();
    let mut depth = 0_u32;
    for ch in text.chars() {
        match ch {
            '(' => {
                depth += 1;
                current.push(ch);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(ch);
            }
            ',' | ' ' | '\t' | '\n' if depth == 0 => {
                if !current.trim().is_empty() {
                    entries.push(current.trim().to_owned());
                }
                current.clear();
            }
            _ => current.push(ch),
        }
    }
    if !current.trim().is_empty() {
        entries.push(current.trim().to_owned());
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_split_on_commas_and_spaces_but_not_inside_rules() {
        assert_eq!(
            split_tool_list("Read, Grep Bash(git add *),Write"),
            ["Read", "Grep", "Bash(git add *)", "Write"]
        );
    }

    #[test]
    fn scoped_rules_cover_only_their_prefix() {
        let rule = ToolRule::parse("Bash(git add *)").unwrap();
        assert!(rule.covers("bash", Some("git add")));
        assert!(!rule.covers("bash", Some("git push")));
        assert!(!rule.covers("bash", Some("git")));
        assert!(!rule.covers("bash", None));
        assert!(!rule.covers("write", Some("git add")));
        let whole = ToolRule::parse("Bash").unwrap();
        assert!(whole.covers("bash", None));
        assert_eq!(ToolRule::parse("Bash(*)").unwrap().scope, None);
        assert_eq!(ToolRule::parse("Bash(git"), None);
    }
}
