//! The seccomp filter every confining tier installs: the last step before exec in the Landlock
//! tier, `bwrap --seccomp FD` in the bubblewrap tier.
//!
//! | system calls | answer | when |
//! |---|---|---|
//! | `ptrace`, `process_vm_readv`, `process_vm_writev` | EPERM | always: no reading or steering other processes |
//! | `io_uring_setup`, `io_uring_enter`, `io_uring_register` | EPERM | always: io_uring can open sockets and files past this filter |
//! | `bpf`, `perf_event_open`, `userfaultfd` | EPERM | always |
//! | `keyctl`, `add_key`, `request_key` | EPERM | always: the kernel keyrings hold other programs' secrets |
//! | `mount`, `umount2`, `pivot_root`, `move_mount`, `open_tree`, `fsopen`, `fsmount`, `fsconfig`, `fspick`, `mount_setattr` | EPERM | always: no remounting a read-only bind |
//! | `unshare`, `clone` with `CLONE_NEWUSER` | EPERM | always: no new user namespace to regain capabilities in |
//! | `chmod`, `fchmod`, `fchmodat`, `fchmodat2`, `open`, `openat`, `creat`, `mknod`, `mknodat` with a set-user-ID or set-group-ID mode bit | EPERM | always: a set-ID file in the workspace (or, under Landlock, outside: it does not control `chmod`) runs as its owner, root, for anyone on the host |
//! | `clone3`, `openat2` | ENOSYS | always: seccomp cannot read their structs (clone flags, a creation mode); the C library falls back to `clone` and `openat` |
//! | any number with the x32 bit (`0x40000000`) | ENOSYS | always, on x86_64: the x32 numbers of the calls above |
//! | `socket`, `socketpair` unless the family is `AF_UNIX` | EPERM | network off |
//! | `connect` | EPERM | network off: no socket reaches out, unix sockets included (a docker or database socket is a way out) |
//! | `sendto` with a destination address | EPERM | network off |
//! | any other architecture's calls (i386 `int 0x80`) | the process is killed | always (seccompiler's arch check) |
//!
//! Socketpairs, pipes and sockets the command was given still work with the network off.

use kun_ports::{ConfinementError, NetworkAccess};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};
use std::collections::BTreeMap;

/// Denied (EPERM) in every scope.
const ALWAYS_DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fsconfig,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
];

/// Calls that take a file mode, and which argument holds it.
#[cfg(target_arch = "x86_64")]
const MODE_ARGUMENTS: &[(libc::c_long, u8)] = &[
    (libc::SYS_chmod, 1),
    (libc::SYS_fchmod, 1),
    (libc::SYS_fchmodat, 2),
    (libc::SYS_fchmodat2, 2),
    (libc::SYS_open, 2),
    (libc::SYS_openat, 3),
    (libc::SYS_creat, 1),
    (libc::SYS_mknod, 1),
    (libc::SYS_mknodat, 2),
];
/// Calls that take a file mode, and which argument holds it (no legacy calls here).
#[cfg(not(target_arch = "x86_64"))]
const MODE_ARGUMENTS: &[(libc::c_long, u8)] = &[
    (libc::SYS_fchmod, 1),
    (libc::SYS_fchmodat, 2),
    (libc::SYS_fchmodat2, 2),
    (libc::SYS_openat, 3),
    (libc::SYS_mknodat, 2),
];

/// Matches a mode argument with the set-user-ID or the set-group-ID bit.
fn set_id_mode(arg: u8) -> Result<Vec<SeccompRule>, ConfinementError> {
    [libc::S_ISUID, libc::S_ISGID]
        .into_iter()
        .map(|bit| {
            let bit = u64::from(bit);
            let condition = SeccompCondition::new(
                arg,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(bit),
                bit,
            )
            .map_err(compile_error)?;
            SeccompRule::new(vec![condition]).map_err(compile_error)
        })
        .collect()
}

/// The x32 system-call bit of x86_64.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

// Classic BPF opcodes (linux/filter.h).
/// `BPF_LD | BPF_W | BPF_ABS` (the first two are 0).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x05 | 0x10;
const BPF_JMP_JGE_K: u16 = 0x05 | 0x30;
const BPF_RET_K: u16 = 0x06;
/// `SECCOMP_RET_ERRNO`.
const RET_ERRNO: u32 = 0x0005_0000;

/// A compiled filter: raw classic-BPF instructions, ready for `seccomp(2)` or bwrap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeccompProgram(BpfProgram);

