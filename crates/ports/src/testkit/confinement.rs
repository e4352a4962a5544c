//! The contract suite of [`CommandConfinement`]: what every tier must do, and what a confining
//! tier must prevent. Real processes in a temporary workspace; Unix only.
//!
//! The escape corpus of each tier (symlinks, hard links, `/proc`, sockets, ptrace, mounts,
//! fork bombs) lives with the adapters in kun-sandbox; this suite holds the rules every
//! implementation of the port shares.

use crate::process::{ChildEnv, EnvAllowList, GroupGuard};
use crate::{
    ChildPipe, ChildStdio, CommandConfinement, CommandSpec, ConfinedCommand, ConfinementScope,
    ConfinementTier, FileSystemScope, NetworkAccess,
};
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

/// Variables an adapter may set itself: a private temporary directory, the working directory.
const ADAPTER_SET: [&str; 2] = ["TMPDIR", "PWD"];

/// A variable the suite adds to every spec's environment.
const MARK: (&str, &str) = ("KUN_CONTRACT_MARK", "present");

/// Every rule a [`CommandConfinement`] must satisfy. Panics naming the first broken rule.
///
/// Every tier:
/// 1. the tier does not change between calls;
/// 2. `/bin/true` succeeds and an exit code passes through (`exit 7` → 7); the `None` tier
///    runs the spec's program with its arguments, unchanged;
/// 3. the spawned process leads a new session (its session id is its pid), so the group a
///    caller kills is its own, and the command has no controlling terminal;
/// 4. the child's environment is exactly the spec's (`TMPDIR` may point at a private
///    temporary directory, `PWD` at the working directory);
/// 5. a write inside a writable root lands, the root can be read, `/dev/null` is writable;
/// 6. an unrestricted scope (danger-full-access) writes outside;
/// 7. a background process the command leaves behind is gone once its process group was
///    killed and the lease dropped.
///
/// Confining tiers ([`ConfinementTier::is_confined`]) also:
/// 8. refuse a write outside the writable roots, and nothing appears there;
/// 9. refuse every write into the root under a read-only scope;
/// 10. never let a command read a variable of our environment that its spec left out, not
///     through `/proc/$PPID/environ` nor `/proc/1/environ`;
/// 11. never let a write to `/tmp` reach the host's `/tmp` (it fails, or lands in a private
///     `/tmp`).
pub fn command_confinement_contract(confinement: &dyn CommandConfinement) {
    let tier = confinement.tier();
    assert_eq!(
        confinement.tier(),
        tier,
        "rule 1: the tier must not change between calls"
    );
    let fixture = Fixture::new();
    let run = |spec: CommandSpec| fixture.run(confinement, spec);

    // Rule 2.
    let truth = fixture.spec("/bin/true", &[]);
    if tier == ConfinementTier::None {
        let built = confinement.command(&truth).expect("build /bin/true");
        assert_eq!(
            built.command.get_program(),
            "/bin/true",
            "rule 2: the None tier changed the program"
        );
        assert_eq!(
            built.command.get_args().count(),
            0,
            "rule 2: the None tier added arguments"
        );
        assert_eq!(
            built.command.get_current_dir(),
            Some(fixture.ws.as_path()),
            "rule 2: the None tier moved the cwd"
        );
    }
    let ran = run(truth);
    assert!(ran.status.success(), "rule 2: /bin/true failed: {ran:?}");
    let ran = run(fixture.shell("exit 7"));
    assert_eq!(
        ran.status.code(),
        Some(7),
        "rule 2: the exit code must pass through: {ran:?}"
    );

    // Rule 3.
    fixture.check_new_session(confinement);

    // Rule 4.
    let ran = run(fixture.spec("/usr/bin/env", &[]));
    assert!(ran.status.success(), "rule 4: env failed: {ran:?}");
    let mut seen: Vec<(String, String)> = ran
        .stdout
        .lines()
        .filter_map(|line| line.split_once('='))
        .filter(|(name, _)| !ADAPTER_SET.contains(name))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    seen.sort();
    let mut expected: Vec<(String, String)> = fixture
        .env
        .iter()
        .filter(|(name, _)| !name.to_str().is_some_and(|n| ADAPTER_SET.contains(&n)))
        .map(|(name, value)| {
            (
                name.to_string_lossy().into_owned(),
                value.to_string_lossy().into_owned(),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(
        seen, expected,
        "rule 4: the child's environment must be exactly the spec's"
    );

    // Rule 5.
    std::fs::write(fixture.ws.join("given.txt"), "given\n").unwrap();
    let ran = run(fixture
        .shell("printf ok > inside.txt && cat given.txt && printf x > /dev/null && echo done"));
    assert!(
        ran.status.success() && ran.stdout == "given\ndone\n",
        "rule 5: writing and reading inside the root and writing /dev/null must work: {ran:?}"
    );
    assert_eq!(
        std::fs::read_to_string(fixture.ws.join("inside.txt"))
            .ok()
            .as_deref(),
        Some("ok"),
        "rule 5: the write inside the root must land"
    );

    // Rule 6.
    let free = fixture.outside.join("free.txt");
    let mut spec = fixture.shell(&format!("printf free > '{}'", free.display()));
    spec.scope = ConfinementScope::unrestricted();
    let ran = run(spec);
    assert!(
        ran.status.success() && free.exists(),
        "rule 6: an unrestricted scope must write outside: {ran:?}"
    );

    // Rule 7. The loop renames each stamp into place, so a read never sees half a write;
    // the command returns once the first stamp is there.
    let ran = run(fixture.shell(
        "(while :; do date +%s%N > alive.new && mv alive.new alive; sleep 0.05; done) \
         >/dev/null 2>&1 & while [ ! -s alive ]; do sleep 0.02; done; exit 0",
    ));
    assert!(ran.status.success(), "rule 7: the command failed: {ran:?}");
    // A write already inside the kernel when the kill came may still land.
    std::thread::sleep(Duration::from_millis(100));
    let first = std::fs::read_to_string(fixture.ws.join("alive")).unwrap_or_default();
    std::thread::sleep(Duration::from_millis(400));
    let second = std::fs::read_to_string(fixture.ws.join("alive")).unwrap_or_default();
    assert!(
        !first.is_empty() && first == second,
        "rule 7: a background process outlived the call ({first:?} then {second:?})"
    );

    if !tier.is_confined() {
        return;
    }

    // Rule 8.
    let target = fixture.outside.join("escaped.txt");
    let ran = run(fixture.shell(&format!("printf x > '{}'", target.display())));
    assert!(
        !ran.status.success(),
        "rule 8: a {tier:?}-confined write outside must fail: {ran:?}"
    );
    assert!(
        !target.exists(),
        "rule 8: a {tier:?}-confined command wrote outside its scope"
    );

    // Rule 9.
    let mut spec = fixture.shell("printf x > read-only.txt");
    spec.scope = ConfinementScope::read_only(vec![fixture.ws.clone()]);
    let ran = run(spec);
    assert!(
        !ran.status.success() && !fixture.ws.join("read-only.txt").exists(),
        "rule 9: a read-only scope must not write into the root: {ran:?}"
    );

    // Rule 10.
    if let Some((name, value)) = fixture.left_out_variable() {
        let ran = run(fixture.shell(
            "cat /proc/$PPID/environ 2>/dev/null | tr '\\0' '\\n'; \
             cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'; true",
        ));
        let leaked = format!("{name}={value}");
        assert!(
            !ran.stdout.lines().any(|line| line == leaked),
            "rule 10: {name}, left out of the spec, was read from a parent's /proc environ"
        );
    }

    // Rule 11.
    let name = format!("kun-contract-{}-{}", std::process::id(), unique());
    let host_tmp = Path::new("/tmp").join(&name);
    let ran = run(fixture.shell(&format!("printf x > /tmp/{name}; true")));
    assert!(ran.status.success(), "rule 11: the command failed: {ran:?}");
    let reached = host_tmp.exists();
    let _ = std::fs::remove_file(&host_tmp);
    assert!(
        !reached,
        "rule 11: a {tier:?}-confined write to /tmp reached the host's /tmp"
    );
}

/// A workspace, a directory outside it, and the environment specs get.
struct Fixture {
    _temp: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    env: ChildEnv,
}

impl Fixture {
    fn new() -> Self {
        let temp = tempfile::tempdir().expect("create a temporary directory");
        let ws = temp.path().join("ws");
        let outside = temp.path().join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let mut env = EnvAllowList::default().from_current_process();
        env.set(MARK.0, MARK.1);
        if env.get("PATH").is_none() {
            env.set("PATH", "/usr/local/bin:/usr/bin:/bin");
        }
        Self {
            _temp: temp,
            ws,
            outside,
            env,
        }
    }

    fn spec(&self, program: &str, args: &[&str]) -> CommandSpec {
        CommandSpec::new(
            program,
            &self.ws,
            self.env.clone(),
            ConfinementScope {
                files: FileSystemScope::Workspace(vec![self.ws.clone()]),
                network: NetworkAccess::Disabled,
            },
        )
        .args(args.iter().map(OsString::from))
        .stdio(ChildStdio {
            stdin: ChildPipe::Null,
            stdout: ChildPipe::Piped,
            stderr: ChildPipe::Piped,
        })
    }

    fn shell(&self, script: &str) -> CommandSpec {
        self.spec("/bin/sh", &["-c", script])
    }

    /// A variable of our environment that specs leave out, with a value worth searching for.
    fn left_out_variable(&self) -> Option<(String, String)> {
        std::env::vars().find(|(name, value)| {
            self.env.get(name).is_none() && value.len() >= 3 && !value.contains('\n')
        })
    }

    /// Rule 3, seen from outside: a running command's spawned process leads its session.
    fn check_new_session(&self, confinement: &dyn CommandConfinement) {
        let spec = self.shell("sleep 30; true");
        let ConfinedCommand { mut command, lease } = confinement
            .command(&spec)
            .unwrap_or_else(|err| panic!("building `sleep` failed: {err}"));
        let mut child = command.spawn().expect("spawn `sleep`");
        let mut group = GroupGuard::for_leader(Some(child.id()));
        let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
        let sid = rustix::process::getsid(Some(pid));
        group.kill();
        let _ = child.wait();
        drop(lease);
        assert_eq!(
            sid.ok(),
            Some(pid),
            "rule 3: the spawned process must lead a new session"
        );
        let ran = self.run(confinement, self.shell("cut -d' ' -f7 /proc/$$/stat"));
        assert_eq!(
            ran.stdout.trim(),
            "0",
            "rule 3: the command must have no controlling terminal: {ran:?}"
        );
    }

    /// Builds, spawns and waits for `spec` (a generous minute), then kills its group and drops
    /// the lease, as every caller of the port must.
    fn run(&self, confinement: &dyn CommandConfinement, spec: CommandSpec) -> Ran {
        let shown = format!("{:?} {:?}", spec.program, spec.args);
        let ConfinedCommand { mut command, lease } = confinement
            .command(&spec)
            .unwrap_or_else(|err| panic!("building {shown} failed: {err}"));
        let mut child = command
            .spawn()
            .unwrap_or_else(|err| panic!("spawning {shown} failed: {err}"));
        let mut group = GroupGuard::for_leader(Some(child.id()));
        let stdout = reader(child.stdout.take());
        let stderr = reader(child.stderr.take());
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for the command") {
                break status;
            }
            if Instant::now() > deadline {
                group.kill();
                drop(lease);
                let _ = child.wait();
                panic!("{shown} did not finish within 60 s");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        group.kill();
        drop(lease);
        Ran {
            status,
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        }
    }
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

fn unique() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// How a command ended, and what it printed.
struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl std::fmt::Debug for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?} (signal {:?}), stdout {:?}, stderr {:?}",
            self.status.code(),
            self.status.signal(),
            self.stdout,
            self.stderr
        )
    }
}
