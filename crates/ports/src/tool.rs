//! Tools and the providers that contribute them.
//!
//! A [`Tool`] declares static metadata ([`ToolSpec`]) and executes with a narrow
//! [`ToolContext`]: what it needs of the turn ([`ToolTurn`]: thread, roots, sandbox mode,
//! abort signal, and a [`CatalogView`] for gateways), the call id, a path resolver and a
//! progress sink — never the whole runtime, and never the approver. Hooks for the pipeline
//! (`edit_guard`, `write_paths`, `observed_read`, `explicit_approval`, `approval_scope`,
//! `call_approval`, `preflight`) have defaults, so a simple tool implements only `spec` and
//! `execute`.
//!
//! Most tools implement [`TypedTool`](crate::TypedTool) instead: typed arguments and output,
//! a rendering for the model, and a blanket `impl Tool` that does the JSON around them.

use crate::{
    AbortSignal, CommandApproval, CommandRunner, HostError, PathAccess, PathError, PlanContext,
    ProviderKind, ProviderPolicy, ResolvedPath, SandboxMode, SandboxPolicy, SideEffect, ThreadMode,
    ToolHostContext, ToolKind, ToolPolicy, ToolResult, UserInputChannel,
};
use async_trait::async_trait;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A tool's static metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Catalog name; unique across all providers.
    pub name: String,
    /// What the model reads to decide whether to call it.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: Value,
    /// JSON Schema of a successful result's `output` (an object schema), when the tool
    /// declares one; `serve` offers it as the MCP `outputSchema`.
    pub output_schema: Option<Value>,
    /// The sandbox discriminator.
    pub kind: ToolKind,
    /// For `command_execution` tools: who runs the commands. Only built-in command tools,
    /// which spawn through our [`CommandConfinement`](crate::CommandConfinement), say
    /// [`CommandRunner::Confinement`]; the default is the provider (an MCP server), whose
    /// commands always ask under workspace-write.
    pub command_runner: CommandRunner,
    /// The approval column.
    pub policy: ToolPolicy,
    /// Whether it only reads (admits it in plan mode).
    pub side_effect: SideEffect,
    /// `false` hides it from the catalog but keeps it callable (e.g. `find`).
    pub model_advertised: bool,
    /// It only asks the user something: exempt from the sandbox and approval gates.
    pub user_interaction: bool,
    /// What the tool is to the gates that treat some tools specially (plan mode, the
    /// design-quality hook): declared by the tool, never guessed from its name.
    pub role: ToolRole,
}

/// A tool's role for the gates that single out some tools: a typed marker the tool sets on
/// its own spec, so no gate recognises a tool by its name.
///
/// | role | set by | read by |
/// |---|---|---|
/// | `general` | every other tool (the default) | — |
/// | `file_editor` | `write`, `edit`: they write a file the model names, whole or in part | the design-quality hook (reviews the written file) |
/// | `plan_writer` | `create_plan`: it writes only the reserved plan file | pipeline step 8 (the one file change a planning turn may run) |
///
/// ```
/// use kun_ports::{ToolKind, ToolRole, ToolSpec};
/// let spec = ToolSpec::new("write", "Writes a file.", serde_json::json!({"type": "object"}))
///     .with_kind(ToolKind::FileChange)
///     .with_role(ToolRole::FileEditor);
/// assert_eq!(spec.role, ToolRole::FileEditor);
/// assert_eq!(ToolSpec::new("x", "", serde_json::json!({})).role, ToolRole::General);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolRole {
    /// Nothing special.
    #[default]
    General,
    /// Writes (or edits) a workspace file the model names.
    FileEditor,
    /// Writes only the reserved plan file; exempt from the plan-mode write block.
    PlanWriter,
}

