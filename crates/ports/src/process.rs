//! Child processes, in one place: the environment a child gets ([`EnvAllowList`],
//! [`ChildEnv`]), its own session ([`new_session`]), and the kill of its whole process group
//! ([`ProcessGroup`], [`GroupGuard`]).
//!
//! This is the one module of kun-ports that touches processes (the rest of the crate does no
//! I/O). Concern crates may depend only on kun-ports, so the three places that start
//! programs — the command tools of kun-builtin-tools, hooks and MCP stdio servers — share
//! these pieces instead of three copies.
//!
//! Who gets which environment:
//!
//! | child | environment |
//! |---|---|
//! | commands the model runs (`bash`, `background_shell`, `verify_changes`), `lsp` servers | [`EnvAllowList::BASE`] + `LC_*` + the names the user config adds (`[shell] env`) |
//! | MCP stdio servers | [`EnvAllowList::BASE`] + `LC_*` + the server's configured `env` |
//! | hooks | the full environment: hooks are the user's own programs, configured by the user |
//!
//! An allow-list, not a deny-list: secrets come under any name (`AWS_ACCESS_KEY_ID`,
//! `PGPASSWORD`, `DATABASE_URL`, `GITHUB_PAT`), and a suffix rule misses most of them.
//!
//! ```
//! use kun_ports::process::EnvAllowList;
//! use std::ffi::OsString;
//!
//! let vars = [("PATH", "/bin"), ("OPENAI_API_KEY", "sk-1"), ("LC_ALL", "C"), ("EDITOR", "vi")]
//!     .map(|(k, v)| (OsString::from(k), OsString::from(v)));
//! let env = EnvAllowList::new(["EDITOR"]).filter(vars);
//! let names: Vec<_> = env.names().collect();
//! assert_eq!(names, ["EDITOR", "LC_ALL", "PATH"]);
//! ```

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

/// Which variables of our environment a child may see: [`Self::BASE`], every `LC_*`, and the
/// extra names the configuration adds (exact names).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvAllowList {
    extra: Vec<String>,
}

impl EnvAllowList {
    /// The names every allow-listed child gets (when we have them).
    pub const BASE: [&'static str; 8] = [
        "PATH", "HOME", "LANG", "TERM", "USER", "SHELL", "TMPDIR", "TZ",
    ];
    /// Name prefixes every allow-listed child gets: the locale categories.
    pub const BASE_PREFIXES: [&'static str; 1] = ["LC_"];

    /// The base plus `extra` names (from `[shell] env`); empty and duplicate names are ignored.
    #[must_use]
    pub fn new<I, S>(extra: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut extra: Vec<String> = extra
            .into_iter()
            .map(Into::into)
            .filter(|name| !name.is_empty())
            .collect();
        extra.sort();
        extra.dedup();
        Self { extra }
    }

    /// The extra names, sorted.
    #[must_use]
    pub fn extra(&self) -> &[String] {
        &self.extra
    }

    /// Whether a child may see the variable `name`.
    #[must_use]
    pub fn allows(&self, name: &OsStr) -> bool {
        let Some(name) = name.to_str() else {
            return false;
        };
        Self::BASE.contains(&name)
            || Self::BASE_PREFIXES
                .iter()
                .any(|prefix| name.starts_with(prefix) && name.len() > prefix.len())
            || self.extra.iter().any(|extra| extra == name)
    }

    /// The allowed variables among `vars`.
    #[must_use]
    pub fn filter(&self, vars: impl IntoIterator<Item = (OsString, OsString)>) -> ChildEnv {
        ChildEnv(
            vars.into_iter()
                .filter(|(name, _)| self.allows(name))
                .collect(),
        )
    }

    /// The allowed variables of this process's environment.
    #[must_use]
    pub fn from_current_process(&self) -> ChildEnv {
        self.filter(std::env::vars_os())
    }
}

/// The complete environment of a child: nothing else is passed (the command's environment is
/// cleared first). Names are unique and kept sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildEnv(BTreeMap<OsString, OsString>);

impl ChildEnv {
    /// An empty environment.
    #[must_use]
    pub fn empty() -> Self {
        Self::default()
    }

