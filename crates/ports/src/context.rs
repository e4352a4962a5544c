//! The per-turn context a host lists and executes tools in.
//!
//! Build it with [`ToolHostContext::builder`]; every field has a safe default
//! (workspace-write sandbox, on-request approval, agent mode, API surface, no lists).
//!
//! ```
//! use kun_ports::{ApprovalPolicy, SandboxMode, ToolHostContext};
//! let ctx = ToolHostContext::builder("thread-1", "turn-1")
//!     .workspace("/tmp/project")
//!     .sandbox(SandboxMode::ReadOnly)
//!     .approval(ApprovalPolicy::Auto)
//!     .blocked_tools(["bash"])
//!     .build();
//! assert!(ctx.lists.blocked_tool_names.contains("bash"));
//! assert_eq!(ctx.primary_root().to_str(), Some("/tmp/project"));
//! ```

use crate::{
    ApprovalGate, ApprovalPolicy, ClientSurface, Modality, ProgressSink, SandboxMode, ThreadMode,
    UserInputChannel,
};
use rustc_hash::FxHashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A cancellable signal shared by everything working on one turn. Cloning shares it.
#[derive(Clone, Default)]
pub struct AbortSignal(CancellationToken);

impl AbortSignal {
    /// A signal that has not fired.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the signal.
    pub fn abort(&self) {
        self.0.cancel();
    }

    /// Whether it has fired.
    #[must_use]
    pub fn is_aborted(&self) -> bool {
        self.0.is_cancelled()
    }

    /// Completes when the signal fires.
    pub async fn aborted(&self) {
        self.0.cancelled().await;
    }

    /// A child signal: fires with this one, and can also fire alone.
    #[must_use]
    pub fn child(&self) -> Self {
        Self(self.0.child_token())
    }
}

impl fmt::Debug for AbortSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("AbortSignal")
            .field(&self.is_aborted())
            .finish()
    }
}

/// A set of names (tools, providers or skills) with a fast hash, for per-turn lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameSet(FxHashSet<Box<str>>);

impl NameSet {
    /// An empty set.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `name` is in the set.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    /// Adds a name.
    pub fn insert(&mut self, name: impl Into<Box<str>>) {
        self.0.insert(name.into());
    }

    /// Whether the set is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many names it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The names, sorted.
    #[must_use]
    pub fn sorted(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.0.iter().map(AsRef::as_ref).collect();
        names.sort_unstable();
        names
    }

    /// The names in this set that are also in `other`.
    #[must_use]
    pub fn intersect(&self, other: &Self) -> Self {
        Self(
            self.0
                .iter()
                .filter(|n| other.contains(n))
                .cloned()
                .collect(),
        )
    }
}

impl<S: Into<Box<str>>> FromIterator<S> for NameSet {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        Self(iter.into_iter().map(Into::into).collect())
    }
}

/// Allow and deny lists. An allow-list (`Some`) only shrinks what is listed; a deny entry
/// always wins.
#[derive(Debug, Clone, Default)]
pub struct ToolLists {
    /// Only these tools, when set.
    pub allowed_tool_names: Option<NameSet>,
    /// Never these tools.
    pub blocked_tool_names: NameSet,
    /// Only these providers, when set.
    pub allowed_provider_ids: Option<NameSet>,
    /// Never these providers.
    pub blocked_provider_ids: NameSet,
    /// Only these skills, when set.
    pub allowed_skill_ids: Option<NameSet>,
    /// Never these skills.
    pub blocked_skill_ids: NameSet,
}

impl ToolLists {
    /// Whether the lists admit a tool by name (deny first, then the allow-list).
    #[must_use]
    pub fn admits_tool(&self, name: &str) -> bool {
        !self.blocked_tool_names.contains(name)
            && self
                .allowed_tool_names
                .as_ref()
                .is_none_or(|allowed| allowed.contains(name))
    }

    /// Whether the lists admit a provider by id.
    #[must_use]
    pub fn admits_provider(&self, id: &str) -> bool {
        !self.blocked_provider_ids.contains(id)
            && self
                .allowed_provider_ids
                .as_ref()
                .is_none_or(|allowed| allowed.contains(id))
    }
}

/// A plan context: the thread is planning, and `create_plan` may write its one reserved file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanContext {
    /// The directory the plan file must be a direct child of.
    pub plan_dir: PathBuf,
    /// An identifier of the plan operation, checked by `create_plan`.
    pub operation_id: String,
}

