//! Why a hook configuration was rejected.

use super::MAX_TIMEOUT_SECS;
use crate::matcher::MatcherError;
use std::fmt;

/// The format a configuration text was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigFormat {
    /// JSON.
    Json,
    /// TOML.
    Toml,
}

impl fmt::Display for ConfigFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Json => "JSON",
            Self::Toml => "TOML",
        })
    }
}

/// Why a hook configuration was rejected. `at` is the entry's path, e.g.
/// `hooks.PreToolUse[0].hooks[1]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The text does not parse.
    #[error("the hooks configuration is not valid {format}: {message}")]
    Syntax {
        /// JSON or TOML.
        format: ConfigFormat,
        /// What the parser said (with its line and column).
        message: String,
    },
    /// An event name that is not one of the six phases.
    #[error(
        "unknown hook event `{event}` under `hooks`; supported events: PreToolUse, PostToolUse, \
         UserPromptSubmit, TurnStart, TurnEnd, PreCompact"
    )]
    UnknownEvent {
        /// The name as written.
        event: String,
    },
    /// A value of the wrong type.
    #[error("`{at}` must be {expected}")]
    WrongType {
        /// Where.
        at: String,
        /// What was expected, in words.
        expected: &'static str,
    },
    /// A key the entry does not know.
    #[error("`{at}` has an unknown key `{key}`; allowed keys: {}", allowed.join(", "))]
    UnknownKey {
        /// Where.
        at: String,
        /// The key as written.
        key: String,
        /// The keys this kind of entry accepts.
        allowed: &'static [&'static str],
    },
    /// A required key is absent.
    #[error("`{at}` is missing the required key `{key}`")]
    MissingKey {
        /// Where.
        at: String,
        /// The key.
        key: &'static str,
    },
    /// A `type` other than `command` or `workflow`.
    #[error("`{at}.type` is `{found}`; use `command` or `workflow`")]
    UnknownHookType {
        /// Where.
        at: String,
        /// The type as written.
        found: String,
    },
    /// A matcher that does not compile.
    #[error("`{at}.matcher`: {source}")]
    BadMatcher {
        /// Where.
        at: String,
        /// The compiler's complaint.
        source: MatcherError,
    },
    /// A zero, negative, non-finite or too large timeout.
    #[error(
        "`{at}.timeout` must be a number of seconds above zero and at most {MAX_TIMEOUT_SECS}; \
         found {found}"
    )]
    BadTimeout {
        /// Where.
        at: String,
        /// The value as written.
        found: String,
    },
    /// An empty or blank command.
    #[error("`{at}.command` is empty; give the shell command the hook should run")]
    EmptyCommand {
        /// Where.
        at: String,
    },
    /// A workflow URL that does not parse or is not http(s).
    #[error("`{at}.url` `{url}` is not a usable http(s) URL: {reason}")]
    BadUrl {
        /// Where.
        at: String,
        /// The URL as written.
        url: String,
        /// Why.
        reason: String,
    },
    /// A workflow mode other than observe, block or rewrite.
    #[error("`{at}.mode` is `{found}`; use observe, block or rewrite")]
    UnknownMode {
        /// Where.
        at: String,
        /// The mode as written.
        found: String,
    },
    /// A `secret_env` that is not an environment variable name.
    #[error(
        "`{at}.secret_env` must name an environment variable (letters, digits and `_`); found `{name}`"
    )]
    BadEnvName {
        /// Where.
        at: String,
        /// The name as written.
        name: String,
    },
}
