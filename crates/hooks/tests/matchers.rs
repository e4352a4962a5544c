//! The matcher table: our names, Claude Code names, MCP names, anchoring.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use kun_hooks::{ToolMatcher, claude_code_names};

/// (matcher, tool, matches?)
const TABLE: &[(Option<&str>, &str, bool)] = &[
    (None, "bash", true),
    (Some(""), "anything_at_all", true),
    (Some("*"), "mcp_github_search", true),
    (Some("  *  "), "read", true),
    (Some(".*"), "write", true),
    (Some("write|edit"), "write", true),
    (Some("write|edit"), "edit", true),
    (Some("write|edit"), "rewrite", false),
    (Some("write|edit"), "write_file", false),
    (Some("write|edit"), "read", false),
    (Some("Write|Edit"), "write", true),
    (Some("Write|Edit"), "edit", true),
    (Some("MultiEdit"), "edit", true),
    (Some("Edit|MultiEdit|Write"), "bash", false),
    (Some("Bash"), "bash", true),
    (Some("Bash"), "background_shell", false),
    (Some("BashOutput"), "background_shell", true),
    (Some("Read"), "read", true),
    (Some("Grep"), "grep", true),
    (Some("Glob"), "glob", true),
    (Some("Glob"), "find", true),
    (Some("LS"), "ls", true),
    (Some("WebFetch"), "web_fetch", true),
    (Some("WebSearch"), "web_search", true),
    (Some("Task"), "delegate_task", true),
    (Some("Write"), "WriteThing", false),
    (Some("write"), "Write", false),
    (Some("Notebook.*"), "edit", false),
    (Some("mcp__.*"), "mcp_github_search", true),
    (Some("mcp__github.*"), "mcp_github_search", true),
    (Some("mcp_github_.*"), "mcp_github_search", true),
    (Some("mcp__.*"), "read", false),
    (Some("mcp__.*"), "mcp__double", true),
    (Some("mcp_.*"), "mcp_memory_store", true),
    (Some("mcp__memory__.*"), "mcp_memory_store", false),
    (Some("read|grep|glob"), "grep", true),
    (Some("(read|grep)"), "grepx", false),
];

#[test]
fn the_matcher_table_holds() {
    for (pattern, tool, expected) in TABLE {
        let matcher = ToolMatcher::compile(*pattern).unwrap();
        assert_eq!(
            matcher.matches(tool),
            *expected,
            "matcher {pattern:?} on tool `{tool}`"
        );
    }
}

#[test]
fn any_matchers_are_recognised_and_sources_kept() {
    for pattern in [None, Some(""), Some("*"), Some(" * ")] {
        assert!(
            ToolMatcher::compile(pattern).unwrap().is_any(),
            "{pattern:?}"
        );
    }
    let m = ToolMatcher::compile(Some("write|edit")).unwrap();
    assert!(!m.is_any());
    assert_eq!(m.source(), "write|edit");
}

#[test]
fn bad_patterns_are_errors_not_panics() {
    for pattern in ["(", "write|(edit", "[z-a]", "a{5,2}"] {
        let err = ToolMatcher::compile(Some(pattern)).unwrap_err();
        assert_eq!(err.pattern, pattern);
        assert!(err.to_string().contains(pattern));
    }
}

#[test]
fn the_claude_code_name_table_is_small_and_exact() {
    assert_eq!(claude_code_names("write"), ["Write"]);
    assert_eq!(claude_code_names("edit"), ["Edit", "MultiEdit"]);
    assert!(claude_code_names("Write").is_empty());
    assert!(claude_code_names("writer").is_empty());
}
