//! What both confining tiers share: the seccomp filters (built once, one per network setting)
//! and a pids cgroup per command.

use super::cgroup::{CgroupParent, CommandCgroup};
use super::seccomp::SeccompProgram;
use kun_ports::{ConfinementError, NetworkAccess};
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// The filters and the process bound of a confining tier.
#[derive(Debug)]
pub(crate) struct Enforcement {
    offline: Arc<SeccompProgram>,
    online: Arc<SeccompProgram>,
    cgroups: Option<CgroupParent>,
    max_processes: u32,
}

impl Enforcement {
    /// Compiles both filters.
    ///
    /// # Errors
    /// When a filter does not compile (an unsupported architecture).
    pub(crate) fn new(
        cgroups: Option<CgroupParent>,
        max_processes: u32,
    ) -> Result<Self, ConfinementError> {
        Ok(Self {
            offline: Arc::new(SeccompProgram::build(NetworkAccess::Disabled)?),
            online: Arc::new(SeccompProgram::build(NetworkAccess::Enabled)?),
            cgroups,
            max_processes,
        })
    }

    /// The filter for `network`.
    pub(crate) fn filter(&self, network: NetworkAccess) -> &Arc<SeccompProgram> {
        match network {
            NetworkAccess::Disabled => &self.offline,
            NetworkAccess::Enabled => &self.online,
        }
    }

    /// The process bound, when commands get a cgroup.
    pub(crate) fn max_processes(&self) -> Option<u32> {
        self.cgroups.as_ref().map(|_| self.max_processes)
    }

    /// A fresh cgroup for one command and its `cgroup.procs` to join; `None` without cgroups.
    ///
    /// # Errors
    /// When the cgroup cannot be made: the command must not run without the bound it was
    /// promised.
    pub(crate) fn cgroup(&self) -> Result<Option<(CommandCgroup, OwnedFd)>, ConfinementError> {
        let Some(parent) = &self.cgroups else {
            return Ok(None);
        };
        parent.create(self.max_processes).map(Some).map_err(|err| {
            ConfinementError::new(format!(
                "cannot make the command's process-count cgroup under {}: {err}",
                parent.dir().display()
            ))
        })
    }
}
