//! The counted escape corpus (confinement.md §4), run against one confining tier.
//!
//! Every case is a bash script run confined in a fresh workspace under `/tmp` (so the private
//! `/tmp` must keep it reachable), next to an "outside" directory that is not under `/tmp`
//! (`CARGO_TARGET_TMPDIR`: visible to the command, so a write there is a real attempt) holding
//! a file, a unix socket, and listeners the test starts (TCP, UDP, an abstract socket).
//!
//! After each case, on top of its own check, the runner asserts that nothing changed:
//! the outside directory, `/etc`, `$HOME`, the host's `/tmp` and `/dev/shm` hold no marker
//! file, no listener got a connection or a datagram, no process carrying the case's marker in
//! its command line is left, and (bubblewrap) `.git` and the guard masks are as before.
//!
//! The parent's secret: `/proc/$PPID/environ` shows the environment a process was *started*
//! with, so the corpus runs in a child test process started with `KUN_TEST_SECRET` in its
//! environment ([`run_outer`] re-runs this test binary for [`run_inner`]).

#![allow(dead_code, reason = "each tier's test file uses part of this module")]

mod cases;

use cases::{CASES, Check, Tier};
use kun_ports::process::{EnvAllowList, GroupGuard};
use kun_ports::testkit::marked_processes;
use kun_ports::{
    ChildPipe, ChildStdio, CommandConfinement, CommandSpec, ConfinedCommand, ConfinementScope,
};
use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

pub use cases::Tier as CorpusTier;

/// The secret the inner process holds in its initial environment.
const SECRET_VAR: &str = "KUN_TEST_SECRET";
/// Set for the inner run.
const INNER_VAR: &str = "KUN_ESCAPE_INNER";