    /// Sets `name` to `value`, replacing an earlier value.
    pub fn set(&mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> &mut Self {
        self.0.insert(name.into(), value.into());
        self
    }

    /// Removes `name`.
    pub fn remove(&mut self, name: impl AsRef<OsStr>) -> &mut Self {
        self.0.remove(name.as_ref());
        self
    }

    /// The value of `name`.
    #[must_use]
    pub fn get(&self, name: impl AsRef<OsStr>) -> Option<&OsStr> {
        self.0.get(name.as_ref()).map(OsString::as_os_str)
    }

    /// The variables, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.0.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }

    /// The names, sorted, lossily as text.
    pub fn names(&self) -> impl Iterator<Item = String> + '_ {
        self.0.keys().map(|k| k.to_string_lossy().into_owned())
    }

    /// Clears `command`'s environment and sets exactly these variables.
    pub fn apply_to(&self, command: &mut std::process::Command) {
        command.env_clear().envs(self.iter());
    }
}

/// Makes `command`'s child start a new session (`setsid`), and so a new process group whose id
/// is the child's pid, with no controlling terminal (no `/dev/tty`, no keystroke injection
/// into ours).
///
/// Do not also call `Command::process_group`: a group leader cannot start a session.
#[cfg(unix)]
pub fn new_session(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    #[allow(
        unsafe_code,
        reason = "pre_exec is the only way to run setsid in the child before exec"
    )]
    // SAFETY: the closure runs between fork and exec; it makes one raw system call (setsid),
    // allocates nothing, takes no lock and builds its error from the raw errno.
    unsafe {
        command.pre_exec(|| {
            rustix::process::setsid()
                .map(drop)
                .map_err(|errno| std::io::Error::from_raw_os_error(errno.raw_os_error()))
        });
    }
}

/// A process group that can be killed as a whole: the group a child leads after
/// [`new_session`] (or `process_group(0)`).
#[cfg(unix)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGroup(rustix::process::Pid);

#[cfg(unix)]
impl ProcessGroup {
    /// The group led by `pid`; `None` for 0 and 1 (which would address our own group or
    /// init's) and for numbers that are not pids.
    #[must_use]
    pub fn led_by(pid: u32) -> Option<Self> {
        let raw = i32::try_from(pid).ok().filter(|raw| *raw > 1)?;
        rustix::process::Pid::from_raw(raw).map(Self)
    }

    /// The group's id.
    #[must_use]
    pub fn id(self) -> u32 {
        self.0.as_raw_nonzero().get().unsigned_abs()
    }

    /// Sends SIGKILL to every process in the group. A group that is already gone is fine.
    ///
    /// The group is addressed by its number: after the leader was reaped the number could in
    /// theory be reused, but Linux does not hand out a pid while a process group of that
    /// number still has members, and an empty group only answers ESRCH.
    pub fn kill(self) {
        match rustix::process::kill_process_group(self.0, rustix::process::Signal::KILL) {
            Ok(()) | Err(rustix::io::Errno::SRCH) => {}
            Err(err) => {
                // Nothing better to do than say so: the caller is cleaning up.
                report_kill_failure(self.id(), err);
            }
        }
    }
}

#[cfg(unix)]
fn report_kill_failure(group: u32, err: rustix::io::Errno) {
    // kun-ports has no logging dependency; a failed kill of our own group is rare enough
    // (EPERM after a setuid exec) to go to stderr.
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("kun: could not kill process group {group}: {err}\n"),
    );
}

/// Kills its process group when dropped (a cancelled call, a dropped connection) or when told
/// to; at most once.
#[cfg(unix)]
#[derive(Debug, Default)]
pub struct GroupGuard(Option<ProcessGroup>);

