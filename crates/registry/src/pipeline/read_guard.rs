//! Step 9 (read-before-edit) and the read recording of step 18, over the [`ReadTracker`]
//! port. Without a tracker both are off.
//!
//! Both key the file the same way, by its lexical path: the path the call named, joined to the
//! primary root and cleaned of `.` and `..` (what the sandbox answers as `lexical` for any
//! path it lets a tool use), so a tool may report what it saw under the path the call named.
//! Recording a read costs no file-system call. Step 9 asks the sandbox where the file is on
//! disk and stats it to give the tracker its revision now: a file changed since the
//! thread saw it needs a new read; one that did not change lets the edit run, and the edit
//! tool itself answers an `oldText` that is not there (`edit_not_found`, with the closest
//! region).
//!
//! | tracker says | result |
//! |---|---|
//! | `Ok` | the call goes on |
//! | `NotRead` | `read_before_edit_required`: read the file first |
//! | `Changed` | `read_before_edit_required`: the file changed on disk since the last read |
//! | `StaleOldText` (no revision known) | `read_before_edit_required`: the text is not in the latest read |
//!
//! [`ReadTracker`]: kun_ports::ReadTracker

use super::Host;
use kun_ports::{
    EditGuard, ErrorCode, FileRevision, PathAccess, ReadCheck, ToolDescriptor, ToolHostContext,
    ToolResult,
};
use serde_json::{Map, Value, json};
use std::ops::ControlFlow;
use std::path::{Component, Path, PathBuf};

impl Host {
    /// Step 9: an edit needs a prior observation of its file in this thread, and the file
    /// must not have changed on disk since (see the module docs).
    pub(crate) fn read_before_edit(
        &self,
        tool: &ToolDescriptor,
        arguments: &Value,
        ctx: &ToolHostContext,
    ) -> ControlFlow<ToolResult> {
        let Some(tracker) = &self.read_tracker else {
            return ControlFlow::Continue(());
        };
        let Some(guard) = tool.tool().edit_guard(arguments) else {
            return ControlFlow::Continue(());
        };
        if guard.path.trim().is_empty() {
            // The tool itself reports the missing path.
            return ControlFlow::Continue(());
        }
        let key = tracker_key(&guard.path, ctx);
        let current = std::fs::metadata(self.on_disk(&guard.path, ctx))
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|meta| FileRevision::of(&meta));
        match tracker.check_edit(&ctx.thread_id, &key, &guard.old_texts, current) {
            ReadCheck::Ok => ControlFlow::Continue(()),
            check => ControlFlow::Break(read_first(tool.name(), &guard, check)),
        }
    }

    /// Where the file a path names is on disk, as the sandbox resolves it for reading; the
    /// lexical path when the sandbox refuses it (the edit tool then answers the refusal).
    fn on_disk(&self, path: &str, ctx: &ToolHostContext) -> PathBuf {
        self.registry
            .filters()
            .sandbox()
            .resolve_path(path, &ctx.workspace_roots, ctx.sandbox, PathAccess::Read)
            .map_or_else(|_| tracker_key(path, ctx), |resolved| resolved.physical)
    }

    /// Step 18 (first part): what a successful read saw goes to the tracker.
    pub(crate) fn record_read(
        &self,
        tool: &ToolDescriptor,
        arguments: Option<&Value>,
        result: &ToolResult,
        ctx: &ToolHostContext,
    ) {
        let (Some(tracker), Some(arguments)) = (&self.read_tracker, arguments) else {
            return;
        };
        if result.is_error {
            return;
        }
        if let Some(mut observation) = tool.tool().observed_read(arguments, &result.output, ctx) {
            observation.path = tracker_key(&observation.path.to_string_lossy(), ctx);
            tracker.record_read(&ctx.thread_id, observation);
        }
    }
}

/// The tracker's key for a path a call named: absolute against the primary root, `.` and
/// `..` resolved lexically.
fn tracker_key(path: &str, ctx: &ToolHostContext) -> PathBuf {
    lexical_join(ctx.primary_root(), path)
}

/// The `read_before_edit_required` result, with the read the model should do next.
fn read_first(tool: &str, guard: &EditGuard, check: ReadCheck) -> ToolResult {
    let again = "Read the file again (the whole file, or the region you are changing), then \
                 retry the edit with text copied from that read.";
    let (message, guidance) = match check {
        ReadCheck::Changed => (
            format!(
                "`{tool}` was not run: `{}` changed on disk since you last read it (another tool \
                 or program wrote it).",
                guard.path
            ),
            again,
        ),
        ReadCheck::StaleOldText => (
            format!(
                "`{tool}` was not run: the text it should replace in `{}` is not in your latest \
                 read of that file, so your view of it may be stale.",
                guard.path
            ),
            again,
        ),
        ReadCheck::NotRead | ReadCheck::Ok => (
            format!(
                "`{tool}` was not run: `{}` has not been read in this conversation.",
                guard.path
            ),
            "Read the file first, then retry the edit with text copied from that read.",
        ),
    };
    let mut details = Map::new();
    details.insert("guidance".to_owned(), Value::from(guidance));
    details.insert(
        "next_action".to_owned(),
        json!({"tool": "read", "arguments": {"path": guard.path}}),
    );
    details.insert("retry_tool".to_owned(), Value::from(tool));
    ToolResult::failure_with(ErrorCode::ReadBeforeEditRequired, message, details)
}

/// `input` made absolute against `root`, with `.` and `..` resolved lexically.
fn lexical_join(root: &Path, input: &str) -> PathBuf {
    let joined = root.join(input);
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::lexical_join;
    use std::path::Path;

    #[test]
    fn lexical_join_cleans_dots() {
        let root = Path::new("/ws");
        assert_eq!(
            lexical_join(root, "a/./b/../c.txt"),
            Path::new("/ws/a/c.txt")
        );
        assert_eq!(lexical_join(root, "/abs/x"), Path::new("/abs/x"));
    }
}
