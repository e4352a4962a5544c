//! What a session grant covers ([`GrantKey`]), and what a command tool says about one call
//! ([`CommandApproval`]).
//!
//! | the call | [`GrantScope`] | an `allow_for_session` answer |
//! |---|---|---|
//! | a tool that runs no command (`write`) | `Tool` | allows every later call of the tool |
//! | an action of a tool (`background_shell` `kill`) | `Action` | allows every later call of that action |
//! | `cargo test -p x 2>&1 \| tail -n 5` | `Commands [cargo test, tail]` | grants each key; a later command is covered when **every** key in it is granted |
//! | `node -e …`, `git log`, `a; $(b)`, a path outside the workspace, an escalated command | `OneCall` | allows this call only, and says why |
//!
//! A command tool decides the scope (it parses its own command line); the gate only compares
//! keys. A grant is never wider than what the prompt said it would be.

use crate::SandboxRequest;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One (program, subcommand) key of a command grant: `cargo test`, `ls`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CommandKey {
    /// The program as named on the command line (`cargo`).
    pub program: String,
    /// Its subcommand, for programs that have them (`test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subcommand: Option<String>,
}

impl CommandKey {
    /// The key of `program` with an optional subcommand.
    #[must_use]
    pub fn new(program: impl Into<String>, subcommand: Option<&str>) -> Self {
        Self {
            program: program.into(),
            subcommand: subcommand.map(str::to_owned),
        }
    }

    /// `"cargo test"` → program `cargo`, subcommand `test`; `"ls"` → program `ls`. For tests
    /// and examples: the words are split at whitespace, a third word is ignored.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        let mut words = text.split_whitespace();
        let program = words.next().unwrap_or_default();
        Self::new(program, words.next())
    }
}

impl fmt::Display for CommandKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.subcommand {
            Some(sub) => write!(f, "{} {sub}", self.program),
            None => f.write_str(&self.program),
        }
    }
}

/// What a session grant for one call covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "grant", rename_all = "snake_case")]
pub enum GrantScope {
    /// Every call of the tool (tools that run no command).
    Tool,
    /// Every call of one action of the tool (`background_shell` `kill`).
    Action {
        /// The action's name.
        action: String,
    },
    /// Commands whose every simple command has one of these keys (sorted, deduplicated,
    /// never empty): the call is covered when each key is granted, and granting the call
    /// grants each key.
    Commands {
        /// The keys.
        keys: Vec<CommandKey>,
    },
    /// No session grant may cover this call: an `allow_for_session` answer allows it once.
    OneCall {
        /// Why, for the person asked (`it runs code given with -e`).
        why: String,
    },
}

/// What an `allow_for_session` grant covers: a tool and a [`GrantScope`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GrantKey {
    /// The tool.
    pub tool_name: String,
    /// What of the tool.
    #[serde(flatten)]
    pub scope: GrantScope,
}

impl GrantKey {
    /// A grant of the whole tool.
    #[must_use]
    pub fn tool(tool_name: impl Into<String>) -> Self {
        Self {
            tool_name: tool_name.into(),
            scope: GrantScope::Tool,
        }
    }

    /// A grant of one action of a tool.
    #[must_use]
    pub fn action(tool_name: impl Into<String>, action: impl Into<String>) -> Self {
        Self {
            tool_name: tool_name.into(),
            scope: GrantScope::Action {
                action: action.into(),
            },
        }
    }

    /// A grant of command keys (sorted and deduplicated here); no keys is a one-call key.
    #[must_use]
    pub fn commands(
        tool_name: impl Into<String>,
        keys: impl IntoIterator<Item = CommandKey>,
    ) -> Self {
        Self {
            tool_name: tool_name.into(),
            scope: GrantScope::commands(keys),
        }
    }

    /// A grant of one command key, written as text: `GrantKey::command("bash", "cargo test")`.
    #[must_use]
    pub fn command(tool_name: impl Into<String>, key: &str) -> Self {
        Self::commands(tool_name, [CommandKey::parse(key)])
    }

