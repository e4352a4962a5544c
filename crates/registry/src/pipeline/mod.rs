//! The execution pipeline: [`Host`], the [`ToolHost`] that runs every call through the three
//! gates.

mod approval;
mod builder;
mod execution;
mod finish;
mod gates;
mod hooks;
mod operation;
mod preflight;
mod read_guard;

pub use builder::{DEFAULT_ARTIFACT_THRESHOLD_BYTES, HostBuilder};

use crate::envelope::normalize_raw_envelope;
use crate::pinning::TurnPins;
use crate::registry::CapabilityRegistry;
use crate::snapshot::RegistrySnapshot;
use arc_swap::ArcSwap;
use async_trait::async_trait;
use kun_ports::{
    AbortStage, ArtifactStore, ErrorCode, HookRunner, HostError, NameSet, OperationLedger,
    ReadTracker, ToolCall, ToolDescriptor, ToolHost, ToolHostContext, ToolResult,
};
use serde_json::Value;
use std::fmt;
use std::ops::ControlFlow;
use std::sync::Arc;

/// Unwraps a step's `ControlFlow`: `Continue(v)` gives `v`, `Break(result)` returns
/// `Ok(result)` from the pipeline.
macro_rules! step {
    ($flow:expr) => {
        match $flow {
            ControlFlow::Continue(value) => value,
            ControlFlow::Break(result) => return Ok(result),
        }
    };
}

/// The hooks a host runs (none is a valid set). Boxed so it can be swapped atomically.
pub(crate) struct HookSet(pub(crate) Option<Arc<dyn HookRunner>>);

impl HookSet {
    /// The runner, when at least one tool hook is configured.
    pub(crate) fn active(&self) -> Option<&Arc<dyn HookRunner>> {
        self.0.as_ref().filter(|h| !h.is_empty())
    }
}

/// What the steps after the run (16–18) need from before it.
pub(crate) struct AfterRun {
    /// The arguments the tool ran with, when a later step reads them.
    pub(crate) arguments: Option<Value>,
    /// Extra context from the hooks for the model.
    pub(crate) context: Vec<String>,
}

/// What a turn pinned when it first reached the host.
#[derive(Clone)]
pub(crate) struct PinnedTurn {
    pub(crate) snapshot: Arc<RegistrySnapshot>,
    pub(crate) hooks: Arc<HookSet>,
}

/// The tool host: catalog listing and the gated execution pipeline. Build it with
/// [`Host::builder`].
///
/// The order is the design (SPEC §4). `execute` calls one small function per step, top
/// to bottom; each returns "continue" (with what later steps need) or a final result:
///
/// | # | step | on failure |
/// |---|---|---|
/// | 1 | pin this turn's registry snapshot and hooks | — |
/// | 2 | abort check | `Err(Aborted)` |
/// | 3 | resolve the tool (provider, lists, plan whitelist, `should_advertise`) | `Err(UnknownTool / NotAdvertised)` |
/// | 4 | tool policy `never` | `Err(DisabledByPolicy)` |
/// | 5 | sandbox on the declared kind | `sandbox_read_only` / `sandbox_write_blocked` / `sandbox_command_blocked` |
/// | 6 | raw-argument envelope normalisation (before the hooks, so they see the real arguments) | — |
/// | 7 | PreToolUse hooks (may rewrite arguments, may pre-approve) | `hook_failed`, `hook_denied` |
/// | 8 | plan mode: no file mutation but `create_plan` | `plan_mode_write_blocked` |
/// | 9 | read-before-edit | `read_before_edit_required` (with the next action) |
/// | 10 | sandbox on `call.tool_kind.or(declared)` and on the call's request to run unconfined (`"sandbox": "escalated"`), write paths, runtime approval `never` | `sandbox_*`, `approval_policy_blocked` |
/// | 10b | the tool's preflight: a call bound to fail fails before anyone is asked | the tool's code (`lsp_unavailable`, `no_checks_found`, …) |
/// | 11 | explicit-approval classification | `approval_classification_failed` |
/// | 12 | approval (fail closed) | `approval_denied` |
/// | 13 | abort check | `Err(Aborted)` |
/// | 14 | operation ledger | replay, `tool_invocation_in_progress`, `tool_outcome_unknown` |
/// | 15 | execute (panics caught, abort watched) | `tool_execution_failed`, `Err(Aborted)` |
/// | 16 | PostToolUse hooks | `hook_failed` |
/// | 17 | rate-limit normalisation, network-backed providers only | `rate_limited` |
/// | 18 | record reads, spill large outputs, complete the ledger | — |
///
/// Tools marked `user_interaction` skip the sandbox and approval gates (steps 5, 10–12).
/// Only steps 2–4, 13 and an abort during 15 are `Err`s; everything else is an error result
/// the model reads.
pub struct Host {
    registry: Arc<CapabilityRegistry>,
    hooks: ArcSwap<HookSet>,
    pins: TurnPins<PinnedTurn>,
    ledger: Arc<dyn OperationLedger>,
    read_tracker: Option<Arc<dyn ReadTracker>>,
    artifacts: Option<Arc<dyn ArtifactStore>>,
    untrusted_allow_list: NameSet,
    artifact_threshold: usize,
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Host")
            .field("registry", &self.registry)
            .field("pins", &self.pins)
            .field("read_tracker", &self.read_tracker.is_some())
            .field("artifacts", &self.artifacts.is_some())
            .field("untrusted_allow_list", &self.untrusted_allow_list)
            .field("artifact_threshold", &self.artifact_threshold)
            .finish_non_exhaustive()
    }
}

