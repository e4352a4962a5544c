//! The profiles in effect: built-in < host-supplied < workspace.
//!
//! | a later layer's profile of the same name | host | workspace, trusted | workspace, untrusted |
//! |---|---|---|---|
//! | replaces the earlier one | yes | yes | no: it may only **narrow** it |
//!
//! Narrowing an earlier profile: the tools become the intersection of both (a workspace
//! `explore` that asks for `bash, write` gets neither), the deny lists are united, the text
//! (description, system prompt, model) is the workspace's. A new name from an untrusted
//! workspace is accepted: a child never gets more than its parent anyway
//! ([`child_lists`](crate::child_lists)). Every narrowing that dropped something is a
//! diagnostic.

use crate::agent_file::{Diagnostic, workspace_profiles};
use crate::profile::{AgentProfile, ProfileOrigin, builtin_profiles};
use kun_ports::WorkspaceStanding;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The profiles by name, and the diagnostics of reading them.
#[derive(Debug, Clone, Default)]
pub struct ProfileSet {
    profiles: BTreeMap<String, AgentProfile>,
    diagnostics: Vec<Diagnostic>,
}

/// A profile name `delegate_task` can take: 1–64 of `[A-Za-z0-9_.-]`.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

impl ProfileSet {
    /// The built-in profiles.
    #[must_use]
    pub fn builtin() -> Self {
        Self {
            profiles: builtin_profiles()
                .into_iter()
                .map(|p| (p.name.clone(), p))
                .collect(),
            diagnostics: Vec::new(),
        }
    }

    /// Built-in, then the host's, then the workspace's agent files under `standing`.
    #[must_use]
    pub fn load(workspace: &Path, host: Vec<AgentProfile>, standing: WorkspaceStanding) -> Self {
        let (found, diagnostics) = workspace_profiles(workspace);
        Self::builtin()
            .with_host(host)
            .with_workspace(found, diagnostics, standing)
    }

    /// Adds the host's profiles; each replaces a built-in of the same name.
    #[must_use]
    pub fn with_host(mut self, host: Vec<AgentProfile>) -> Self {
        for mut profile in host {
            profile.origin = ProfileOrigin::Host;
            self.profiles.insert(profile.name.clone(), profile);
        }
        self
    }

    /// Adds the workspace's profiles (see the module docs).
    #[must_use]
    pub fn with_workspace(
        mut self,
        found: Vec<AgentProfile>,
        diagnostics: Vec<Diagnostic>,
        standing: WorkspaceStanding,
    ) -> Self {
        self.diagnostics.extend(diagnostics);
        let mut seen = Vec::new();
        for profile in found {
            let file = match &profile.origin {
                ProfileOrigin::Workspace(path) => path.clone(),
                _ => PathBuf::new(),
            };
            let mut note = |message: String| {
                self.diagnostics.push(Diagnostic {
                    file: file.clone(),
                    message,
                });
            };
            if !valid_name(&profile.name) {
                note(format!(
                    "skipped: the name `{}` must be 1 to 64 letters, digits, `_`, `.` or `-`",
                    profile.name
                ));
                continue;
            }
            if seen.contains(&profile.name) {
                note(format!(
                    "skipped: another workspace agent file already defines `{}`",
                    profile.name
                ));
                continue;
            }
            seen.push(profile.name.clone());
            let merged = match (self.profiles.get(&profile.name), standing) {
                (Some(earlier), WorkspaceStanding::Untrusted) => {
                    narrow(earlier, profile, &mut note)
                }
                _ => profile,
            };
            self.profiles.insert(merged.name.clone(), merged);
        }
        self
    }

    /// A profile by name.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&AgentProfile> {
        self.profiles.get(name)
    }

    /// The profiles, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &AgentProfile> {
        self.profiles.values()
    }

    /// The names, in order.
    #[must_use]
    pub fn names(&self) -> Vec<&str> {
        self.profiles.keys().map(String::as_str).collect()
    }

    /// Problems met reading the workspace's agent files.
    #[must_use]
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}

/// An untrusted workspace profile over an earlier one of the same name.
fn narrow(
    earlier: &AgentProfile,
    workspace: AgentProfile,
    note: &mut impl FnMut(String),
) -> AgentProfile {
    let tools = earlier.tools.narrowed_by(&workspace.tools);
    let asked = workspace.tools.allowed();
    let kept = tools.allowed();
    let dropped: Vec<String> = match (&asked, &kept) {
        (Some(asked), Some(kept)) => asked
            .iter()
            .filter(|n| !kept.contains(n))
            .cloned()
            .collect(),
        (None, Some(_)) => vec!["(inherit)".to_owned()],
        _ => Vec::new(),
    };
    if !dropped.is_empty() {
        note(format!(
            "`{}` asks for {} beyond the {} profile it overrides; an untrusted workspace may \
             narrow a profile, never widen it (trust the workspace with `kun-tools trust DIR` \
             to replace it)",
            workspace.name,
            dropped.join(", "),
            match earlier.origin {
                ProfileOrigin::BuiltIn => "built-in",
                ProfileOrigin::Host => "host",
                ProfileOrigin::Workspace(_) => "earlier",
            }
        ));
    }
    let union = |a: &[String], b: &[String]| {
        let mut all: Vec<String> = a.iter().chain(b).cloned().collect();
        all.sort();
        all.dedup();
        all
    };
    AgentProfile {
        tools,
        blocked_tools: union(&earlier.blocked_tools, &workspace.blocked_tools),
        blocked_mcp_servers: union(&earlier.blocked_mcp_servers, &workspace.blocked_mcp_servers),
        blocked_skills: union(&earlier.blocked_skills, &workspace.blocked_skills),
        ..workspace
    }
}
