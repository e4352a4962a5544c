//! Hook configuration in the shape of Claude Code's `hooks` settings.
//!
//! ```json
//! {
//!   "PreToolUse": [
//!     { "matcher": "write|edit",
//!       "hooks": [ { "type": "command", "command": "./.kun/hooks/check.sh", "timeout": 5 } ] }
//!   ],
//!   "PostToolUse": [
//!     { "hooks": [ { "type": "workflow", "url": "http://127.0.0.1:8080/hook", "mode": "rewrite" } ] }
//!   ]
//! }
//! ```
//!
//! The same shape loads from TOML (`[[hooks.PreToolUse]]` tables in a config file, or
//! `[[PreToolUse]]` at the top of a document given to [`HooksConfig::from_toml_str`]).
//!
//! Loading validates everything up front, so a running engine never meets a bad entry:
//! unknown events, unknown keys, unknown hook types or modes, bad regexes, zero or absurd
//! timeouts, empty commands and unusable URLs are [`ConfigError`]s naming the entry
//! (`hooks.PreToolUse[0].hooks[1]`) and the key. Matchers are compiled here, once.
//!
//! Timeouts are in seconds (fractions allowed) and default to [`DEFAULT_TIMEOUT`]. Relative
//! commands run from the workspace root (the turn's `cwd`).

mod entries;
mod error;

pub use error::{ConfigError, ConfigFormat};

use crate::matcher::ToolMatcher;
use entries::parse_group;
use kun_ports::HookPhase;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::time::Duration;

/// The timeout of a hook whose entry names none (Claude Code's default too).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The largest timeout an entry may ask for, in seconds (one day).
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// A hook configuration, validated and with its matchers compiled.
///
/// Invariant: every entry passed validation; groups keep the order of the file within each
/// event, and hooks keep their order within each group (the chain order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HooksConfig {
    /// Groups per phase, indexed like [`HookPhase::ALL`].
    groups: [Vec<HookGroup>; 6],
}

/// One `{matcher, hooks}` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct HookGroup {
    /// Which tools the group applies to (tool phases only; loop phases ignore it).
    pub matcher: ToolMatcher,
    /// The hooks, run in order.
    pub hooks: Vec<HookSpec>,
}

/// One hook of a group.
#[derive(Debug, Clone, PartialEq)]
pub enum HookSpec {
    /// `type = "command"`: a shell command speaking the Claude Code hook protocol.
    Command(CommandHook),
    /// `type = "workflow"`: an HTTP endpoint.
    Workflow(WorkflowHook),
}

impl HookSpec {
    /// A short human label for messages: the command or the URL, cut to 80 characters.
    #[must_use]
    pub fn label(&self) -> String {
        let text = match self {
            Self::Command(hook) => hook.command.as_str(),
            Self::Workflow(hook) => hook.url.as_str(),
        };
        let mut label: String = text.chars().take(80).collect();
        if label.len() < text.len() {
            label.push('…');
        }
        label
    }

    /// The hook's timeout.
    #[must_use]
    pub const fn timeout(&self) -> Duration {
        match self {
            Self::Command(hook) => hook.timeout,
            Self::Workflow(hook) => hook.timeout,
        }
    }
}

/// A command hook: `sh -c <command>` from the workspace root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandHook {
    /// The shell command (never empty).
    pub command: String,
    /// How long the command may run before its process group is killed.
    pub timeout: Duration,
}

/// A workflow hook: an HTTP POST to an endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowHook {
    /// The endpoint (http or https; https needs a TLS-enabled reqwest in the final build).
    pub url: reqwest::Url,
    /// What the engine does with the answer.
    pub mode: WorkflowMode,
    /// How long the request may take.
    pub timeout: Duration,
    /// The environment variable holding a bearer token, if the endpoint wants one.
    pub secret_env: Option<String>,
}

/// What a workflow hook may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WorkflowMode {
    /// Only warnings and extra context; never changes the call.
    #[default]
    Observe,
    /// May deny the call (or the turn, or mark a result as an error).
    Block,
    /// May replace the arguments (PreToolUse) or the output (PostToolUse).
    Rewrite,
}

impl WorkflowMode {
    /// The configuration name (`observe`, `block`, `rewrite`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Observe => "observe",
            Self::Block => "block",
            Self::Rewrite => "rewrite",
        }
    }
}

