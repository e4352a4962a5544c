//! The cases. Each is a bash script; `$MARK` is unique per case and names every file an
//! escape would leave (the runner looks for it in `/etc`, `$HOME`, `/tmp`, `/dev/shm`,
//! `/var/tmp` and in the command lines of live processes). `$WS`, `$OUTSIDE`, `$TCP_PORT`,
//! `$UDP_PORT`, `$ABSTRACT` and `$KUN_PARENT_PID` come from the fixture.

use super::{Fixture, Ran};

/// The confining tiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// bubblewrap.
    Bubblewrap,
    /// Landlock + seccomp.
    Landlock,
}

/// What a case expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// An escape attempt: it must fail and change nothing.
    Escape,
    /// Ordinary work: it must succeed.
    Works,
}

/// One case.
pub struct Case {
    pub name: &'static str,
    pub tiers: &'static [Tier],
    pub kind: Check,
    pub script: &'static str,
    pub check: fn(&Fixture, &Ran) -> Result<(), String>,
}

const BOTH: &[Tier] = &[Tier::Bubblewrap, Tier::Landlock];
const BWRAP: &[Tier] = &[Tier::Bubblewrap];

fn failed(_: &Fixture, ran: &Ran) -> Result<(), String> {
    if ran.status.success() {
        Err("the command succeeded".to_owned())
    } else {
        Ok(())
    }
}

/// The exit code does not matter; the runner's "nothing changed" checks decide.
fn changed_nothing(_: &Fixture, _: &Ran) -> Result<(), String> {
    Ok(())
}

fn no_secret(fixture: &Fixture, ran: &Ran) -> Result<(), String> {
    if ran.stdout.contains(&fixture.secret) || ran.stderr.contains(&fixture.secret) {
        Err("the parent's secret was read".to_owned())
    } else if ran.stdout.contains("KUN_TEST_SECRET") {
        Err("the parent's environment was read".to_owned())
    } else {
        Ok(())
    }
}

fn succeeded(_: &Fixture, ran: &Ran) -> Result<(), String> {
    if ran.status.success() {
        Ok(())
    } else {
        Err("the command failed".to_owned())
    }
}

/// The fork bomb is bounded: fewer than the 200 children it tries.
fn bounded(_: &Fixture, ran: &Ran) -> Result<(), String> {
    let forked: usize = ran
        .stdout
        .trim()
        .parse()
        .map_err(|_| "the bomb did not report".to_owned())?;
    if forked < 200 {
        Ok(())
    } else {
        Err(format!("{forked} processes were started"))
    }
}

/// A small python program: exit 0 means the escape worked.
macro_rules! python {
    ($body:literal) => {
        concat!("python3 - \"$MARK\" <<'PY'\n", $body, "\nPY")
    };
}

