//! The start-up probe: which tier commands run under, and why, for `doctor` and
//! `catalog --json`.

use super::NoConfinement;
use kun_ports::{CommandConfinement, ConfinementTier};
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// How many processes (threads count too) a confined command may have by default, when a pids
/// cgroup is available. Large enough for parallel builds and test runs, small enough that a
/// fork bomb stops long before the machine does.
pub const DEFAULT_MAX_PROCESSES: u32 = 2048;

/// Where the probe looks for bubblewrap.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BubblewrapProgram {
    /// `bwrap` on `PATH` (the default).
    #[default]
    OnPath,
    /// This program.
    At(PathBuf),
    /// Do not consider the bubblewrap tier.
    Skip,
}

/// Whether the probe considers the Landlock tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LandlockProbe {
    /// Consider it (the default).
    #[default]
    Consider,
    /// Do not consider it.
    Skip,
}

/// What the probe tries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeOptions {
    /// Where bubblewrap is.
    pub bubblewrap: BubblewrapProgram,
    /// Whether Landlock is considered.
    pub landlock: LandlockProbe,
    /// The most processes (threads count) one confined command may have, when a pids cgroup
    /// is available.
    pub max_processes: u32,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        Self {
            bubblewrap: BubblewrapProgram::OnPath,
            landlock: LandlockProbe::Consider,
            max_processes: DEFAULT_MAX_PROCESSES,
        }
    }
}

/// How a tier fared in the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeStatus {
    /// It works here.
    Usable,
    /// It does not work here (the detail says why).
    Unusable,
    /// It was not tried (a stronger tier was chosen, or the options skipped it).
    NotTried,
}

/// One tier's probe result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProbeOutcome {
    /// Usable, unusable or not tried.
    pub status: ProbeStatus,
    /// What was found, in words.
    pub detail: String,
}

impl ProbeOutcome {
    fn usable(detail: impl Into<String>) -> Self {
        Self {
            status: ProbeStatus::Usable,
            detail: detail.into(),
        }
    }

    fn unusable(detail: impl Into<String>) -> Self {
        Self {
            status: ProbeStatus::Unusable,
            detail: detail.into(),
        }
    }

    fn not_tried(detail: impl Into<String>) -> Self {
        Self {
            status: ProbeStatus::NotTried,
            detail: detail.into(),
        }
    }
}

/// The probe's findings, serialisable for `doctor --json` and `catalog --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfinementReport {
    /// The tier commands run under.
    pub tier: ConfinementTier,
    /// Why that tier, and what it enforces and does not.
    pub reason: String,
    /// The bubblewrap tier's probe.
    pub bubblewrap: ProbeOutcome,
    /// The Landlock tier's probe.
    pub landlock: ProbeOutcome,
    /// The most processes one confined command may have; `None` without a pids cgroup.
    pub max_processes: Option<u32>,
    /// The pids cgroup found, or why there is none.
    pub cgroup: String,
}

/// What the start-up probe found: the tier commands will run under, and why that one.
/// `kun-tools doctor` prints it.
///
/// ```
/// use kun_sandbox::SandboxCapabilities;
///
/// let caps = SandboxCapabilities::probe();
/// assert_eq!(caps.confinement().tier(), caps.tier());
/// println!("{caps}"); // command confinement: bubblewrap (…)
/// ```
#[derive(Clone)]
pub struct SandboxCapabilities {
    confinement: Arc<dyn CommandConfinement>,
    report: ConfinementReport,
}

impl fmt::Debug for SandboxCapabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SandboxCapabilities")
            .field("report", &self.report)
            .finish_non_exhaustive()
    }
}

impl SandboxCapabilities {
    /// Probes the machine for the strongest usable tier (bubblewrap on `PATH`, then Landlock).
    #[must_use]
    pub fn probe() -> Self {
        Self::probe_with(&ProbeOptions::default())
    }

    /// Probes with `options`.
    #[must_use]
    pub fn probe_with(options: &ProbeOptions) -> Self {
        #[cfg(target_os = "linux")]
        {
            linux::probe(options)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = options;
            Self::unconfined(
                "OS confinement of commands is implemented for Linux only",
                ProbeOutcome::unusable("Linux only"),
                ProbeOutcome::unusable("Linux only"),
                "Linux only".to_owned(),
            )
        }
    }

    /// No confinement, for `reason`.
    fn unconfined(
        why: &str,
        bubblewrap: ProbeOutcome,
        landlock: ProbeOutcome,
        cgroup: String,
    ) -> Self {
        Self {
            confinement: Arc::new(NoConfinement),
            report: ConfinementReport {
                tier: ConfinementTier::None,
                reason: format!("{why}; workspace-write asks before every command"),
                bubblewrap,
                landlock,
                max_processes: None,
                cgroup,
            },
        }
    }

    /// The tier commands run under.
    #[must_use]
    pub fn tier(&self) -> ConfinementTier {
        self.report.tier
    }