#[cfg(unix)]
impl GroupGuard {
    /// A guard for the group led by `pid` (a child started with [`new_session`]); a guard of
    /// nothing when `pid` is `None` or not a usable group id.
    #[must_use]
    pub fn for_leader(pid: Option<u32>) -> Self {
        Self(pid.and_then(ProcessGroup::led_by))
    }

    /// The guarded group, while armed.
    #[must_use]
    pub fn group(&self) -> Option<ProcessGroup> {
        self.0
    }

    /// Kills the group now; later calls and the drop do nothing.
    pub fn kill(&mut self) {
        if let Some(group) = self.0.take() {
            group.kill();
        }
    }
}

#[cfg(unix)]
impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn the_allow_list_keeps_the_base_and_the_extra_names_only() {
        let planted = vars(&[
            ("PATH", "/bin"),
            ("HOME", "/root"),
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "C"),
            ("LC_", "not a locale category"),
            ("TERM", "xterm"),
            ("USER", "me"),
            ("SHELL", "/bin/bash"),
            ("TMPDIR", "/tmp"),
            ("TZ", "UTC"),
            ("AWS_ACCESS_KEY_ID", "a"),
            ("AWS_SECRET_ACCESS_KEY", "b"),
            ("PGPASSWORD", "c"),
            ("DATABASE_URL", "postgres://u:p@h/db"),
            ("GITHUB_PAT", "d"),
            ("FOO_APIKEY", "e"),
            ("OPENAI_API_KEY", "f"),
            ("path", "lower-case is another name"),
            ("CARGO_HOME", "/cargo"),
        ]);
        let env = EnvAllowList::new(["CARGO_HOME", "", "CARGO_HOME"]).filter(planted);
        let names: Vec<String> = env.names().collect();
        assert_eq!(
            names,
            [
                "CARGO_HOME",
                "HOME",
                "LANG",
                "LC_ALL",
                "PATH",
                "SHELL",
                "TERM",
                "TMPDIR",
                "TZ",
                "USER"
            ]
        );
        assert_eq!(env.get("PATH"), Some(OsStr::new("/bin")));
    }

    #[test]
    fn a_child_env_is_exactly_what_was_set() {
        let mut env = ChildEnv::empty();
        env.set("B", "2").set("A", "1").set("B", "3").remove("C");
        let pairs: Vec<_> = env.iter().collect();
        assert_eq!(
            pairs,
            [
                (OsStr::new("A"), OsStr::new("1")),
                (OsStr::new("B"), OsStr::new("3"))
            ]
        );
        let mut command = std::process::Command::new("env");
        command.env("LEFT_OVER", "x");
        env.apply_to(&mut command);
        let output = command.output().unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "A=1\nB=3\n");
    }

    #[cfg(unix)]
    #[test]
    fn no_group_for_pids_that_address_many() {
        assert_eq!(ProcessGroup::led_by(0), None);
        assert_eq!(ProcessGroup::led_by(1), None);
        assert_eq!(ProcessGroup::led_by(4242).map(ProcessGroup::id), Some(4242));
        assert_eq!(ProcessGroup::led_by(u32::MAX), None);
        assert!(GroupGuard::for_leader(Some(1)).group().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn a_guard_kills_the_whole_session_of_its_child() {
        let mut command = std::process::Command::new("/bin/sh");
        command
            .arg("-c")
            .arg("sleep 30 & echo $!; wait")
            .stdout(std::process::Stdio::piped());
        new_session(&mut command);
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        let sid = rustix::process::getsid(rustix::process::Pid::from_raw(grandchild)).unwrap();
        assert_eq!(
            sid.as_raw_nonzero().get().unsigned_abs(),
            child.id(),
            "the child leads a new session"
        );
        drop(GroupGuard::for_leader(Some(child.id())));
        let status = child.wait().unwrap();
        assert!(!status.success(), "the leader was killed");
        // The grandchild is reparented to init and reaped there; give it a moment.
        let gone = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
                .map_or(true, |stat| stat.contains(") Z "))
        });
        assert!(gone, "the background sleep outlived the guard");
    }
}
