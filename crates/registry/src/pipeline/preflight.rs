//! Step 10b: the tool's own check before anyone is asked to approve the call.
//!
//! A call that cannot succeed — `lsp` for a language whose server is not installed,
//! `verify_changes` in a project with no checks — fails here with the tool's code, after the
//! sandbox and runtime policy (steps 5 and 10) and before classification and approval (11 and
//! 12): nobody approves a call that was bound to fail, and a refused call never reaches a
//! preflight.

use kun_ports::{ToolDescriptor, ToolHostContext, ToolResult};
use serde_json::Value;
use std::ops::ControlFlow;

/// Step 10b: [`Tool::preflight`](kun_ports::Tool::preflight); a failure is the result.
pub(crate) fn check(
    tool: &ToolDescriptor,
    arguments: &Value,
    ctx: &ToolHostContext,
) -> ControlFlow<ToolResult> {
    match tool.tool().preflight(arguments, ctx) {
        Ok(()) => ControlFlow::Continue(()),
        Err(failure) => ControlFlow::Break(failure.into_result()),
    }
}
