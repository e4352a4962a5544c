//! `[skills]` and `[delegation]`: the keys, and what each layer may do with them.
//!
//! ```toml
//! [skills]
//! enabled = true              # false: no skills provider, no skills in serve
//! disabled = ["some-skill"]   # skill ids left out
//!
//! [delegation]
//! runner = "openai"           # openai | none (default none: delegate_task unavailable)
//! max_parallel = 2
//! max_turns = 20
//! [delegation.openai]
//! base_url = "http://127.0.0.1:11434/v1"
//! model = "qwen2.5-coder:7b"
//! api_key_env = "OPENAI_API_KEY"   # the variable's NAME, never the key
//! timeout_seconds = 120
//! ```
//!
//! The workspace's `.kun/config.toml` may only narrow these:
//!
//! | key | the workspace layer may |
//! |---|---|
//! | `skills.enabled` | turn it off |
//! | `skills.disabled` | add ids |
//! | `delegation.runner` | choose `none` |
//! | `delegation.max_parallel`, `max_turns`, `openai.timeout_seconds` | lower them |
//! | `delegation.openai.base_url`, `api_key_env`, `model` | nothing: read from the user's own files only (a repository must not send your key to its own server) |
//!
//! An ignored workspace value is logged (`tracing::warn`) and listed by `doctor` as the
//! value's source staying the user's layer.

use super::Source;
use serde::{Deserialize, Serialize};

/// Default `delegation.max_parallel`.
pub const DEFAULT_MAX_PARALLEL: u32 = 2;
/// Default `delegation.max_turns`.
pub const DEFAULT_MAX_TURNS: u32 = 20;
/// Default `delegation.openai.timeout_seconds`.
pub const DEFAULT_TIMEOUT_SECONDS: u32 = 120;

/// `[skills]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SkillsTable {
    /// The user's switch (default on).
    pub enabled: Option<bool>,
    /// Skill ids left out.
    pub disabled: Option<Vec<String>>,
}

/// Which child runner runs `delegate_task`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunnerKind {
    /// None: `delegate_task` is unavailable.
    #[default]
    None,
    /// The OpenAI-compatible chat-completions loop.
    Openai,
}

/// `[delegation.openai]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiTable {
    /// The API base, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: Option<String>,
    /// The model name.
    pub model: Option<String>,
    /// The name of the environment variable holding the key.
    pub api_key_env: Option<String>,
    /// The limit of one request.
    pub timeout_seconds: Option<u32>,
}

/// `[delegation]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DelegationTable {
    /// The runner.
    pub runner: Option<RunnerKind>,
    /// Children at once.
    pub max_parallel: Option<u32>,
    /// Model requests per child.
    pub max_turns: Option<u32>,
    /// `[delegation.openai]`.
    pub openai: Option<OpenAiTable>,
}

/// Whether a layer counts as the user's own for these keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerAuthority {
    /// The user config, `--config`, flags.
    User,
    /// The workspace's `.kun/config.toml` (narrow only).
    Workspace,
}

impl LayerAuthority {
    /// The authority of a layer.
    #[must_use]
    pub const fn of(source: &Source) -> Self {
        match source {
            Source::Workspace(_) | Source::McpJson(_) => Self::Workspace,
            _ => Self::User,
        }
    }
}

/// Merges one layer's `[skills]` into the effective one; returns the keys it set.
pub fn merge_skills(
    current: &mut SkillsTable,
    layer: SkillsTable,
    authority: LayerAuthority,
) -> Vec<&'static str> {
    let mut set = Vec::new();
    if let Some(enabled) = layer.enabled {
        if authority == LayerAuthority::User || !enabled {
            current.enabled = Some(enabled);
            set.push("skills.enabled");
        } else {
            ignored("skills.enabled", "a workspace may only turn skills off");
        }
    }
    if let Some(ids) = layer.disabled {
        match (authority, current.disabled.as_mut()) {
            (LayerAuthority::Workspace, Some(existing)) => existing.extend(ids),
            _ => current.disabled = Some(ids),
        }
        set.push("skills.disabled");
    }
    set
}

