//! Activation: scores, top 3, budgets at the byte edge, narrowing and pre-approval.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use kun_ports::{NameSet, ToolLists, WorkspaceStanding};
use kun_skills::{
    ActivationInput, CATALOG_BUDGET_BYTES, DiscoveryOptions, INJECTION_BUDGET_BYTES, SkillCatalog,
    discover,
};
use std::fs;
use std::path::Path;

fn skill(root: &Path, id: &str, front: &str, body: &str) {
    described(root, "skills", id, &format!("{id} skill"), front, body);
}

fn described(root: &Path, folder: &str, id: &str, description: &str, front: &str, body: &str) {
    let dir = root.join(folder).join(id);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\ndescription: {description}\n{front}---\n{body}"),
    )
    .unwrap();
}

fn catalog(root: &Path) -> SkillCatalog {
    discover(&DiscoveryOptions::new(root).with_standing(WorkspaceStanding::Trusted))
}

#[test]
fn every_trigger_scores_as_specified_plus_priority() {
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path();
    skill(w, "named", "", "n");
    skill(w, "cmd", "triggers:\n  commands: [/deploy]\n", "c");
    skill(
        w,
        "pat",
        "triggers:\n  patterns: ['flaky tests?']\npriority: 7\n",
        "p",
    );
    skill(w, "typed", "triggers:\n  file_types: [rs]\n", "t");
    let c = catalog(w);
    type Row<'a> = (&'a str, &'a [&'a Path], &'a [(&'a str, i64, &'a str)]);
    let table: [Row<'_>; 7] = [
        ("use $named please", &[], &[("named", 1000, "explicit:id")]),
        ("/skill:named now", &[], &[("named", 1000, "explicit:id")]),
        ("/named", &[], &[("named", 1000, "explicit:id")]),
        ("$namedx is another thing", &[], &[]),
        ("/deploy the app", &[], &[("cmd", 900, "command:/deploy")]),
        (
            "Fix the FLAKY TEST in src/lib.rs",
            &[],
            &[
                ("pat", 507, "pattern:flaky tests?"),
                ("typed", 300, "file_type:.rs"),
            ],
        ),
        (
            "look",
            &[Path::new("src/main.RS")],
            &[("typed", 300, "file_type:.rs")],
        ),
    ];
    for (prompt, files, expected) in table {
        let got: Vec<(String, i64, String)> = c
            .activate(prompt, files)
            .activations
            .into_iter()
            .map(|a| (a.id, a.score, a.reason))
            .collect();
        let expected: Vec<(String, i64, String)> = expected
            .iter()
            .map(|(id, s, r)| ((*id).to_owned(), *s, (*r).to_owned()))
            .collect();
        assert_eq!(got, expected, "prompt {prompt:?}");
    }
}

#[test]
fn top_three_by_score_then_id_and_load_skill_wins() {
    let ws = tempfile::tempdir().unwrap();
    for id in ["a", "b", "c", "d"] {
        skill(ws.path(), id, "triggers:\n  patterns: [go]\n", id);
    }
    let c = catalog(ws.path());
    let activation = c.activate("go", &[]);
    assert_eq!(activation.active_skill_ids(), ["a", "b", "c"]);
    let loaded = ["d".to_owned()];
    let activation = c.activate_with(&ActivationInput {
        prompt: "go",
        files: &[],
        loaded: &loaded,
        lists: None,
    });
    assert_eq!(activation.active_skill_ids(), ["d", "a", "b"]);
    assert_eq!(activation.activations[0].score, 1100);
    assert_eq!(activation.activations[0].reason, "load_skill");

    // Blocked skills never activate.
    let lists = ToolLists {
        blocked_skill_ids: ["a", "d"].into_iter().collect(),
        ..ToolLists::default()
    };
    let activation = c.activate_with(&ActivationInput {
        prompt: "go",
        files: &[],
        loaded: &loaded,
        lists: Some(&lists),
    });
    assert_eq!(activation.active_skill_ids(), ["b", "c"]);
}

/// The instruction's size for a body of `n` bytes, to aim at a budget exactly.
fn overhead(c: &SkillCatalog, id: &str, reason: &str) -> usize {
    let s = c.find(id).unwrap();
    s.instruction(reason).len() - s.body.trim().len()
}

#[test]
fn the_injection_budget_skips_whole_skills_at_the_byte_edge() {
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path();
    skill(w, "big", "triggers:\n  patterns: [go]\npriority: 2\n", "x");
    skill(w, "small", "triggers:\n  patterns: [go]\n", "tiny");
    let reason = "pattern:go";
    let fixed = overhead(&catalog(w), "big", reason);
    // Exactly the budget: fits, and nothing else does.
    skill(
        w,
        "big",
        "triggers:\n  patterns: [go]\npriority: 2\n",
        &"x".repeat(INJECTION_BUDGET_BYTES - fixed),
    );
    let c = catalog(w);
    let a = c.activate("go", &[]);
    assert_eq!(a.injection.len(), INJECTION_BUDGET_BYTES);
    assert_eq!(a.active_skill_ids(), ["big"]);
    assert!(!a.activations[1].injected, "small no longer fits");

    // One byte over: big is skipped whole, the smaller one after it still fits.
    skill(
        w,
        "big",
        "triggers:\n  patterns: [go]\npriority: 2\n",
        &"x".repeat(INJECTION_BUDGET_BYTES - fixed + 1),
    );
    let c = catalog(w);
    let a = c.activate("go", &[]);
    assert_eq!(a.active_skill_ids(), ["small"]);
    assert_eq!(a.activations[0].id, "big");
    assert!(!a.activations[0].injected);
    assert!(!a.injection.contains("xxxx"));
}

