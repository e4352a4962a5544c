//! # kun-skills
//!
//! Skills: folders of instructions a model follows for a particular task, in the layouts
//! Claude Code, Codex and the Agent Skills spec use, so existing skills move over unchanged.
//!
//! * [`discover`] finds them ([`DiscoveryOptions`]: the workspace's `.agents/skills`,
//!   `.claude/skills`, `.codex/skills`, `.kun/skills`, `skills`, and the user's folder) and
//!   returns a [`SkillCatalog`] plus a [`Diagnostic`] for every file it skipped — a hostile
//!   or broken skill never breaks the catalog (see [`discovery`] for the hostile shapes).
//! * [`SkillCatalog::activate`] scores skills for a prompt and files (explicit 1000, command
//!   900, pattern 500, file type 300, `load_skill` 1100, each + priority), keeps the top 3,
//!   injects what fits in 24 KB (skipping whole), and returns an [`Activation`]: the
//!   injection, the narrowed allow-list (`restrict-tools`) and the pre-approvals
//!   (`allowed-tools`).
//! * [`PreApprovingGate`] gives `allowed-tools` its Claude Code meaning: pre-approved while
//!   active, never a restriction. Skills of an untrusted workspace
//!   ([`WorkspaceStanding::Untrusted`](kun_ports::WorkspaceStanding)) pre-approve nothing.
//! * [`SkillsProvider`] serves `load_skill`; [`SkillCatalog::catalog_text`] (8 KB) and
//!   [`SkillCatalog::instructions`] (for MCP `instructions`, essentials first) tell a model
//!   which skills exist.
//!
//! ```
//! use kun_skills::{DiscoveryOptions, discover};
//! # let dir = tempfile::tempdir().unwrap();
//! # let ws = dir.path();
//! std::fs::create_dir_all(ws.join(".claude/skills/release-notes")).unwrap();
//! std::fs::write(
//!     ws.join(".claude/skills/release-notes/SKILL.md"),
//!     "---\nname: release-notes\ndescription: Write release notes from the git log\n\
//!      allowed-tools: Read, Bash(git log *)\ntriggers:\n  patterns: ['release notes?']\n---\n\
//!      Read CHANGELOG.md, then summarise `git log` since the last tag.\n",
//! ).unwrap();
//!
//! let catalog = discover(&DiscoveryOptions::new(ws));
//! let activation = catalog.activate("Please draft the release notes", &[]);
//! assert_eq!(activation.active_skill_ids(), ["release-notes"]);
//! assert!(activation.injection.contains("git log"));
//! // An untrusted workspace's allowed-tools pre-approve nothing (and say so).
//! assert!(activation.pre_approved.is_empty());
//! assert!(catalog.diagnostics()[0].message.contains("not trusted"));
//! ```

mod activation;
mod catalog;
pub mod discovery;
mod front_matter;
mod load_skill;
mod loaded;
mod manifest;
mod names;
mod pre_approval;
mod skill;
mod slug;

pub use activation::{
    ACTIVE_LIMIT, Activation, ActivationInput, INJECTION_BUDGET_BYTES, SCORE_COMMAND,
    SCORE_EXPLICIT, SCORE_FILE_TYPE, SCORE_LOADED, SCORE_PATTERN, SkillActivation, skill_admitted,
};
pub use catalog::{CATALOG_BUDGET_BYTES, Diagnostic, SkillCatalog};
pub use discovery::{DiscoveryOptions, discover};
pub use load_skill::{
    LOAD_SKILL, LoadSkillArgs, LoadSkillOutput, LoadSkillTool, SKILLS_PROVIDER_ID, SkillsProvider,
};
pub use loaded::{LoadedSkills, MAX_LOADED_TURNS};
pub use names::{CLAUDE_CODE_TOOL_NAMES, ToolRule, kun_tool_name, split_tool_list};
pub use pre_approval::PreApprovingGate;
pub use skill::{PreApproval, PromptPattern, Skill, SkillOrigin, SkillSource, Triggers};
pub use slug::{normalize_skill_id, skill_slug};