    /// A key no session grant may cover (approvals allow one call at a time), and why.
    #[must_use]
    pub fn one_call(tool_name: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            tool_name: tool_name.into(),
            scope: GrantScope::OneCall { why: why.into() },
        }
    }

    /// Whether a session grant may be recorded for this key.
    #[must_use]
    pub const fn session_grantable(&self) -> bool {
        !matches!(self.scope, GrantScope::OneCall { .. })
    }

    /// Why the call can be allowed only once, when it can.
    #[must_use]
    pub fn one_call_reason(&self) -> Option<&str> {
        match &self.scope {
            GrantScope::OneCall { why } => Some(why),
            GrantScope::Tool | GrantScope::Action { .. } | GrantScope::Commands { .. } => None,
        }
    }

    /// What an `allow_for_session` answer would allow later, in words, for prompts; `None`
    /// for a one-call key.
    ///
    /// ```
    /// use kun_ports::{CommandKey, GrantKey};
    /// let key = GrantKey::commands("bash", [CommandKey::parse("cargo test"), CommandKey::parse("tail")]);
    /// assert_eq!(
    ///     key.session_grant_text().as_deref(),
    ///     Some("later `bash` commands made only of `cargo test` and `tail`, with plain arguments"),
    /// );
    /// assert_eq!(GrantKey::tool("write").session_grant_text().as_deref(), Some("every later `write` call"));
    /// assert_eq!(GrantKey::one_call("bash", "it runs code given with -e").session_grant_text(), None);
    /// ```
    #[must_use]
    pub fn session_grant_text(&self) -> Option<String> {
        let tool = &self.tool_name;
        match &self.scope {
            GrantScope::Tool => Some(format!("every later `{tool}` call")),
            GrantScope::Action { action } => Some(format!("every later `{tool}` `{action}`")),
            GrantScope::Commands { keys } => {
                let names: Vec<String> = keys.iter().map(|key| format!("`{key}`")).collect();
                let list = match names.split_last() {
                    Some((last, [])) => last.clone(),
                    Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                    None => String::new(),
                };
                Some(format!(
                    "later `{tool}` commands made only of {list}, with plain arguments"
                ))
            }
            GrantScope::OneCall { .. } => None,
        }
    }
}

impl GrantScope {
    /// The scope of these command keys, sorted and deduplicated; no keys is one call only.
    #[must_use]
    pub fn commands(keys: impl IntoIterator<Item = CommandKey>) -> Self {
        let mut keys: Vec<CommandKey> = keys.into_iter().collect();
        keys.sort();
        keys.dedup();
        if keys.is_empty() {
            Self::OneCall {
                why: "it names no command".to_owned(),
            }
        } else {
            Self::Commands { keys }
        }
    }
}

/// Whether a command only reads and is plain enough to run unasked under `untrusted`
/// (when it runs confined).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CommandSafety {
    /// Every part is a known read-only program with plain arguments inside the workspace.
    KnownSafe,
    /// Anything else.
    #[default]
    NotKnownSafe,
}

/// What a command tool says about one call, for the gates (its `approval_scope`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandApproval {
    /// What an `allow_for_session` grant of this call covers.
    pub grant: GrantScope,
    /// Whether the command is known safe (the `untrusted` policy's allow-list).
    pub safety: CommandSafety,
    /// Whether the call asks to run outside the sandbox.
    pub sandbox: SandboxRequest,
    /// The call's reason for running unconfined, shown to whoever approves it.
    pub justification: Option<String>,
}

impl CommandApproval {
    /// A call of one action of a tool (`background_shell` `read`): confined, with `safety`.
    #[must_use]
    pub fn action(action: impl Into<String>, safety: CommandSafety) -> Self {
        Self {
            grant: GrantScope::Action {
                action: action.into(),
            },
            safety,
            sandbox: SandboxRequest::Confined,
            justification: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn command_keys_are_sorted_and_deduplicated() {
        let key = GrantKey::commands(
            "bash",
            ["tail", "cargo test", "tail"].map(CommandKey::parse),
        );
        assert_eq!(
            key.scope,
            GrantScope::Commands {
                keys: vec![CommandKey::parse("cargo test"), CommandKey::parse("tail")]
            }
        );
        assert!(key.session_grantable());
        assert!(!GrantKey::commands("bash", []).session_grantable());
    }

    #[test]
    fn keys_serialise_flat_with_a_tag() {
        let key = GrantKey::command("bash", "cargo test");
        assert_eq!(
            serde_json::to_value(&key).unwrap(),
            json!({"tool_name": "bash", "grant": "commands", "keys": [{"program": "cargo", "subcommand": "test"}]})
        );
        let once = GrantKey::one_call("bash", "it runs code");
        let round: GrantKey = serde_json::from_value(serde_json::to_value(&once).unwrap()).unwrap();
        assert_eq!(round, once);
        assert_eq!(round.one_call_reason(), Some("it runs code"));
    }

    #[test]
    fn the_session_text_names_every_key() {
        let three = GrantKey::commands("bash", ["ls", "grep", "cargo test"].map(CommandKey::parse));
        assert_eq!(
            three.session_grant_text().as_deref(),
            Some(
                "later `bash` commands made only of `cargo test`, `grep` and `ls`, with plain arguments"
            )
        );
        assert_eq!(
            GrantKey::action("background_shell", "kill")
                .session_grant_text()
                .as_deref(),
            Some("every later `background_shell` `kill`")
        );
    }
}
