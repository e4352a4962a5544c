//! Where a server may be used: visible ∧ trusted, for the turn's primary workspace root.
//!
//! * **Visible**: `workspace_roots` is empty, or the workspace lies inside one of them.
//! * **Trusted**: decided by [`McpTrust::vouch`](crate::McpTrust::vouch) (see
//!   [`trust`](crate::trust)): a user definition by its `trust_scope` (`user` everywhere,
//!   `workspace` inside `trusted_workspace_roots`); a workspace definition only when the user
//!   trusts the workspace or pinned the definition — otherwise nowhere.
//!
//! "Inside" compares whole path components after lexical normalisation (`.` dropped, `..`
//! folded, trailing `/` ignored): `/work/app` is inside `/work`, `/work-other` is not. Checked
//! when the catalog is listed and again when a call is resolved and run
//! ([`Tool::should_advertise`](kun_ports::Tool::should_advertise) and the tool itself).
//!
//! ```
//! use kun_mcp::{McpServerConfig, McpTrust, TrustScope, access::{ServerAccess, AccessDenied}};
//! let config = McpServerConfig::stdio("db", "db-mcp").with_trust(TrustScope::Workspace, ["/work/app"]);
//! let access = ServerAccess::new(&config, &McpTrust::default());
//! assert_eq!(access.check(Some("/work/app/sub".as_ref())), Ok(()));
//! assert_eq!(access.check(Some("/work/other".as_ref())), Err(AccessDenied::Untrusted));
//! ```

use crate::config::{McpServerConfig, TrustScope};
use crate::trust::{DefinitionId, McpTrust, Vouch};
use kun_ports::ToolHostContext;
use std::path::{Component, Path, PathBuf};

/// Why a server cannot be used in a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessDenied {
    /// The workspace is outside the server's `workspace_roots`.
    NotVisible,
    /// A user definition scoped to other workspaces (`trusted_workspace_roots`).
    Untrusted,
    /// A workspace definition nobody vouched for: the workspace is not trusted and the
    /// definition is not pinned.
    Unvouched,
}

impl AccessDenied {
    /// A short machine-readable name: `not_visible`, `untrusted` or `unvouched`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotVisible => "not_visible",
            Self::Untrusted => "untrusted",
            Self::Unvouched => "unvouched",
        }
    }
}

/// Where a server is trusted, decided once from its definition and the user's word.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TrustedIn {
    Everywhere,
    Roots(Vec<PathBuf>),
    Nowhere,
}

/// A server's visibility and trust settings, with paths normalised once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAccess {
    visible_in: Vec<PathBuf>,
    trusted_in: TrustedIn,
    definition: DefinitionId,
}

impl ServerAccess {
    /// The settings of `config` under the user's word `trust`.
    #[must_use]
    pub fn new(config: &McpServerConfig, trust: &McpTrust) -> Self {
        let trusted_in = match trust.vouch(config) {
            Vouch::UserDefinition => match config.trust_scope {
                TrustScope::User => TrustedIn::Everywhere,
                TrustScope::Workspace => TrustedIn::Roots(
                    config
                        .trusted_workspace_roots
                        .iter()
                        .map(|p| normalize(p))
                        .collect(),
                ),
            },
            Vouch::TrustedWorkspace | Vouch::Pinned => TrustedIn::Everywhere,
            Vouch::Unvouched(_) => TrustedIn::Nowhere,
        };
        Self {
            visible_in: config
                .workspace_roots
                .iter()
                .map(|p| normalize(p))
                .collect(),
            trusted_in,
            definition: config.definition_id(),
        }
    }

    /// The settings of a user definition `config` (no workspace trust, no pins).
    #[must_use]
    pub fn from_config(config: &McpServerConfig) -> Self {
        Self::new(config, &McpTrust::default())
    }

    /// The id of the server's definition.
    #[must_use]
    pub const fn definition(&self) -> &DefinitionId {
        &self.definition
    }