/// Everything a host needs to know about the turn it lists and runs tools in.
#[derive(Clone)]
pub struct ToolHostContext {
    /// The conversation thread.
    pub thread_id: String,
    /// The turn within the thread; a turn pins the registry and hooks it started with.
    pub turn_id: String,
    /// Workspace roots; the first is the primary root relative paths resolve against.
    pub workspace_roots: Vec<PathBuf>,
    /// Agent or plan.
    pub thread_mode: ThreadMode,
    /// Set when a plan is being made (plan mode even if `thread_mode` is agent).
    pub plan: Option<PlanContext>,
    /// The kind of client.
    pub client_surface: ClientSurface,
    /// What the model accepts as input.
    pub input_modalities: Vec<Modality>,
    /// Gate one.
    pub sandbox: SandboxMode,
    /// Gate two.
    pub approval: ApprovalPolicy,
    /// Allow and deny lists.
    pub lists: ToolLists,
    /// Skills active this turn.
    pub active_skills: Vec<String>,
    /// Fires when the turn is aborted.
    pub abort: AbortSignal,
    /// Who answers approval prompts; `None` means every prompt is denied (fail closed).
    pub approver: Option<Arc<dyn ApprovalGate>>,
    /// Who answers structured questions to the user, if anyone can.
    pub user_input: Option<Arc<dyn UserInputChannel>>,
    /// Receives streaming updates from running tools.
    pub progress: Option<Arc<dyn ProgressSink>>,
}

impl fmt::Debug for ToolHostContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolHostContext")
            .field("thread_id", &self.thread_id)
            .field("turn_id", &self.turn_id)
            .field("workspace_roots", &self.workspace_roots)
            .field("thread_mode", &self.thread_mode)
            .field("plan", &self.plan)
            .field("client_surface", &self.client_surface)
            .field("sandbox", &self.sandbox)
            .field("approval", &self.approval)
            .field("lists", &self.lists)
            .field("has_approver", &self.approver.is_some())
            .finish_non_exhaustive()
    }
}

impl ToolHostContext {
    /// Starts a builder with safe defaults.
    pub fn builder(
        thread_id: impl Into<String>,
        turn_id: impl Into<String>,
    ) -> ToolHostContextBuilder {
        ToolHostContextBuilder {
            ctx: Self {
                thread_id: thread_id.into(),
                turn_id: turn_id.into(),
                workspace_roots: Vec::new(),
                thread_mode: ThreadMode::default(),
                plan: None,
                client_surface: ClientSurface::default(),
                input_modalities: vec![Modality::Text],
                sandbox: SandboxMode::default(),
                approval: ApprovalPolicy::default(),
                lists: ToolLists::default(),
                active_skills: Vec::new(),
                abort: AbortSignal::new(),
                approver: None,
                user_input: None,
                progress: None,
            },
        }
    }

    /// The primary workspace root (`.` when none was given).
    #[must_use]
    pub fn primary_root(&self) -> &Path {
        self.workspace_roots
            .first()
            .map_or(Path::new("."), PathBuf::as_path)
    }

    /// Whether the turn is planning: plan mode, or a plan context present.
    #[must_use]
    pub fn is_plan_context(&self) -> bool {
        self.thread_mode == ThreadMode::Plan || self.plan.is_some()
    }

    /// The same context for another turn (fresh abort signal, same everything else).
    #[must_use]
    pub fn for_turn(&self, turn_id: impl Into<String>) -> Self {
        let mut next = self.clone();
        next.turn_id = turn_id.into();
        next.abort = AbortSignal::new();
        next
    }
}

/// Builds a [`ToolHostContext`]; see the module docs.
#[derive(Debug)]
#[must_use]
pub struct ToolHostContextBuilder {
    ctx: ToolHostContext,
}

impl ToolHostContextBuilder {
    /// Adds a workspace root (the first one added is primary).
    pub fn workspace(mut self, root: impl Into<PathBuf>) -> Self {
        self.ctx.workspace_roots.push(root.into());
        self
    }

    /// Sets the thread mode.
    pub fn mode(mut self, mode: ThreadMode) -> Self {
        self.ctx.thread_mode = mode;
        self
    }

    /// Sets a plan context.
    pub fn plan(mut self, plan: PlanContext) -> Self {
        self.ctx.plan = Some(plan);
        self
    }

