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
//! An untrusted workspace may only narrow them (the rules live in
//! [`narrowing::RULES`](super::narrowing::RULES)): `skills.enabled` only off,
//! `skills.disabled` adds, `delegation.runner` only `none`, the numbers only lower, and
//! `delegation.openai.base_url`, `model` and `api_key_env` come from the user's own files
//! only — not even a trusted workspace may send your key to its own server.

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
