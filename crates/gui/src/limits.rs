//! Size limits of what the model may store or ask, with one check used by every tool.

/// The longest goal objective, in characters.
pub const MAX_OBJECTIVE_CHARS: usize = 2_000;
/// The longest todo item, in characters.
pub const MAX_TODO_CHARS: usize = 500;
/// The most items a todo list holds.
pub const MAX_TODOS: usize = 100;
/// The longest question or plan title, in characters.
pub const MAX_QUESTION_CHARS: usize = 4_000;
/// The most fields one `request_user_input` asks.
pub const MAX_FIELDS: usize = 20;
/// The most options of one choice field.
pub const MAX_OPTIONS: usize = 50;
/// The largest plan, in bytes.
pub const MAX_PLAN_BYTES: usize = 512 * 1024;

/// `Some("is empty")` / `Some("is longer than …")` when `text` is blank or too long.
///
/// ```
/// # use kun_gui::limits::blank_or_long;
/// assert_eq!(blank_or_long(" ", 5).as_deref(), Some("is empty"));
/// assert!(blank_or_long("abcdef", 5).unwrap().contains("5 characters"));
/// assert_eq!(blank_or_long("abc", 5), None);
/// ```
#[must_use]
pub fn blank_or_long(text: &str, max_chars: usize) -> Option<String> {
    if text.trim().is_empty() {
        Some("is empty".to_owned())
    } else if text.chars().count() > max_chars {
        Some(format!("is longer than {max_chars} characters; shorten it"))
    } else {
        None
    }
}
