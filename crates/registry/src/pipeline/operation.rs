//! Step 14 and the end of step 18: the operation ledger around a run.
//!
//! An operation is (thread, turn, call id, tool, blake3 of the canonical arguments). Before
//! a tool runs the ledger says whether it already completed (replay its result, do not run),
//! is running (`tool_invocation_in_progress`) or may have half run (`tool_outcome_unknown`:
//! never repeated automatically). A ledger that cannot record stops the call: running a tool
//! whose run cannot be recorded would defeat the point.

use super::Host;
use crate::canonical::canonical_hash_hex;
use kun_ports::{BeginOutcome, ErrorCode, OperationKey, ToolHostContext, ToolResult};
use serde_json::{Map, Value};
use std::ops::ControlFlow;

impl Host {
    /// Step 14: records the operation as started, or answers why it must not run now.
    pub(crate) fn begin_operation(
        &self,
        ctx: &ToolHostContext,
        call_id: String,
        tool_name: String,
        arguments: &Value,
    ) -> ControlFlow<ToolResult, OperationKey> {
        let key = OperationKey {
            thread_id: ctx.thread_id.clone(),
            turn_id: ctx.turn_id.clone(),
            call_id,
            tool_name,
            args_hash: canonical_hash_hex(arguments),
        };
        match self.ledger.begin(&key) {
            Ok(BeginOutcome::Started) => ControlFlow::Continue(key),
            Ok(BeginOutcome::Replay(result)) => ControlFlow::Break(result),
            Ok(BeginOutcome::InProgress) => ControlFlow::Break(ToolResult::failure(
                ErrorCode::ToolInvocationInProgress,
                format!(
                    "`{}` with these arguments (call `{}`) is still running. Wait for its result \
                     instead of calling it again.",
                    key.tool_name, key.call_id
                ),
            )),
            Ok(BeginOutcome::OutcomeUnknown { reason }) => {
                let mut details = Map::new();
                details.insert("reason".to_owned(), Value::from(reason.as_str()));
                ControlFlow::Break(ToolResult::failure_with(
                    ErrorCode::ToolOutcomeUnknown,
                    format!(
                        "An earlier run of `{}` (call `{}`) stopped before finishing ({reason}), \
                         so its effects are unknown and it is not re-run automatically. Check \
                         the state it would have changed, then call it with a new call id if \
                         it is still needed.",
                        key.tool_name, key.call_id
                    ),
                    details,
                ))
            }
            Err(error) => ControlFlow::Break(ToolResult::failure(
                ErrorCode::ToolExecutionFailed,
                format!(
                    "`{}` was not run because its run could not be recorded ({error}). Try \
                     again later.",
                    key.tool_name
                ),
            )),
        }
    }

    /// Step 18 (last part): records the final result; later identical calls replay it.
    pub(crate) fn complete_operation(&self, key: &OperationKey, result: &ToolResult) {
        if let Err(error) = self.ledger.complete(key, result) {
            tracing::warn!(tool = %key.tool_name, call = %key.call_id, "{error}");
        }
    }

    /// Records a failure without side effects: the operation may run again.
    pub(crate) fn fail_operation(&self, key: &OperationKey) {
        if let Err(error) = self.ledger.fail(key) {
            tracing::warn!(tool = %key.tool_name, call = %key.call_id, "{error}");
        }
    }

    /// Records that the operation's effects are unknown: it will not run again.
    pub(crate) fn mark_operation_unknown(&self, key: &OperationKey, reason: &str) {
        if let Err(error) = self.ledger.mark_unknown(key, reason) {
            tracing::warn!(tool = %key.tool_name, call = %key.call_id, "{error}");
        }
    }
}
