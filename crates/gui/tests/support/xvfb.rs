//! Starting a private Xvfb for a test: a free display number, `-noreset` (or the server
//! resets the pointer whenever its last client disconnects), stopped when dropped.
//!
//! Outside CI a missing Xvfb skips the test with a message; under `CI=true` it fails
//! (`.ci/run` installs it).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running Xvfb.
pub struct Xvfb {
    child: Child,
    /// `:N`.
    pub display: String,
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // Our own child, by its pid: never a group, never a negative pid.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn installed() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("Xvfb").is_file()))
}

fn taken(n: u32) -> bool {
    Path::new(&format!("/tmp/.X{n}-lock")).exists()
        || Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
}

impl Xvfb {
    /// Starts Xvfb with one screen of `width`×`height`×24, or `None` (skipping) when Xvfb is
    /// not installed outside CI.
    pub fn start(width: u32, height: u32) -> Option<Self> {
        if !installed() {
            assert!(
                std::env::var_os("CI").is_none(),
                "Xvfb must be installed in CI (.ci/run installs the xvfb package)"
            );
            eprintln!("skipping: Xvfb is not installed (apt-get install xvfb, or run .ci/run)");
            return None;
        }
        // Spread the starting number by process so parallel test binaries rarely collide.
        let start = 100 + std::process::id() % 400;
        for n in (start..start + 200).map(|n| 100 + (n - 100) % 600) {
            if taken(n) {
                continue;
            }
            let display = format!(":{n}");
            let child = Command::new("Xvfb")
                .args([
                    display.as_str(),
                    "-screen",
                    "0",
                    &format!("{width}x{height}x24"),
                    "-noreset",
                    "-nolisten",
                    "tcp",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("Xvfb starts");
            let mut server = Self { child, display };
            if server.ready() {
                return Some(server);
            }
            // Lost a race for this number (or it failed): try the next one.
        }
        panic!("no free X display number for Xvfb");
    }

    /// Waits until the server accepts connections (or has exited).
    fn ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if x11rb::connect(Some(&self.display)).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}