    /// A message for the model (and the user) saying why `server` cannot be used and what to
    /// do about it.
    #[must_use]
    pub fn explain(&self, denied: AccessDenied, server: &str, workspace: Option<&Path>) -> String {
        let place = workspace.map_or_else(
            || "without a workspace".to_owned(),
            |w| format!("in workspace `{}`", w.display()),
        );
        match denied {
            AccessDenied::NotVisible => format!(
                "MCP server `{server}` is not enabled {place}: it is configured for other workspaces only (its `workspace_roots`). Add this workspace there to use it here."
            ),
            AccessDenied::Untrusted => format!(
                "MCP server `{server}` is not trusted {place}: your configuration trusts it only in its `trusted_workspace_roots`. Add the workspace there, or set trust_scope = \"user\", to use it."
            ),
            AccessDenied::Unvouched => format!(
                "MCP server `{server}` is defined by the workspace's own configuration (`.kun/config.toml` or `.mcp.json`) and the workspace is not trusted, so it is not started {place}; a workspace definition never inherits the trust of a server of the same name in your user config. To run it, trust the workspace (`kun-tools trust <dir>`), or trust this exact definition by adding `{}` to your user config.",
                self.definition.pin_line()
            ),
        }
    }

    /// Checks a workspace (`None`: the turn has no workspace root). Visibility is checked
    /// first.
    ///
    /// # Errors
    /// Which of the two checks failed.
    pub fn check(&self, workspace: Option<&Path>) -> Result<(), AccessDenied> {
        let workspace = workspace.map(normalize);
        if !self.visible_in.is_empty()
            && !workspace
                .as_ref()
                .is_some_and(|w| self.visible_in.iter().any(|root| w.starts_with(root)))
        {
            return Err(AccessDenied::NotVisible);
        }
        match &self.trusted_in {
            TrustedIn::Everywhere => Ok(()),
            TrustedIn::Nowhere => Err(AccessDenied::Unvouched),
            TrustedIn::Roots(roots) => {
                let trusted = workspace
                    .as_ref()
                    .is_some_and(|w| roots.iter().any(|root| w.starts_with(root)));
                if trusted {
                    Ok(())
                } else {
                    Err(AccessDenied::Untrusted)
                }
            }
        }
    }

    /// Whether a workspace definition nobody vouched for (refused wherever it is used).
    #[must_use]
    pub fn is_unvouched(&self) -> bool {
        self.trusted_in == TrustedIn::Nowhere
    }

    /// Checks the primary workspace root of a turn.
    ///
    /// # Errors
    /// As [`ServerAccess::check`].
    pub fn check_context(&self, ctx: &ToolHostContext) -> Result<(), AccessDenied> {
        self.check(ctx.workspace_roots.first().map(PathBuf::as_path))
    }
}

