//! A git that runs no program named by any configuration, and reads no configuration but the
//! repository's own: the environment, the `-c` overrides and the driver overrides listed (with
//! the reason for each) in the documentation of `git_inspect` (the parent module).

use super::repo::Repo;
use crate::shell::{Stream, find_on_path, read_only_scope, spawn};
use kun_ports::process::ChildEnv;
use kun_ports::{AbortSignal, CommandConfinement, CommandSpec, ErrorCode, ToolFailure};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

/// The environment every git run gets (besides `PATH`, `GIT_DIR`, `GIT_WORK_TREE` and
/// `GIT_ATTR_SOURCE`); the `git_inspect` module docs give the reason for each.
pub(super) const ENVIRONMENT: &[(&str, &str)] = &[
    ("HOME", "/nonexistent"),
    ("XDG_CONFIG_HOME", "/nonexistent"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_SYSTEM", "/dev/null"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_NO_LAZY_FETCH", "1"),
    ("GIT_PROTOCOL_FROM_USER", "0"),
    ("GIT_ALLOW_PROTOCOL", ""),
    ("GIT_LITERAL_PATHSPECS", "1"),
    ("LC_ALL", "C"),
    ("LANG", "C"),
];

/// The configuration every git run is given with `-c`; the `git_inspect` module docs give the
/// reason for each.
pub(super) const FIXED_OVERRIDES: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.useBuiltinFSMonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.sshCommand", ""),
    ("core.askPass", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("gpg.program", ""),
    ("gpg.openpgp.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("gpg.ssh.allowedSignersFile", ""),
    ("gpg.ssh.revocationFile", ""),
    ("log.showSignature", "false"),
    ("diff.external", ""),
    ("diff.autoRefreshIndex", "false"),
    ("diff.orderFile", "/dev/null"),
    ("diff.submodule", "short"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("core.attributesFile", "/dev/null"),
    ("core.excludesFile", "/dev/null"),
    ("log.mailmap", "false"),
    ("mailmap.file", "/dev/null"),
    ("mailmap.blob", ""),
    ("status.relativePaths", "true"),
    ("color.ui", "false"),
    ("core.quotePath", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
];

/// The empty tree, for `GIT_ATTR_SOURCE`, per object format.
const EMPTY_TREE_SHA1: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const EMPTY_TREE_SHA256: &str = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321";

/// How much of stderr is kept for error messages.
const MAX_STDERR: usize = 4 * 1024;
/// The largest configuration listing read.
const MAX_CONFIG_LISTING: usize = 1024 * 1024;

/// Where the system's programs live; git's own directory is added in front.
const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Keeps the head of a stream and counts all of it.
#[derive(Debug, Default)]
pub(super) struct Head {
    pub(super) kept: Vec<u8>,
    cap: usize,
    pub(super) total_bytes: u64,
    newlines: u64,
    last: Option<u8>,
}

impl Head {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        let room = self.cap.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
        self.total_bytes += chunk.len() as u64;
        self.newlines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        if let Some(&last) = chunk.last() {
            self.last = Some(last);
        }
    }

    /// Whether more arrived than was kept.
    pub(super) fn cut(&self) -> bool {
        self.total_bytes > self.kept.len() as u64
    }

    pub(super) fn total_lines(&self) -> u64 {
        match self.last {
            None => 0,
            Some(b'\n') => self.newlines,
            Some(_) => self.newlines + 1,
        }
    }
}

/// What one git run printed.
#[derive(Debug)]
pub(super) struct Ran {
    /// The exit code.
    pub(super) code: i32,
    /// The head of stdout.
    pub(super) stdout: Head,
    /// stderr, trimmed and cut.
    pub(super) stderr: String,
}

/// How git runs for one call: the repository, the overrides its configuration needs, and the
/// limits of the turn.
pub(super) struct HardenedGit<'a> {
    program: PathBuf,
    repo: &'a Repo,
    overrides: Vec<(String, String)>,
    attr_source: &'static str,
    confinement: &'a dyn CommandConfinement,
    timeout: Duration,
    abort: &'a AbortSignal,
}

impl<'a> HardenedGit<'a> {
    /// Lists the repository's configuration and builds the overrides for its drivers.
    ///
    /// # Errors
    /// When git is missing, the configuration cannot be read, or it defines a driver that
    /// cannot be switched off.
    pub(super) async fn prepare(
        repo: &'a Repo,
        confinement: &'a dyn CommandConfinement,
        timeout: Duration,
        abort: &'a AbortSignal,
    ) -> Result<Self, ToolFailure> {
        let program = find_on_path("git").ok_or_else(|| {
            ToolFailure::new("git is not installed (not found on PATH), so git_inspect cannot run")
        })?;
        let mut git = Self {
            program,
            repo,
            overrides: fixed_overrides(),
            attr_source: EMPTY_TREE_SHA1,
            confinement,
            timeout,
            abort,
        };
        let args = ["config", "--list", "-z", "--includes"].map(str::to_owned);
        let listing = git.run(&args, MAX_CONFIG_LISTING).await?;
        if listing.code != 0 {
            return Err(ToolFailure::new(format!(
                "git could not read the repository's configuration: {}",
                listing.stderr
            )));
        }
        let config = ConfigListing::parse(&listing.stdout.kept);
        git.overrides.extend(config.driver_overrides()?);
        if config.object_format_sha256 {
            git.attr_source = EMPTY_TREE_SHA256;
        }
        Ok(git)
    }

    /// The spec of `git <args>`: exactly the environment above (nothing of ours), confined
    /// read-only with the repository kept reachable.
    fn spec(&self, args: &[String]) -> CommandSpec {
        let mut path = self
            .program
            .parent()
            .map(|dir| dir.display().to_string())
            .unwrap_or_default();
        path.push(':');
        path.push_str(SYSTEM_PATH);
        let mut env = ChildEnv::empty();
        env.set("PATH", path);
        for (name, value) in ENVIRONMENT {
            env.set(name, value);
        }
        env.set("GIT_DIR", &self.repo.git_dir)
            .set("GIT_WORK_TREE", &self.repo.work_tree)
            .set("GIT_ATTR_SOURCE", self.attr_source);
        let readable = [&self.repo.work_tree, &self.repo.git_dir, &self.repo.cwd]
            .map(PathBuf::clone)
            .to_vec();
        let mut argv = vec!["--no-pager".to_owned(), "--no-optional-locks".to_owned()];
        for (key, value) in &self.overrides {
            argv.push("-c".to_owned());
            argv.push(format!("{key}={value}"));
        }
        argv.extend(args.iter().cloned());
        CommandSpec::new(
            &self.program,
            &self.repo.cwd,
            env,
            read_only_scope(&readable),
        )
        .args(argv)
    }

    /// Runs `git <args>`, keeping at most `cap` bytes of stdout.
    ///
    /// # Errors
    /// When git cannot start or be confined, times out, or the turn is aborted.
    pub(super) async fn run(&self, args: &[String], cap: usize) -> Result<Ran, ToolFailure> {
        let running = spawn(&self.spec(args), self.confinement).map_err(|failure| {
            ToolFailure::coded(
                failure.code,
                format!("could not run git: {}", failure.message),
            )
        })?;
        let mut stdout = Head::new(cap);
        let mut stderr = Head::new(MAX_STDERR);
        let finished = running
            .drive(self.timeout, self.abort, |stream, chunk| match stream {
                Stream::Stdout => stdout.push(chunk),
                Stream::Stderr => stderr.push(chunk),
            })
            .await;
        let Some(code) = finished.ending.exit_code() else {
            if self.abort.is_aborted() {
                return Err(ToolFailure::new("the turn was aborted; git was stopped"));
            }
            return Err(ToolFailure::coded(
                ErrorCode::ToolTimeout,
                format!(
                    "git took longer than {} seconds and was stopped; narrow the request with \
                     path, rev or limit",
                    self.timeout.as_secs()
                ),
            ));
        };
        Ok(Ran {
            code,
            stdout,
            stderr: String::from_utf8_lossy(&stderr.kept).trim().to_owned(),
        })
    }
}

fn fixed_overrides() -> Vec<(String, String)> {
    FIXED_OVERRIDES
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect()
}

/// What the configuration listing tells: the drivers it defines and the object format.
#[derive(Debug, Default, PartialEq, Eq)]
struct ConfigListing {
    filters: BTreeSet<String>,
    diff_drivers: BTreeSet<String>,
    object_format_sha256: bool,
}

impl ConfigListing {
    /// Parses `git config --list -z`: entries `key\nvalue` (or a bare `key`), NUL-terminated.
    fn parse(listing: &[u8]) -> Self {
        let mut out = Self::default();
        for entry in listing.split(|&b| b == 0).filter(|e| !e.is_empty()) {
            let entry = String::from_utf8_lossy(entry);
            let (key, value) = entry.split_once('\n').unwrap_or((&entry, ""));
            let Some((section, rest)) = key.split_once('.') else {
                continue;
            };
            let subsection = rest.rsplit_once('.').map(|(sub, _)| sub);
            match (section.to_ascii_lowercase().as_str(), subsection) {
                ("filter", Some(name)) => {
                    out.filters.insert(name.to_owned());
                }
                ("diff", Some(name)) => {
                    out.diff_drivers.insert(name.to_owned());
                }
                ("extensions", None) if rest.eq_ignore_ascii_case("objectformat") => {
                    out.object_format_sha256 = value.trim().eq_ignore_ascii_case("sha256");
                }
                _ => {}
            }
        }
        out
    }

    /// Overrides switching off every driver the configuration defines.
    fn driver_overrides(&self) -> Result<Vec<(String, String)>, ToolFailure> {
        let mut out = Vec::new();
        for name in self.filters.iter().chain(&self.diff_drivers) {
            if name.contains(['=', '\n', '\0']) {
                return Err(ToolFailure::coded(
                    ErrorCode::SandboxCommandBlocked,
                    format!(
                        "the repository's git configuration defines a driver named `{}`, which \
                         git_inspect cannot switch off, so it will not run git here; read the \
                         files with read and grep instead",
                        name.escape_debug()
                    ),
                ));
            }
        }
        for name in &self.filters {
            for key in ["clean", "smudge", "process"] {
                out.push((format!("filter.{name}.{key}"), String::new()));
            }
            out.push((format!("filter.{name}.required"), "false".to_owned()));
        }
        for name in &self.diff_drivers {
            for key in ["command", "textconv"] {
                out.push((format!("diff.{name}.{key}"), String::new()));
            }
            out.push((format!("diff.{name}.cachetextconv"), "false".to_owned()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_names_every_driver_and_the_object_format() {
        let listing = b"core.bare\nfalse\0filter.lfs.clean\ngit-lfs clean -- %f\0filter.a.b.process\nx\0\
diff.external\nx\0diff.rust.textconv\ncat\0Filter.Up.smudge\ny\0extensions.objectformat\nsha256\0core.fsmonitor\0";
        let parsed = ConfigListing::parse(listing);
        assert_eq!(
            parsed
                .filters
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            ["Up", "a.b", "lfs"]
        );
        assert_eq!(
            parsed
                .diff_drivers
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            ["rust"]
        );
        assert!(parsed.object_format_sha256);
        let overrides = parsed.driver_overrides().unwrap();
        assert!(overrides.contains(&("filter.a.b.process".to_owned(), String::new())));
        assert!(overrides.contains(&("filter.lfs.required".to_owned(), "false".to_owned())));
        assert!(overrides.contains(&("diff.rust.textconv".to_owned(), String::new())));
    }

    #[test]
    fn a_driver_name_that_cannot_be_overridden_refuses_the_call() {
        let parsed = ConfigListing::parse(b"filter.x=y.clean\nevil\0");
        let err = parsed.driver_overrides().unwrap_err();
        assert_eq!(err.code, ErrorCode::SandboxCommandBlocked);
    }

    /// The module docs are the list of what is switched off: every override and variable
    /// here appears there, with its value.
    #[test]
    fn the_documented_tables_match_the_code() {
        let docs = include_str!("mod.rs");
        for (key, value) in FIXED_OVERRIDES.iter().chain(ENVIRONMENT) {
            let row = docs
                .lines()
                .find(|line| line.starts_with("//! | ") && line.contains(&format!("`{key}`")))
                .unwrap_or_else(|| panic!("`{key}` is not in the documented tables"));
            let shown = if value.is_empty() {
                "empty".to_owned()
            } else {
                format!("`{value}`")
            };
            assert!(
                row.contains(&shown),
                "`{key}` = {shown} is not what the docs say: {row}"
            );
        }
    }

    #[test]
    fn the_fixed_overrides_are_unique_and_cover_the_program_keys() {
        let keys: BTreeSet<_> = FIXED_OVERRIDES
            .iter()
            .map(|(k, _)| k.to_ascii_lowercase())
            .collect();
        assert_eq!(keys.len(), FIXED_OVERRIDES.len());
        for key in [
            "core.fsmonitor",
            "core.hookspath",
            "core.pager",
            "core.sshcommand",
            "credential.helper",
            "gpg.program",
            "gpg.ssh.program",
            "log.showsignature",
            "diff.external",
            "protocol.allow",
        ] {
            assert!(keys.contains(key), "{key}");
        }
    }
}
