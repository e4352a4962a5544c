//! Real skill folders in the layouts Claude Code, Codex / Agent Skills and upstream Kun use
//! (shapes copied, content ours).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use kun_ports::WorkspaceStanding;
use kun_skills::{DiscoveryOptions, PreApproval, SkillOrigin, ToolRule, discover, kun_tool_name};
use std::fs;
use std::path::Path;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A workspace with one skill per layout, and a user folder.
fn layouts() -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let w = ws.path();
    // Claude Code: .claude/skills/<name>/SKILL.md, allowed-tools as a YAML list of rules,
    // extra keys Claude Code knows (argument-hint, disable-model-invocation), a scripts/ folder.
    write(
        w,
        ".claude/skills/pdf-forms/SKILL.md",
        "---\nname: pdf-forms\ndescription: Fill in PDF forms from a JSON file of field values.\n\
         argument-hint: <form.pdf> <values.json>\ndisable-model-invocation: false\n\
         allowed-tools:\n  - Read\n  - Bash(python3 scripts/fill.py *)\n  - NotebookEdit\n---\n\
         # Filling PDF forms\n\nRun `python3 scripts/fill.py FORM VALUES` and check the output.\n",
    );
    write(
        w,
        ".claude/skills/pdf-forms/scripts/fill.py",
        "print('fill')\n",
    );
    // Agent Skills / Codex: .agents/skills/<name>/SKILL.md with license, metadata, and
    // allowed-tools as a space-separated string.
    write(
        w,
        ".agents/skills/commit-message/SKILL.md",
        "---\nname: commit-message\ndescription: Write a conventional commit message for the staged diff.\n\
         license: Apache-2.0\nmetadata:\n  author: example-org\n  version: \"1.0\"\n\
         allowed-tools: Bash(git diff:*) Read\n---\n\nLook at `git diff --staged`, then write `type(scope): subject`.\n",
    );
    // Legacy Codex folder, no front matter at all: the first paragraph describes it.
    write(
        w,
        ".codex/skills/sql-style/SKILL.md",
        "# SQL style\n\nKeywords upper case, one clause per line.\n\nMore details below.\n",
    );
    // Upstream Kun: a skill.json manifest with triggers and allowedTools (which narrow).
    write(
        w,
        ".kun/skills/release/skill.json",
        r#"{"id": "release", "name": "Release", "description": "Cut a release",
            "triggers": {"commands": ["/release"], "promptPatterns": ["cut a release"], "fileTypes": ["toml"]},
            "allowedTools": ["read", "bash", "git_inspect"], "priority": 2}"#,
    );
    write(
        w,
        ".kun/skills/release/SKILL.md",
        "Bump the version, tag, push.\n",
    );
    // Ours in the plain `skills/` folder: triggers and restrict-tools in front matter.
    write(
        w,
        "skills/review/SKILL.md",
        "---\nname: Code Review\ndescription: Review a diff for bugs first, style last.\n\
         restrict-tools: Read, Grep, git_inspect\ntriggers:\n  commands: [/review]\n  \
         patterns: ['review (this|the) (pr|diff|change)']\n  file_types: [.diff, patch]\npriority: 1\n---\n\
         Read the diff twice.\n",
    );
    // The user's own skill, with a pre-approval.
    write(
        user.path(),
        "notes/SKILL.md",
        "---\nname: notes\ndescription: Keep meeting notes.\nallowed-tools: Write\n---\nWrite notes to notes/.\n",
    );
    (ws, user)
}

