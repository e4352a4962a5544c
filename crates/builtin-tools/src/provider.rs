//! The built-in provider: every built-in tool, chosen by preset.

use crate::OutputLimits;
use crate::fs::{EditTool, MutationQueue, ReadTool, SendImAttachmentTool, WriteTool};
use crate::git_inspect::GitInspectTool;
use crate::lsp::{LspConfig, LspTool};
use crate::repo_map::RepoMapTool;
use crate::search::{FindTool, GlobTool, GrepTool, LsTool};
use crate::shell::{
    BackgroundLimits, BackgroundShellTool, BashTool, ShellConfig, Timeouts, VerifyChangesTool,
    VerifyConfig,
};
use kun_ports::process::EnvAllowList;
use kun_ports::{
    CommandConfinement, Delegable, ImBridge, NetworkAccess, ProviderKind, ProviderPolicy, Tool,
    ToolProvider,
};
use std::sync::Arc;
use std::time::Duration;

/// Which built-in tools to register (SPEC §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Preset {
    /// Every tool.
    #[default]
    Full,
    /// read, bash, edit, write.
    Coding,
    /// read, grep, glob, find, ls, repo_map, git_inspect.
    ReadOnly,
}

impl Preset {
    /// Whether the preset includes a tool.
    #[must_use]
    pub fn includes(self, name: &str) -> bool {
        match self {
            Self::Full => true,
            Self::Coding => matches!(name, "read" | "bash" | "edit" | "write"),
            Self::ReadOnly => {
                matches!(
                    name,
                    "read" | "grep" | "glob" | "find" | "ls" | "repo_map" | "git_inspect"
                )
            }
        }
    }
}

/// How the built-in tools are configured.
pub struct BuiltinOptions {
    /// Which tools.
    pub preset: Preset,
    /// Output limits for reads and command output.
    pub limits: OutputLimits,
    /// Default `bash` timeout.
    pub bash_timeout: Duration,
    /// How commands (bash, background_shell, verify_changes, lsp servers, git) are confined.
    pub confinement: Arc<dyn CommandConfinement>,
    /// Language servers for `lsp`.
    pub lsp: LspConfig,
    /// Which variables of our environment commands and language servers see: the base list
    /// plus the names of `[shell] env`.
    pub env: EnvAllowList,
    /// Whether confined commands may use the network (`[sandbox] network`).
    pub network: NetworkAccess,
    /// The IM bridge; `send_im_attachment` exists only with one.
    pub im_bridge: Option<Arc<dyn ImBridge>>,
}

impl BuiltinOptions {
    /// Defaults (full preset, 2,000 lines / 50 KiB, 900 s bash timeout) with this confinement.
    #[must_use]
    pub fn new(confinement: Arc<dyn CommandConfinement>) -> Self {
        Self {
            preset: Preset::Full,
            limits: OutputLimits::default(),
            bash_timeout: Duration::from_secs(900),
            confinement,
            lsp: LspConfig::default(),
            env: EnvAllowList::default(),
            network: NetworkAccess::Disabled,
            im_bridge: None,
        }
    }
}

impl std::fmt::Debug for BuiltinOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinOptions")
            .field("preset", &self.preset)
            .field("limits", &self.limits)
            .field("bash_timeout", &self.bash_timeout)
            .field("im_bridge", &self.im_bridge.is_some())
            .finish_non_exhaustive()
    }
}

/// The `builtin` provider (kind `built-in`). Delegable: a child agent may receive it.
///
/// ```
/// use std::sync::Arc;
/// use kun_builtin_tools::{BuiltinOptions, BuiltinProvider, Preset};
/// use kun_ports::ToolProvider;
/// use kun_sandbox::NoConfinement;
///
/// let mut options = BuiltinOptions::new(Arc::new(NoConfinement));
/// options.preset = Preset::ReadOnly;
/// let provider = BuiltinProvider::new(options);
/// let names: Vec<String> = provider.tools().iter().map(|t| t.spec().name.clone()).collect();
/// assert_eq!(names, ["read", "grep", "glob", "find", "ls", "repo_map", "git_inspect"]);
/// ```
pub struct BuiltinProvider {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for BuiltinProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.spec().name.clone()))
            .finish()
    }
}

impl BuiltinProvider {
    /// Builds the tools of the preset.
    #[must_use]
    pub fn new(options: BuiltinOptions) -> Self {
        let limits = options.limits;
        let confinement = options.confinement;
        let shell = ShellConfig {
            limits,
            timeouts: Timeouts {
                default: options.bash_timeout,
                ..Timeouts::default()
            },
            network: options.network,
            env: options.env.clone(),
            ..ShellConfig::default()
        };
        let queue = Arc::new(MutationQueue::default());
        let mut tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(ReadTool::new(limits)),
            Arc::new(GrepTool::new(limits)),
            Arc::new(GlobTool::new(limits)),
            Arc::new(FindTool::new(limits)),
            Arc::new(LsTool::new(limits)),
            Arc::new(RepoMapTool::new()),
            Arc::new(GitInspectTool::new(Arc::clone(&confinement))),
            Arc::new(LspTool::new(options.lsp, Arc::clone(&confinement)).with_env(options.env)),
            Arc::new(EditTool::new(Arc::clone(&queue))),
            Arc::new(WriteTool::new(queue)),
            Arc::new(BashTool::with_config(
                Arc::clone(&confinement),
                shell.clone(),
            )),
            Arc::new(BackgroundShellTool::with_config(
                Arc::clone(&confinement),
                shell.clone(),
                BackgroundLimits::default(),
            )),
            Arc::new(VerifyChangesTool::with_config(
                confinement,
                shell,
                VerifyConfig::default(),
            )),
        ];
        if let Some(bridge) = options.im_bridge {
            tools.push(Arc::new(SendImAttachmentTool::new(bridge)));
        }
        tools.retain(|tool| options.preset.includes(&tool.spec().name));
        Self { tools }
    }
}

impl ToolProvider for BuiltinProvider {
    fn id(&self) -> &str {
        "builtin"
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::BuiltIn
    }

    fn policy(&self) -> ProviderPolicy {
        ProviderPolicy::ready()
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
}

impl Delegable for BuiltinProvider {}