/// Re-runs this test binary's `inner` test with a secret in its environment, and requires it
/// to pass. Prints what it printed (the counts).
pub fn run_outer(inner: &str) {
    let secret = format!("kun-secret-{}-{}", std::process::id(), nanos());
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", inner, "--nocapture", "--test-threads=1"])
        .env(SECRET_VAR, &secret)
        .env(INNER_VAR, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(
        output.status.success(),
        "the escape corpus failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("escape corpus") || stderr.contains("SKIPPED"),
        "the inner run did not run the corpus:\n{stdout}\n{stderr}"
    );
}

/// Runs the corpus against `confinement` when this process is the inner run; otherwise does
/// nothing (the test runner lists the inner test too).
pub fn run_inner(tier: Tier, confinement: Option<&dyn CommandConfinement>) {
    if std::env::var_os(INNER_VAR).is_none() {
        return;
    }
    let Some(confinement) = confinement else {
        return;
    };
    let secret = std::env::var(SECRET_VAR).unwrap();
    let started_with = std::fs::read("/proc/self/environ").unwrap();
    assert!(
        String::from_utf8_lossy(&started_with).contains(&secret),
        "the corpus needs the secret in this process's initial environment"
    );
    let cases: Vec<_> = CASES.iter().filter(|c| c.tiers.contains(&tier)).collect();
    assert!(
        cases.len() > 20,
        "the corpus is nearly empty: {}",
        cases.len()
    );
    let (mut escapes, mut positives) = ((0, 0), (0, 0));
    let mut failures = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let fixture = Fixture::new(n, tier, &secret);
        let ran = fixture.run(confinement, case.script);
        let mut verdict = (case.check)(&fixture, &ran);
        if verdict.is_ok() {
            verdict = fixture.unchanged();
        }
        let counter = match case.kind {
            Check::Escape => &mut escapes,
            Check::Works => &mut positives,
        };
        counter.0 += 1;
        match verdict {
            Ok(()) => counter.1 += 1,
            Err(why) => failures.push(format!("{}: {why}\n    {ran:?}", case.name)),
        }
    }
    println!(
        "escape corpus ({tier:?}): {} escape cases, {} held; {} positive cases, {} worked",
        escapes.0, escapes.1, positives.0, positives.1
    );
    assert!(
        failures.is_empty(),
        "{} case(s) broke:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// One case's world.
pub struct Fixture {
    _ws_dir: tempfile::TempDir,
    _outside_dir: tempfile::TempDir,
    pub tier: Tier,
    pub ws: PathBuf,
    pub outside: PathBuf,
    pub mark: String,
    pub secret: String,
    tcp: TcpListener,
    udp: UdpSocket,
    unix: UnixListener,
    abstract_socket: UnixListener,
    abstract_name: String,
}

impl Fixture {
    fn new(n: usize, tier: Tier, secret: &str) -> Self {
        let ws_dir = tempfile::Builder::new()
            .prefix("kun-corpus-")
            .tempdir_in("/tmp")
            .unwrap();
        let ws = ws_dir.path().to_path_buf();
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(ws.join(".git/config"), "orig\n").unwrap();
        std::fs::write(ws.join("given.txt"), "given\n").unwrap();
        let outside_dir = tempfile::Builder::new()
            .prefix("out-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let outside = outside_dir.path().to_path_buf();
        std::fs::write(outside.join("target.txt"), "outside-orig\n").unwrap();
        let mark = format!("kun-escape-{}-{n}", std::process::id());
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        udp.set_nonblocking(true).unwrap();
        let unix = UnixListener::bind(outside.join("sock")).unwrap();
        unix.set_nonblocking(true).unwrap();
        let abstract_name = format!("{mark}-abstract");
        let abstract_socket =
            UnixListener::bind_addr(&SocketAddr::from_abstract_name(&abstract_name).unwrap())
                .unwrap();
        abstract_socket.set_nonblocking(true).unwrap();
        Self {
            _ws_dir: ws_dir,
            _outside_dir: outside_dir,
            tier,
            ws,
            outside,
            mark,
            secret: secret.to_owned(),
            tcp,
            udp,
            unix,
            abstract_socket,
            abstract_name,
        }
    }

    /// `bash -c script` confined to the workspace, with the fixture's names in its
    /// environment. Waits at most a minute, then kills the group and drops the lease.
    fn run(&self, confinement: &dyn CommandConfinement, script: &str) -> Ran {
        let mut env = EnvAllowList::default().from_current_process();
        env.set("WS", &self.ws)
            .set("OUTSIDE", &self.outside)
            .set("MARK", &self.mark)
            .set(
                "TCP_PORT",
                self.tcp.local_addr().unwrap().port().to_string(),
            )
            .set(
                "UDP_PORT",
                self.udp.local_addr().unwrap().port().to_string(),
            )
            .set("ABSTRACT", &self.abstract_name)
            .set("KUN_PARENT_PID", std::process::id().to_string());
        let spec = CommandSpec::new(
            "/bin/bash",
            &self.ws,
            env,
            ConfinementScope::workspace(&self.ws),
        )
        .args(["-c", script])
        .stdio(ChildStdio {
            stdin: ChildPipe::Null,
            stdout: ChildPipe::Piped,
            stderr: ChildPipe::Piped,
        });
        let ConfinedCommand { mut command, lease } = confinement.command(&spec).unwrap();
        let started = Instant::now();
        let mut child = command.spawn().unwrap();
        let mut group = GroupGuard::for_leader(Some(child.id()));
        let out = reader(child.stdout.take());
        let err = reader(child.stderr.take());
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > Duration::from_secs(60) {
                group.kill();
                break child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        group.kill();
        drop(lease);
        Ran {
            status,
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        }
    }

    /// The checks every case ends with.
    fn unchanged(&self) -> Result<(), String> {
        let mut listing: Vec<String> = std::fs::read_dir(&self.outside)
            .map_err(|e| e.to_string())?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        listing.sort();
        if listing != ["sock", "target.txt"] {
            return Err(format!("the outside directory changed: {listing:?}"));
        }
        let target = std::fs::read_to_string(self.outside.join("target.txt")).unwrap_or_default();
        if target != "outside-orig\n" {
            return Err(format!("the outside file changed: {target:?}"));
        }
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
        for dir in ["/etc", home.as_str(), "/tmp", "/dev/shm", "/var/tmp"] {
            let path = Path::new(dir).join(&self.mark);
            if path.exists() {
                let _ = std::fs::remove_file(&path);
                return Err(format!("{} was written", path.display()));
            }
        }
        if self.tcp.accept().is_ok() {
            return Err("the TCP listener got a connection".to_owned());
        }
        if self.udp.recv_from(&mut [0; 64]).is_ok() {
            return Err("the UDP socket got a datagram".to_owned());
        }
        if self.unix.accept().is_ok() {
            return Err("the outside unix socket got a connection".to_owned());
        }
        if self.abstract_socket.accept().is_ok() {
            return Err("the abstract unix socket got a connection".to_owned());
        }
        if self.tier == Tier::Bubblewrap {
            let config = std::fs::read_to_string(self.ws.join(".git/config")).unwrap_or_default();
            if config != "orig\n" {
                return Err(format!(".git/config changed: {config:?}"));
            }
            let hooks =
                std::fs::read_dir(self.ws.join(".git/hooks")).map_or(usize::MAX, Iterator::count);
            if hooks != 0 {
                return Err(format!(".git/hooks holds {hooks} entries"));
            }
            for name in [".kun", ".mcp.json", ".claude", ".agents"] {
                if self.ws.join(name).exists() {
                    return Err(format!("{name} exists after the run"));
                }
            }
        }
        self.no_process_left()
    }

    /// No process with the marker in its command line (waits for killed ones to be reaped).
    fn no_process_left(&self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = marked_processes(&self.mark);
            if left.is_empty() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("processes left after the call: {left:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// How a case's command ended.
pub struct Ran {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}, stdout {:?}, stderr {:?}",
            self.status.code(),
            self.stdout.chars().take(400).collect::<String>(),
            self.stderr.chars().take(400).collect::<String>()
        )
    }
}
