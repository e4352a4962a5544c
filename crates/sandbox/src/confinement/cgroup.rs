//! A pids cgroup per confined command: it bounds how many processes (and threads) the command
//! may have, and it finds every one of them afterwards, `setsid` escapees included.
//!
//! Running as root, `RLIMIT_NPROC` does not bind (confinement.md V19), so this is what stops a
//! fork bomb. The command joins its cgroup between fork and exec (it writes `0` to the
//! `cgroup.procs` file opened here); everything it starts inherits the cgroup. When the lease
//! is dropped, whatever is still listed in the cgroup gets SIGKILL and the cgroup is removed.
//!
//! Both hierarchies work: cgroup v1 with a `pids` controller mounted (and writable: we are
//! usually root), and cgroup v2 where our cgroup's children get the `pids` controller. When
//! neither is usable, [`CgroupParent::find`] says why, and commands run without the bound.

use std::fs::{File, OpenOptions};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long dropping a cgroup keeps killing and retrying the removal, at most.
const TEARDOWN: Duration = Duration::from_secs(5);

/// Which cgroup hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// The cgroup under which commands get their own cgroups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CgroupParent {
    dir: PathBuf,
    version: Version,
}

impl CgroupParent {
    /// Finds a usable pids hierarchy: our own cgroup in it must accept a child cgroup with a
    /// `pids.max` that we can write (tried once, then removed).
    ///
    /// # Errors
    /// Why there is none, in words for `doctor`.
    pub(crate) fn find() -> Result<Self, String> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|err| format!("cannot read /proc/self/mountinfo: {err}"))?;
        let membership = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|err| format!("cannot read /proc/self/cgroup: {err}"))?;
        let candidates = candidates(&mountinfo, &membership);
        if candidates.is_empty() {
            return Err("no pids cgroup hierarchy is mounted".to_owned());
        }
        let mut why = Vec::new();
        for parent in candidates {
            match parent.trial() {
                Ok(()) => return Ok(parent),
                Err(err) => why.push(format!("{}: {err}", parent.dir.display())),
            }
        }
        Err(why.join("; "))
    }

    /// Where the command cgroups go.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Creates and removes one child cgroup with a limit.
    fn trial(&self) -> Result<(), String> {
        let (cgroup, _procs) = self.create(64).map_err(|err| err.to_string())?;
        drop(cgroup);
        Ok(())
    }

    /// Makes a new, empty cgroup directory named after this process and a counter.
    ///
    /// A process that ended before its cgroups were torn down (killed, or its teardown thread
    /// never ran) leaves them behind; once its pid is reused, our names meet them. A stale one
    /// is removed when it is empty (`rmdir` refuses a cgroup with processes in it) and the next
    /// name is tried, a few times.
    fn fresh_dir(&self) -> std::io::Result<PathBuf> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        const ATTEMPTS: usize = 16;
        let mut attempt = 0;
        loop {
            let name = format!(
                "kun-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            );
            let dir = self.dir.join(name);
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(dir),
                Err(err)
                    if err.kind() == std::io::ErrorKind::AlreadyExists && attempt < ATTEMPTS =>
                {
                    // Best effort: an occupied stale cgroup stays, and another name is taken.
                    let _ = std::fs::remove_dir(&dir);
                    attempt += 1;
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// A fresh cgroup for one command, limited to `max_processes` tasks, and its
    /// `cgroup.procs` opened for writing (write `0` from the child to join).
    ///
    /// # Errors
    /// When the cgroup cannot be made or limited.
    pub(crate) fn create(&self, max_processes: u32) -> std::io::Result<(CommandCgroup, OwnedFd)> {
        let dir = self.fresh_dir()?;
        let cgroup = CommandCgroup {
            dir,
            version: self.version,
        };
        let limit = cgroup.dir.join("pids.max");
        if !limit.exists() {
            return Err(std::io::Error::other(
                "the new cgroup has no pids.max (the pids controller is not enabled for it)",
            ));
        }
        std::fs::write(&limit, max_processes.to_string())?;
        let procs = OpenOptions::new()
            .write(true)
            .open(cgroup.dir.join("cgroup.procs"))?;
        Ok((cgroup, OwnedFd::from(procs)))
    }
}

/// The candidate parents: for each pids-capable mount, our own cgroup in it.
fn candidates(mountinfo: &str, membership: &str) -> Vec<CgroupParent> {
    let mut found = Vec::new();
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mut right = right.split_whitespace();
        let (Some(fstype), Some(_source), Some(options)) =
            (right.next(), right.next(), right.next())
        else {
            continue;
        };
        let Some(mount_point) = left.split_whitespace().nth(4) else {
            continue;
        };
        let Some(root) = left.split_whitespace().nth(3) else {
            continue;
        };
        let version = match fstype {
            "cgroup" if options.split(',').any(|o| o == "pids") => Version::V1,
            "cgroup2" => Version::V2,
            _ => continue,
        };
        let ours = membership.lines().find_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let matches = match version {
                Version::V1 => controllers.split(',').any(|c| c == "pids"),
                Version::V2 => controllers.is_empty(),
            };
            matches.then(|| path.to_owned())
        });
        let Some(ours) = ours else { continue };
        // The mount shows the hierarchy from `root`; our path is relative to the hierarchy.
        let Some(relative) = Path::new(&ours).strip_prefix(root).ok() else {
            continue;
        };
        found.push(CgroupParent {
            dir: Path::new(&unescape(mount_point)).join(relative),
            version,
        });
    }
    // v1's pids controller first: it needs no delegation.
    found.sort_by_key(|parent| parent.version == Version::V2);
    found
}

