//! The small closed vocabularies every crate speaks: provider kinds, tool kinds, policies and
//! modes. Each serialises to the name the SPEC uses (`built-in`, `tool_call`, `on-request`, …)
//! and parses back from it, so configuration files and command-line flags use the same words.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Declares a closed string enum with `as_str`, `Display`, `FromStr`, `ALL` and serde names.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident { $( $(#[$vmeta:meta])* $variant:ident => $text:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        $vis enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The name used in configuration, flags and JSON.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownName {
                        kind: stringify!($name),
                        given: s.to_owned(),
                        expected: &[$($text),+],
                    }),
                }
            }
        }
    };
}

/// A string that names no value of a closed vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{given}`; expected one of: {}", expected.join(", "))]
pub struct UnknownName {
    /// The vocabulary, e.g. `SandboxMode`.
    pub kind: &'static str,
    /// What was given.
    pub given: String,
    /// The accepted names.
    pub expected: &'static [&'static str],
}

named_enum! {
    /// Where a provider's tools come from. `gui` providers are listed only for GUI clients;
    /// `mcp`, `web`, `image`, `audio` and `video` are network-backed (see
    /// [`ProviderKind::is_network_backed`]).
    pub enum ProviderKind {
        /// Tools compiled into the host (read, grep, edit, bash, …).
        BuiltIn => "built-in",
        /// Tools of a third-party MCP server.
        Mcp => "mcp",
        /// Web fetch and search.
        Web => "web",
        /// Skill loading.
        Skill => "skill",
        /// Long-term memory.
        Memory => "memory",
        /// Tools that need a graphical client (goals and todos); listed only for a GUI
        /// client surface.
        Gui => "gui",
        /// Sub-agent delegation.
        Delegation => "delegation",
        /// Image generation.
        Image => "image",
        /// Speech and music generation.
        Audio => "audio",
        /// Video generation.
        Video => "video",
        /// Host-defined extensions.
        Extension => "extension",
    }
}

impl ProviderKind {
    /// Whether the provider's tools talk to a remote service. Only their outputs go through
    /// rate-limit normalisation (SPEC §4 step 17): a local file that says "too many requests"
    /// is just a file.
    #[must_use]
    pub const fn is_network_backed(self) -> bool {
        matches!(
            self,
            Self::Mcp | Self::Web | Self::Image | Self::Audio | Self::Video
        )
    }
}

named_enum! {
    /// What a tool does to the world: the **only** discriminator the sandbox looks at.
    pub enum ToolKind {
        /// Reads or computes; changes nothing.
        ToolCall => "tool_call",
        /// Changes files in process.
        FileChange => "file_change",
        /// Runs a process (or acts outside our confinement, like an MCP tool).
        CommandExecution => "command_execution",
    }
}

named_enum! {
    /// A tool's own approval policy (the column of the approval matrix).
    pub enum ToolPolicy {
        /// Runs without a prompt unless the runtime policy asks for one.
        Auto => "auto",
        /// Prompts under the usual runtime policies.
        OnRequest => "on-request",
        /// Like on-request; kept distinct for hosts that render suggestions.
        Suggest => "suggest",
        /// Always refused: calling it is a caller fault (`Err`).
        Never => "never",
        /// Output from an untrusted source; prompts under every prompting policy.
        Untrusted => "untrusted",
    }
}

named_enum! {
    /// Whether a tool is known to only read. Only `read-only` matters: it admits the tool in
    /// plan mode.
    pub enum SideEffect {
        /// Changes nothing.
        ReadOnly => "read-only",
        /// May change something.
        Unknown => "unknown",
    }
}

named_enum! {
    /// Gate one: where tools may read, write and run (SPEC §5).
    #[derive(Default)]
    pub enum SandboxMode {
        /// Reads only; no file changes, no commands.
        ReadOnly => "read-only",
        /// Writes inside the workspace roots; commands run confined or with approval.
        #[default]
        WorkspaceWrite => "workspace-write",
        /// No restrictions.
        DangerFullAccess => "danger-full-access",
        /// An outer sandbox is assumed; in-process writes and host commands are refused.
        ExternalSandbox => "external-sandbox",
    }
}

