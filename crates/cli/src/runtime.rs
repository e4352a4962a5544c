//! The async runtime every command runs on: one thread.
//!
//! A `tools/call` through `serve` is a short chain of hand-offs: the stdin reader, the
//! session, the pipeline, the tool, the stdout writer. On tokio's multi-thread scheduler each
//! hand-off may wake another worker (a futex wake-up and a task switch), and those wake-ups
//! were the largest part of a small call's round trip. On one thread the chain runs without
//! crossing threads except for the blocking pool (stdin and stdout, file and search work).
//!
//! Nothing here needs more than one async thread: every tool runs its CPU and file work
//! in the blocking pool (`spawn_blocking`) or on its own threads (the ordered grep engine),
//! and nothing blocks the async thread waiting on another task.
//!
//! | setting | value | why |
//! |---|---|---|
//! | scheduler | current thread | no cross-thread wake-ups per request |
//! | blocking threads | at most [`MAX_BLOCKING_THREADS`] | each one may hold its own malloc arena and stack |
//! | idle blocking thread kept | [`BLOCKING_KEEP_ALIVE`] | a burst of calls reuses the threads; an idle `serve` returns to its floor |

use std::time::Duration;

/// The most threads the blocking pool runs at once (file I/O, searches, stdin and stdout);
/// more calls wait for a free thread.
pub const MAX_BLOCKING_THREADS: usize = 16;

/// How long an idle blocking thread waits for more work before it ends.
pub const BLOCKING_KEEP_ALIVE: Duration = Duration::from_secs(5);

/// The runtime of the module docs.
///
/// # Errors
/// When the operating system refuses the runtime's resources (threads, epoll).
pub fn build() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .thread_keep_alive(BLOCKING_KEEP_ALIVE)
        .build()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn the_runtime_runs_blocking_work_and_timers_on_one_async_thread() {
        let runtime = build().unwrap();
        let async_thread = runtime.block_on(async { std::thread::current().id() });
        assert_eq!(async_thread, std::thread::current().id());
        let blocking = runtime.block_on(async {
            tokio::time::sleep(Duration::from_millis(1)).await;
            tokio::task::spawn_blocking(|| std::thread::current().id())
                .await
                .unwrap()
        });
        assert_ne!(blocking, async_thread);
    }
}
