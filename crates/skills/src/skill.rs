//! One discovered skill.

use crate::names::ToolRule;
use regex::Regex;
use serde::Serialize;
use std::path::PathBuf;

/// Whose skill it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillOrigin {
    /// From a folder of the workspace (the repository's own).
    Workspace,
    /// From the user's own skills folder.
    User,
}

/// Where a skill was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillSource {
    /// Whose.
    pub origin: SkillOrigin,
    /// The skill's instruction file (`SKILL.md`, or a manifest's `entry`).
    pub path: PathBuf,
}

/// A prompt pattern: a real regex (linear time, case-insensitive) and what was written.
#[derive(Debug, Clone)]
pub struct PromptPattern {
    /// As written in the skill file.
    pub source: String,
    /// Compiled.
    pub regex: Regex,
}

/// What makes a skill activate by itself.
#[derive(Debug, Clone, Default)]
pub struct Triggers {
    /// The prompt starts with one of these (lowercased).
    pub commands: Vec<String>,
    /// The prompt matches one of these.
    pub patterns: Vec<PromptPattern>,
    /// A file of one of these types is involved (lowercase, with a leading dot).
    pub file_types: Vec<String>,
}

/// Whether a skill's `allowed-tools` pre-approve anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PreApproval {
    /// They do, while the skill is active (the user's skills, a trusted workspace's).
    Granted,
    /// They do not: the skill comes from a workspace the user does not trust.
    IgnoredUntrusted,
}

/// A skill.
#[derive(Debug, Clone)]
pub struct Skill {
    /// Unique id (a slug).
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Where it came from.
    pub source: SkillSource,
    /// The instruction body (front matter removed).
    pub body: String,
    /// Automatic activation.
    pub triggers: Triggers,
    /// Added to every activation score.
    pub priority: i64,
    /// `allowed-tools`: pre-approved while the skill is active (Claude Code's meaning).
    pub allowed_tools: Vec<ToolRule>,
    /// Whether [`Skill::allowed_tools`] take effect.
    pub pre_approval: PreApproval,
    /// `restrict-tools` (or a manifest's `allowedTools`): while injected, the turn may use only
    /// these (the union over the injected skills).
    pub restrict_tools: Option<Vec<String>>,
}

impl Skill {
    /// The rules that pre-approve calls while the skill is active (none when untrusted).
    #[must_use]
    pub fn pre_approvals(&self) -> &[ToolRule] {
        match self.pre_approval {
            PreApproval::Granted => &self.allowed_tools,
            PreApproval::IgnoredUntrusted => &[],
        }
    }

    /// The instruction text as injected or loaded: header lines, then the body.
    #[must_use]
    pub fn instruction(&self, reason: &str) -> String {
        let mut parts = vec![
            format!("Active Skill: {} ({})", self.name, self.id),
            format!("Activation: {reason}"),
        ];
        if !self.description.is_empty() {
            parts.push(format!("Description: {}", self.description));
        }
        if let Some(restrict) = &self.restrict_tools {
            parts.push(format!("Restricted to tools: {}", restrict.join(", ")));
        }
        let body = self.body.trim();
        if !body.is_empty() {
            parts.push(body.to_owned());
        }
        parts.join("\n\n")
    }
}
