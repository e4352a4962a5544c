//! The host port: what an agent runtime calls each turn.

use crate::{HostError, ToolCall, ToolDescriptor, ToolHostContext, ToolResult};
use async_trait::async_trait;

/// Lists the tools a model sees this turn, and runs its calls through every gate.
///
/// `list_tools` is a pure function of the providers and the context, sorted by name.
/// `execute` never trusts the list: it re-checks everything. Only an abort, an unknown or
/// unadvertised tool and a `never` tool are `Err`s; every other failure is an error result.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait ToolHost: Send + Sync {
    /// The catalog for this context, sorted by name.
    fn list_tools(&self, ctx: &ToolHostContext) -> Vec<ToolDescriptor>;

    /// Runs one call through the pipeline.
    ///
    /// # Errors
    /// On abort, unknown or unadvertised tools, and tools whose policy is `never`.
    async fn execute(&self, call: ToolCall, ctx: &ToolHostContext)
    -> Result<ToolResult, HostError>;
}
