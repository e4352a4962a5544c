//! Tool-name matchers, compatible with Claude Code's `matcher` field.
//!
//! A matcher is either *any* (absent, empty or `*`) or an anchored regular expression over the
//! tool name: `write|edit` matches exactly `write` and `edit`, never `rewrite`. It is compiled
//! once, when the configuration is loaded.
//!
//! Claude Code names its built-in tools differently (`Write`, `Edit`, `Bash`, …). So that a
//! matcher copied from a Claude Code settings file keeps working, a matcher also matches one of
//! our built-in tools when it matches the Claude Code name of that tool (see
//! [`claude_code_names`]). MCP tools are named `mcp_<server>_<tool>` here and
//! `mcp__<server>__<tool>` in Claude Code; a tool whose name starts with `mcp_` also matches when
//! the pattern matches the name with that prefix doubled (`mcp__<server>_<tool>`), so `mcp__.*`
//! matches every MCP tool. The server/tool separator is not rewritten (a server name may itself
//! contain `_`), so write `mcp_github_.*` rather than `mcp__github__.*` to pick one server.
//!
//! ```
//! use kun_hooks::ToolMatcher;
//! let m = ToolMatcher::compile(Some("Write|Edit")).unwrap();
//! assert!(m.matches("write") && m.matches("edit"));
//! assert!(!m.matches("read"));
//! assert!(ToolMatcher::compile(Some("*")).unwrap().matches("anything"));
//! ```

use regex::{Regex, RegexBuilder};
use std::fmt;

/// The compiled-size limit of one matcher (a guard against absurd patterns).
const MATCHER_SIZE_LIMIT: usize = 1 << 20;

/// Our built-in tool names and the Claude Code names that mean the same tool.
///
/// | ours | Claude Code |
/// |---|---|
/// | read | Read |
/// | write | Write |
/// | edit | Edit, MultiEdit |
/// | bash | Bash |
/// | background_shell | BashOutput, KillShell |
/// | grep | Grep |
/// | glob, find | Glob |
/// | ls | LS |
/// | web_fetch | WebFetch |
/// | web_search | WebSearch |
/// | delegate_task | Task, Agent |
const CLAUDE_CODE_NAMES: &[(&str, &[&str])] = &[
    ("background_shell", &["BashOutput", "KillShell"]),
    ("bash", &["Bash"]),
    ("delegate_task", &["Task", "Agent"]),
    ("edit", &["Edit", "MultiEdit"]),
    ("find", &["Glob"]),
    ("glob", &["Glob"]),
    ("grep", &["Grep"]),
    ("ls", &["LS"]),
    ("read", &["Read"]),
    ("web_fetch", &["WebFetch"]),
    ("web_search", &["WebSearch"]),
    ("write", &["Write"]),
];

/// The Claude Code names of one of our built-in tools; empty for any other tool.
///
/// ```
/// assert_eq!(kun_hooks::claude_code_names("edit"), &["Edit", "MultiEdit"]);
/// assert!(kun_hooks::claude_code_names("mcp_github_search").is_empty());
/// ```
#[must_use]
pub fn claude_code_names(tool: &str) -> &'static [&'static str] {
    CLAUDE_CODE_NAMES
        .iter()
        .find(|(ours, _)| *ours == tool)
        .map_or(&[], |(_, theirs)| theirs)
}

/// A pattern that is not a valid regular expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("matcher `{pattern}` is not a valid regular expression: {message}")]
pub struct MatcherError {
    /// The pattern as written.
    pub pattern: String,
    /// What the regex compiler said.
    pub message: String,
}

/// Which tools a hook group applies to.
#[derive(Clone)]
pub struct ToolMatcher {
    pattern: Pattern,
}

#[derive(Clone)]
enum Pattern {
    /// Absent, empty or `*`: every tool.
    Any,
    /// An anchored regex; `source` is the pattern as written.
    Regex { source: String, regex: Regex },
}

impl ToolMatcher {
    /// The matcher that matches every tool.
    #[must_use]
    pub const fn any() -> Self {
        Self {
            pattern: Pattern::Any,
        }
    }

    /// Compiles a matcher: `None`, `""` and `*` match everything; anything else is a regular
    /// expression that must match the whole tool name.
    ///
    /// # Errors
    /// When the pattern is not a valid regular expression (or is absurdly large).
    pub fn compile(pattern: Option<&str>) -> Result<Self, MatcherError> {
        let Some(source) = pattern else {
            return Ok(Self::any());
        };
        let trimmed = source.trim();
        if trimmed.is_empty() || trimmed == "*" {
            return Ok(Self::any());
        }
        let regex = RegexBuilder::new(&format!("^(?:{trimmed})$"))
            .size_limit(MATCHER_SIZE_LIMIT)
            .build()
            .map_err(|err| MatcherError {
                pattern: source.to_owned(),
                message: err.to_string(),
            })?;
        Ok(Self {
            pattern: Pattern::Regex {
                source: source.to_owned(),
                regex,
            },
        })
    }

    /// Whether this matcher matches every tool.
    #[must_use]
    pub const fn is_any(&self) -> bool {
        matches!(self.pattern, Pattern::Any)
    }

    /// The pattern as written; `*` for the any-matcher.
    #[must_use]
    pub fn source(&self) -> &str {
        match &self.pattern {
            Pattern::Any => "*",
            Pattern::Regex { source, .. } => source,
        }
    }

    /// Whether the matcher matches `tool`: by our name, by the Claude Code name of a built-in,
    /// or (for `mcp_` tools) by the name with the `mcp__` prefix Claude Code uses.
    #[must_use]
    pub fn matches(&self, tool: &str) -> bool {
        let regex = match &self.pattern {
            Pattern::Any => return true,
            Pattern::Regex { regex, .. } => regex,
        };
        if regex.is_match(tool) {
            return true;
        }
        if claude_code_names(tool)
            .iter()
            .any(|name| regex.is_match(name))
        {
            return true;
        }
        match tool.strip_prefix("mcp_") {
            Some(rest) if !rest.starts_with('_') => regex.is_match(&format!("mcp__{rest}")),
            _ => false,
        }
    }
}

impl fmt::Debug for ToolMatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ToolMatcher").field(&self.source()).finish()
    }
}

impl PartialEq for ToolMatcher {
    fn eq(&self, other: &Self) -> bool {
        match (&self.pattern, &other.pattern) {
            (Pattern::Any, Pattern::Any) => true,
            (Pattern::Regex { source: a, .. }, Pattern::Regex { source: b, .. }) => a == b,
            _ => false,
        }
    }
}
