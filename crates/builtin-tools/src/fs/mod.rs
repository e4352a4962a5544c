//! The file tools — `read`, `write`, `edit`, `send_im_attachment` — and what they share: the
//! edit engine ([`edit`]), the file mutation queue ([`mutation_queue`]) and I/O that never
//! follows a final symlink.
//!
//! Every tool resolves its path through [`ToolContext::resolve_path`](kun_ports::ToolContext::resolve_path)
//! (reads as well as writes are checked in every sandbox mode but danger-full-access), then
//! opens the checked physical path from the handle of the root it lies in, through no
//! symbolic link (`beneath`: `openat2` `RESOLVE_BENEATH`, or an `O_NOFOLLOW` walk), so a
//! directory swapped for a link after the check is refused, never followed. `write` and
//! `edit` hold the file's mutation lock (keyed by the checked physical path) around their
//! read-modify-write; share one [`MutationQueue`] between them.
//!
//! ```
//! use kun_builtin_tools::OutputLimits;
//! use kun_builtin_tools::fs::{self, MutationQueue};
//! let queue = MutationQueue::global();
//! let tools = [fs::read_tool(OutputLimits::default()), fs::write_tool(queue.clone()), fs::edit_tool(queue)];
//! assert_eq!(tools.iter().map(|t| t.spec().name.as_str()).collect::<Vec<_>>(), ["read", "write", "edit"]);
//! ```

pub(crate) mod beneath;
pub mod edit;
mod im_attachment;
pub mod mutation_queue;
mod no_follow;
mod read;
mod write;

pub use edit::{EditOutput, EditTool, normalize_for_fuzzy_match};
pub use im_attachment::{SendImAttachmentTool, SendOutput};
pub use mutation_queue::{LockError, LockSettings, MutationGuard, MutationQueue};
pub use read::{
    DEFAULT_MAX_IMAGE_BYTES, ImageOutput, ReadBody, ReadOutput, ReadTool, TextPage, TruncatedBy,
};
pub use write::{LinesChanged, MAX_DIFF_BYTES, WriteChange, WriteOutput, WriteTool};

use crate::{Failure, OutputLimits};
use kun_ports::{ImBridge, Tool};
use std::sync::Arc;

/// The `read` tool with these page limits.
#[must_use]
pub fn read_tool(limits: OutputLimits) -> Arc<dyn Tool> {
    Arc::new(ReadTool::new(limits))
}

/// The `write` tool, locking through `queue`.
#[must_use]
pub fn write_tool(queue: Arc<MutationQueue>) -> Arc<dyn Tool> {
    Arc::new(WriteTool::new(queue))
}

/// The `edit` tool, locking through `queue`.
#[must_use]
pub fn edit_tool(queue: Arc<MutationQueue>) -> Arc<dyn Tool> {
    Arc::new(EditTool::new(queue))
}

/// The `send_im_attachment` tool, sending through `bridge`. Register it only when a bridge
/// is configured.
#[must_use]
pub fn send_im_attachment_tool(bridge: Arc<dyn ImBridge>) -> Arc<dyn Tool> {
    Arc::new(SendImAttachmentTool::new(bridge))
}

/// The path argument when it is not blank.
fn non_blank(path: &str) -> Option<String> {
    (!path.trim().is_empty()).then(|| path.to_owned())
}

/// Runs blocking file work off the async threads.
pub(crate) async fn run_blocking<T, F>(work: F) -> Result<T, Failure>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, Failure> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|err| {
            Err(Failure::new(format!(
                "the file operation stopped unexpectedly: {err}"
            )))
        })
}

/// Where a checked path is opened from: the turn root it lies in (see [`beneath`]).
pub(crate) fn beneath(
    resolved: &kun_ports::ResolvedPath,
    ctx: &kun_ports::ToolContext<'_>,
) -> beneath::Beneath {
    beneath::Beneath::locate(
        &resolved.physical,
        resolved.root.iter().chain(ctx.turn.workspace_roots),
    )
}

/// Opens a regular file beneath its root, through no link, without waiting on a FIFO (for
/// the tools outside this module: `verify_changes`).
pub(crate) fn open_beneath(at: &beneath::Beneath) -> Result<std::fs::File, no_follow::FileError> {
    no_follow::open_file(at)
}

/// Reads a whole regular file beneath its root, through no link (for the tools outside
/// this module: `lsp`).
pub(crate) fn read_beneath(at: &beneath::Beneath) -> Result<Vec<u8>, no_follow::FileError> {
    no_follow::read_file(at)
}