pub const CASES: &[Case] = &[
    // ---- the file system ----
    Case {
        name: "write /etc",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "echo x > /etc/$MARK",
    },
    Case {
        name: "write $HOME",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "echo x > \"$HOME/$MARK\"",
    },
    Case {
        name: "write the host /tmp (at most the private one)",
        tiers: BOTH,
        kind: Check::Escape,
        check: changed_nothing,
        script: "echo x > /tmp/$MARK; echo x > /var/tmp/$MARK",
    },
    Case {
        name: "write /dev/shm",
        tiers: BOTH,
        kind: Check::Escape,
        check: changed_nothing,
        script: "echo x > /dev/shm/$MARK",
    },
    Case {
        name: "write a visible directory outside",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "echo x > \"$OUTSIDE/$MARK\"",
    },
    Case {
        name: "append to a file outside",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "echo pwned >> \"$OUTSIDE/target.txt\"",
    },
    Case {
        name: "truncate a file outside",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "truncate -s 0 \"$OUTSIDE/target.txt\"",
    },
    Case {
        name: "rename a file outside",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "mv \"$OUTSIDE/target.txt\" \"$OUTSIDE/$MARK\"",
    },
    Case {
        name: "move a file out into the workspace",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "mv \"$OUTSIDE/target.txt\" \"$WS/stolen\"",
    },
    Case {
        name: "set-uid bit on a file outside",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "chmod u+s \"$OUTSIDE/target.txt\" && test -u \"$OUTSIDE/target.txt\"",
    },
    Case {
        name: "write through a symlink ws/sl -> /etc",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "ln -s /etc sl && echo x > sl/$MARK",
    },
    Case {
        name: "write through a symlink ws/sl -> outside",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "ln -s \"$OUTSIDE\" sl && echo x > sl/$MARK",
    },
    Case {
        name: "write via /proc/self/root",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "echo x > /proc/self/root/etc/$MARK",
    },
    Case {
        name: "hard link to an outside file, made inside (EXDEV)",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "ln \"$OUTSIDE/target.txt\" hl && echo pwned >> hl",
    },
    Case {
        name: "write /proc/sys",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "echo 1 > /proc/sys/vm/drop_caches",
    },
    Case {
        name: "write .git/hooks",
        tiers: BWRAP,
        kind: Check::Escape,
        check: failed,
        script: "printf '#!/bin/sh\\nid\\n' > .git/hooks/pre-commit",
    },
    Case {
        name: "write .git/config",
        tiers: BWRAP,
        kind: Check::Escape,
        check: failed,
        script: "echo '[core] fsmonitor = id' >> .git/config",
    },
    Case {
        name: "remove or rename .git",
        tiers: BWRAP,
        kind: Check::Escape,
        check: failed,
        script: "rm -rf .git; mv .git g2; test ! -e .git/config",
    },
    Case {
        name: "create .kun/config.toml",
        tiers: BWRAP,
        kind: Check::Escape,
        check: failed,
        script: "mkdir -p .kun && echo 'sandbox = \"danger-full-access\"' > .kun/config.toml",
    },
    Case {
        name: "create .mcp.json",
        tiers: BWRAP,
        kind: Check::Escape,
        check: failed,
        script: "echo '{\"mcpServers\":{\"x\":{\"command\":\"id\"}}}' > .mcp.json",
    },
    Case {
        name: "create .claude/settings.json and .agents",
        tiers: BWRAP,
        kind: Check::Escape,
        check: failed,
        script: "echo '{}' > .claude/settings.json || mkdir .agents/x",
    },
    Case {
        name: "git init over the guards",
        tiers: BWRAP,
        kind: Check::Escape,
        check: failed,
        script: "rm -rf .git && git init -q . && test -s .git/HEAD",
    },
    // ---- mounts and namespaces (as root) ----
    Case {
        name: "remount the read-only .git bind rw",
        tiers: BWRAP,
        kind: Check::Escape,
        check: failed,
        script: "mount -o remount,rw,bind \"$WS/.git\" && echo x >> \"$WS/.git/config\"",
    },
    Case {
        name: "umount the read-only .git bind",
        tiers: BWRAP,
        kind: Check::Escape,
        check: failed,
        script: "umount \"$WS/.git\" && echo x >> \"$WS/.git/config\"",
    },
    Case {
        name: "remount / rw",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "mount -o remount,rw / && echo x > /etc/$MARK",
    },
    Case {
        name: "mount a tmpfs",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "mkdir m && mount -t tmpfs none m",
    },
    Case {
        name: "a new user namespace (unshare -Urm)",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "unshare -Urm true",
    },
    // ---- the network ----
    Case {
        name: "TCP connect to a 127.0.0.1 listener",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "echo hi > /dev/tcp/127.0.0.1/$TCP_PORT",
    },
    Case {
        name: "UDP sendto a 127.0.0.1 socket",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: python!(
            r#"
import os, socket, sys
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"hi", ("127.0.0.1", int(os.environ["UDP_PORT"])))
except OSError:
    sys.exit(1)"#
        ),
    },
    Case {
        name: "a unix socket outside",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: python!(
            r#"
import os, socket, sys
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.environ["OUTSIDE"] + "/sock")
    s.send(b"hi")
except OSError:
    sys.exit(1)"#
        ),
    },
    Case {
        name: "the parent's abstract unix socket",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: python!(
            r#"
import os, socket, sys
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect("\0" + os.environ["ABSTRACT"])
except OSError:
    sys.exit(1)"#
        ),
    },
    Case {
        name: "inet6, netlink and packet sockets",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: python!(
            r#"
import socket, sys
opened = 0
for family, kind in [(socket.AF_INET6, socket.SOCK_STREAM), (socket.AF_NETLINK, socket.SOCK_RAW),
                     (socket.AF_PACKET, socket.SOCK_RAW), (socket.AF_INET, socket.SOCK_STREAM)]:
    try:
        socket.socket(family, kind); opened += 1
    except OSError:
        pass
sys.exit(0 if opened else 1)"#
        ),
    },
    // ---- processes and secrets ----
    Case {
        name: "cat /proc/$PPID/environ",
        tiers: BOTH,
        kind: Check::Escape,
        check: no_secret,
        script: "cat /proc/$PPID/environ | tr '\\0' '\\n'; true",
    },
    Case {
        name: "cat /proc/1/environ",
        tiers: BOTH,
        kind: Check::Escape,
        check: no_secret,
        script: "cat /proc/1/environ | tr '\\0' '\\n'; true",
    },
    Case {
        name: "the test process's environ and memory",
        tiers: BOTH,
        kind: Check::Escape,
        check: no_secret,
        script: "cat /proc/$KUN_PARENT_PID/environ | tr '\\0' '\\n'; \
                 grep -a KUN_TEST_SECRET /proc/$KUN_PARENT_PID/mem; true",
    },
    Case {
        name: "ptrace attach to the parent",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: python!(
            r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.ptrace(16, os.getppid(), 0, 0) == 0 else 1)"#
        ),
    },
    Case {
        name: "signal the test process",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: "kill -0 $KUN_PARENT_PID",
    },
    Case {
        name: "io_uring_setup",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: python!(
            r#"
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
sys.exit(0 if libc.syscall(425, 8, params) >= 0 else 1)"#
        ),
    },
    Case {
        name: "keyctl, bpf, perf_event_open, userfaultfd",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: python!(
            r#"
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(256)
worked = [libc.syscall(250, 0, -3, 0) >= 0, libc.syscall(321, 0, attr, 128) >= 0,
          libc.syscall(298, attr, 0, -1, -1, 0) >= 0, libc.syscall(323, 0) >= 0]
sys.exit(0 if any(worked) else 1)"#
        ),
    },
    Case {
        name: "an x32 system call number",
        tiers: BOTH,
        kind: Check::Escape,
        check: failed,
        script: python!(
            r#"
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.syscall(0x40000000 | 39) >= 0 else 1)"#
        ),
    },
    Case {
        name: "a fork bomb (bounded, nothing left after)",
        tiers: BOTH,
        kind: Check::Escape,
        check: bounded,
        script: python!(
            r#"
import os, sys, time
forked = 0
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.execvp("sleep", [sys.argv[1], "600"])
    forked += 1
print(forked)"#
        ),
    },
    Case {
        name: "a background sleep left behind",
        tiers: BOTH,
        kind: Check::Escape,
        check: changed_nothing,
        script: "(exec -a \"$MARK\" sleep 600) & echo started",
    },
    Case {
        name: "a setsid escapee left behind",
        tiers: BOTH,
        kind: Check::Escape,
        check: changed_nothing,
        script: "setsid -f bash -c 'exec -a \"$MARK\" sleep 600' </dev/null >/dev/null 2>&1; \
                 sleep 0.2; echo started",
    },
    // ---- what must keep working ----
    Case {
        name: "write and read inside the workspace",
        tiers: BOTH,
        kind: Check::Works,
        check: |f, ran| {
            succeeded(f, ran)?;
            let written = std::fs::read_to_string(f.ws.join("sub/out.txt")).unwrap_or_default();
            (written == "ok\n" && ran.stdout == "given\n")
                .then_some(())
                .ok_or_else(|| format!("wrote {written:?}"))
        },
        script: "mkdir -p sub && echo ok > sub/out.txt && cat given.txt",
    },
    Case {
        name: "/dev/null, /dev/stdout, /dev/stderr",
        tiers: BOTH,
        kind: Check::Works,
        check: succeeded,
        script: "echo x > /dev/null && echo out > /dev/stdout && echo err > /dev/stderr",
    },
    Case {
        name: "a private TMPDIR",
        tiers: BOTH,
        kind: Check::Works,
        check: succeeded,
        script: "echo t > \"${TMPDIR:-/tmp}/$MARK\" && test -s \"${TMPDIR:-/tmp}/$MARK\"",
    },
    Case {
        name: "exit codes pass through",
        tiers: BOTH,
        kind: Check::Works,
        check: |_, ran| {
            (ran.status.code() == Some(42))
                .then_some(())
                .ok_or_else(|| "not 42".into())
        },
        script: "exit 42",
    },
    Case {
        name: "no capabilities, no_new_privs, seccomp",
        tiers: BOTH,
        kind: Check::Works,
        check: |f, ran| {
            succeeded(f, ran)?;
            for line in [
                "CapEff:\t0000000000000000",
                "CapPrm:\t0000000000000000",
                "NoNewPrivs:\t1",
                "Seccomp:\t2",
            ] {
                if !ran.stdout.contains(line) {
                    return Err(format!("missing {line:?}"));
                }
            }
            Ok(())
        },
        script: "grep -E '^(CapEff|CapPrm|NoNewPrivs|Seccomp):' /proc/self/status",
    },
    Case {
        name: "socketpairs and unix sockets inside",
        tiers: BOTH,
        kind: Check::Works,
        check: succeeded,
        script: python!(
            r#"
import socket
a, b = socket.socketpair()
a.send(b"x"); assert b.recv(1) == b"x"
s = socket.socket(socket.AF_UNIX); s.bind("inside.sock"); s.listen(1)"#
        ),
    },
    Case {
        name: "git reads the repository around the workspace",
        tiers: BOTH,
        kind: Check::Works,
        check: succeeded,
        script: "git --version >/dev/null && ls -a \"$WS\" >/dev/null",
    },
];
