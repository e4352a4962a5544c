//! Output that is too long for a tool result: truncation and the streaming accumulator.
//!
//! * [`truncate_head`] keeps the start of a text (reads, `git_inspect`), [`truncate_tail`] keeps
//!   the end (command output, where the error usually is). Both respect [`OutputLimits`]
//!   (lines and bytes), never cut inside a UTF-8 character, and report what they kept in a
//!   [`Truncation`].
//! * [`TruncationNotice`] says in one bracketed line how much was cut and where the full text is:
//!   `[showing the last 2,000 of 15,320 lines (50.0 KB of 1.2 MB); full output: /tmp/…]`.
//! * [`OutputAccumulator`] takes a child's output chunk by chunk, keeps a bounded tail, counts
//!   the whole stream and spills it to a file once it exceeds the limits; its
//!   [`OutputSnapshot`] is the tail-truncated text, the notice and the spill path.
//!
//! ```
//! use kun_builtin_tools::OutputLimits;
//! use kun_builtin_tools::output::{truncate_tail, FullText};
//!
//! let text = "one\ntwo\nthree\n";
//! let cut = truncate_tail(text, OutputLimits::new(2, 1024));
//! assert_eq!(cut.content, "two\nthree");
//! assert_eq!(
//!     cut.notice(FullText::NotSaved).as_deref(),
//!     Some("[showing the last 2 of 3 lines (9B of 14B); the full output was not kept]"),
//! );
//! ```
//!
//! [`OutputLimits`]: crate::OutputLimits

mod accumulator;
mod truncate;

pub use accumulator::{
    NewOutput, OutputAccumulator, OutputSnapshot, Spill, StreamEnd, Utf8Chunker,
};
pub use truncate::{
    FullText, KeptEnd, TruncatedBy, Truncation, TruncationNotice, format_count, format_size,
    truncate_head, truncate_tail,
};
