//! `load_skill {skill_id}` (policy auto, read-only) and the skills provider.
//!
//! | outcome | result |
//! |---|---|
//! | a known id (as typed: `$pdf`, `skill:PDF`, or the name) | the instruction, with `truncated: true` and a marker when it exceeds the 24 KB budget (the body is trimmed, unlike auto-injection which skips) |
//! | blank | `invalid_arguments`: skill_id is required |
//! | unknown | `invalid_arguments` listing the ids there are |
//! | blocked by the turn's skill lists | `invalid_arguments` saying so |
//!
//! Each load is recorded for (thread, turn) in [`LoadedSkills`], so a runtime's activation
//! later in the same turn injects the skill.

use crate::activation::{INJECTION_BUDGET_BYTES, skill_admitted};
use crate::catalog::{SkillCatalog, truncate_to};
use crate::loaded::LoadedSkills;
use async_trait::async_trait;
use kun_ports::{
    Delegable, ProviderKind, ProviderPolicy, SideEffect, Tool, ToolContext, ToolFailure,
    ToolPolicy, ToolProvider, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The tool's name.
pub const LOAD_SKILL: &str = "load_skill";

/// The provider's id.
pub const SKILLS_PROVIDER_ID: &str = "skills";

/// How many ids the description lists before "…".
const IDS_IN_DESCRIPTION: usize = 40;

/// Marks a trimmed instruction.
const TRUNCATION_MARKER: &str = "\n…(truncated)";

/// Arguments of `load_skill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadSkillArgs {
    /// The skill's id (from the skills list), e.g. `pdf-forms`.
    pub skill_id: String,
}

/// What `load_skill` returns.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LoadSkillOutput {
    /// The skill's id.
    pub skill_id: String,
    /// Its name.
    pub name: String,
    /// The instruction to follow.
    pub instruction: String,
    /// Tools it pre-approves while active (`allowed-tools`); empty when it may not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
    /// Tools the turn is limited to while it is active (`restrict-tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restrict_tools: Option<Vec<String>>,
    /// Whether the instruction was trimmed to the budget.
    pub truncated: bool,
}

/// `load_skill`.
pub struct LoadSkillTool {
    spec: ToolSpec,
    catalog: Arc<SkillCatalog>,
    loaded: Arc<LoadedSkills>,
}

impl std::fmt::Debug for LoadSkillTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadSkillTool")
            .field("skills", &self.catalog.ids())
            .finish_non_exhaustive()
    }
}

impl LoadSkillTool {
    /// The tool over a catalog.
    #[must_use]
    pub fn new(catalog: Arc<SkillCatalog>, loaded: Arc<LoadedSkills>) -> Self {
        let ids = catalog.ids();
        let mut listed: Vec<&str> = ids.iter().copied().take(IDS_IN_DESCRIPTION).collect();
        if ids.len() > IDS_IN_DESCRIPTION {
            listed.push("…");
        }
        let description = format!(
            "Loads a skill's instructions by id. Call it before a task one of the skills is \
             for, then follow the instruction. Skills: {}.",
            listed.join(", ")
        );
        let spec = ToolSpec::typed::<LoadSkillArgs, LoadSkillOutput>(LOAD_SKILL, description)
            .with_policy(ToolPolicy::Auto)
            .with_side_effect(SideEffect::ReadOnly);
        Self {
            spec,
            catalog,
            loaded,
        }
    }
}

#[async_trait]
impl TypedTool for LoadSkillTool {
    type Args = LoadSkillArgs;
    type Output = LoadSkillOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &LoadSkillOutput) -> String {
        output.instruction.clone()
    }

    async fn run(
        &self,
        args: LoadSkillArgs,
        ctx: ToolContext<'_>,
    ) -> Result<LoadSkillOutput, ToolFailure> {
        if args.skill_id.trim().is_empty() {
            return Err(ToolFailure::invalid(
                "skill_id is required: give the id of a skill from the list",
            ));
        }
        let Some(skill) = self.catalog.find(&args.skill_id) else {
            let ids = self.catalog.ids();
            let available = if ids.is_empty() {
                "(none)".to_owned()
            } else {
                ids.join(", ")
            };
            return Err(ToolFailure::invalid(format!(
                "unknown skill id \"{}\". Available: {available}",
                args.skill_id
            )));
        };
        if !skill_admitted(Some(ctx.turn.scope.lists()), &skill.id) {
            return Err(ToolFailure::invalid(format!(
                "skill `{}` is blocked in this turn; work without it",
                skill.id
            )));
        }
        self.loaded
            .record(ctx.turn.thread_id, ctx.turn.turn_id, &skill.id);
        let full = skill.instruction("load_skill");
        let (instruction, truncated) = if full.len() <= INJECTION_BUDGET_BYTES {
            (full, false)
        } else {
            let keep = INJECTION_BUDGET_BYTES - TRUNCATION_MARKER.len();
            (
                format!("{}{TRUNCATION_MARKER}", truncate_to(&full, keep)),
                true,
            )
        };
        Ok(LoadSkillOutput {
            skill_id: skill.id.clone(),
            name: skill.name.clone(),
            instruction,
            allowed_tools: skill
                .pre_approvals()
                .iter()
                .map(ToString::to_string)
                .collect(),
            restrict_tools: skill.restrict_tools.clone(),
            truncated,
        })
    }
}

/// The skills provider (`skills`, kind skill): `load_skill`. Delegable: a child may load
/// skills (the child's blocked skills still apply).
pub struct SkillsProvider {
    catalog: Arc<SkillCatalog>,
    policy: ProviderPolicy,
    tool: Arc<dyn Tool>,
}

impl std::fmt::Debug for SkillsProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillsProvider")
            .field("skills", &self.catalog.ids())
            .field("policy", &self.policy)
            .finish()
    }
}

impl SkillsProvider {
    /// A provider over a catalog; unavailable (with the folders searched) when it is empty.
    #[must_use]
    pub fn new(catalog: Arc<SkillCatalog>, loaded: Arc<LoadedSkills>) -> Self {
        let policy = if catalog.is_empty() {
            let searched: Vec<String> = catalog
                .searched()
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            ProviderPolicy::unavailable(format!(
                "no skills were found (searched {})",
                searched.join(", ")
            ))
        } else {
            ProviderPolicy::ready()
        };
        Self::with_policy(catalog, loaded, policy)
    }

    /// A provider the user turned off.
    #[must_use]
    pub fn disabled(reason: impl Into<String>) -> Self {
        Self::with_policy(
            Arc::new(SkillCatalog::default()),
            Arc::new(LoadedSkills::new()),
            ProviderPolicy::disabled(reason),
        )
    }

    fn with_policy(
        catalog: Arc<SkillCatalog>,
        loaded: Arc<LoadedSkills>,
        policy: ProviderPolicy,
    ) -> Self {
        let tool: Arc<dyn Tool> = Arc::new(LoadSkillTool::new(Arc::clone(&catalog), loaded));
        Self {
            catalog,
            policy,
            tool,
        }
    }

    /// The catalog it serves.
    #[must_use]
    pub fn catalog(&self) -> &Arc<SkillCatalog> {
        &self.catalog
    }
}

impl ToolProvider for SkillsProvider {
    fn id(&self) -> &str {
        SKILLS_PROVIDER_ID
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Skill
    }

    fn policy(&self) -> ProviderPolicy {
        self.policy.clone()
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::clone(&self.tool)]
    }
}

impl Delegable for SkillsProvider {}
