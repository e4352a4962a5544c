//! Which skills a turn injects, and what they do to its tools (SPEC §9).
//!
//! Each visible skill scores by the first trigger that applies, plus its priority:
//!
//! | trigger | score | reason |
//! |---|---|---|
//! | loaded with `load_skill` in this turn | 1100 | `load_skill` |
//! | the prompt names it: `$id`, `@id`, `/skill:id`, a leading `/id`, or `$name` / `@name` | 1000 | `explicit:id` / `explicit:name` |
//! | the prompt starts with one of its commands | 900 | `command:<cmd>` |
//! | one of its patterns (a regex, case-insensitive) matches the prompt | 500 | `pattern:<p>` |
//! | a file of one of its types is involved (given, or `.ext` in the prompt) | 300 | `file_type:<t>` |
//!
//! The top [`ACTIVE_LIMIT`] by score (then id) are active. Their instructions are injected in
//! order while they fit in [`INJECTION_BUDGET_BYTES`]; one that does not fit is skipped
//! **whole** (later, smaller ones may still fit). Only injected skills count:
//!
//! * their `restrict-tools` lists, united, become the turn's allow-list (intersected with
//!   any allow-list already there): one restrictive skill restricts the whole turn, skills
//!   without the key restrict nothing;
//! * their `allowed-tools` (when the skill may pre-approve) pre-approve those tools while
//!   they are active — [`PreApprovingGate`](crate::PreApprovingGate).

use crate::catalog::SkillCatalog;
use crate::names::ToolRule;
use crate::skill::Skill;
use crate::slug::skill_slug;
use kun_ports::{NameSet, ToolLists};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

/// Skills active at once.
pub const ACTIVE_LIMIT: usize = 3;
/// Bytes of injected instructions per turn.
pub const INJECTION_BUDGET_BYTES: usize = 24_000;
/// Score of a skill loaded with `load_skill`.
pub const SCORE_LOADED: i64 = 1100;
/// Score of a skill the prompt names.
pub const SCORE_EXPLICIT: i64 = 1000;
/// Score of a command trigger.
pub const SCORE_COMMAND: i64 = 900;
/// Score of a pattern trigger.
pub const SCORE_PATTERN: i64 = 500;
/// Score of a file-type trigger.
pub const SCORE_FILE_TYPE: i64 = 300;

/// What a turn brings to activation.
#[derive(Debug, Clone, Copy)]
pub struct ActivationInput<'a> {
    /// The user's prompt.
    pub prompt: &'a str,
    /// Files involved (attached, open, mentioned).
    pub files: &'a [&'a Path],
    /// Skill ids loaded with `load_skill` in this turn.
    pub loaded: &'a [String],
    /// The turn's lists (only the skill lists are read).
    pub lists: Option<&'a ToolLists>,
}

/// One skill that scored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillActivation {
    /// The skill.
    pub id: String,
    /// Its score (trigger + priority).
    pub score: i64,
    /// Which trigger.
    pub reason: String,
    /// Whether its instruction fit in the budget.
    pub injected: bool,
}

/// What activation decided for a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Activation {
    /// The top skills, best first (skipped ones included, `injected: false`).
    pub activations: Vec<SkillActivation>,
    /// The injected instructions, in order, separated by blank lines.
    pub injection: String,
    /// The turn's allow-list from `restrict-tools` (sorted), `None` when no injected skill
    /// restricts.
    pub narrowed_tools: Option<Vec<String>>,
    /// What the injected skills pre-approve (sorted).
    pub pre_approved: Vec<ToolRule>,
}

impl Activation {
    /// The ids of the injected skills, in order.
    #[must_use]
    pub fn active_skill_ids(&self) -> Vec<String> {
        self.activations
            .iter()
            .filter(|a| a.injected)
            .map(|a| a.id.clone())
            .collect()
    }

    /// Applies the narrowing to a turn's lists: the allow-list becomes its intersection
    /// with the injected skills' union (it never grows).
    pub fn narrow(&self, lists: &mut ToolLists) {
        let Some(narrowed) = &self.narrowed_tools else {
            return;
        };
        let narrowed: NameSet = narrowed.iter().map(String::as_str).collect();
        lists.allowed_tool_names = Some(match &lists.allowed_tool_names {
            Some(existing) => existing.intersect(&narrowed),
            None => narrowed,
        });
    }
}

/// Whether the turn's skill lists admit a skill.
#[must_use]
pub fn skill_admitted(lists: Option<&ToolLists>, id: &str) -> bool {
    lists.is_none_or(|lists| {
        !lists.blocked_skill_ids.contains(id)
            && lists
                .allowed_skill_ids
                .as_ref()
                .is_none_or(|allowed| allowed.contains(id))
    })
}

impl SkillCatalog {
    /// Activation for a prompt and the files involved (no `load_skill`, no lists).
    #[must_use]
    pub fn activate(&self, prompt: &str, files: &[&Path]) -> Activation {
        self.activate_with(&ActivationInput {
            prompt,
            files,
            loaded: &[],
            lists: None,
        })
    }