/// Lexical normalisation: `.` dropped, `..` folded (never above the root), trailing separators
/// gone. No file-system access.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(scope: TrustScope, trusted: &[&str], visible: &[&str]) -> ServerAccess {
        let config = McpServerConfig::stdio("s", "cmd")
            .with_trust(scope, trusted.iter().copied())
            .visible_in(visible.iter().copied());
        ServerAccess::from_config(&config)
    }

    #[test]
    fn access_table() {
        use AccessDenied::{NotVisible, Untrusted};
        // (scope, trusted roots, visible roots, workspace) → verdict
        type Case<'a> = (
            TrustScope,
            &'a [&'a str],
            &'a [&'a str],
            Option<&'a str>,
            Result<(), AccessDenied>,
        );
        let cases: &[Case<'_>] = &[
            (TrustScope::User, &[], &[], Some("/any"), Ok(())),
            (TrustScope::User, &[], &[], None, Ok(())),
            (
                TrustScope::Workspace,
                &[],
                &[],
                Some("/any"),
                Err(Untrusted),
            ),
            (
                TrustScope::Workspace,
                &["/work"],
                &[],
                Some("/work"),
                Ok(()),
            ),
            (
                TrustScope::Workspace,
                &["/work/"],
                &[],
                Some("/work/app"),
                Ok(()),
            ),
            (
                TrustScope::Workspace,
                &["/work"],
                &[],
                Some("/work-other"),
                Err(Untrusted),
            ),
            (
                TrustScope::Workspace,
                &["/work"],
                &[],
                Some("/work/../etc"),
                Err(Untrusted),
            ),
            (
                TrustScope::Workspace,
                &["/work"],
                &[],
                Some("/work/./a/../b"),
                Ok(()),
            ),
            (TrustScope::Workspace, &["/work"], &[], None, Err(Untrusted)),
            (TrustScope::User, &[], &["/proj"], Some("/proj/x"), Ok(())),
            (
                TrustScope::User,
                &[],
                &["/proj"],
                Some("/elsewhere"),
                Err(NotVisible),
            ),
            (TrustScope::User, &[], &["/proj"], None, Err(NotVisible)),
            // Visibility is reported before trust.
            (
                TrustScope::Workspace,
                &[],
                &["/proj"],
                Some("/elsewhere"),
                Err(NotVisible),
            ),
        ];
        for (scope, trusted, visible, workspace, want) in cases {
            let got = access(*scope, trusted, visible).check(workspace.map(Path::new));
            assert_eq!(
                got, *want,
                "{scope:?} trusted={trusted:?} visible={visible:?} ws={workspace:?}"
            );
        }
    }

    #[test]
    fn messages_say_what_to_do() {
        let a = access(TrustScope::Workspace, &[], &[]);
        let text = a.explain(AccessDenied::Untrusted, "db", Some(Path::new("/w")));
        assert!(
            text.contains("`db`")
                && text.contains("not trusted")
                && text.contains("trusted_workspace_roots"),
            "{text}"
        );
        let text = a.explain(AccessDenied::NotVisible, "db", None);
        assert!(
            text.contains("without a workspace") && text.contains("workspace_roots"),
            "{text}"
        );
    }

    /// A workspace definition: refused unless the workspace is trusted or the definition
    /// pinned, whatever its own `trust_scope` says; the message carries the pin line.
    #[test]
    fn workspace_definitions_need_the_users_word() {
        use crate::trust::{DefinedBy, WorkspaceStanding};
        let config = McpServerConfig::stdio("helper", "./evil.sh")
            .defined_by(DefinedBy::Workspace)
            .with_trust(TrustScope::User, ["/w"]);
        let id = config.definition_id();
        let untrusted = ServerAccess::new(&config, &McpTrust::default());
        assert_eq!(
            untrusted.check(Some(Path::new("/w"))),
            Err(AccessDenied::Unvouched)
        );
        assert_eq!(untrusted.check(None), Err(AccessDenied::Unvouched));
        assert!(untrusted.is_unvouched());
        let text = untrusted.explain(AccessDenied::Unvouched, "helper", Some(Path::new("/w")));
        assert!(
            text.contains(&id.pin_line()) && text.contains("kun-tools trust"),
            "{text}"
        );
        let trusted = McpTrust::new(WorkspaceStanding::Trusted, []);
        assert_eq!(
            ServerAccess::new(&config, &trusted).check(Some(Path::new("/x"))),
            Ok(())
        );
        let pinned = McpTrust::new(WorkspaceStanding::Untrusted, [id]);
        assert_eq!(
            ServerAccess::new(&config, &pinned).check(Some(Path::new("/x"))),
            Ok(())
        );
    }

    #[test]
    fn context_uses_the_primary_root() {
        let a = access(TrustScope::Workspace, &["/trusted"], &[]);
        let ctx = ToolHostContext::builder("t", "u")
            .workspace("/other")
            .workspace("/trusted")
            .build();
        assert_eq!(a.check_context(&ctx), Err(AccessDenied::Untrusted));
        let ctx = ToolHostContext::builder("t", "u")
            .workspace("/trusted/x")
            .build();
        assert_eq!(a.check_context(&ctx), Ok(()));
    }
}
