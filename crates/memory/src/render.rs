//! How memories read to a model: `- [id] (scope) content`, one per item, later lines of a
//! memory indented under it.

use kun_ports::Memory;

/// One memory as a list item.
///
/// ```
/// use kun_memory::render_memory;
/// use kun_ports::{Memory, MemoryScope};
/// let memory = Memory {
///     id: "m7".into(),
///     scope: MemoryScope::Project,
///     content: "Release steps:\n1. tag\n2. push".into(),
///     tags: vec![],
///     created_at_ms: 1,
///     updated_at_ms: 1,
/// };
/// assert_eq!(render_memory(&memory), "- [m7] (project) Release steps:\n  1. tag\n  2. push");
/// ```
#[must_use]
pub fn render_memory(memory: &Memory) -> String {
    let mut out = format!("- [{}] ({}) ", memory.id, memory.scope);
    for (i, line) in memory.content.trim_end().lines().enumerate() {
        if i > 0 {
            out.push_str("\n  ");
        }
        out.push_str(line);
    }
    out
}

/// Several memories, one item each, in the order given.
#[must_use]
pub fn render_memories(memories: &[Memory]) -> String {
    memories
        .iter()
        .map(render_memory)
        .collect::<Vec<_>>()
        .join("\n")
}