impl Host {
    /// Starts a builder over `registry`.
    pub fn builder(registry: Arc<CapabilityRegistry>) -> HostBuilder {
        HostBuilder::new(registry)
    }

    /// The registry the host lists from.
    #[must_use]
    pub const fn registry(&self) -> &Arc<CapabilityRegistry> {
        &self.registry
    }

    /// Replaces the hooks; turns already pinned keep theirs.
    pub fn replace_hooks(&self, hooks: Option<Arc<dyn HookRunner>>) {
        self.hooks.store(Arc::new(HookSet(hooks)));
    }

    /// Forgets a finished turn's pin; returns whether it was pinned.
    pub fn release_turn(&self, thread_id: &str, turn_id: &str) -> bool {
        self.pins.release(thread_id, turn_id)
    }

    /// The registry snapshot the turn of `ctx` uses (pinning it if new).
    #[must_use]
    pub fn turn_snapshot(&self, ctx: &ToolHostContext) -> Arc<RegistrySnapshot> {
        self.pin_turn(ctx).snapshot
    }

    /// Step 1: the components this turn started with.
    fn pin_turn(&self, ctx: &ToolHostContext) -> PinnedTurn {
        self.pins.pin(&ctx.thread_id, &ctx.turn_id, || PinnedTurn {
            snapshot: self.registry.snapshot(),
            hooks: self.hooks.load_full(),
        })
    }

