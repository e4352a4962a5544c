//! Who vouches for an MCP server. Trust follows the server's **definition**, never its name.
//!
//! A definition is what decides what runs: the name and the transport (stdio `command`,
//! `args`, `env`, `cwd`; streamable-HTTP `url`, `headers`). Its [`DefinitionId`] is
//! `<name>:<hash>`, the hash being BLAKE3 over a versioned canonical form of those fields.
//!
//! | defined by ([`DefinedBy`]) | trusted when |
//! |---|---|
//! | the user (user config, `--config`, the embedding program) | its `trust_scope` says so: `user` everywhere, `workspace` inside its `trusted_workspace_roots` |
//! | the workspace (`.kun/config.toml`, `.mcp.json`) | the user trusts the workspace ([`WorkspaceStanding::Trusted`]), or pins this exact definition (`[trust] mcp_servers = ["<name>:<hash>"]` in the user config) |
//!
//! Invariants:
//! * A workspace definition never inherits the trust of a user definition with the same name
//!   (a repository that redefines `helper` gets a new [`DefinitionId`], and a pin of the old
//!   one does not cover it).
//! * A workspace definition's own `trust_scope` and `trusted_workspace_roots` are ignored: a
//!   repository cannot vouch for itself.
//! * A pin trusts the definition, not the files it runs: `command = "./server.sh"` pinned
//!   keeps running whatever `server.sh` becomes. Pin programs you installed.
//!
//! ```
//! use kun_mcp::{DefinedBy, McpServerConfig, McpTrust, Vouch, WorkspaceStanding};
//! let helper = McpServerConfig::stdio("helper", "./evil.sh").defined_by(DefinedBy::Workspace);
//! let untrusted = McpTrust::new(WorkspaceStanding::Untrusted, []);
//! let id = helper.definition_id();
//! assert_eq!(untrusted.vouch(&helper), Vouch::Unvouched(id.clone()));
//! let pinned = McpTrust::new(WorkspaceStanding::Untrusted, [id]);
//! assert_eq!(pinned.vouch(&helper), Vouch::Pinned);
//! ```

use crate::config::{McpServerConfig, TransportConfig};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeSet;
use std::fmt;

/// Hex characters of the hash in a [`DefinitionId`] (128 bits).
const HASH_HEX_LEN: usize = 32;

/// The canonical form's version: bump it when the form changes (every pin is then void).
const FORM: &str = "kun-mcp-definition-v1";

/// Who wrote a server's definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefinedBy {
    /// The user's own configuration (or the program embedding kun-mcp).
    #[default]
    User,
    /// A workspace's `.kun/config.toml` or `.mcp.json`: the repository, not the user.
    Workspace,
}

/// Whether the user trusts the workspace the servers run for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceStanding {
    /// Not trusted: its own server definitions run only when pinned.
    #[default]
    Untrusted,
    /// Trusted by the user (`[trust] workspaces`, `kun-tools trust`, `--trust-workspace`):
    /// its definitions count as the user's own.
    Trusted,
}

/// `<name>:<hash>`: one exact server definition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DefinitionId(String);

impl DefinitionId {
    /// The id of `config`'s definition.
    ///
    /// ```
    /// use kun_mcp::McpServerConfig;
    /// let a = McpServerConfig::stdio("helper", "/bin/true").definition_id();
    /// let b = McpServerConfig::stdio("helper", "./evil.sh").definition_id();
    /// assert_ne!(a, b);
    /// assert!(a.as_str().starts_with("helper:"));
    /// ```
    #[must_use]
    pub fn of(config: &McpServerConfig) -> Self {
        let transport = match &config.transport {
            TransportConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => json!({"type": "stdio", "command": command, "args": args, "env": env, "cwd": cwd}),
            TransportConfig::StreamableHttp { url, headers } => {
                json!({"type": "streamable_http", "url": url, "headers": headers})
            }
        };
        let canonical = json!({"form": FORM, "name": config.name, "transport": transport});
        let hash = blake3::hash(canonical.to_string().as_bytes()).to_hex();
        Self(format!("{}:{}", config.name, &hash[..HASH_HEX_LEN]))
    }

    /// Parses `<name>:<hash>` as written in `[trust] mcp_servers`.
    ///
    /// # Errors
    /// A text without a name, or whose hash is not 32 lowercase hex characters.
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some((name, hash)) = text.rsplit_once(':') else {
            return Err(format!(
                "`{text}` is not `<server name>:<hash>`; `kun-tools doctor` prints the exact entry for a refused server"
            ));
        };
        let hex = hash.len() == HASH_HEX_LEN
            && hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if name.is_empty() || !hex {
            return Err(format!(
                "`{text}` is not `<server name>:<hash>` with a {HASH_HEX_LEN}-character hex hash; `kun-tools doctor` prints the exact entry for a refused server"
            ));
        }
        Ok(Self(text.to_owned()))
    }

    /// The text, `<name>:<hash>`.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The line that pins this definition in the user config.
    ///
    /// ```
    /// let id = kun_mcp::McpServerConfig::stdio("db", "db-mcp").definition_id();
    /// assert_eq!(id.pin_line(), format!("[trust] mcp_servers = [\"{}\"]", id.as_str()));
    /// ```
    #[must_use]
    pub fn pin_line(&self) -> String {
        format!("[trust] mcp_servers = [{}]", json!(self.0))
    }
}

impl fmt::Display for DefinitionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for DefinitionId {
    type Error = String;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::parse(&text)
    }
}

