//! A hostile repository in a temporary directory, the tools run against it with the real
//! sandbox, and the ordinary `git` the rows compare with.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use kun_builtin_tools::git_inspect::GitInspectTool;
use kun_ports::{
    NoProgress, OpenCatalog, SandboxMode, Tool, ToolContext, ToolHostContext, ToolResult, ToolTurn,
};
use kun_sandbox::{NoConfinement, WorkspaceSandbox};
use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Where the workspace sits in its repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The workspace is the repository's top.
    Top,
    /// The workspace is `repo/ws`; the top holds `secret.txt`.
    Subfolder,
}

/// `base/` holds `bin/evil` (the program a hostile config names: it creates `base/MARK`,
/// then copies stdin to stdout so it also works as a filter), `home/` (an empty home for the
/// fixture's own git), `outside/` (files and another repository the workspace must never
/// reach), and the repository.
pub struct Fixture {
    _temp: tempfile::TempDir,
    pub base: PathBuf,
    /// The repository's top.
    pub top: PathBuf,
    /// The workspace root.
    pub ws: PathBuf,
    pub outside: PathBuf,
}

/// What the secret files outside the workspace hold; it must never appear in an output.
pub const SECRET: &str = "TOP-SECRET-CONTENT";
/// The message of a commit in the other repository.
pub const OTHER_COMMIT: &str = "other repository secret commit";