impl HooksConfig {
    /// Parses the `hooks` map from JSON text (`{"PreToolUse": [...], ...}`).
    ///
    /// # Errors
    /// On bad JSON or any invalid entry.
    pub fn from_json_str(text: &str) -> Result<Self, ConfigError> {
        let value: Value = serde_json::from_str(text).map_err(|err| ConfigError::Syntax {
            format: ConfigFormat::Json,
            message: err.to_string(),
        })?;
        Self::from_value(&value)
    }

    /// Parses the hooks from a TOML document whose top level is the `hooks` table
    /// (`[[PreToolUse]]` …). A config file that nests them under `[hooks]` deserialises a
    /// `HooksConfig` field directly instead (this type implements [`Deserialize`]).
    ///
    /// # Errors
    /// On bad TOML or any invalid entry.
    pub fn from_toml_str(text: &str) -> Result<Self, ConfigError> {
        let value: Value = toml::from_str(text).map_err(|err| ConfigError::Syntax {
            format: ConfigFormat::Toml,
            message: err.to_string(),
        })?;
        Self::from_value(&value)
    }

    /// Reads the `hooks` key of a Claude Code `settings.json` text, ignoring its other keys.
    /// A settings file without `hooks` gives an empty configuration.
    ///
    /// # Errors
    /// On bad JSON, a settings text that is not an object, or any invalid hook entry.
    pub fn from_claude_settings_str(text: &str) -> Result<Self, ConfigError> {
        let value: Value = serde_json::from_str(text).map_err(|err| ConfigError::Syntax {
            format: ConfigFormat::Json,
            message: err.to_string(),
        })?;
        let settings = value.as_object().ok_or_else(|| ConfigError::WrongType {
            at: "settings".to_owned(),
            expected: "an object",
        })?;
        settings
            .get("hooks")
            .map_or_else(|| Ok(Self::default()), Self::from_value)
    }

    /// Validates an already parsed `hooks` map.
    ///
    /// # Errors
    /// On any invalid entry; the first one found (events in name order) is reported.
    pub fn from_value(value: &Value) -> Result<Self, ConfigError> {
        let events = value.as_object().ok_or_else(|| ConfigError::WrongType {
            at: "hooks".to_owned(),
            expected: "a table of event names (PreToolUse, PostToolUse, …)",
        })?;
        let mut config = Self::default();
        for (event, groups) in events {
            let phase = phase_named(event).ok_or_else(|| ConfigError::UnknownEvent {
                event: event.clone(),
            })?;
            let at = format!("hooks.{event}");
            let list = groups.as_array().ok_or_else(|| ConfigError::WrongType {
                at: at.clone(),
                expected: "a list of `{matcher, hooks}` groups",
            })?;
            let slot = &mut config.groups[phase_index(phase)];
            for (index, group) in list.iter().enumerate() {
                slot.push(parse_group(&format!("{at}[{index}]"), group)?);
            }
        }
        Ok(config)
    }

    /// Adds a group at the end of a phase's chain (for hosts that build hooks in code).
    pub fn push(&mut self, phase: HookPhase, group: HookGroup) {
        self.groups[phase_index(phase)].push(group);
    }

    /// The groups of one phase, in file order.
    #[must_use]
    pub fn groups(&self, phase: HookPhase) -> &[HookGroup] {
        &self.groups[phase_index(phase)]
    }

    /// Whether a phase has at least one hook.
    #[must_use]
    pub fn has_hooks(&self, phase: HookPhase) -> bool {
        self.groups(phase)
            .iter()
            .any(|group| !group.hooks.is_empty())
    }

    /// Whether no phase has any hook.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        HookPhase::ALL.iter().all(|phase| !self.has_hooks(*phase))
    }
}

impl<'de> Deserialize<'de> for HooksConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_value(&value).map_err(serde::de::Error::custom)
    }
}

const fn phase_index(phase: HookPhase) -> usize {
    match phase {
        HookPhase::PreToolUse => 0,
        HookPhase::PostToolUse => 1,
        HookPhase::UserPromptSubmit => 2,
        HookPhase::TurnStart => 3,
        HookPhase::TurnEnd => 4,
        HookPhase::PreCompact => 5,
    }
}

fn phase_named(name: &str) -> Option<HookPhase> {
    HookPhase::ALL
        .into_iter()
        .find(|phase| phase.as_str() == name)
}