impl ToolSpec {
    /// A spec with the defaults: `tool_call`, `on-request`, side effect unknown, advertised.
    ///
    /// ```
    /// use kun_ports::{ToolKind, ToolPolicy, ToolSpec, SideEffect};
    /// let spec = ToolSpec::new("noop", "Does nothing.", serde_json::json!({"type": "object"}))
    ///     .with_policy(ToolPolicy::Auto)
    ///     .with_side_effect(SideEffect::ReadOnly);
    /// assert_eq!(spec.kind, ToolKind::ToolCall);
    /// ```
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema,
            output_schema: None,
            kind: ToolKind::ToolCall,
            command_runner: CommandRunner::Provider,
            policy: ToolPolicy::OnRequest,
            side_effect: SideEffect::Unknown,
            model_advertised: true,
            user_interaction: false,
            role: ToolRole::General,
        }
    }

    /// Declares the schema of a successful result's output (an object schema).
    #[must_use]
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the kind.
    #[must_use]
    pub const fn with_kind(mut self, kind: ToolKind) -> Self {
        self.kind = kind;
        self
    }

    /// Says who runs the tool's commands (built-in command tools: our confinement).
    #[must_use]
    pub const fn with_command_runner(mut self, runner: CommandRunner) -> Self {
        self.command_runner = runner;
        self
    }

    /// Sets the policy.
    #[must_use]
    pub const fn with_policy(mut self, policy: ToolPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Sets the side effect.
    #[must_use]
    pub const fn with_side_effect(mut self, side_effect: SideEffect) -> Self {
        self.side_effect = side_effect;
        self
    }

    /// Hides the tool from the catalog (it stays callable).
    #[must_use]
    pub const fn hidden(mut self) -> Self {
        self.model_advertised = false;
        self
    }

    /// Marks it as a question to the user (exempt from sandbox and approval).
    #[must_use]
    pub const fn user_interaction(mut self) -> Self {
        self.user_interaction = true;
        self
    }

    /// Sets the role (see [`ToolRole`]).
    #[must_use]
    pub const fn with_role(mut self, role: ToolRole) -> Self {
        self.role = role;
        self
    }
}

/// Receives partial results while a tool runs.
pub trait ProgressSink: Send + Sync {
    /// A partial update (for example a chunk of command output).
    fn update(&self, call_id: &str, partial: &Value);
}

/// A sink that drops every update.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn update(&self, _call_id: &str, _partial: &Value) {}
}

/// Whether a tool may be called in this turn, asked by gateway tools (`mcp_search`,
/// `mcp_call`) of the host's own catalog filters instead of keeping a copy of them.
pub trait CatalogView: Send + Sync {
    /// `Ok` when `name` is callable in this turn: the same checks as resolving a call
    /// (provider, lists, plan mode, the tool's own `should_advertise`) plus the sandbox
    /// advertising its kind.
    ///
    /// # Errors
    /// [`HostError::UnknownTool`] or [`HostError::NotAdvertised`] with the reason.
    fn visible(&self, name: &str) -> Result<(), HostError>;
}

/// A view that admits every name: for tools run outside a host (tests, benchmarks).
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenCatalog;

impl CatalogView for OpenCatalog {
    fn visible(&self, _name: &str) -> Result<(), HostError> {
        Ok(())
    }
}

/// What a running tool knows of its turn: the thread, the workspace roots, the sandbox mode,
/// the thread mode and plan context (for `create_plan`), the abort signal, a view of the
/// catalog, and the channel to the person (for `user_input`). Nothing else: no approver, no
/// lists.
#[derive(Clone, Copy)]
pub struct ToolTurn<'a> {
    /// The conversation thread.
    pub thread_id: &'a str,
    /// The turn within the thread.
    pub turn_id: &'a str,
    /// Workspace roots; the first is the primary root.
    pub workspace_roots: &'a [PathBuf],
    /// Gate one's mode for this turn.
    pub sandbox: SandboxMode,
    /// Agent or plan.
    pub mode: ThreadMode,
    /// The plan being made, when the turn has a plan context.
    pub plan: Option<&'a PlanContext>,
    /// Fires when the turn is aborted.
    pub abort: &'a AbortSignal,
    /// Which tools this turn may call (for gateways).
    pub catalog: &'a dyn CatalogView,
    /// Who answers questions to the person, when anyone can.
    pub user_input: Option<&'a dyn UserInputChannel>,
    /// The turn's lists and approval, for the few tools that act on them (see [`TurnScope`]).
    pub scope: TurnScope<'a>,
}

/// What a tool may learn of its turn's policy beyond [`ToolTurn`]'s fields: the allow/deny
/// lists (`load_skill` honours the skill lists), and for a tool that starts a **nested** turn
/// with the same gates (`delegate_task`), a context derived from this one.
///
/// Invariant: a nested context starts as a copy of this turn's (same roots, mode, surface,
/// sandbox, approval policy, lists and approver) with its own ids and an abort signal that
/// fires with this turn's; the caller may only narrow it. User input is not inherited: a
/// nested turn cannot ask the user.
#[derive(Clone, Copy)]
pub struct TurnScope<'a>(&'a ToolHostContext);

impl<'a> TurnScope<'a> {
    /// The scope of `ctx`.
    #[must_use]
    pub const fn of(ctx: &'a ToolHostContext) -> Self {
        Self(ctx)
    }

