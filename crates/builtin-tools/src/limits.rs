//! Output limits shared by every tool that returns text.

use serde::{Deserialize, Serialize};

/// How much text a tool result may carry before it is truncated (head for reads, tail for
/// command output). Defaults: 2,000 lines and 50 KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputLimits {
    /// At most this many lines.
    pub max_lines: usize,
    /// At most this many bytes.
    pub max_bytes: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        Self {
            max_lines: 2_000,
            max_bytes: 50 * 1024,
        }
    }
}

impl OutputLimits {
    /// Limits of at least one line and one byte.
    #[must_use]
    pub fn new(max_lines: usize, max_bytes: usize) -> Self {
        Self {
            max_lines: max_lines.max(1),
            max_bytes: max_bytes.max(1),
        }
    }
}
