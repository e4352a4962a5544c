//! Tool-name lists (`tools.allow`, `tools.deny`, `tools.plan_allow`, `--allow-tools`,
//! `--deny-tools`) checked against the names that exist, so `--deny-tools BASH` or `' bash'`
//! is an error naming the entry and the closest real name instead of denying nothing.
//!
//! Which names exist, decided when the registries are built:
//!
//! | entry | accepted when |
//! |---|---|
//! | a built-in or other registered tool | a provider of this assembly registers it |
//! | a tool of the plan whitelist's defaults, or registered only with an adapter or a usable backend (`send_im_attachment`, `web_search`, `memory_*`) | always: a shared config may name them where the adapter is absent |
//! | `mcp_search`, `mcp_describe`, `mcp_call` | always (the MCP gateway) |
//! | `mcp_<server>_<tool>` | `<server>` is the slug of a configured MCP server: its tools are known only once it connects, so the prefix is checked, not the tool |

use crate::config::{ConfigError, Settings, Source};
use kun_registry::PlanWhitelist;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Tools a provider registers only when its adapter is given.
const OPTIONAL_TOOLS: &[&str] = &[
    "send_im_attachment",
    "web_search",
    "memory_create",
    "memory_update",
    "memory_delete",
    "memory_search",
];

/// The tool names an assembly knows.
#[derive(Debug, Clone)]
pub(crate) struct KnownNames {
    names: BTreeSet<String>,
    mcp_prefixes: Vec<String>,
}

impl KnownNames {
    /// `registered` plus the always-accepted names, and the prefixes of `settings`' MCP
    /// servers.
    pub(crate) fn new(registered: impl IntoIterator<Item = String>, settings: &Settings) -> Self {
        let mut names: BTreeSet<String> = registered.into_iter().collect();
        let always = PlanWhitelist::DEFAULT_NAMES
            .iter()
            .chain(OPTIONAL_TOOLS)
            .chain(&[
                kun_mcp::SEARCH_TOOL,
                kun_mcp::DESCRIBE_TOOL,
                kun_mcp::CALL_TOOL,
            ]);
        names.extend(always.map(|name| (*name).to_owned()));
        // The slugs the MCP names will have: the same cap as `attach_mcp` (a bad cap is
        // refused there, with its own error).
        let limit = crate::mcp::mcp_name_limit(settings).unwrap_or_default();
        let slugs =
            kun_mcp::naming::server_slugs(settings.mcp_servers.keys().map(String::as_str), limit);
        let mcp_prefixes = slugs.values().map(|slug| format!("mcp_{slug}_")).collect();
        Self {
            names,
            mcp_prefixes,
        }
    }

    fn admits(&self, entry: &str) -> bool {
        self.names.contains(entry)
            || self
                .mcp_prefixes
                .iter()
                .any(|prefix| entry.len() > prefix.len() && entry.starts_with(prefix.as_str()))
    }

    /// The closest known name: the same after trimming and lowercasing, else the nearest by
    /// edit distance, transpositions counting one (at most a third of the entry's length).
    fn closest(&self, entry: &str) -> Option<&str> {
        let folded = entry.trim().to_lowercase();
        if let Some(same) = self.names.iter().find(|n| **n == folded) {
            return Some(same);
        }
        let limit = (folded.chars().count() / 3).max(1);
        self.names
            .iter()
            .map(|name| (strsim::osa_distance(&folded, name), name))
            .filter(|(distance, _)| *distance <= limit)
            .min_by_key(|(distance, _)| *distance)
            .map(|(_, name)| name.as_str())
    }

    /// The error for an unknown entry of `key`.
    fn unknown(&self, settings: &Settings, key: &str, entry: &str) -> ConfigError {
        let shown = crate::config::narrowing::render(entry);
        let mut message = if entry.starts_with("mcp_") && !self.names.contains(entry) {
            format!(
                "{shown} names no configured MCP server's tool (MCP tools are `mcp_<server>_<tool>`; configured prefixes: {})",
                if self.mcp_prefixes.is_empty() {
                    "none".to_owned()
                } else {
                    self.mcp_prefixes.join(", ")
                }
            )
        } else {
            format!("{shown} is not a tool")
        };
        match self.closest(entry) {
            Some(name) => message.push_str(&format!("; did you mean `{name}`?")),
            None => {
                let all: Vec<&str> = self.names.iter().map(String::as_str).collect();
                message.push_str(&format!("; the tools are: {}", all.join(", ")));
            }
        }
        let (file, key, line) = match settings.source_of(key) {
            Source::User(p) | Source::Workspace(p) | Source::ConfigFlag(p) | Source::McpJson(p) => {
                let line = std::fs::read_to_string(&p).ok().and_then(|text| {
                    let quoted = serde_json::to_string(entry).unwrap_or_default();
                    text.lines()
                        .position(|l| l.contains(&quoted))
                        .map(|i| i + 1)
                });
                (p, key.to_owned(), line)
            }
            Source::Default | Source::CommandLine => {
                let flag = match key {
                    "tools.allow" => "--allow-tools",
                    "tools.deny" => "--deny-tools",
                    other => other,
                };
                (PathBuf::from("command line"), flag.to_owned(), None)
            }
        };
        ConfigError {
            file,
            line,
            key: Some(key),
            message,
        }
    }
}

/// Checks every entry of the tool lists of `settings`.
///
/// # Errors
/// The first unknown entry, naming where it came from and the closest real name.
pub(crate) fn check(settings: &Settings, known: &KnownNames) -> Result<(), ConfigError> {
    let tools = &settings.tools;
    for (key, list) in [
        ("tools.allow", &tools.allow),
        ("tools.deny", &tools.deny),
        ("tools.plan_allow", &tools.plan_allow),
    ] {
        for entry in list.iter().flatten() {
            if !known.admits(entry) {
                return Err(known.unknown(settings, key, entry));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> KnownNames {
        let mut settings = Settings::defaults(std::path::Path::new("/w"));
        settings
            .mcp_servers
            .insert("github".into(), crate::config::McpServerEntry::default());
        KnownNames::new(["bash".to_owned(), "read".to_owned()], &settings)
    }

    /// (entry, accepted, suggestion)
    #[test]
    fn entries_and_suggestions() {
        let known = known();
        let cases: &[(&str, bool, Option<&str>)] = &[
            ("bash", true, None),
            ("create_plan", true, None),
            ("send_im_attachment", true, None),
            ("mcp_call", true, None),
            ("mcp_github_search_issues", true, None),
            ("mcp_github_", false, None),
            ("mcp_gitlab_x", false, None),
            ("BASH", false, Some("bash")),
            (" bash", false, Some("bash")),
            ("raed", false, Some("read")),
            ("frobnicate", false, None),
        ];
        for (entry, accepted, suggestion) in cases {
            assert_eq!(known.admits(entry), *accepted, "{entry:?}");
            if !accepted {
                assert_eq!(known.closest(entry), *suggestion, "{entry:?}");
            }
        }
    }

    #[test]
    fn flags_are_named_as_flags() {
        let known = known();
        let mut settings = Settings::defaults(std::path::Path::new("/w"));
        settings.tools.deny = Some(vec!["BASH".into()]);
        settings
            .sources
            .insert("tools.deny".into(), Source::CommandLine);
        let err = check(&settings, &known).unwrap_err().to_string();
        assert_eq!(
            err,
            "command line: `--deny-tools`: \"BASH\" is not a tool; did you mean `bash`?"
        );
    }
}