    /// The turn's allow and deny lists.
    #[must_use]
    pub const fn lists(&self) -> &'a crate::ToolLists {
        &self.0.lists
    }

    /// The turn's approval policy.
    #[must_use]
    pub const fn approval(&self) -> crate::ApprovalPolicy {
        self.0.approval
    }

    /// The context of a nested turn (see the invariant above).
    #[must_use]
    pub fn nested_context(&self, thread_id: &str, turn_id: &str) -> ToolHostContext {
        let mut nested = self.0.for_turn(turn_id);
        nested.thread_id = thread_id.to_owned();
        nested.abort = self.0.abort.child();
        nested.user_input = None;
        nested
    }
}

impl fmt::Debug for TurnScope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TurnScope")
            .field("lists", &self.0.lists)
            .field("approval", &self.0.approval)
            .finish_non_exhaustive()
    }
}

impl<'a> ToolTurn<'a> {
    /// The view of `ctx` a tool gets, with this catalog view.
    #[must_use]
    pub fn of(ctx: &'a ToolHostContext, catalog: &'a dyn CatalogView) -> Self {
        Self {
            thread_id: &ctx.thread_id,
            turn_id: &ctx.turn_id,
            workspace_roots: &ctx.workspace_roots,
            sandbox: ctx.sandbox,
            mode: ctx.thread_mode,
            plan: ctx.plan.as_ref(),
            abort: &ctx.abort,
            catalog,
            user_input: ctx.user_input.as_deref(),
            scope: TurnScope::of(ctx),
        }
    }

    /// The primary workspace root (`.` when none was given).
    #[must_use]
    pub fn primary_root(&self) -> &'a Path {
        self.workspace_roots
            .first()
            .map_or(Path::new("."), PathBuf::as_path)
    }
}

impl fmt::Debug for ToolTurn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolTurn")
            .field("thread_id", &self.thread_id)
            .field("turn_id", &self.turn_id)
            .field("workspace_roots", &self.workspace_roots)
            .field("sandbox", &self.sandbox)
            .field("mode", &self.mode)
            .field("plan", &self.plan)
            .field("aborted", &self.abort.is_aborted())
            .field("user_input", &self.user_input.is_some())
            .finish_non_exhaustive()
    }
}

/// What a running tool may use: its view of the turn, its call id, the workspace path
/// resolver and a progress sink.
#[derive(Clone, Copy)]
pub struct ToolContext<'a> {
    /// What the tool knows of the turn.
    pub turn: ToolTurn<'a>,
    /// This call's id.
    pub call_id: &'a str,
    /// Gate one's path resolution (symlinks followed, roots enforced).
    pub sandbox: &'a dyn SandboxPolicy,
    /// Where streaming updates go.
    pub progress: &'a dyn ProgressSink,
}

impl ToolContext<'_> {
    /// Resolves a path argument against the turn's workspace roots and sandbox mode.
    ///
    /// # Errors
    /// When the path escapes the roots (or otherwise cannot be used for `access`).
    pub fn resolve_path(&self, input: &str, access: PathAccess) -> Result<ResolvedPath, PathError> {
        self.sandbox
            .resolve_path(input, self.turn.workspace_roots, self.turn.sandbox, access)
    }

    /// Sends a streaming update.
    pub fn report(&self, partial: &Value) {
        self.progress.update(self.call_id, partial);
    }

    /// Whether the turn was aborted.
    #[must_use]
    pub fn is_aborted(&self) -> bool {
        self.turn.abort.is_aborted()
    }
}

impl fmt::Debug for ToolContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("turn", &self.turn)
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

/// A tool failed (as opposed to returning an error result).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What went wrong.
    pub message: String,
    /// The tool may have had effects before failing; the ledger must not allow a re-run.
    pub outcome_unknown: bool,
}

impl ToolError {
    /// A failure with no side effects.
    #[must_use]
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            outcome_unknown: false,
        }
    }

    /// A failure after which the tool's effects are unknown.
    #[must_use]
    pub fn outcome_unknown(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            outcome_unknown: true,
        }
    }
}

/// The file an edit-like call changes and the fragments it expects to find there: the
/// read-before-edit guard checks them against the thread's latest read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditGuard {
    /// The path as the model gave it.
    pub path: String,
    /// Every non-blank `oldText` fragment.
    pub old_texts: Vec<String>,
}

