//! Finding the processes a test started, by a marker in their command line: a test that
//! kills a tool's command checks that nothing it started lives on.

use std::time::{Duration, Instant};

/// Live (not zombie) processes, other than this one, whose command line contains `mark`.
///
/// Put a unique marker in the command a test runs (a nonce in an argument or a `sleep`
/// duration such as `61.125`), then look for it here.
#[must_use]
pub fn marked_processes(mark: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // The state follows the command name in parentheses, which may itself hold `)`.
            let zombie = stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'));
            !zombie && String::from_utf8_lossy(&cmdline).contains(mark)
        })
        .collect()
}

/// Waits (asynchronously, so the tasks reaping them can run) until no process holds `mark`;
/// the pids still alive after `limit` otherwise.
///
/// # Errors
/// The marked processes left when `limit` has passed.
pub async fn none_marked_within(mark: &str, limit: Duration) -> Result<(), Vec<u32>> {
    let deadline = Instant::now() + limit;
    loop {
        let left = marked_processes(mark);
        if left.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(left);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
