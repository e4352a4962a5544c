//! Step 9 (read-before-edit) and the read recording of step 18, over the [`ReadTracker`]
//! port. Without a tracker both are off.
//!
//! [`ReadTracker`]: kun_ports::ReadTracker

use super::Host;
use kun_ports::{
    EditGuard, ErrorCode, PathAccess, ReadCheck, ToolDescriptor, ToolHostContext, ToolResult,
};
use serde_json::{Map, Value, json};
use std::ops::ControlFlow;
use std::path::{Component, Path, PathBuf};

impl Host {
    /// Step 9: an edit needs a prior read of its file in this thread, and its fragments must
    /// be in the latest full read.
    pub(crate) fn read_before_edit(
        &self,
        tool: &ToolDescriptor,
        arguments: &Value,
        ctx: &ToolHostContext,
    ) -> ControlFlow<ToolResult> {
        let Some(tracker) = &self.read_tracker else {
            return ControlFlow::Continue(());
        };
        let Some(guard) = tool.tool.edit_guard(arguments) else {
            return ControlFlow::Continue(());
        };
        if guard.path.trim().is_empty() {
            // The tool itself reports the missing path.
            return ControlFlow::Continue(());
        }
        let path = self.edit_target(&guard, ctx);
        match tracker.check_edit(&ctx.thread_id, &path, &guard.old_texts) {
            ReadCheck::Ok => ControlFlow::Continue(()),
            check => ControlFlow::Break(read_first(tool.name(), &guard, check)),
        }
    }

    /// The absolute lexical path of the edited file, as the read tool records it: resolved by
    /// the sandbox when it can, else joined to the primary root and cleaned lexically.
    fn edit_target(&self, guard: &EditGuard, ctx: &ToolHostContext) -> PathBuf {
        self.registry
            .filters()
            .sandbox()
            .resolve_path(
                &guard.path,
                &ctx.workspace_roots,
                ctx.sandbox,
                PathAccess::Read,
            )
            .map_or_else(
                |_| lexical_join(ctx.primary_root(), &guard.path),
                |resolved| resolved.lexical,
            )
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
        if let Some(observation) = tool.tool.observed_read(arguments, &result.output, ctx) {
            tracker.record_read(&ctx.thread_id, observation);
        }
    }
}

/// The `read_before_edit_required` result, with the read the model should do next.
fn read_first(tool: &str, guard: &EditGuard, check: ReadCheck) -> ToolResult {
    let (message, guidance) = if check == ReadCheck::StaleOldText {
        (
            format!(
                "`{tool}` was not run: the text it should replace in `{}` is not in your latest \
                 read of that file, so your view of it may be stale.",
                guard.path
            ),
            "Read the file again (the whole file, or the region you are changing), then retry \
             the edit with text copied from that read.",
        )
    } else {
        (
            format!(
                "`{tool}` was not run: `{}` has not been read in this conversation.",
                guard.path
            ),
            "Read the file first, then retry the edit with text copied from that read.",
        )
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