    /// Activation for a turn; see the module docs.
    #[must_use]
    pub fn activate_with(&self, input: &ActivationInput<'_>) -> Activation {
        let prompt = input.prompt.to_lowercase();
        let file_types = file_types(&prompt, input.files);
        let mut scored: Vec<(i64, String, &Arc<Skill>)> = self
            .skills()
            .iter()
            .filter(|s| skill_admitted(input.lists, &s.id))
            .filter_map(|skill| {
                let (base, reason) = trigger(skill, &prompt, &file_types, input.loaded)?;
                Some((base + skill.priority, reason, skill))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.2.id.cmp(&b.2.id)));
        scored.truncate(ACTIVE_LIMIT);

        let mut activation = Activation::default();
        let mut used = 0;
        let mut restrict: Option<BTreeSet<String>> = None;
        let mut pre_approved = BTreeSet::new();
        for (score, reason, skill) in scored {
            let text = skill.instruction(&reason);
            let separator = if activation.injection.is_empty() {
                0
            } else {
                2
            };
            let injected = used + separator + text.len() <= INJECTION_BUDGET_BYTES;
            if injected {
                if separator > 0 {
                    activation.injection.push_str("\n\n");
                }
                activation.injection.push_str(&text);
                used += separator + text.len();
                if let Some(list) = &skill.restrict_tools {
                    restrict
                        .get_or_insert_with(BTreeSet::new)
                        .extend(list.iter().cloned());
                }
                pre_approved.extend(skill.pre_approvals().iter().cloned());
            }
            activation.activations.push(SkillActivation {
                id: skill.id.clone(),
                score,
                reason,
                injected,
            });
        }
        activation.narrowed_tools = restrict.map(|set| set.into_iter().collect());
        activation.pre_approved = pre_approved.into_iter().collect();
        activation
    }
}

/// The first trigger that applies, with its base score.
fn trigger(
    skill: &Skill,
    prompt: &str,
    file_types: &BTreeSet<String>,
    loaded: &[String],
) -> Option<(i64, String)> {
    if loaded.contains(&skill.id) {
        return Some((SCORE_LOADED, "load_skill".to_owned()));
    }
    if names_it(prompt, &skill.id) {
        return Some((SCORE_EXPLICIT, "explicit:id".to_owned()));
    }
    let name = skill.name.to_lowercase();
    if names_by_sigil(prompt, &name) || names_by_sigil(prompt, &skill_slug(&skill.name)) {
        return Some((SCORE_EXPLICIT, "explicit:name".to_owned()));
    }
    if let Some(command) = skill
        .triggers
        .commands
        .iter()
        .find(|c| prompt.starts_with(*c))
    {
        return Some((SCORE_COMMAND, format!("command:{command}")));
    }
    if let Some(pattern) = skill
        .triggers
        .patterns
        .iter()
        .find(|p| p.regex.is_match(prompt))
    {
        return Some((SCORE_PATTERN, format!("pattern:{}", pattern.source)));
    }
    if let Some(kind) = skill
        .triggers
        .file_types
        .iter()
        .find(|t| file_types.contains(*t))
    {
        return Some((SCORE_FILE_TYPE, format!("file_type:{kind}")));
    }
    None
}

/// `$id`, `@id`, `/skill:id` anywhere, or `/id` at the start — each followed by the end or
/// a character that cannot continue an id.
fn names_it(prompt: &str, id: &str) -> bool {
    names_by_sigil(prompt, id)
        || followed_by_boundary(prompt, &format!("/skill:{id}"))
        || prompt
            .strip_prefix('/')
            .and_then(|rest| rest.strip_prefix(id))
            .is_some_and(|after| after.chars().next().is_none_or(ends_id))
}

fn names_by_sigil(prompt: &str, name: &str) -> bool {
    !name.is_empty()
        && (followed_by_boundary(prompt, &format!("${name}"))
            || followed_by_boundary(prompt, &format!("@{name}")))
}

fn followed_by_boundary(prompt: &str, needle: &str) -> bool {
    prompt.match_indices(needle).any(|(at, _)| {
        prompt[at + needle.len()..]
            .chars()
            .next()
            .is_none_or(ends_id)
    })
}

fn ends_id(ch: char) -> bool {
    !(ch.is_alphanumeric() || ch == '-' || ch == '_')
}

/// Extensions of the files, plus every `.ext` written in the prompt (lowercase, with a dot).
fn file_types(prompt: &str, files: &[&Path]) -> BTreeSet<String> {
    let mut types: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.extension())
        .map(|e| format!(".{}", e.to_string_lossy().to_lowercase()))
        .collect();
    let bytes = prompt.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b != b'.' {
            continue;
        }
        let ext: String = prompt[i + 1..]
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        if !ext.is_empty() {
            types.insert(format!(".{ext}"));
        }
    }
    types
}