#[test]
fn every_layout_is_found_with_its_meaning() {
    let (ws, user) = layouts();
    let catalog = discover(&DiscoveryOptions::new(ws.path()).with_user_dir(user.path()));
    assert_eq!(
        catalog.ids(),
        [
            "commit-message",
            "notes",
            "pdf-forms",
            "release",
            "review",
            "sql-style"
        ]
    );

    let pdf = catalog.find("pdf-forms").unwrap();
    assert_eq!(pdf.source.origin, SkillOrigin::Workspace);
    assert_eq!(
        pdf.allowed_tools,
        [
            ToolRule::parse("Bash(python3 scripts/fill.py *)").unwrap(),
            ToolRule::parse("Read").unwrap()
        ]
    );
    assert_eq!(pdf.restrict_tools, None, "allowed-tools never restricts");
    assert!(pdf.body.starts_with("# Filling PDF forms"));

    let commit = catalog.find("$commit-message").unwrap();
    assert_eq!(
        commit
            .allowed_tools
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["bash(git diff *)", "read"]
    );

    let sql = catalog.find("sql-style").unwrap();
    assert_eq!(sql.name, "sql-style");
    assert_eq!(sql.description, "Keywords upper case, one clause per line.");

    let release = catalog.find("release").unwrap();
    assert_eq!(
        release.restrict_tools.as_deref(),
        Some(
            &[
                "bash".to_owned(),
                "git_inspect".to_owned(),
                "read".to_owned()
            ][..]
        ),
        "a manifest's allowedTools narrow"
    );
    assert_eq!(release.priority, 2);
    assert_eq!(release.triggers.file_types, [".toml"]);

    // The name is the display name; the id is the folder's slug; both find it.
    let review = catalog.find("code review").unwrap();
    assert_eq!(review.id, "review");
    assert_eq!(
        review.restrict_tools.as_deref(),
        Some(
            &[
                "git_inspect".to_owned(),
                "grep".to_owned(),
                "read".to_owned()
            ][..]
        )
    );

    let notes = catalog.find("notes").unwrap();
    assert_eq!(notes.source.origin, SkillOrigin::User);
    assert_eq!(notes.pre_approval, PreApproval::Granted);
    assert_eq!(notes.pre_approvals(), [ToolRule::parse("Write").unwrap()]);
}

#[test]
fn untrusted_workspace_skills_pre_approve_nothing_trusted_ones_do() {
    let (ws, user) = layouts();
    let untrusted = discover(&DiscoveryOptions::new(ws.path()).with_user_dir(user.path()));
    let pdf = untrusted.find("pdf-forms").unwrap();
    assert_eq!(pdf.pre_approval, PreApproval::IgnoredUntrusted);
    assert!(pdf.pre_approvals().is_empty());
    assert!(
        untrusted
            .diagnostics()
            .iter()
            .any(|d| d.file.ends_with(".claude/skills/pdf-forms/SKILL.md")
                && d.message.contains("not trusted")),
        "{:#?}",
        untrusted.diagnostics()
    );

    let trusted = discover(
        &DiscoveryOptions::new(ws.path())
            .with_user_dir(user.path())
            .with_standing(WorkspaceStanding::Trusted),
    );
    assert_eq!(
        trusted.find("pdf-forms").unwrap().pre_approvals().len(),
        2,
        "a trusted workspace's allowed-tools pre-approve"
    );
}

#[test]
fn unknown_tool_names_are_diagnostics_not_failures() {
    let (ws, _user) = layouts();
    let catalog = discover(&DiscoveryOptions::new(ws.path()));
    assert!(catalog.find("pdf-forms").is_some());
    assert!(
        catalog
            .diagnostics()
            .iter()
            .any(|d| d.message.contains("`NotebookEdit` is not a kun tool")),
        "{:#?}",
        catalog.diagnostics()
    );
    assert_eq!(kun_tool_name("LS").as_deref(), Some("ls"));
}

#[test]
fn duplicates_keep_the_first_root_and_disabled_ids_drop() {
    let (ws, user) = layouts();
    write(
        ws.path(),
        "skills/pdf-forms/SKILL.md",
        "---\ndescription: a second pdf-forms\n---\nbody\n",
    );
    let catalog = discover(
        &DiscoveryOptions::new(ws.path())
            .with_user_dir(user.path())
            .with_disabled(["$notes"]),
    );
    assert!(
        catalog
            .find("pdf-forms")
            .unwrap()
            .source
            .path
            .ends_with(".claude/skills/pdf-forms/SKILL.md")
    );
    assert!(
        catalog
            .diagnostics()
            .iter()
            .any(|d| d.message.contains("duplicate skill id `pdf-forms`"))
    );
    assert!(catalog.find("notes").is_none(), "disabled");
}

#[test]
fn a_root_that_is_itself_a_skill_counts() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        "skills/SKILL.md",
        "---\nname: whole-folder\ndescription: one skill as the whole root\n---\nbody\n",
    );
    let catalog = discover(&DiscoveryOptions::new(ws.path()));
    assert_eq!(catalog.ids(), ["skills"]);
    assert_eq!(catalog.skills()[0].name, "whole-folder");
}