/// Mount points escape spaces and a few other bytes as `\ooo`.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let digits: String = chars.clone().take(3).collect();
            if digits.len() == 3
                && let Ok(byte) = u8::from_str_radix(&digits, 8)
            {
                out.push(char::from(byte));
                chars.nth(2);
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// One command's cgroup. Dropping it kills what is left in it and removes it.
#[derive(Debug)]
pub(crate) struct CommandCgroup {
    dir: PathBuf,
    version: Version,
}

impl CommandCgroup {
    /// SIGKILLs every process listed, until the cgroup is empty and removed (or time is up,
    /// then a thread finishes the job).
    fn teardown(dir: &Path, version: Version, deadline: Instant) -> bool {
        loop {
            if version == Version::V2 {
                // cgroup.kill (Linux 5.14) kills the whole subtree at once.
                let _ = std::fs::write(dir.join("cgroup.kill"), "1");
            }
            for pid in listed(dir) {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    // A listed pid is in our cgroup: it is one of the command's processes.
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            match std::fs::remove_dir(dir) {
                Ok(()) => return true,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => return true,
                Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                Err(_) => return false,
            }
        }
    }
}

impl Drop for CommandCgroup {
    fn drop(&mut self) {
        // One pass here: every listed process gets SIGKILL now. Killed processes take a moment
        // to leave (a parent may still have to reap them), and a fork racing the listing is
        // caught by the next pass; the passes until the cgroup is empty run on a thread rather
        // than hold the caller.
        if Self::teardown(&self.dir, self.version, Instant::now()) {
            return;
        }
        let dir = self.dir.clone();
        let version = self.version;
        let spawned = std::thread::Builder::new()
            .name("kun-cgroup-teardown".to_owned())
            .spawn(move || {
                if !Self::teardown(&dir, version, Instant::now() + TEARDOWN) {
                    tracing::warn!(cgroup = %dir.display(), "a command's cgroup could not be removed");
                }
            });
        if spawned.is_err() {
            // No thread: finish here.
            let _ = Self::teardown(&self.dir, self.version, Instant::now() + TEARDOWN);
        }
    }
}

/// The pids listed in a cgroup.
fn listed(dir: &Path) -> Vec<i32> {
    let Ok(mut file) = File::open(dir.join("cgroup.procs")) else {
        return Vec::new();
    };
    let mut text = String::new();
    let _ = std::io::Read::read_to_string(&mut file, &mut text);
    text.lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// Writes `0` (the writer itself) to an open `cgroup.procs`. Called between fork and exec:
/// one `write` system call, no allocation.
pub(crate) fn join(procs: &OwnedFd) -> std::io::Result<()> {
    match rustix::io::write(procs, b"0") {
        Ok(_) => Ok(()),
        Err(errno) => Err(std::io::Error::from_raw_os_error(errno.raw_os_error())),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn names_left_by_an_earlier_process_with_our_pid_are_cleared_or_skipped() {
        let parent = tempfile::tempdir().unwrap();
        let cgroups = CgroupParent {
            dir: parent.path().to_path_buf(),
            version: Version::V2,
        };
        // The next names this process would take, already there: empty ones (removable) and one
        // still holding something (never removed).
        let first = cgroups.fresh_dir().unwrap();
        let next = |n: u64| {
            let (prefix, counter) = first.to_str().unwrap().rsplit_once('-').unwrap();
            PathBuf::from(format!("{prefix}-{}", counter.parse::<u64>().unwrap() + n))
        };
        for n in 1..=3 {
            std::fs::create_dir(next(n)).unwrap();
        }
        std::fs::write(next(2).join("busy"), "").unwrap();
        let made = cgroups.fresh_dir().unwrap();
        assert!(made.is_dir());
        assert!(!next(1).exists(), "an empty stale cgroup is removed");
        assert!(
            next(2).join("busy").exists(),
            "an occupied one is left alone"
        );
    }

    #[test]
    fn candidates_follow_our_membership_in_each_hierarchy() {
        let mountinfo = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
38 31 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
39 31 0:36 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 /kubepods /sys/fs/cgroup/unified\\040dir rw - cgroup2 cgroup2 rw
";
        let membership = "8:pids:/user.slice\n4:memory:/x\n0::/kubepods/pod1\n";
        let found = candidates(mountinfo, membership);
        assert_eq!(
            found,
            [
                CgroupParent {
                    dir: PathBuf::from("/sys/fs/cgroup/pids/user.slice"),
                    version: Version::V1
                },
                CgroupParent {
                    dir: PathBuf::from("/sys/fs/cgroup/unified dir/pod1"),
                    version: Version::V2
                },
            ]
        );
        assert!(candidates("", membership).is_empty());
    }
}
