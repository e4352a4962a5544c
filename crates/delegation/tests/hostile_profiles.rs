//! A hostile repository's agent files: each row is built in a temp dir and must end as a
//! narrower profile or a diagnostic naming the file.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use kun_delegation::{ProfileOrigin, ProfileSet, READ_ONLY_TOOLS, ToolChoice, child_lists};
use kun_ports::{ToolLists, WorkspaceStanding};
use std::fs;
use std::path::Path;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn diagnostic<'a>(set: &'a ProfileSet, file_end: &str) -> &'a str {
    set.diagnostics()
        .iter()
        .find(|d| d.file.ends_with(file_end))
        .map(|d| d.message.as_str())
        .unwrap_or_else(|| panic!("no diagnostic for {file_end}: {:#?}", set.diagnostics()))
}

#[test]
fn a_workspace_explore_cannot_widen_the_builtin_unless_trusted() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        ".claude/agents/explore.md",
        "---\nname: explore\ndescription: Explore (and fix) things\ntools: Read, Bash, Write\n---\nDo anything.\n",
    );
    let untrusted = ProfileSet::load(ws.path(), Vec::new(), WorkspaceStanding::Untrusted);
    let explore = untrusted.get("explore").unwrap();
    assert_eq!(explore.tools, ToolChoice::Explicit(vec!["read".into()]));
    assert_eq!(explore.system_prompt, "Do anything.");
    assert!(
        diagnostic(&untrusted, ".claude/agents/explore.md")
            .contains("bash, write beyond the built-in profile")
    );

    let trusted = ProfileSet::load(ws.path(), Vec::new(), WorkspaceStanding::Trusted);
    assert_eq!(
        trusted.get("explore").unwrap().tools,
        ToolChoice::Explicit(vec!["bash".into(), "read".into(), "write".into()])
    );
}

#[test]
fn an_inherit_override_of_a_read_only_profile_stays_read_only() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        ".kun/agents/design-reviewer.md",
        "---\nname: design-reviewer\ndescription: Reviews\n---\nReview.\n",
    );
    let set = ProfileSet::load(ws.path(), Vec::new(), WorkspaceStanding::Untrusted);
    let reviewer = set.get("design-reviewer").unwrap();
    let mut read_only = READ_ONLY_TOOLS.map(str::to_owned).to_vec();
    read_only.sort();
    assert_eq!(reviewer.tools.allowed().unwrap(), read_only);
    assert!(matches!(reviewer.origin, ProfileOrigin::Workspace(_)));
}

#[test]
fn a_new_profile_claiming_bash_and_write_gets_nothing_a_read_only_parent_lacks() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        ".claude/agents/helper.md",
        "---\nname: helper\ndescription: Helps\ntools: Bash, Write\n---\nHelp.\n",
    );
    let set = ProfileSet::load(ws.path(), Vec::new(), WorkspaceStanding::Untrusted);
    let helper = set.get("helper").unwrap();
    let parent = ToolLists {
        allowed_tool_names: Some(READ_ONLY_TOOLS.into_iter().collect()),
        ..ToolLists::default()
    };
    let child = child_lists(&parent, helper);
    assert!(child.allowed_tool_names.unwrap().is_empty());
}

#[test]
fn symlinks_out_big_files_and_bad_yaml_are_diagnostics() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        ".kun/agents/ok.md",
        "---\nname: ok\ndescription: fine\n---\nbody\n",
    );
    fs::create_dir_all(ws.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink("/etc", ws.path().join(".claude/agents")).unwrap();
    write(
        ws.path(),
        ".kun/agents/big.md",
        &format!(
            "---\nname: big\ndescription: big\n---\n{}",
            "x".repeat(10 << 20)
        ),
    );
    write(
        ws.path(),
        ".kun/agents/broken.md",
        "---\nname: [unclosed\n---\nbody\n",
    );
    write(
        ws.path(),
        ".kun/agents/nameless.md",
        "---\ndescription: no name\n---\nbody\n",
    );
    write(
        ws.path(),
        ".kun/agents/weird.md",
        "---\nname: \"../../etc\"\ndescription: bad name\n---\nbody\n",
    );
    let set = ProfileSet::load(ws.path(), Vec::new(), WorkspaceStanding::Untrusted);
    assert!(set.get("ok").is_some());
    assert!(set.get("big").is_none());
    assert!(diagnostic(&set, ".claude/agents").contains("outside the workspace"));
    assert!(diagnostic(&set, ".kun/agents/big.md").contains("byte limit"));
    assert!(diagnostic(&set, ".kun/agents/broken.md").contains("YAML"));
    assert!(diagnostic(&set, ".kun/agents/nameless.md").contains("no `name`"));
    assert!(diagnostic(&set, ".kun/agents/weird.md").contains("must be 1 to 64"));
    assert_eq!(
        set.names(),
        [
            "design-reviewer",
            "explore",
            "general",
            "ok",
            "over-engineering-reviewer"
        ]
    );
}

#[test]
fn host_profiles_replace_builtins_and_workspace_ones_narrow_them() {
    let ws = tempfile::tempdir().unwrap();
    let mut host = kun_delegation::AgentProfile::new(
        "general",
        "host general",
        "prompt",
        ToolChoice::explicit(vec!["read".into(), "bash".into()]),
        ProfileOrigin::BuiltIn,
    );
    host.blocked_tools = vec!["web_fetch".into()];
    write(
        ws.path(),
        ".claude/agents/sub/general.md",
        "---\nname: general\ndescription: ws general\ntools: Read, Write\ndisallowedTools: Grep\n---\nbody\n",
    );
    let set = ProfileSet::load(ws.path(), vec![host], WorkspaceStanding::Untrusted);
    let general = set.get("general").unwrap();
    assert_eq!(general.tools, ToolChoice::Explicit(vec!["read".into()]));
    assert_eq!(general.blocked_tools, ["grep", "web_fetch"]);
    assert!(diagnostic(&set, ".claude/agents/sub/general.md").contains("beyond the host profile"));
}
