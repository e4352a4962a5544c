//! What a confined child does between fork and exec, in this order:
//!
//! 1. `setsid`: a new session and process group (its id is the child's pid), no terminal;
//! 2. join its pids cgroup (write `0` to the `cgroup.procs` opened in the parent);
//! 3. keep one descriptor across exec (bwrap's seccomp program) by clearing its CLOEXEC flag;
//! 4. no_new_privs, then drop every capability: the bounding and ambient sets, then effective,
//!    permitted and inheritable (as root, Landlock alone does not stop a child reading
//!    `/proc/$PPID/environ`, and root regains every capability at exec unless no_new_privs is
//!    set first — confinement.md V15, V16);
//! 5. Landlock (`restrict_self` on the ruleset built in the parent);
//! 6. seccomp, last, so the steps before may use the calls it denies.
//!
//! Everything is built in the parent. The child only makes system calls on borrowed data:
//! no allocation, no lock, errors only as raw OS errors (the process is a fork of a
//! multi-threaded one; see rust-lang/libs-team#701).

use super::cgroup;
use super::seccomp::SeccompProgram;
use landlock::{RulesetCreated, RulesetStatus};
use rustix::thread::{CapabilitySet, CapabilitySets};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

/// The steps one child takes; each is optional.
#[derive(Default)]
pub(crate) struct ChildSetup {
    /// Step 2: the `cgroup.procs` of the command's cgroup.
    pub(crate) cgroup: Option<OwnedFd>,
    /// Step 3: a descriptor to keep across exec.
    pub(crate) inherit: Option<OwnedFd>,
    /// Step 4.
    pub(crate) drop_privileges: bool,
    /// Step 5.
    pub(crate) landlock: Option<RulesetCreated>,
    /// Step 6.
    pub(crate) seccomp: Option<Arc<SeccompProgram>>,
}

impl ChildSetup {
    /// Makes `command`'s child take these steps before exec.
    pub(crate) fn install(self, command: &mut Command) {
        let mut setup = self;
        let expects_landlock = setup.landlock.is_some();
        #[allow(
            unsafe_code,
            reason = "pre_exec is the only way to confine a child between fork and exec"
        )]
        // SAFETY: `run` only makes system calls on data owned by the closure or borrowed from
        // it; it allocates nothing, takes no lock and builds errors from raw errno values, so
        // it is sound in the forked child of a multi-threaded process.
        unsafe {
            command.pre_exec(move || setup.run(expects_landlock));
        }
    }

    /// The steps. `expects_landlock`: a ruleset was given (it is consumed by the first child,
    /// so a second spawn of the same command fails instead of running without it).
    fn run(&mut self, expects_landlock: bool) -> io::Result<()> {
        rustix::process::setsid().map_err(raw)?;
        if let Some(procs) = &self.cgroup {
            cgroup::join(procs)?;
        }
        if let Some(fd) = &self.inherit {
            rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty()).map_err(raw)?;
        }
        if self.drop_privileges {
            drop_privileges()?;
        }
        match self.landlock.take() {
            Some(ruleset) => match ruleset.restrict_self() {
                Ok(status) if status.ruleset != RulesetStatus::NotEnforced => {}
                Ok(_) => return Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
                Err(_) => return Err(io::Error::from_raw_os_error(libc::EPERM)),
            },
            None if expects_landlock => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
            None => {}
        }
        if let Some(program) = &self.seccomp {
            program.install()?;
        }
        Ok(())
    }
}

/// Step 4: no_new_privs, then no capability in any set.
fn drop_privileges() -> io::Result<()> {
    rustix::thread::set_no_new_privs(true).map_err(raw)?;
    for bit in 0..64_u32 {
        let capability = CapabilitySet::from_bits_retain(1_u64 << bit);
        match rustix::thread::remove_capability_from_bounding_set(capability) {
            // EINVAL: past the last capability this kernel knows. EPERM: not privileged
            // (not root), so there is nothing to drop from the bounding set anyway.
            Ok(()) | Err(rustix::io::Errno::PERM) => {}
            Err(rustix::io::Errno::INVAL) => break,
            Err(errno) => return Err(raw(errno)),
        }
    }
    match rustix::thread::clear_ambient_capability_set() {
        Ok(()) | Err(rustix::io::Errno::INVAL) => {}
        Err(errno) => return Err(raw(errno)),
    }
    rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    )
    .map_err(raw)
}

fn raw(errno: rustix::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(errno.raw_os_error())
}
