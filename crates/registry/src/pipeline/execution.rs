//! Step 15: running the tool, with panics caught and the turn's abort signal watched.
//!
//! | what happens | ledger | the caller gets |
//! |---|---|---|
//! | the tool returns a result (error or not) | left started; completed in step 18 | the result, on to step 16 |
//! | the tool returns `Err` | `fail` (may re-run), or `mark_unknown` when the error says its effects are unknown | `tool_execution_failed` |
//! | the tool panics | `mark_unknown`, or `fail` for a read-only tool | `tool_execution_failed` |
//! | the turn is aborted while it runs | `mark_unknown` | `Err(Aborted)` |

use super::{Host, PinnedTurn};
use crate::filters::CatalogFilters;
use crate::snapshot::RegistrySnapshot;
use futures_util::FutureExt;
use kun_ports::{
    AbortStage, CatalogView, ErrorCode, HostError, NoProgress, OperationKey, ProgressSink,
    SideEffect, ToolContext, ToolDescriptor, ToolError, ToolHostContext, ToolResult, ToolTurn,
};
use serde_json::Value;
use std::any::Any;
use std::ops::ControlFlow;
use std::panic::AssertUnwindSafe;

/// The turn's catalog as a running tool sees it: the filters over the pinned snapshot.
struct TurnCatalog<'a> {
    filters: &'a CatalogFilters,
    snapshot: &'a RegistrySnapshot,
    ctx: &'a ToolHostContext,
}

impl CatalogView for TurnCatalog<'_> {
    fn visible(&self, name: &str) -> Result<(), HostError> {
        self.filters.visible(self.snapshot, name, self.ctx)
    }
}

/// How a run ended, before the ledger hears of it.
enum RunEnd {
    Returned(ToolResult),
    Failed(ToolError),
    Panicked(String),
    Aborted,
}

impl Host {
    /// Step 15: runs the tool. `Continue` carries its result on to the later steps; `Break`
    /// is a `tool_execution_failed` result already recorded in the ledger.
    ///
    /// # Errors
    /// [`HostError::Aborted`] when the turn is aborted while the tool runs.
    pub(crate) async fn run_tool(
        &self,
        turn: &PinnedTurn,
        tool: &ToolDescriptor,
        arguments: Value,
        operation: &OperationKey,
        ctx: &ToolHostContext,
    ) -> Result<ControlFlow<ToolResult, ToolResult>, HostError> {
        let progress: &dyn ProgressSink = ctx.progress.as_deref().unwrap_or(&NoProgress);
        let catalog = TurnCatalog {
            filters: self.registry.filters(),
            snapshot: &turn.snapshot,
            ctx,
        };
        let tool_ctx = ToolContext {
            turn: ToolTurn::of(ctx, &catalog),
            call_id: &operation.call_id,
            sandbox: self.registry.filters().sandbox().as_ref(),
            progress,
        };
        // A tool may panic while building its future as well as while it runs.
        let future = match std::panic::catch_unwind(AssertUnwindSafe(|| {
            tool.tool().execute(arguments, tool_ctx)
        })) {
            Ok(future) => future,
            Err(payload) => {
                return self.after_run(
                    tool,
                    operation,
                    RunEnd::Panicked(panic_message(payload.as_ref())),
                );
            }
        };
        let run = AssertUnwindSafe(future).catch_unwind();
        let end = tokio::select! {
            biased;
            outcome = run => match outcome {
                Ok(Ok(result)) => RunEnd::Returned(result),
                Ok(Err(error)) => RunEnd::Failed(error),
                Err(payload) => RunEnd::Panicked(panic_message(payload.as_ref())),
            },
            () = ctx.abort.aborted() => RunEnd::Aborted,
        };
        self.after_run(tool, operation, end)
    }

    /// Tells the ledger how a run ended and builds what the pipeline continues with.
    fn after_run(
        &self,
        tool: &ToolDescriptor,
        operation: &OperationKey,
        end: RunEnd,
    ) -> Result<ControlFlow<ToolResult, ToolResult>, HostError> {
        match end {
            RunEnd::Returned(result) => Ok(ControlFlow::Continue(result)),
            RunEnd::Failed(error) => {
                if error.outcome_unknown {
                    self.mark_operation_unknown(operation, &error.message);
                } else {
                    self.fail_operation(operation);
                }
                Ok(ControlFlow::Break(execution_failed(tool, &error.message)))
            }
            RunEnd::Panicked(message) => {
                if tool.spec().side_effect == SideEffect::ReadOnly {
                    self.fail_operation(operation);
                } else {
                    self.mark_operation_unknown(operation, "the tool panicked mid-run");
                }
                Ok(ControlFlow::Break(execution_failed(
                    tool,
                    &format!("it panicked: {message}"),
                )))
            }
            RunEnd::Aborted => {
                self.mark_operation_unknown(operation, "the turn was aborted while the tool ran");
                Err(HostError::Aborted {
                    stage: AbortStage::DuringExecution,
                })
            }
        }
    }
}

fn execution_failed(tool: &ToolDescriptor, message: &str) -> ToolResult {
    ToolResult::failure(
        ErrorCode::ToolExecutionFailed,
        format!(
            "`{}` failed: {message}. Check the arguments, or try another way to get the same \
             result.",
            tool.name()
        ),
    )
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}