impl SeccompProgram {
    /// The filter for a command with `network` (see the module table).
    ///
    /// # Errors
    /// On an architecture seccompiler does not know, or if a rule cannot be compiled.
    pub(crate) fn build(network: NetworkAccess) -> Result<Self, ConfinementError> {
        let arch = target_arch()?;
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
            ALWAYS_DENIED.iter().map(|&nr| (nr, Vec::new())).collect();
        let new_user = u64::try_from(libc::CLONE_NEWUSER).map_err(compile_error)?;
        let with_new_user = || -> Result<Vec<SeccompRule>, ConfinementError> {
            let condition = SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(new_user),
                new_user,
            )
            .map_err(compile_error)?;
            Ok(vec![
                SeccompRule::new(vec![condition]).map_err(compile_error)?,
            ])
        };
        rules.insert(libc::SYS_clone, with_new_user()?);
        rules.insert(libc::SYS_unshare, with_new_user()?);
        for &(nr, mode_arg) in MODE_ARGUMENTS {
            rules.insert(nr, set_id_mode(mode_arg)?);
        }
        if network == NetworkAccess::Disabled {
            let unix = u64::try_from(libc::AF_UNIX).map_err(compile_error)?;
            let not_unix = || -> Result<Vec<SeccompRule>, ConfinementError> {
                let condition =
                    SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, unix)
                        .map_err(compile_error)?;
                Ok(vec![
                    SeccompRule::new(vec![condition]).map_err(compile_error)?,
                ])
            };
            rules.insert(libc::SYS_socket, not_unix()?);
            rules.insert(libc::SYS_socketpair, not_unix()?);
            rules.insert(libc::SYS_connect, Vec::new());
            let with_address =
                SeccompCondition::new(4, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)
                    .map_err(compile_error)?;
            rules.insert(
                libc::SYS_sendto,
                vec![SeccompRule::new(vec![with_address]).map_err(compile_error)?],
            );
        }
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno(libc::EPERM)),
            arch,
        )
        .map_err(compile_error)?;
        let body: BpfProgram = filter.try_into().map_err(compile_error)?;
        let mut program = prologue(arch);
        program.extend(body);
        Ok(Self(program))
    }

    /// The instructions.
    #[cfg(test)]
    pub(crate) fn instructions(&self) -> &[sock_filter] {
        &self.0
    }

    /// The program as bwrap's `--seccomp` reads it: 8 bytes per instruction, native endian.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.0.len() * 8);
        for instruction in &self.0 {
            bytes.extend_from_slice(&instruction.code.to_ne_bytes());
            bytes.push(instruction.jt);
            bytes.push(instruction.jf);
            bytes.extend_from_slice(&instruction.k.to_ne_bytes());
        }
        bytes
    }

    /// Installs the filter on the calling thread (also sets no_new_privs). Safe between fork
    /// and exec: one `prctl` and one `seccomp` call on the borrowed program, no allocation.
    ///
    /// # Errors
    /// The system call's error, as a raw OS error.
    pub(crate) fn install(&self) -> std::io::Result<()> {
        seccompiler::apply_filter(&self.0).map_err(|err| match err {
            seccompiler::Error::Prctl(io) | seccompiler::Error::Seccomp(io) => {
                std::io::Error::from_raw_os_error(io.raw_os_error().unwrap_or(libc::EPERM))
            }
            _ => std::io::Error::from_raw_os_error(libc::EINVAL),
        })
    }
}

/// Instructions that run before seccompiler's program: `clone3`, `openat2` and, on x86_64,
/// every x32 number answer ENOSYS. seccompiler matches exact numbers, so without this an x32
/// call of a denied function would pass.
fn prologue(arch: TargetArch) -> BpfProgram {
    let enosys = RET_ERRNO | errno(libc::ENOSYS);
    let clone3 = u32::try_from(libc::SYS_clone3).unwrap_or(u32::MAX);
    let openat2 = u32::try_from(libc::SYS_openat2).unwrap_or(u32::MAX);
    let statement = |code, k| sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code, k, jt, jf| sock_filter { code, jt, jf, k };
    let mut program = vec![statement(BPF_LD_W_ABS, 0)];
    if matches!(arch, TargetArch::x86_64) {
        // x32 bit set: on to the ENOSYS return, three instructions on.
        program.push(jump(BPF_JMP_JGE_K, X32_SYSCALL_BIT, 2, 0));
    }
    // clone3: on to the return; openat2: fall into it; anything else jumps over it.
    program.push(jump(BPF_JMP_JEQ_K, clone3, 1, 0));
    program.push(jump(BPF_JMP_JEQ_K, openat2, 0, 1));
    program.push(statement(BPF_RET_K, enosys));
    program
}

fn errno(value: libc::c_int) -> u32 {
    u32::try_from(value).unwrap_or(1)
}

const fn target_arch_name() -> Option<TargetArch> {
    if cfg!(target_arch = "x86_64") {
        Some(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Some(TargetArch::aarch64)
    } else if cfg!(target_arch = "riscv64") {
        Some(TargetArch::riscv64)
    } else {
        None
    }
}

fn target_arch() -> Result<TargetArch, ConfinementError> {
    target_arch_name().ok_or_else(|| {
        ConfinementError::new(
            "no seccomp filter for this processor architecture (x86_64, aarch64 and riscv64 are \
             supported)",
        )
    })
}

fn compile_error(err: impl std::fmt::Display) -> ConfinementError {
    ConfinementError::new(format!("the seccomp filter does not compile: {err}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn both_programs_compile_and_serialise_to_eight_bytes_per_instruction() {
        for network in [NetworkAccess::Disabled, NetworkAccess::Enabled] {
            let program = SeccompProgram::build(network).unwrap();
            assert!(!program.instructions().is_empty());
            assert!(program.instructions().len() < 4096, "BPF limit");
            assert_eq!(program.to_bytes().len(), program.instructions().len() * 8);
        }
        let off = SeccompProgram::build(NetworkAccess::Disabled).unwrap();
        let on = SeccompProgram::build(NetworkAccess::Enabled).unwrap();
        assert!(
            off.instructions().len() > on.instructions().len(),
            "the network rules add instructions"
        );
    }

    #[test]
    fn the_prologue_sends_clone3_openat2_and_x32_numbers_to_enosys() {
        let program = prologue(TargetArch::x86_64);
        assert_eq!(program.len(), 5);
        assert_eq!(program[1].k, X32_SYSCALL_BIT);
        assert_eq!((program[1].jt, program[1].jf), (2, 0), "x32 → the return");
        assert_eq!(
            (program[2].jt, program[2].jf),
            (1, 0),
            "clone3 → the return"
        );
        assert_eq!(
            (program[3].jt, program[3].jf),
            (0, 1),
            "openat2 → the return"
        );
        assert_eq!(program[4].k, RET_ERRNO | errno(libc::ENOSYS));
        assert_eq!(prologue(TargetArch::aarch64).len(), 4);
    }
}