impl From<DefinitionId> for String {
    fn from(id: DefinitionId) -> Self {
        id.0
    }
}

/// Why a server may run, or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Vouch {
    /// A user definition: its `trust_scope` and `trusted_workspace_roots` decide where.
    UserDefinition,
    /// A workspace definition in a workspace the user trusts.
    TrustedWorkspace,
    /// A workspace definition the user pinned by its id.
    Pinned,
    /// A workspace definition nobody vouched for: never started, never called.
    Unvouched(DefinitionId),
}

/// The user's word on workspace definitions: the workspace's standing and the pinned ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpTrust {
    workspace: WorkspaceStanding,
    pinned: BTreeSet<DefinitionId>,
}

impl McpTrust {
    /// Trust for a workspace of this standing, with these pinned definitions.
    #[must_use]
    pub fn new(
        workspace: WorkspaceStanding,
        pinned: impl IntoIterator<Item = DefinitionId>,
    ) -> Self {
        Self {
            workspace,
            pinned: pinned.into_iter().collect(),
        }
    }

    /// The workspace's standing.
    #[must_use]
    pub const fn workspace(&self) -> WorkspaceStanding {
        self.workspace
    }

    /// Who vouches for `config` (see the module table).
    #[must_use]
    pub fn vouch(&self, config: &McpServerConfig) -> Vouch {
        match config.defined_by {
            DefinedBy::User => Vouch::UserDefinition,
            DefinedBy::Workspace if self.workspace == WorkspaceStanding::Trusted => {
                Vouch::TrustedWorkspace
            }
            DefinedBy::Workspace => {
                let id = config.definition_id();
                if self.pinned.contains(&id) {
                    Vouch::Pinned
                } else {
                    Vouch::Unvouched(id)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Every field of the definition changes the id; what is not part of it does not.
    #[test]
    fn the_id_covers_exactly_the_definition() {
        let base = McpServerConfig::stdio("s", "cmd")
            .with_args(["a"])
            .with_env("K", "v");
        let id = base.definition_id();
        let changed: Vec<McpServerConfig> = vec![
            McpServerConfig::stdio("t", "cmd")
                .with_args(["a"])
                .with_env("K", "v"),
            McpServerConfig::stdio("s", "cmd2")
                .with_args(["a"])
                .with_env("K", "v"),
            McpServerConfig::stdio("s", "cmd")
                .with_args(["b"])
                .with_env("K", "v"),
            McpServerConfig::stdio("s", "cmd")
                .with_args(["a"])
                .with_env("K", "w"),
            McpServerConfig::stdio("s", "cmd")
                .with_args(["a"])
                .with_env("L", "v"),
            {
                let mut c = base.clone();
                if let TransportConfig::Stdio { cwd, .. } = &mut c.transport {
                    *cwd = Some(PathBuf::from("/elsewhere"));
                }
                c
            },
            McpServerConfig::http("s", "http://127.0.0.1:1/mcp"),
        ];
        for other in &changed {
            assert_ne!(other.definition_id(), id, "{other:?}");
        }
        let http = McpServerConfig::http("s", "http://127.0.0.1:1/mcp");
        assert_ne!(
            http.definition_id(),
            http.clone()
                .with_header("Authorization", "x")
                .definition_id()
        );
        let same = base
            .clone()
            .enabled(false)
            .defined_by(DefinedBy::Workspace)
            .visible_in(["/w"]);
        assert_eq!(same.definition_id(), id);
        assert_eq!(DefinitionId::parse(id.as_str()), Ok(id));
    }

    #[test]
    fn ids_parse_strictly() {
        let good = format!("helper:{}", "0123456789abcdef".repeat(2));
        assert!(DefinitionId::parse(&good).is_ok());
        for bad in [
            "helper",
            ":0123456789abcdef0123456789abcdef",
            "helper:0123",
            "helper:0123456789ABCDEF0123456789ABCDEF",
        ] {
            let err = DefinitionId::parse(bad).unwrap_err();
            assert!(err.contains("doctor"), "{err}");
        }
    }

    /// (defined by, standing, pinned) → vouch.
    #[test]
    fn vouch_table() {
        let user = McpServerConfig::stdio("s", "cmd");
        let ws = user.clone().defined_by(DefinedBy::Workspace);
        let id = ws.definition_id();
        let cases = [
            (
                &user,
                WorkspaceStanding::Untrusted,
                false,
                Vouch::UserDefinition,
            ),
            (
                &user,
                WorkspaceStanding::Trusted,
                false,
                Vouch::UserDefinition,
            ),
            (
                &ws,
                WorkspaceStanding::Trusted,
                false,
                Vouch::TrustedWorkspace,
            ),
            (&ws, WorkspaceStanding::Untrusted, true, Vouch::Pinned),
            (
                &ws,
                WorkspaceStanding::Untrusted,
                false,
                Vouch::Unvouched(id.clone()),
            ),
        ];
        for (config, standing, pinned, want) in cases {
            let pins = pinned.then(|| id.clone());
            let trust = McpTrust::new(standing, pins);
            assert_eq!(trust.vouch(config), want, "{standing:?} pinned={pinned}");
        }
        // A pin of another definition with the same name does not cover this one.
        let other = McpServerConfig::stdio("s", "other").definition_id();
        let trust = McpTrust::new(WorkspaceStanding::Untrusted, [other]);
        assert_eq!(trust.vouch(&ws), Vouch::Unvouched(id));
    }
}