impl Fixture {
    pub fn new(layout: Layout) -> Self {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let top = base.join("repo");
        let ws = match layout {
            Layout::Top => top.clone(),
            Layout::Subfolder => top.join("ws"),
        };
        let outside = base.join("outside");
        for dir in [&ws, &outside, &base.join("bin"), &base.join("home")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let evil = base.join("bin/evil");
        std::fs::write(
            &evil,
            format!("#!/bin/sh\ntouch '{}'\ncat\n", base.join("MARK").display()),
        )
        .unwrap();
        std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(outside.join("secret.txt"), format!("{SECRET}\n")).unwrap();
        let fx = Self {
            _temp: temp,
            base,
            top,
            ws,
            outside,
        };
        fx.git(&fx.top, &["init", "-q", "-b", "main"]);
        fx.write("a.txt", "alpha\nbeta\n");
        fx.write("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
        if layout == Layout::Subfolder {
            std::fs::write(fx.top.join("secret.txt"), format!("{SECRET}\n")).unwrap();
        }
        fx.commit_all("initial");
        fx
    }

    /// The program a hostile configuration names.
    pub fn evil(&self) -> String {
        self.base.join("bin/evil").display().to_string()
    }

    /// The same, but it reads nothing (for programs git talks to over a pipe: ssh, remote
    /// helpers, credential helpers).
    pub fn evil_quiet(&self) -> String {
        let path = self.base.join("bin/evil-quiet");
        if !path.exists() {
            std::fs::write(
                &path,
                format!("#!/bin/sh\ntouch '{}'\n", self.base.join("MARK").display()),
            )
            .unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        path.display().to_string()
    }

    /// Forgets a run of the hostile program during the setup (the fixture's own `git add`
    /// runs a filter the setup configured).
    pub fn clear_mark(&self) {
        let _ = std::fs::remove_file(self.base.join("MARK"));
    }

    /// Whether the hostile program ran.
    pub fn marked(&self) -> bool {
        self.base.join("MARK").exists()
    }

    /// The fixture's own git (an empty home, no system config), which must succeed.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.fixture_git(dir, args);
        assert!(
            out.status.success(),
            "fixture git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn fixture_git(&self, dir: &Path, args: &[&str]) -> std::process::Output {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("HOME", self.base.join("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Ada Lovelace")
            .env("GIT_AUTHOR_EMAIL", "ada@example.com")
            .env("GIT_COMMITTER_NAME", "Ada Lovelace")
            .env("GIT_COMMITTER_EMAIL", "ada@example.com")
            .env("GIT_AUTHOR_DATE", "2024-02-03T12:00:00Z")
            .env("GIT_COMMITTER_DATE", "2024-02-03T12:00:00Z")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `git config key value` in the repository.
    pub fn config(&self, key: &str, value: &str) {
        self.git(&self.top, &["config", key, value]);
    }

    /// Writes a file relative to the workspace.
    pub fn write(&self, relative: &str, content: &str) {
        let path = self.ws.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// Writes an executable script (relative to the base).
    pub fn script(&self, relative: &str, body: &str) {
        let path = self.base.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    pub fn commit_all(&self, message: &str) {
        self.git(&self.top, &["add", "-A"]);
        self.git(&self.top, &["commit", "-q", "--allow-empty", "-m", message]);
    }

    /// Gives a tracked file an old mtime, so git must read it again (running its clean filter)
    /// to know it did not change.
    pub fn stat_dirty(&self, relative: &str) {
        let file = std::fs::File::options()
            .append(true)
            .open(self.ws.join(relative))
            .unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000))
            .unwrap();
    }

    /// A signed commit on top of HEAD (the signature is garbage; git still runs the program
    /// that would check it): `kind` is the armour header, e.g. `PGP SIGNATURE`.
    pub fn signed_commit(&self, kind: &str) {
        let tree = self.git(&self.top, &["rev-parse", "HEAD^{tree}"]);
        let parent = self.git(&self.top, &["rev-parse", "HEAD"]);
        let body = format!(
            "tree {tree}\nparent {parent}\nauthor Ada Lovelace <ada@example.com> 1706961600 +0000\n\
             committer Ada Lovelace <ada@example.com> 1706961600 +0000\ngpgsig -----BEGIN {kind}-----\n \n \
             U1NIU0lHAAAAAQ==\n -----END {kind}-----\n\nsigned commit\n"
        );
        let file = self.base.join("commit.txt");
        std::fs::write(&file, body).unwrap();
        let file = file.display().to_string();
        let id = self.git(&self.top, &["hash-object", "-t", "commit", "-w", &file]);
        self.git(&self.top, &["update-ref", "HEAD", &id]);
    }

    /// A second repository under `outside/other` with one commit holding the secret.
    pub fn other_repo(&self) -> PathBuf {
        let other = self.outside.join("other");
        std::fs::create_dir_all(&other).unwrap();
        self.git(&other, &["init", "-q", "-b", "main"]);
        std::fs::write(other.join("secret.txt"), format!("{SECRET}\n")).unwrap();
        self.git(&other, &["add", "-A"]);
        self.git(&other, &["commit", "-q", "-m", OTHER_COMMIT]);
        other
    }

    /// Every file under the base with its content (the marker excluded: it is checked on its
    /// own), so a row can assert that nothing changed anywhere.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                let kind = entry.file_type().unwrap();
                if kind.is_dir() {
                    walk(&path, out);
                } else if kind.is_symlink() {
                    out.insert(
                        path.clone(),
                        std::fs::read_link(&path)
                            .unwrap()
                            .into_os_string()
                            .into_encoded_bytes(),
                    );
                } else if path.file_name().is_some_and(|n| n != "MARK") {
                    out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.base, &mut out);
        out
    }

    /// A tool context in the workspace under `mode`, with the real sandbox.
    pub async fn call(&self, tool: &dyn Tool, mode: SandboxMode, args: Value) -> ToolResult {
        let host = ToolHostContext::builder("thread-hostile", "turn-1")
            .workspace(&self.ws)
            .sandbox(mode)
            .build();
        let sandbox = WorkspaceSandbox::default();
        let ctx = ToolContext {
            turn: ToolTurn::of(&host, &OpenCatalog),
            call_id: "call-1",
            sandbox: &sandbox,
            progress: &NoProgress,
        };
        tool.execute(args, ctx).await.unwrap()
    }

    /// `git_inspect` in read-only mode, unconfined: nothing but its own care stands between
    /// the repository and a marker.
    pub async fn inspect(&self, args: Value) -> ToolResult {
        let tool = GitInspectTool::new(Arc::new(NoConfinement));
        self.call(&tool, SandboxMode::ReadOnly, args).await
    }

    /// Runs the ordinary `git` a user would run in the workspace (stdout and stderr joined),
    /// killing its process group after 30 s.
    pub fn plain_git(&self, args: &[&str]) -> String {
        use std::io::Read;
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("git")
            .args(args)
            .current_dir(&self.ws)
            .env("HOME", self.base.join("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = rustix::process::Pid::from_child(&child);
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                // The child leads its own group (process_group(0)): only that group is hit.
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.wait();
        let mut text = String::new();
        let _ = child.stdout.take().unwrap().read_to_string(&mut text);
        let _ = child.stderr.take().unwrap().read_to_string(&mut text);
        text
    }

    /// Runs `git <args>` on a pseudo-terminal (`script`), where git starts its pager; `None`
    /// when `script` is not installed.
    pub fn plain_git_on_a_terminal(&self, args: &str) -> Option<String> {
        let script = ["/usr/bin/script", "/bin/script"]
            .into_iter()
            .find(|p| Path::new(p).exists())?;
        let out = Command::new(script)
            .args(["-qc", &format!("git {args}"), "/dev/null"])
            .current_dir(&self.ws)
            .env("HOME", self.base.join("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// A loopback HTTP server that answers every request with `401` and a Basic challenge, so a
/// git fetch asks its credential helper. It stops after `connections` requests or 30 s.
pub fn challenging_server(connections: usize) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let mut served = 0;
        while served < connections && std::time::Instant::now() < deadline {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    stream.set_nonblocking(false).unwrap();
                    stream
                        .set_read_timeout(Some(Duration::from_secs(5)))
                        .unwrap();
                    let mut buf = [0u8; 8192];
                    let _ = stream.read(&mut buf);
                    let _ = stream.write_all(
                        b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\n\
                          Content-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    served += 1;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    port
}