/// What a successful read (or edit, or write) saw of a file, for the read-before-edit
/// tracker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadObservation {
    /// The file. A tool may give it as the call named it (relative to the primary root, or
    /// absolute); the host resolves it to the absolute lexical path before recording, the
    /// same way it resolves an edit's path.
    pub path: PathBuf,
    /// The text seen, if it was text (`None` for an image, or when the tool did not keep it).
    pub content: Option<String>,
    /// Whether only part of the file was seen.
    pub partial: bool,
    /// The file's revision when it was seen; the tracker compares it with the file on disk.
    pub revision: Option<crate::FileRevision>,
}

/// Whether a call goes through the approval gate as its spec declares, as the tool judges it
/// from the arguments (see [`Tool::call_approval`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallApproval {
    /// As declared: the approval matrix, sandbox-forced and explicit approvals apply.
    #[default]
    AsDeclared,
    /// A read-only action of a tool that otherwise needs approval (`background_shell`
    /// `list` and `read`): it runs no command and changes nothing, so nobody is asked.
    NotNeeded,
}

/// The call a gateway tool (such as `mcp_call`) stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardedCall {
    /// The target tool's catalog name.
    pub tool_name: String,
    /// The target's arguments.
    pub arguments: Value,
}

/// A tool.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait Tool: Send + Sync {
    /// Static metadata.
    fn spec(&self) -> &ToolSpec;

    /// Whether to list (and allow) the tool in this context. Checked when listing and again
    /// when resolving a call.
    fn should_advertise(&self, _ctx: &ToolHostContext) -> bool {
        true
    }

    /// Whether this call needs an explicit approval beyond the matrix. A PreToolUse `allow`
    /// does not skip it.
    ///
    /// # Errors
    /// A message when the call cannot be classified (`approval_classification_failed`).
    fn explicit_approval(
        &self,
        _arguments: &Value,
        _ctx: &ToolHostContext,
    ) -> Result<bool, String> {
        Ok(false)
    }

    /// For command tools: what this call asks of the gates (see [`CommandApproval`]) — what
    /// an `allow_for_session` grant of it covers (e.g. `cargo test`, or this call only),
    /// whether it is known safe, and whether it asks to run outside the sandbox. `None` for
    /// other tools: a grant then covers the whole tool, except for `command_execution` tools,
    /// which are approved one call at a time.
    fn approval_scope(
        &self,
        _arguments: &Value,
        _ctx: &ToolHostContext,
    ) -> Option<CommandApproval> {
        None
    }

    /// The kind of this call when it is narrower than the tool's declared kind: a read-only
    /// action of a command tool (`computer_use`'s `screenshot`) is a `tool_call`. The catalog
    /// and step 5 use the declared kind, so a sandbox mode that blocks the tool blocks every
    /// call; from step 10 on, a narrower kind here decides whether the sandbox forces an
    /// approval. A kind that is not narrower is ignored.
    fn call_kind(&self, _arguments: &Value) -> Option<ToolKind> {
        None
    }

    /// For edit-like tools: the file and fragments the read-before-edit guard checks.
    fn edit_guard(&self, _arguments: &Value) -> Option<EditGuard> {
        None
    }

    /// Paths this call will write (as given); the host checks them against the sandbox before
    /// asking for approval.
    fn write_paths(&self, _arguments: &Value) -> Vec<String> {
        Vec::new()
    }

    /// For read-like tools: what a successful result saw.
    fn observed_read(
        &self,
        _arguments: &Value,
        _output: &Value,
        _ctx: &ToolHostContext,
    ) -> Option<ReadObservation> {
        None
    }

    /// How this call goes through the approval gate (step 12): [`CallApproval::NotNeeded`]
    /// for a read-only action of a tool that otherwise asks. Default: as the spec declares.
    fn call_approval(&self, _arguments: &Value) -> CallApproval {
        CallApproval::AsDeclared
    }

    /// A check the host runs after the runtime policy and before any approval is asked
    /// (step 10b): a call that cannot succeed (no language server installed, no checks
    /// to run) fails here, so nobody approves a call that was bound to fail.
    ///
    /// # Errors
    /// The failure the model reads (with its code, e.g. `lsp_unavailable`).
    fn preflight(
        &self,
        _arguments: &Value,
        _ctx: &ToolHostContext,
    ) -> Result<(), crate::ToolFailure> {
        Ok(())
    }

    /// For gateway tools: the call this one stands for. The host then runs the **target**
    /// through every gate (resolve, lists, plan mode, sandbox, hooks under the target's name,
    /// approval, ledger) in place of this call, so a gateway is never a way around them.
    /// Forwarding happens once: a target that forwards again is refused.
    ///
    /// # Errors
    /// A message for the model when the arguments do not name a target
    /// (`invalid_arguments`).
    fn forward(&self, _arguments: &Value) -> Option<Result<ForwardedCall, String>> {
        None
    }

    /// Runs the call. An `Err` becomes a `tool_execution_failed` result; so does a panic.
    ///
    /// # Errors
    /// When the tool fails in a way it cannot express as an error result.
    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError>;
}