#[test]
fn restrict_tools_of_injected_skills_narrow_allowed_tools_pre_approve() {
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path();
    skill(
        w,
        "reviewer",
        "restrict-tools: [Read, Grep]\nallowed-tools: Read\ntriggers:\n  patterns: [review]\n",
        "r",
    );
    skill(
        w,
        "gitter",
        "restrict-tools: git_inspect\ntriggers:\n  patterns: [review]\n",
        "g",
    );
    skill(
        w,
        "free",
        "allowed-tools: Bash(cargo test *)\ntriggers:\n  patterns: [review]\n",
        "f",
    );
    let c = catalog(w);
    let a = c.activate("review it", &[]);
    assert_eq!(a.active_skill_ids(), ["free", "gitter", "reviewer"]);
    assert_eq!(
        a.narrowed_tools.as_deref(),
        Some(
            &[
                "git_inspect".to_owned(),
                "grep".to_owned(),
                "read".to_owned()
            ][..]
        )
    );
    assert_eq!(
        a.pre_approved
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["bash(cargo test *)", "read"],
        "allowed-tools pre-approve; they never restrict (free adds nothing to the allow-list)"
    );
    // Narrowing only intersects an allow-list already there.
    let mut lists = ToolLists {
        allowed_tool_names: Some(["read", "bash"].into_iter().collect::<NameSet>()),
        ..ToolLists::default()
    };
    a.narrow(&mut lists);
    assert_eq!(lists.allowed_tool_names.unwrap().sorted(), ["read"]);
    let mut open = ToolLists::default();
    a.narrow(&mut open);
    assert_eq!(
        open.allowed_tool_names.unwrap().sorted(),
        ["git_inspect", "grep", "read"]
    );

    // Without a restricting skill there is no allow-list.
    let a = c.activate("/skill:free", &[]);
    assert_eq!(a.narrowed_tools, None);
}

#[test]
fn the_catalog_budget_drops_whole_lines_at_the_byte_edge() {
    let ws = tempfile::tempdir().unwrap();
    let long = "d".repeat(120);
    for n in 0..120 {
        let folder = if n < 60 { "skills" } else { ".claude/skills" };
        described(
            ws.path(),
            folder,
            &format!("skill-{n:03}"),
            &format!("skill-{n:03} {long}"),
            "",
            "b",
        );
    }
    let c = catalog(ws.path());
    let text = c.catalog_text(CATALOG_BUDGET_BYTES, |_| true);
    assert!(text.len() <= CATALOG_BUDGET_BYTES, "{}", text.len());
    assert!(text.contains("more skill(s) omitted"));
    assert!(text.contains("- skill-000 (skill-000): skill-000 ddd"));
    assert!(text.ends_with("may limit the tools you can use.\n"));
    // Every listed line is whole.
    for line in text.lines().filter(|l| l.starts_with("- skill-")) {
        assert!(line.ends_with("/SKILL.md)"), "{line}");
    }
    // A budget that fits everything omits nothing.
    let all = c.catalog_text(usize::MAX, |_| true);
    assert!(!all.contains("omitted"));
    assert_eq!(all.matches("\n- skill-").count(), 120);
    // Exactly the size of the full text fits; one byte less omits.
    assert_eq!(c.catalog_text(all.len(), |_| true), all);
    assert!(c.catalog_text(all.len() - 1, |_| true).contains("omitted"));
}

#[test]
fn mcp_instructions_put_the_lead_first_and_stay_within_two_kilobytes() {
    let ws = tempfile::tempdir().unwrap();
    for n in 0..60 {
        described(
            ws.path(),
            "skills",
            &format!("s{n:02}"),
            &format!("s{n:02} {}", "w ".repeat(40)),
            "",
            "b",
        );
    }
    let c = catalog(ws.path());
    let lead = "kun-tools: a coding agent's tool surface.";
    let text = c.instructions(lead, 2048);
    assert!(text.starts_with(lead));
    assert!(text.len() <= 2048, "{}", text.len());
    assert!(text.contains("- s00: s00 w w"));
    assert!(text.contains("load_skill"));
    assert!(text.contains("more skill(s) omitted"));
    // No skills: just the lead.
    let empty = SkillCatalog::default();
    assert_eq!(empty.instructions(lead, 2048), lead);
}
