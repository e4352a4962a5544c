//! The `send_im_attachment` tool: sends a workspace file into the instant-messaging
//! conversation the turn is attached to.
//!
//! It exists only where a bridge does: the constructor takes the [`ImBridge`], and the
//! composition root registers the tool only when one is configured. Every call needs an
//! explicit approval (a file leaves the machine), which a PreToolUse `allow` does not skip.

use super::no_follow;
use crate::{Failure, Outcome, finish, parse_args, schema_for};
use async_trait::async_trait;
use kun_ports::{
    ImBridge, PathAccess, SideEffect, Tool, ToolContext, ToolError, ToolHostContext, ToolKind,
    ToolPolicy, ToolResult, ToolSpec,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

const DESCRIPTION: &str = "Send a file from the workspace to the user's chat conversation as an attachment, with an \
optional caption. The user approves every send.";

/// Arguments of `send_im_attachment`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    /// The file to send: relative to the workspace root, or absolute inside it.
    path: String,
    /// A short message shown with the file.
    #[serde(default)]
    caption: Option<String>,
}

/// The `send_im_attachment` tool: `tool_call`, `on-request`, explicit approval on every call.
pub struct SendImAttachmentTool {
    spec: ToolSpec,
    bridge: Arc<dyn ImBridge>,
}

impl std::fmt::Debug for SendImAttachmentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendImAttachmentTool")
            .field("spec", &self.spec.name)
            .finish_non_exhaustive()
    }
}

impl SendImAttachmentTool {
    /// The tool, sending through `bridge`.
    #[must_use]
    pub fn new(bridge: Arc<dyn ImBridge>) -> Self {
        let spec = ToolSpec::new("send_im_attachment", DESCRIPTION, schema_for::<SendArgs>())
            .with_kind(ToolKind::ToolCall)
            .with_policy(ToolPolicy::OnRequest)
            .with_side_effect(SideEffect::Unknown);
        Self { spec, bridge }
    }

    async fn run(&self, arguments: Value, ctx: ToolContext<'_>) -> Outcome {
        let args: SendArgs = parse_args("send_im_attachment", arguments)?;
        if args.path.trim().is_empty() {
            return Err(Failure::invalid("path is empty: name the file to send"));
        }
        let resolved = ctx.resolve_path(&args.path, PathAccess::Read)?;
        // Checks it is a regular file now, without following a swapped-in link.
        let file = no_follow::open_file(&resolved.physical)?;
        let byte_size = file.metadata()?.len();
        drop(file);
        let caption = args.caption.filter(|c| !c.trim().is_empty());
        let message_id = self
            .bridge
            .send_attachment(&resolved.physical, caption.clone())
            .await
            .map_err(|err| {
                Failure::new(format!(
                    "the chat bridge did not deliver {}: {}",
                    resolved.relative, err.message
                ))
            })?;
        Ok(json!({
            "path": resolved.lexical.display().to_string(),
            "relative_path": resolved.relative,
            "byte_size": byte_size,
            "caption": caption,
            "message_id": message_id,
        }))
    }
}

#[async_trait]
impl Tool for SendImAttachmentTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// Always: a file leaves the machine.
    fn explicit_approval(
        &self,
        _arguments: &Value,
        _ctx: &ToolHostContext,
    ) -> Result<bool, String> {
        Ok(true)
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        Ok(finish(self.run(arguments, ctx).await))
    }
}