    /// Why this tier, in words for diagnostics.
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.report.reason
    }

    /// Everything the probe found, serialisable.
    #[must_use]
    pub fn report(&self) -> &ConfinementReport {
        &self.report
    }

    /// The confinement adapter for the chosen tier.
    #[must_use]
    pub fn confinement(&self) -> Arc<dyn CommandConfinement> {
        Arc::clone(&self.confinement)
    }
}

impl fmt::Display for SandboxCapabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "command confinement: {} ({})",
            self.tier().label(),
            self.reason()
        )
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::super::bwrap::BubblewrapConfinement;
    use super::super::cgroup::CgroupParent;
    use super::super::enforcement::Enforcement;
    use super::super::guards::guard_names;
    use super::super::landlock::{LandlockConfinement, MINIMUM_ABI, kernel_abi};
    use super::{
        BubblewrapProgram, ConfinementReport, LandlockProbe, ProbeOptions, ProbeOutcome,
        SandboxCapabilities,
    };
    use kun_ports::process::{EnvAllowList, GroupGuard};
    use kun_ports::{
        ChildPipe, ChildStdio, CommandConfinement, CommandSpec, ConfinedCommand, ConfinementScope,
    };
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// How long a trial `/bin/true` may take.
    const TRIAL_TIMEOUT: Duration = Duration::from_secs(20);

    pub(super) fn probe(options: &ProbeOptions) -> SandboxCapabilities {
        let cgroups = CgroupParent::find();
        let cgroup_detail = match &cgroups {
            Ok(parent) => format!("pids cgroups under {}", parent.dir().display()),
            Err(why) => format!("no pids cgroup ({why})"),
        };
        let bound = |max: Option<u32>| match max {
            Some(max) => format!("at most {max} processes"),
            None => format!("no process bound: {cgroup_detail}"),
        };
        let enforcement = || Enforcement::new(cgroups.clone().ok(), options.max_processes);

        let bubblewrap = match try_bubblewrap(options, &enforcement) {
            Ok((tier, version)) => {
                let max = tier.max_processes();
                let detail = format!("{version} at {}", tier.program().display());
                let reason = format!(
                    "{detail}: / read-only, the workspace roots writable with {} read-only, a \
                     private /tmp, no network unless enabled, seccomp, no capabilities, {}",
                    guard_names(),
                    bound(max)
                );
                return chosen(
                    Arc::new(tier),
                    reason,
                    ProbeOutcome::usable(detail),
                    ProbeOutcome::not_tried("bubblewrap is used"),
                    max,
                    cgroup_detail,
                );
            }
            Err(outcome) => outcome,
        };
        let landlock = match try_landlock(options, &enforcement) {
            Ok(tier) => {
                let max = tier.max_processes();
                let detail = format!("Landlock ABI {}", tier.abi());
                let reason = format!(
                    "{detail} + seccomp (bubblewrap: {}): writes only to the workspace roots and \
                     a private TMPDIR, no network unless enabled, seccomp, no capabilities, {}; \
                     Landlock cannot keep {} read-only inside a writable root",
                    bubblewrap.detail,
                    bound(max),
                    guard_names()
                );
                return chosen(
                    Arc::new(tier),
                    reason,
                    bubblewrap,
                    ProbeOutcome::usable(detail),
                    max,
                    cgroup_detail,
                );
            }
            Err(outcome) => outcome,
        };
        let why = format!(
            "no OS confinement (bubblewrap: {}; Landlock: {})",
            bubblewrap.detail, landlock.detail
        );
        SandboxCapabilities::unconfined(&why, bubblewrap, landlock, cgroup_detail)
    }

    fn chosen(
        confinement: Arc<dyn CommandConfinement>,
        reason: String,
        bubblewrap: ProbeOutcome,
        landlock: ProbeOutcome,
        max_processes: Option<u32>,
        cgroup: String,
    ) -> SandboxCapabilities {
        let tier = confinement.tier();
        SandboxCapabilities {
            confinement,
            report: ConfinementReport {
                tier,
                reason,
                bubblewrap,
                landlock,
                max_processes,
                cgroup,
            },
        }
    }

    fn try_bubblewrap(
        options: &ProbeOptions,
        enforcement: &dyn Fn() -> Result<Enforcement, kun_ports::ConfinementError>,
    ) -> Result<(BubblewrapConfinement, String), ProbeOutcome> {
        let program = match &options.bubblewrap {
            BubblewrapProgram::Skip => return Err(ProbeOutcome::not_tried("skipped")),
            BubblewrapProgram::At(path) => path.clone(),
            BubblewrapProgram::OnPath => find_on_path("bwrap").ok_or_else(|| {
                ProbeOutcome::unusable(
                    "not installed (no `bwrap` on PATH; install the bubblewrap package)",
                )
            })?,
        };
        let version = version_of(&program);
        let enforcement = enforcement().map_err(|err| ProbeOutcome::unusable(err.message))?;
        let tier = BubblewrapConfinement::new(program, enforcement);
        trial(&tier).map_err(|stderr| {
            ProbeOutcome::unusable(format!(
                "{version} is installed but {}; using the next tier",
                bwrap_failure(&stderr)
            ))
        })?;
        Ok((tier, version))
    }

    fn try_landlock(
        options: &ProbeOptions,
        enforcement: &dyn Fn() -> Result<Enforcement, kun_ports::ConfinementError>,
    ) -> Result<LandlockConfinement, ProbeOutcome> {
        if options.landlock == LandlockProbe::Skip {
            return Err(ProbeOutcome::not_tried("skipped"));
        }
        let abi = kernel_abi();
        if abi < MINIMUM_ABI {
            return Err(ProbeOutcome::unusable(if abi == 0 {
                "the kernel has no Landlock (or it is disabled)".to_owned()
            } else {
                format!(
                    "the kernel's Landlock ABI is {abi}; the tier needs {MINIMUM_ABI} (Linux 6.2)"
                )
            }));
        }
        let enforcement = enforcement().map_err(|err| ProbeOutcome::unusable(err.message))?;
        let tier = LandlockConfinement::new(abi, enforcement);
        trial(&tier).map_err(|stderr| {
            ProbeOutcome::unusable(format!("a trial command failed: {}", first_line(&stderr)))
        })?;
        Ok(tier)
    }

    /// Runs `/bin/true` through `tier` in a temporary workspace; the error is what it said.
    fn trial(tier: &dyn CommandConfinement) -> Result<(), String> {
        let temp = tempfile::Builder::new()
            .prefix("kun-probe-")
            .tempdir()
            .map_err(|err| format!("cannot make a temporary workspace: {err}"))?;
        let spec = CommandSpec::new(
            "/bin/true",
            temp.path(),
            EnvAllowList::default().from_current_process(),
            ConfinementScope::workspace(temp.path()),
        )
        .stdio(ChildStdio {
            stdin: ChildPipe::Null,
            stdout: ChildPipe::Null,
            stderr: ChildPipe::Piped,
        });
        let ConfinedCommand { mut command, lease } =
            tier.command(&spec).map_err(|err| err.message)?;
        let mut child = command
            .spawn()
            .map_err(|err| format!("cannot start it: {err}"))?;
        let mut group = GroupGuard::for_leader(Some(child.id()));
        let mut stderr = child.stderr.take();
        let deadline = Instant::now() + TRIAL_TIMEOUT;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Ok(None) => break Err("it did not finish in time".to_owned()),
                Err(err) => break Err(format!("waiting for it failed: {err}")),
            }
        };
        group.kill();
        let _ = child.wait();
        drop(lease);
        let mut said = String::new();
        if let Some(pipe) = stderr.as_mut() {
            let _ = pipe.take(8 * 1024).read_to_string(&mut said);
        }
        match status? {
            status if status.success() => Ok(()),
            status => Err(if said.trim().is_empty() {
                format!("it exited with {status}")
            } else {
                said
            }),
        }
    }

    /// bwrap's failure in words, with the namespace case named (confinement.md V20).
    pub(super) fn bwrap_failure(stderr: &str) -> String {
        let line = first_line(stderr);
        let denied = [
            "Creating new namespace failed",
            "No permissions to create new namespace",
            "setting up uid map",
            "Operation not permitted",
        ];
        if denied.iter().any(|needle| stderr.contains(needle)) {
            format!(
                "cannot create its namespaces here (user namespaces are denied, e.g. by AppArmor \
                 or user.max_user_namespaces): {line}"
            )
        } else if stderr.contains("Can't mount proc") {
            format!("cannot mount /proc here: {line}")
        } else {
            format!("a trial run failed: {line}")
        }
    }

    fn first_line(text: &str) -> String {
        let line = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        line.chars().take(300).collect()
    }

    /// `bubblewrap X.Y.Z`, or `bubblewrap` when `--version` says nothing useful.
    fn version_of(program: &Path) -> String {
        let output = std::process::Command::new(program)
            .arg("--version")
            .env_clear()
            .stdin(std::process::Stdio::null())
            .output();
        output
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|v| !v.is_empty() && v.len() < 100)
            .unwrap_or_else(|| "bubblewrap".to_owned())
    }

    fn find_on_path(name: &str) -> Option<PathBuf> {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| {
                candidate.is_absolute()
                    && candidate
                        .metadata()
                        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
            })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn denied_namespaces_are_named() {
            let said = "bwrap: Creating new namespace failed: nesting depth or \
                        /proc/sys/user/max_*_namespaces exceeded (ENOSPC)\n";
            let words = bwrap_failure(said);
            assert!(words.contains("user namespaces are denied"), "{words}");
            assert!(words.contains("ENOSPC"), "{words}");
            assert!(bwrap_failure("bwrap: Can't mount proc on /newroot/proc").contains("/proc"));
            assert!(bwrap_failure("").contains("no message"));
        }
    }
}