    /// Sets the client surface.
    pub fn surface(mut self, surface: ClientSurface) -> Self {
        self.ctx.client_surface = surface;
        self
    }

    /// Sets the model's input modalities.
    pub fn modalities(mut self, modalities: impl IntoIterator<Item = Modality>) -> Self {
        self.ctx.input_modalities = modalities.into_iter().collect();
        self
    }

    /// Sets the sandbox mode.
    pub fn sandbox(mut self, mode: SandboxMode) -> Self {
        self.ctx.sandbox = mode;
        self
    }

    /// Sets the approval policy.
    pub fn approval(mut self, policy: ApprovalPolicy) -> Self {
        self.ctx.approval = policy;
        self
    }

    /// Replaces all lists.
    pub fn lists(mut self, lists: ToolLists) -> Self {
        self.ctx.lists = lists;
        self
    }

    /// Restricts tools to these names.
    pub fn allowed_tools<S: Into<Box<str>>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.ctx.lists.allowed_tool_names = Some(names.into_iter().collect());
        self
    }

    /// Blocks these tool names.
    pub fn blocked_tools<S: Into<Box<str>>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.ctx.lists.blocked_tool_names = names.into_iter().collect();
        self
    }

    /// Restricts providers to these ids.
    pub fn allowed_providers<S: Into<Box<str>>>(
        mut self,
        ids: impl IntoIterator<Item = S>,
    ) -> Self {
        self.ctx.lists.allowed_provider_ids = Some(ids.into_iter().collect());
        self
    }

    /// Blocks these provider ids.
    pub fn blocked_providers<S: Into<Box<str>>>(
        mut self,
        ids: impl IntoIterator<Item = S>,
    ) -> Self {
        self.ctx.lists.blocked_provider_ids = ids.into_iter().collect();
        self
    }

    /// Sets the active skills.
    pub fn active_skills(mut self, skills: impl IntoIterator<Item = String>) -> Self {
        self.ctx.active_skills = skills.into_iter().collect();
        self
    }

    /// Uses this abort signal.
    pub fn abort(mut self, abort: AbortSignal) -> Self {
        self.ctx.abort = abort;
        self
    }

    /// Sets who answers approval prompts.
    pub fn approver(mut self, gate: Arc<dyn ApprovalGate>) -> Self {
        self.ctx.approver = Some(gate);
        self
    }

    /// Sets who answers user-input questions.
    pub fn user_input(mut self, channel: Arc<dyn UserInputChannel>) -> Self {
        self.ctx.user_input = Some(channel);
        self
    }

    /// Sets where streaming updates go.
    pub fn progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        self.ctx.progress = Some(sink);
        self
    }

    /// Finishes the context.
    #[must_use]
    pub fn build(self) -> ToolHostContext {
        self.ctx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_wins_over_allow() {
        let lists = ToolLists {
            allowed_tool_names: Some(["read", "bash"].into_iter().collect()),
            blocked_tool_names: ["bash"].into_iter().collect(),
            ..ToolLists::default()
        };
        assert!(lists.admits_tool("read"));
        assert!(!lists.admits_tool("bash"));
        assert!(!lists.admits_tool("grep"));
    }

    #[test]
    fn empty_allow_list_admits_nothing() {
        let lists = ToolLists {
            allowed_provider_ids: Some(NameSet::new()),
            ..ToolLists::default()
        };
        assert!(!lists.admits_provider("builtin"));
    }

    #[test]
    fn plan_context_from_mode_or_plan() {
        let agent = ToolHostContext::builder("t", "u").build();
        assert!(!agent.is_plan_context());
        let plan = ToolHostContext::builder("t", "u")
            .mode(ThreadMode::Plan)
            .build();
        assert!(plan.is_plan_context());
        let with_plan = ToolHostContext::builder("t", "u")
            .plan(PlanContext {
                plan_dir: "/p".into(),
                operation_id: "op".into(),
            })
            .build();
        assert!(with_plan.is_plan_context());
    }

    #[tokio::test]
    async fn abort_signal_wakes_waiters_and_children() {
        let signal = AbortSignal::new();
        let child = signal.child();
        let waiter = tokio::spawn({
            let child = child.clone();
            async move { child.aborted().await }
        });
        signal.abort();
        waiter.await.unwrap();
        assert!(child.is_aborted());
    }
}
