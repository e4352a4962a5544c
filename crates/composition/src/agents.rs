//! Skills and delegation from the settings: the skills provider (main and child registries),
//! the agent profiles, the child runner and the delegation provider (main registry only: it
//! is not `Delegable`, so no child can delegate).

use crate::config::{
    DEFAULT_MAX_PARALLEL, DEFAULT_MAX_TURNS, DEFAULT_TIMEOUT_SECONDS, RunnerKind, Settings,
};
use kun_delegation::{
    DelegationProvider, DelegationRuntime, DelegationSlots, OpenAiRunner, OpenAiSettings,
    ProfileSet,
};
use kun_ports::{ChildAgentRunner, ChildLimits, ToolHost, WorkspaceStanding};
use kun_skills::{DiscoveryOptions, LoadedSkills, SkillsProvider, discover};
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// The state of the child runner, for `doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "detail", rename_all = "snake_case")]
pub enum RunnerState {
    /// `[delegation] runner` is unset or `none`.
    NotConfigured,
    /// Ready; what it is (never the key).
    Ready(String),
    /// Configured but unusable, and why.
    Unavailable(String),
}

impl RunnerState {
    /// One line for `doctor`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::NotConfigured => format!(
                "{}: set [delegation] runner = \"openai\" and [delegation.openai] to enable delegate_task",
                kun_delegation::NO_RUNNER
            ),
            Self::Ready(what) => format!("ready: {what}"),
            Self::Unavailable(why) => format!("unavailable: {why}"),
        }
    }
}

/// How far the workspace's skills and agent files are trusted: as far as the workspace is
/// (`[trust] workspaces`, `kun-tools trust`, `--trust-workspace`). Untrusted, its skills
/// pre-approve nothing and its profiles may only narrow.
#[must_use]
pub const fn workspace_standing(settings: &Settings) -> WorkspaceStanding {
    if settings.trust.workspace.is_trusted() {
        WorkspaceStanding::Trusted
    } else {
        WorkspaceStanding::Untrusted
    }
}

/// The skills provider for these settings (disabled by `[skills] enabled = false`).
#[must_use]
pub fn skills_provider(settings: &Settings, standing: WorkspaceStanding) -> Arc<SkillsProvider> {
    if settings.skills.enabled == Some(false) {
        return Arc::new(SkillsProvider::disabled("[skills] enabled = false"));
    }
    let mut options = DiscoveryOptions::new(&settings.workspace)
        .with_standing(standing)
        .with_disabled(settings.skills.disabled.iter().flatten());
    if let Some(dir) = DiscoveryOptions::standard_user_dir() {
        options = options.with_user_dir(dir);
    }
    let catalog = discover(&options);
    for diagnostic in catalog.diagnostics() {
        tracing::debug!(file = %diagnostic.file.display(), "skill: {}", diagnostic.message);
    }
    Arc::new(SkillsProvider::new(
        Arc::new(catalog),
        Arc::new(LoadedSkills::new()),
    ))
}

/// The profiles in effect.
#[must_use]
pub fn profiles(settings: &Settings, standing: WorkspaceStanding) -> Arc<ProfileSet> {
    Arc::new(ProfileSet::load(&settings.workspace, Vec::new(), standing))
}

/// The configured child runner, if any.
#[must_use]
pub fn runner(settings: &Settings) -> (Option<Arc<dyn ChildAgentRunner>>, RunnerState) {
    let d = &settings.delegation;
    match d.runner.unwrap_or_default() {
        RunnerKind::None => (None, RunnerState::NotConfigured),
        RunnerKind::Openai => {
            let openai = d.openai.clone().unwrap_or_default();
            let (Some(base_url), Some(model)) = (openai.base_url, openai.model) else {
                return (
                    None,
                    RunnerState::Unavailable(
                        "[delegation.openai] needs base_url and model".to_owned(),
                    ),
                );
            };
            let settings = OpenAiSettings {
                base_url,
                model,
                api_key_env: openai.api_key_env,
                timeout: Duration::from_secs(u64::from(
                    openai
                        .timeout_seconds
                        .unwrap_or(DEFAULT_TIMEOUT_SECONDS)
                        .max(1),
                )),
            };
            match OpenAiRunner::new(settings) {
                Ok(runner) => {
                    let describe = kun_ports::ChildAgentRunner::describe(&runner);
                    (Some(Arc::new(runner)), RunnerState::Ready(describe))
                }
                Err(why) => (None, RunnerState::Unavailable(why)),
            }
        }
    }
}

/// The delegation provider: unavailable (`no child runner configured`, or why the runner
/// cannot work) without a runner.
#[must_use]
pub fn delegation_provider(
    settings: &Settings,
    profiles: Arc<ProfileSet>,
    runner: Option<Arc<dyn ChildAgentRunner>>,
    child_host: Arc<dyn ToolHost>,
) -> Arc<DelegationProvider> {
    let d = &settings.delegation;
    let runtime = runner.map(|runner| DelegationRuntime {
        runner,
        child_host,
        slots: DelegationSlots::new(d.max_parallel.unwrap_or(DEFAULT_MAX_PARALLEL) as usize),
        limits: ChildLimits {
            max_turns: d.max_turns.unwrap_or(DEFAULT_MAX_TURNS).max(1),
        },
    });
    Arc::new(DelegationProvider::new(profiles, runtime))
}
