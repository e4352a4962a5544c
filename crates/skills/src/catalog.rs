//! The discovered skills, and the texts that tell a model about them.
//!
//! | text | budget | what does not fit |
//! |---|---|---|
//! | [`SkillCatalog::catalog_text`] (a runtime's system prompt) | [`CATALOG_BUDGET_BYTES`] | whole lines dropped, then `…and N more` |
//! | [`SkillCatalog::instructions`] (MCP `instructions`, which Claude Code cuts at 2 KB) | the caller's | the lead text first, then one short line per skill, then `…and N more` |

use crate::skill::Skill;
use crate::slug::{normalize_skill_id, skill_slug};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

/// The catalog text's byte budget.
pub const CATALOG_BUDGET_BYTES: usize = 8_000;

/// A problem with one file; the catalog is still built without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file (or folder).
    pub file: PathBuf,
    /// What is wrong and what happened.
    pub message: String,
}

/// The skills found, sorted by id, and every problem met on the way.
#[derive(Debug, Clone, Default)]
pub struct SkillCatalog {
    skills: Vec<Arc<Skill>>,
    diagnostics: Vec<Diagnostic>,
    searched: Vec<PathBuf>,
}

impl SkillCatalog {
    /// A catalog of these skills (sorted by id here).
    #[must_use]
    pub fn new(
        mut skills: Vec<Arc<Skill>>,
        diagnostics: Vec<Diagnostic>,
        searched: Vec<PathBuf>,
    ) -> Self {
        skills.sort_by(|a, b| a.id.cmp(&b.id));
        Self {
            skills,
            diagnostics,
            searched,
        }
    }

    /// The skills, sorted by id.
    #[must_use]
    pub fn skills(&self) -> &[Arc<Skill>] {
        &self.skills
    }

    /// Problems met while discovering.
    #[must_use]
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The folders searched.
    #[must_use]
    pub fn searched(&self) -> &[PathBuf] {
        &self.searched
    }

    /// Whether no skill was found.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// A skill by id as typed (`$pdf`, `skill:PDF`), else by the slug of its name.
    #[must_use]
    pub fn find(&self, given: &str) -> Option<&Arc<Skill>> {
        let id = normalize_skill_id(given);
        self.skills
            .iter()
            .find(|s| s.id == id)
            .or_else(|| self.skills.iter().find(|s| skill_slug(&s.name) == id))
    }

    /// The ids, sorted.
    #[must_use]
    pub fn ids(&self) -> Vec<&str> {
        self.skills.iter().map(|s| s.id.as_str()).collect()
    }

    /// The catalog text for a runtime's system prompt, within `budget` bytes (empty when no
    /// skill is visible). Skills for which `visible` is false are left out.
    #[must_use]
    pub fn catalog_text(&self, budget: usize, visible: impl Fn(&Skill) -> bool) -> String {
        const HEADER: &str = "## Skills\nSkills are instructions for particular tasks. When a \
            task matches one, call `load_skill` with its id and follow what it says.\n\n### \
            Available skills\n";
        const FOOTER: &str = "\n### How to use skills\nCall `load_skill {\"skill_id\": \"<id>\"}` \
            before starting the task; an active skill may limit the tools you can use.\n";
        let lines: Vec<String> = self
            .skills
            .iter()
            .filter(|s| visible(s))
            .map(|s| {
                let mut line = format!("- {} ({})", s.name, s.id);
                if !s.description.is_empty() {
                    line.push_str(": ");
                    line.push_str(&s.description);
                }
                line.push_str(&format!(" (file: {})", s.source.path.display()));
                line.push('\n');
                line
            })
            .collect();
        fit_lines(HEADER, &lines, FOOTER, budget)
    }

    /// MCP `instructions`: `lead` first, then one line per skill (`- id: description`, the
    /// description shortened), then how to get the rest, within `budget` bytes. The lead is
    /// cut (at a character boundary) only if it alone exceeds the budget.
    #[must_use]
    pub fn instructions(&self, lead: &str, budget: usize) -> String {
        const PER_SKILL: usize = 140;
        if self.skills.is_empty() {
            return truncate_to(lead, budget).to_owned();
        }
        let header = format!(
            "{lead}\n\nSkills (call `load_skill` with the id before a matching task; each is also \
             an MCP prompt):\n"
        );
        let lines: Vec<String> = self
            .skills
            .iter()
            .map(|s| {
                let mut line = format!("- {}", s.id);
                if !s.description.is_empty() {
                    line.push_str(": ");
                    line.push_str(&s.description);
                }
                let mut line = truncate_to(&line, PER_SKILL).to_owned();
                if line.len() < s.id.len() + 2 + s.description.len() {
                    line.push('…');
                }
                line.push('\n');
                line
            })
            .collect();
        if header.len() > budget {
            return truncate_to(lead, budget).to_owned();
        }
        fit_lines(&header, &lines, "", budget)
    }
}

/// `header`, as many whole `lines` as fit with `footer` and an "omitted" line, `footer`.
fn fit_lines(header: &str, lines: &[String], footer: &str, budget: usize) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut text = header.to_owned();
    let mut shown = 0;
    for (i, line) in lines.iter().enumerate() {
        let rest = lines.len() - i - 1;
        let omitted_reserve = if rest > 0 { omitted(rest).len() } else { 0 };
        if text.len() + line.len() + footer.len() + omitted_reserve > budget {
            break;
        }
        text.push_str(line);
        shown += 1;
    }
    if shown < lines.len() {
        let line = omitted(lines.len() - shown);
        if text.len() + line.len() + footer.len() <= budget {
            text.push_str(&line);
        }
    }
    if text.len() + footer.len() <= budget {
        text.push_str(footer);
    }
    text
}

fn omitted(n: usize) -> String {
    format!("- …and {n} more skill(s) omitted (budget reached); `load_skill` loads any by id.\n")
}

/// The longest prefix of `text` within `max` bytes, at a character boundary.
pub(crate) fn truncate_to(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