    /// Step 3: resolves the call against the pinned snapshot.
    fn resolve<'s>(
        &self,
        turn: &'s PinnedTurn,
        call: &ToolCall,
        ctx: &ToolHostContext,
    ) -> Result<&'s ToolDescriptor, HostError> {
        self.registry.filters().resolve(
            &turn.snapshot,
            &call.tool_name,
            call.provider_id.as_deref(),
            ctx,
        )
    }

    /// Step 3 for gateway tools (`mcp_call`): the call is replaced by the call it stands for,
    /// and the target goes through every later gate under its own name. A gateway may not
    /// target another gateway.
    fn resolve_through_gateway<'s>(
        &self,
        turn: &'s PinnedTurn,
        call: ToolCall,
        ctx: &ToolHostContext,
    ) -> Result<ControlFlow<ToolResult, (&'s ToolDescriptor, ToolCall)>, HostError> {
        let tool = self.resolve(turn, &call, ctx)?;
        let Some(forwarded) = tool.tool().forward(&call.arguments) else {
            return Ok(ControlFlow::Continue((tool, call)));
        };
        let target = match forwarded {
            Ok(target) => target,
            Err(message) => {
                return Ok(ControlFlow::Break(ToolResult::failure(
                    ErrorCode::InvalidArguments,
                    message,
                )));
            }
        };
        let call = ToolCall {
            call_id: call.call_id,
            tool_name: target.tool_name,
            provider_id: None,
            tool_kind: call.tool_kind,
            arguments: target.arguments,
        };
        let tool = self.resolve(turn, &call, ctx)?;
        if tool.tool().forward(&call.arguments).is_some() {
            let message = format!(
                "{} is itself a gateway; name the tool to run directly",
                call.tool_name
            );
            return Ok(ControlFlow::Break(ToolResult::failure(
                ErrorCode::InvalidArguments,
                message,
            )));
        }
        Ok(ControlFlow::Continue((tool, call)))
    }

    /// What steps 16–18 need once the tool has taken the arguments. The arguments are copied
    /// only when a later step reads them (PostToolUse hooks, or the read tracker).
    fn keep_for_after_run(
        &self,
        turn: &PinnedTurn,
        arguments: &Value,
        context: Vec<String>,
    ) -> AfterRun {
        let needed = self.read_tracker.is_some() || turn.hooks.active().is_some();
        AfterRun {
            arguments: needed.then(|| arguments.clone()),
            context,
        }
    }

    /// The pipeline, step by step (see [`Host`]).
    async fn run(&self, call: ToolCall, ctx: &ToolHostContext) -> Result<ToolResult, HostError> {
        let turn = self.pin_turn(ctx); // 1
        gates::ensure_not_aborted(ctx, AbortStage::BeforeStart)?; // 2
        let (tool, call) = step!(self.resolve_through_gateway(&turn, call, ctx)?); // 3
        gates::refuse_never_policy(tool)?; // 4
        let declared = step!(self.sandbox_on_declared_kind(tool, ctx)); // 5
        let ToolCall {
            call_id,
            tool_name,
            tool_kind: claimed_kind,
            arguments,
            ..
        } = call;
        let mut arguments = arguments;
        normalize_raw_envelope(&mut arguments); // 6
        let pre = step!(hooks::pre_tool_use(&turn.hooks, ctx, &call_id, tool, arguments).await); // 7
        let arguments = pre.arguments;
        step!(gates::plan_mode_block(tool, ctx)); // 8
        step!(self.read_before_edit(tool, &arguments, ctx)); // 9
        let command = approval::command_approval(tool, &arguments, ctx);
        let request = approval::sandbox_request(command.as_ref());
        let sandbox =
            step!(self.runtime_policy(tool, declared, claimed_kind, request, &arguments, ctx)); // 10
        step!(preflight::check(tool, &arguments, ctx)); // 10b
        let explicit = step!(approval::classify_explicit(tool, &arguments, ctx)); // 11
        let need = self.approval_need(tool, ctx, sandbox, explicit, pre.approval, command.as_ref());
        step!(approval::request(need, tool, &call_id, &arguments, command, ctx).await); // 12
        gates::ensure_not_aborted(ctx, AbortStage::AwaitingApproval)?; // 13
        let operation = step!(self.begin_operation(ctx, call_id, tool_name, &arguments)); // 14
        let mut after = self.keep_for_after_run(&turn, &arguments, pre.context);
        let result = step!(
            self.run_tool(&turn, tool, arguments, &operation, ctx)
                .await?
        ); // 15
        let result =
            hooks::post_tool_use(&turn.hooks, ctx, tool, &operation, &mut after, result).await; // 16
        let result = finish::normalize_rate_limit(tool, result); // 17
        let result = finish::attach_context(result, after.context);
        self.record_read(tool, after.arguments.as_ref(), &result, ctx); // 18
        let result = self.spill_large_output(&operation, result);
        self.complete_operation(&operation, &result);
        Ok(result)
    }
}

#[async_trait]
impl ToolHost for Host {
    fn list_tools(&self, ctx: &ToolHostContext) -> Vec<ToolDescriptor> {
        let turn = self.pin_turn(ctx);
        self.registry.filters().list(&turn.snapshot, ctx)
    }

    async fn execute(
        &self,
        call: ToolCall,
        ctx: &ToolHostContext,
    ) -> Result<ToolResult, HostError> {
        self.run(call, ctx).await
    }
}
