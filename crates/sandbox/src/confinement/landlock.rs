//! Tier 2: Landlock + seccomp, applied between fork and exec (see `child` for the order).
//!
//! | Landlock rule (ABI 6 rights, best effort below) | paths |
//! |---|---|
//! | read and execute | `/` |
//! | every right | each writable root, and a private temporary directory (the command's `TMPDIR`) |
//! | file rights (write, truncate, ioctl) | `/dev/null` |
//! | TCP bind and connect handled, no rule | with the network off |
//! | scopes: abstract unix sockets, signals | no connecting to abstract sockets or signalling processes outside |
//!
//! Limits, said in `doctor`: rules only add access, so a writable root cannot hold a
//! read-only `.git` or `.kun` (the in-process tools keep refusing those paths); `/tmp` is not
//! private, only not writable (`TMPDIR` points at the private directory); below ABI 9
//! Landlock does not cover connecting to pathname unix sockets (the seccomp filter denies
//! `connect` with the network off); below ABI 6 a command can signal processes of the same
//! user outside.

use super::bwrap::existing;
use super::child::ChildSetup;
use super::enforcement::Enforcement;
use kun_ports::{
    CommandConfinement, CommandSpec, ConfinedCommand, ConfinementError, ConfinementLease,
    ConfinementTier, FileSystemScope, NetworkAccess,
};
use landlock::{
    ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};
use std::path::{Path, PathBuf};

/// The Landlock ABI whose rights we ask for (tested on this ABI and later kernels).
const TARGET_ABI: ABI = ABI::V6;
/// The oldest kernel ABI the tier accepts: from ABI 3 Landlock also controls truncation.
pub(crate) const MINIMUM_ABI: i32 = 3;

/// The kernel's Landlock ABI version: 0 when Landlock is missing or disabled.
pub(crate) fn kernel_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    #[allow(
        unsafe_code,
        reason = "landlock_create_ruleset has no safe wrapper that reports the version"
    )]
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the kernel reads no
    // memory and only returns the ABI version (or an error).
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0_usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(version).map_or(0, |v| v.max(0))
}

/// The Landlock + seccomp tier.
#[derive(Debug)]
pub struct LandlockConfinement {
    abi: i32,
    enforcement: Enforcement,
}

impl LandlockConfinement {
    /// The tier on a kernel with Landlock ABI `abi`.
    pub(crate) const fn new(abi: i32, enforcement: Enforcement) -> Self {
        Self { abi, enforcement }
    }

    /// The kernel's Landlock ABI.
    pub(crate) const fn abi(&self) -> i32 {
        self.abi
    }

    /// The process bound, when commands get a cgroup.
    pub(crate) fn max_processes(&self) -> Option<u32> {
        self.enforcement.max_processes()
    }
}

impl CommandConfinement for LandlockConfinement {
    fn tier(&self) -> ConfinementTier {
        ConfinementTier::Landlock
    }

    fn command(&self, spec: &CommandSpec) -> Result<ConfinedCommand, ConfinementError> {
        let writable = match &spec.scope.files {
            FileSystemScope::Unrestricted => {
                return Ok(ConfinedCommand::bare(spec.unconfined_command()));
            }
            FileSystemScope::Workspace(roots) => existing(roots)?,
            FileSystemScope::ReadOnly(_) => Vec::new(),
        };
        let private_tmp = tempfile::Builder::new()
            .prefix("kun-cmd-")
            .tempdir()
            .map_err(|err| {
                ConfinementError::new(format!(
                    "cannot make the command's private temporary directory: {err}"
                ))
            })?;
        let ruleset = ruleset(&writable, private_tmp.path(), spec.scope.network)?;
        let mut inner = spec.clone();
        inner.env.set("TMPDIR", private_tmp.path());
        let mut command = inner.base_command(&inner.program);
        command.args(&inner.args);
        let cgroup = self.enforcement.cgroup()?;
        let (cgroup, procs) = cgroup.map_or((None, None), |(c, p)| (Some(c), Some(p)));
        ChildSetup {
            cgroup: procs,
            inherit: None,
            drop_privileges: true,
            landlock: Some(ruleset),
            seccomp: Some(self.enforcement.filter(spec.scope.network).clone()),
        }
        .install(&mut command);
        Ok(ConfinedCommand {
            command,
            lease: ConfinementLease::holding((cgroup, private_tmp)),
        })
    }
}

/// The ruleset of the module table, created (its descriptor open) in the parent.
fn ruleset(
    writable: &[PathBuf],
    private_tmp: &Path,
    network: NetworkAccess,
) -> Result<RulesetCreated, ConfinementError> {
    let fail = |err: landlock::RulesetError| {
        ConfinementError::new(format!("cannot build the Landlock rules: {err}"))
    };
    let all = AccessFs::from_all(TARGET_ABI);
    let mut ruleset = Ruleset::default().handle_access(all).map_err(fail)?;
    if network == NetworkAccess::Disabled {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET_ABI))
            .map_err(fail)?;
    }
    let ruleset = ruleset
        .scope(Scope::from_all(TARGET_ABI))
        .map_err(fail)?
        .create()
        .map_err(fail)?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(TARGET_ABI)))
        .map_err(fail)?
        .add_rules(path_beneath_rules(
            writable.iter().map(PathBuf::as_path).chain([private_tmp]),
            all,
        ))
        .map_err(fail)?;
    let dev_null = PathFd::new("/dev/null")
        .map_err(|err| ConfinementError::new(format!("cannot open /dev/null: {err}")))?;
    ruleset
        .add_rule(PathBeneath::new(dev_null, AccessFs::from_file(TARGET_ABI)))
        .map_err(fail)
}