named_enum! {
    /// Gate two: the runtime's approval policy (the row of the approval matrix, SPEC §6).
    #[derive(Default)]
    pub enum ApprovalPolicy {
        /// Prompt for every tool.
        Always => "always",
        /// Prompt for tools whose policy is not `auto`.
        #[default]
        OnRequest => "on-request",
        /// Same prompts as on-request.
        Suggest => "suggest",
        /// Prompt for everything except allow-listed `auto` tools.
        Untrusted => "untrusted",
        /// Never prompt: anything that would prompt is blocked.
        Never => "never",
        /// Never prompt: run what the sandbox allows.
        Auto => "auto",
    }
}

named_enum! {
    /// Whether the thread is acting or planning. Plan mode lists only the plan whitelist.
    #[derive(Default)]
    pub enum ThreadMode {
        /// Normal work.
        #[default]
        Agent => "agent",
        /// Investigation and planning only.
        Plan => "plan",
    }
}

named_enum! {
    /// The kind of client driving the turn. `gui` providers need `Gui`.
    #[derive(Default)]
    pub enum ClientSurface {
        /// A graphical client.
        Gui => "gui",
        /// A terminal UI.
        Tui => "tui",
        /// A command line.
        Cli => "cli",
        /// A programmatic API (the default).
        #[default]
        Api => "api",
        /// An instant-messaging bridge.
        Im => "im",
        /// An editor or browser extension.
        Extension => "extension",
    }
}

named_enum! {
    /// An input modality the model accepts.
    pub enum Modality {
        /// Text.
        Text => "text",
        /// Images.
        Image => "image",
        /// Audio.
        Audio => "audio",
    }
}

/// A provider's switches: `enabled` is the user's choice, `available` the backend's state.
/// Off and broken are different things, and diagnostics say which.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderPolicy {
    /// The user's switch.
    pub enabled: bool,
    /// Whether the backend can serve calls now.
    pub available: bool,
    /// Why the provider is disabled or unavailable, for diagnostics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ProviderPolicy {
    /// Enabled and available.
    #[must_use]
    pub const fn ready() -> Self {
        Self {
            enabled: true,
            available: true,
            reason: None,
        }
    }

    /// Turned off by the user.
    #[must_use]
    pub fn disabled(reason: impl Into<String>) -> Self {
        Self {
            enabled: false,
            available: true,
            reason: Some(reason.into()),
        }
    }

    /// Enabled but its backend cannot serve.
    #[must_use]
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Self {
            enabled: true,
            available: false,
            reason: Some(reason.into()),
        }
    }

    /// Whether its tools may be listed and called.
    #[must_use]
    pub const fn is_usable(&self) -> bool {
        self.enabled && self.available
    }
}

impl Default for ProviderPolicy {
    fn default() -> Self {
        Self::ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_str_and_json() {
        for mode in SandboxMode::ALL {
            assert_eq!(mode.as_str().parse::<SandboxMode>().unwrap(), *mode);
            let json = serde_json::to_string(mode).unwrap();
            assert_eq!(json, format!("\"{}\"", mode.as_str()));
        }
        for kind in ProviderKind::ALL {
            assert_eq!(kind.as_str().parse::<ProviderKind>().unwrap(), *kind);
        }
        assert_eq!(ToolKind::FileChange.as_str(), "file_change");
        assert_eq!(ApprovalPolicy::OnRequest.as_str(), "on-request");
    }

    #[test]
    fn unknown_names_list_the_choices() {
        let err = "full".parse::<SandboxMode>().unwrap_err();
        let text = err.to_string();
        assert!(text.contains("`full`"), "{text}");
        assert!(text.contains("workspace-write"), "{text}");
    }

    #[test]
    fn defaults_are_the_safe_ones() {
        assert_eq!(SandboxMode::default(), SandboxMode::WorkspaceWrite);
        assert_eq!(ApprovalPolicy::default(), ApprovalPolicy::OnRequest);
    }

    #[test]
    fn network_backed_kinds() {
        let net: Vec<_> = ProviderKind::ALL
            .iter()
            .filter(|k| k.is_network_backed())
            .map(|k| k.as_str())
            .collect();
        assert_eq!(net, ["mcp", "web", "image", "audio", "video"]);
    }
}