/// A source of tools: built-ins, an MCP server, the web, …
#[cfg_attr(feature = "testkit", mockall::automock)]
pub trait ToolProvider: Send + Sync {
    /// Unique id, e.g. `builtin` or `mcp:github`.
    fn id(&self) -> &str;
    /// Where its tools come from.
    fn kind(&self) -> ProviderKind;
    /// Enabled and available switches; read every time the catalog is computed.
    fn policy(&self) -> ProviderPolicy;
    /// Its tools; names must be unique across all providers.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
}

/// Marks a provider whose tools a child agent may receive. The child registry accepts only
/// `Delegable` providers, so a provider without it (computer use) cannot reach a child: a
/// compile error, not a name list.
pub trait Delegable: ToolProvider {}

/// A tool as listed in a catalog: the tool and its provider.
///
/// Cloning costs one reference count: a listing of a thousand tools copies a thousand
/// pointers, nothing more.
///
/// ```
/// use kun_ports::{ProviderKind, ToolDescriptor};
/// # use kun_ports::{Tool, ToolSpec, ToolContext, ToolError, ToolResult};
/// # struct Echo(ToolSpec);
/// # #[async_trait::async_trait]
/// # impl Tool for Echo {
/// #     fn spec(&self) -> &ToolSpec { &self.0 }
/// #     async fn execute<'a>(&self, a: serde_json::Value, _: ToolContext<'a>) -> Result<ToolResult, ToolError> { Ok(ToolResult::ok(a)) }
/// # }
/// let echo = Echo(ToolSpec::new("echo", "Echoes.", serde_json::json!({"type": "object"})));
/// let listed = ToolDescriptor::new(std::sync::Arc::new(echo), "builtin", ProviderKind::BuiltIn);
/// assert_eq!(listed.name(), "echo");
/// assert_eq!(listed.provider_id(), "builtin");
/// ```
#[derive(Clone)]
pub struct ToolDescriptor(Arc<Listed>);

struct Listed {
    tool: Arc<dyn Tool>,
    provider_id: Arc<str>,
    provider_kind: ProviderKind,
}

impl ToolDescriptor {
    /// The tool as served by the provider `provider_id` of kind `provider_kind`.
    pub fn new(
        tool: Arc<dyn Tool>,
        provider_id: impl Into<Arc<str>>,
        provider_kind: ProviderKind,
    ) -> Self {
        Self(Arc::new(Listed {
            tool,
            provider_id: provider_id.into(),
            provider_kind,
        }))
    }

    /// The tool.
    #[must_use]
    pub fn tool(&self) -> &Arc<dyn Tool> {
        &self.0.tool
    }

    /// Its provider's id.
    #[must_use]
    pub fn provider_id(&self) -> &str {
        &self.0.provider_id
    }

    /// Its provider's kind.
    #[must_use]
    pub fn provider_kind(&self) -> ProviderKind {
        self.0.provider_kind
    }

    /// The tool's metadata.
    #[must_use]
    pub fn spec(&self) -> &ToolSpec {
        self.0.tool.spec()
    }

    /// The tool's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.0.tool.spec().name
    }
}

impl fmt::Debug for ToolDescriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDescriptor")
            .field("name", &self.name())
            .field("provider_id", &self.provider_id())
            .field("provider_kind", &self.provider_kind())
            .finish()
    }
}

/// Serialises as `{name, description, input_schema, kind, policy, side_effect, provider_id,
/// provider_kind}`: the shape of `kun-tools catalog --json`.
impl Serialize for ToolDescriptor {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let spec = self.spec();
        let mut s = serializer.serialize_struct("ToolDescriptor", 8)?;
        s.serialize_field("name", &spec.name)?;
        s.serialize_field("description", &spec.description)?;
        s.serialize_field("input_schema", &spec.input_schema)?;
        s.serialize_field("kind", &spec.kind)?;
        s.serialize_field("policy", &spec.policy)?;
        s.serialize_field("side_effect", &spec.side_effect)?;
        s.serialize_field("provider_id", self.provider_id())?;
        s.serialize_field("provider_kind", &self.provider_kind())?;
        s.end()
    }
}