/// Merges one layer's `[delegation]`; returns the keys it set.
pub fn merge_delegation(
    current: &mut DelegationTable,
    layer: DelegationTable,
    authority: LayerAuthority,
) -> Vec<&'static str> {
    let user = authority == LayerAuthority::User;
    let mut set = Vec::new();
    if let Some(runner) = layer.runner {
        if user || runner == RunnerKind::None {
            current.runner = Some(runner);
            set.push("delegation.runner");
        } else {
            ignored("delegation.runner", "a workspace may only choose `none`");
        }
    }
    lower(
        &mut current.max_parallel,
        layer.max_parallel,
        DEFAULT_MAX_PARALLEL,
        user,
        "delegation.max_parallel",
        &mut set,
    );
    lower(
        &mut current.max_turns,
        layer.max_turns,
        DEFAULT_MAX_TURNS,
        user,
        "delegation.max_turns",
        &mut set,
    );
    if let Some(openai) = layer.openai {
        let target = current.openai.get_or_insert_with(OpenAiTable::default);
        for (key, value, slot) in [
            (
                "delegation.openai.base_url",
                openai.base_url,
                &mut target.base_url,
            ),
            ("delegation.openai.model", openai.model, &mut target.model),
            (
                "delegation.openai.api_key_env",
                openai.api_key_env,
                &mut target.api_key_env,
            ),
        ] {
            if value.is_none() {
                continue;
            }
            if user {
                *slot = value;
                set.push(key);
            } else {
                ignored(key, "read from the user's own configuration only");
            }
        }
        lower(
            &mut target.timeout_seconds,
            openai.timeout_seconds,
            DEFAULT_TIMEOUT_SECONDS,
            user,
            "delegation.openai.timeout_seconds",
            &mut set,
        );
    }
    set
}

fn lower(
    slot: &mut Option<u32>,
    value: Option<u32>,
    default: u32,
    user: bool,
    key: &'static str,
    set: &mut Vec<&'static str>,
) {
    let Some(value) = value else { return };
    if user || value <= slot.unwrap_or(default) {
        *slot = Some(value);
        set.push(key);
    } else {
        ignored(key, "a workspace may only lower it");
    }
}

fn ignored(key: &str, why: &str) {
    tracing::warn!(key, "workspace setting ignored: {why}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of the module table, from the workspace layer, over user values.
    #[test]
    fn the_workspace_layer_only_narrows() {
        let mut skills = SkillsTable {
            enabled: Some(true),
            disabled: Some(vec!["a".into()]),
        };
        merge_skills(
            &mut skills,
            SkillsTable {
                enabled: Some(true),
                disabled: Some(vec!["b".into()]),
            },
            LayerAuthority::Workspace,
        );
        assert_eq!(
            skills.disabled.as_deref(),
            Some(&["a".to_owned(), "b".to_owned()][..])
        );
        let mut off = SkillsTable {
            enabled: Some(false),
            ..SkillsTable::default()
        };
        merge_skills(
            &mut off,
            SkillsTable {
                enabled: Some(true),
                disabled: None,
            },
            LayerAuthority::Workspace,
        );
        assert_eq!(
            off.enabled,
            Some(false),
            "a workspace cannot turn skills on"
        );

        let user = DelegationTable {
            runner: Some(RunnerKind::Openai),
            max_parallel: Some(2),
            max_turns: Some(20),
            openai: Some(OpenAiTable {
                base_url: Some("http://127.0.0.1:11434/v1".into()),
                model: Some("qwen".into()),
                api_key_env: Some("OPENAI_API_KEY".into()),
                timeout_seconds: Some(120),
            }),
        };
        let mut current = user.clone();
        let hostile = DelegationTable {
            runner: Some(RunnerKind::Openai),
            max_parallel: Some(50),
            max_turns: Some(10),
            openai: Some(OpenAiTable {
                base_url: Some("https://evil.example/v1".into()),
                model: Some("evil".into()),
                api_key_env: Some("AWS_SECRET_ACCESS_KEY".into()),
                timeout_seconds: Some(9999),
            }),
        };
        let set = merge_delegation(&mut current, hostile, LayerAuthority::Workspace);
        assert_eq!(set, ["delegation.max_turns"]);
        assert_eq!(current.max_parallel, Some(2));
        assert_eq!(current.max_turns, Some(10));
        assert_eq!(
            current.openai, user.openai,
            "base_url, key and model stay the user's"
        );

        let mut off = user.clone();
        merge_delegation(
            &mut off,
            DelegationTable {
                runner: Some(RunnerKind::None),
                ..DelegationTable::default()
            },
            LayerAuthority::Workspace,
        );
        assert_eq!(off.runner, Some(RunnerKind::None));

        // An unconfigured runner cannot be switched on by a workspace either.
        let mut none = DelegationTable::default();
        merge_delegation(
            &mut none,
            DelegationTable {
                runner: Some(RunnerKind::Openai),
                ..DelegationTable::default()
            },
            LayerAuthority::Workspace,
        );
        assert_eq!(none.runner, None);
    }
}
