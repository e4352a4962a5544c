//! Where a server may be used: visible ∧ trusted, for the turn's primary workspace root.
//!
//! * **Visible**: `workspace_roots` is empty, or the workspace lies inside one of them.
//! * **Trusted**: the trust scope is `user`, or the workspace lies inside one of
//!   `trusted_workspace_roots`.
//!
//! "Inside" compares whole path components after lexical normalisation (`.` dropped, `..`
//! folded, trailing `/` ignored): `/work/app` is inside `/work`, `/work-other` is not. Checked
//! when the catalog is listed and again when a call is resolved and run
//! ([`Tool::should_advertise`](kun_ports::Tool::should_advertise) and the tool itself).
//!
//! ```
//! use kun_mcp::{McpServerConfig, TrustScope, access::{ServerAccess, AccessDenied}};
//! let config = McpServerConfig::stdio("db", "db-mcp").with_trust(TrustScope::Workspace, ["/work/app"]);
//! let access = ServerAccess::from_config(&config);
//! assert_eq!(access.check(Some("/work/app/sub".as_ref())), Ok(()));
//! assert_eq!(access.check(Some("/work/other".as_ref())), Err(AccessDenied::Untrusted));
//! ```

use crate::config::{McpServerConfig, TrustScope};
use kun_ports::ToolHostContext;
use std::path::{Component, Path, PathBuf};

/// Why a server cannot be used in a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessDenied {
    /// The workspace is outside the server's `workspace_roots`.
    NotVisible,
    /// The server is workspace-scoped and the workspace is not one it is trusted in.
    Untrusted,
}

impl AccessDenied {
    /// A short machine-readable name: `not_visible` or `untrusted`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotVisible => "not_visible",
            Self::Untrusted => "untrusted",
        }
    }

    /// A message for the model (and the user) saying what to do.
    #[must_use]
    pub fn message(self, server: &str, workspace: Option<&Path>) -> String {
        let place = workspace.map_or_else(
            || "without a workspace".to_owned(),
            |w| format!("in workspace `{}`", w.display()),
        );
        match self {
            Self::NotVisible => format!(
                "MCP server `{server}` is not enabled {place}: it is configured for other workspaces only (its `workspace_roots`). Add this workspace there to use it here."
            ),
            Self::Untrusted => format!(
                "MCP server `{server}` is not trusted {place}: it is workspace-scoped and this workspace is not in its `trusted_workspace_roots`. Add the workspace there, or configure the server in the user config (trust_scope = \"user\"), to use it."
            ),
        }
    }
}

/// A server's visibility and trust settings, with paths normalised once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAccess {
    visible_in: Vec<PathBuf>,
    scope: TrustScope,
    trusted_in: Vec<PathBuf>,
}

impl ServerAccess {
    /// The settings of `config`.
    #[must_use]
    pub fn from_config(config: &McpServerConfig) -> Self {
        Self {
            visible_in: config
                .workspace_roots
                .iter()
                .map(|p| normalize(p))
                .collect(),
            scope: config.trust_scope,
            trusted_in: config
                .trusted_workspace_roots
                .iter()
                .map(|p| normalize(p))
                .collect(),
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
        match self.scope {
            TrustScope::User => Ok(()),
            TrustScope::Workspace => {
                let trusted = workspace
                    .as_ref()
                    .is_some_and(|w| self.trusted_in.iter().any(|root| w.starts_with(root)));
                if trusted {
                    Ok(())
                } else {
                    Err(AccessDenied::Untrusted)
                }
            }
        }
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
        let text = AccessDenied::Untrusted.message("db", Some(Path::new("/w")));
        assert!(
            text.contains("`db`")
                && text.contains("not trusted")
                && text.contains("trusted_workspace_roots"),
            "{text}"
        );
        let text = AccessDenied::NotVisible.message("db", None);
        assert!(
            text.contains("without a workspace") && text.contains("workspace_roots"),
            "{text}"
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
