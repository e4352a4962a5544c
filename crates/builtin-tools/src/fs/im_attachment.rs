//! The `send_im_attachment` tool: sends a workspace file into the instant-messaging
//! conversation the turn is attached to.
//!
//! It exists only where a bridge does: the constructor takes the [`ImBridge`], and the
//! composition root registers the tool only when one is configured. Every call needs an
//! explicit approval (a file leaves the machine), which a PreToolUse `allow` does not skip.

use super::no_follow;
use crate::Failure;
use crate::output::format_size;
use async_trait::async_trait;
use kun_ports::{
    ImBridge, PathAccess, SideEffect, ToolContext, ToolHostContext, ToolKind, ToolPolicy, ToolSpec,
    TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

const DESCRIPTION: &str = "Send a file from the workspace to the user's chat conversation as an attachment, with an \
optional caption. The user approves every send.";

/// Arguments of `send_im_attachment`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendArgs {
    /// The file to send: relative to the workspace root, or absolute inside it.
    path: String,
    /// A short message shown with the file.
    #[serde(default)]
    caption: Option<String>,
}

/// What a successful send returns; the model reads one line
/// (`sent report.pdf (12.3 KB) to the chat as message 42`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SendOutput {
    /// The file, relative to the workspace root.
    pub path: String,
    /// Its size in bytes.
    pub byte_size: u64,
    /// The caption sent with it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    /// The chat's id for the message.
    pub message_id: String,
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
        let spec = ToolSpec::typed::<SendArgs, SendOutput>("send_im_attachment", DESCRIPTION)
            .with_kind(ToolKind::ToolCall)
            .with_policy(ToolPolicy::OnRequest)
            .with_side_effect(SideEffect::Unknown);
        Self { spec, bridge }
    }

    async fn send(&self, args: SendArgs, ctx: ToolContext<'_>) -> Result<SendOutput, Failure> {
        if args.path.trim().is_empty() {
            return Err(Failure::invalid("path is empty: name the file to send"));
        }
        let resolved = ctx.resolve_path(&args.path, PathAccess::Read)?;
        // Checks it is a regular file now, without following a swapped-in link.
        let file = no_follow::open_file(&resolved.physical)
            .map_err(|err| err.named(&resolved.relative))?;
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
        Ok(SendOutput {
            path: resolved.relative,
            byte_size,
            caption,
            message_id,
        })
    }
}

#[async_trait]
impl TypedTool for SendImAttachmentTool {
    type Args = SendArgs;
    type Output = SendOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &SendOutput) -> String {
        format!(
            "sent {} ({}) to the chat as message {}",
            output.path,
            format_size(output.byte_size),
            output.message_id
        )
    }

    /// Always: a file leaves the machine.
    fn explicit_approval(&self, _args: &SendArgs, _ctx: &ToolHostContext) -> Result<bool, String> {
        Ok(true)
    }

    async fn run(&self, args: SendArgs, ctx: ToolContext<'_>) -> Result<SendOutput, Failure> {
        self.send(args, ctx).await
    }
}
