//! Which repository `git_inspect` may read, found and checked in-process before git runs.
//!
//! Git's own discovery follows whatever the repository says: a `.git` file's `gitdir:`, a
//! `commondir`, `objects/info/alternates`, symbolic links inside `.git`, `core.worktree`. Each
//! of those can point anywhere on disk and expose another repository through this tool. So the
//! tool finds the repository itself and passes git an explicit `GIT_DIR` and `GIT_WORK_TREE`:
//!
//! 1. From the physical primary root upwards, the first `.git` entry decides (a `.git`
//!    directory without `HEAD` is skipped, as git does).
//! 2. A `.git` **directory** at the root or at an ancestor is the enclosing repository: its
//!    work tree contains the workspace, and every command is limited to the workspace's own
//!    paths (see the tool's pathspecs). Its git directory counts as readable.
//! 3. A `.git` **file** (`gitdir: …`) or a `.git` **symbolic link** is a redirect: its target
//!    must lie inside the workspace roots, or the call is refused (`sandbox_read_blocked`).
//!    Linked worktrees and submodules whose git directory lies outside therefore need that
//!    directory's repository as a workspace root.
//! 4. `commondir`, every `objects/info/alternates` entry (recursively, as git reads them) and
//!    every symbolic link inside the git directories must stay inside the roots or the
//!    enclosing git directory.
//! 5. The `.git` entry and the git directory must belong to the current user (git's own
//!    `safe.directory` rule, which an explicit `GIT_DIR` would otherwise skip): a `.git` planted
//!    by someone else in a shared parent such as `/tmp` is refused.
//!
//! Bare repositories (no `.git` entry) are not looked for.

use kun_ports::{ErrorCode, ToolFailure};
use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// How many entries of the git directories are checked for links at most.
const MAX_SCANNED_ENTRIES: usize = 250_000;
/// How deep alternates may chain (git's own limit is 5).
const MAX_ALTERNATE_DEPTH: usize = 5;

/// A repository `git_inspect` may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Repo {
    /// The git directory (physical): `GIT_DIR`.
    pub(super) git_dir: PathBuf,
    /// The top of the work tree (physical): `GIT_WORK_TREE`; the primary root or an ancestor.
    pub(super) work_tree: PathBuf,
    /// The physical primary root: every command's working directory.
    pub(super) cwd: PathBuf,
    /// `cwd` relative to `work_tree`, `/`-separated; empty at the top.
    pub(super) prefix: String,
}

impl Repo {
    /// Whether the workspace is a proper subfolder of the work tree.
    pub(super) fn is_subfolder(&self) -> bool {
        !self.prefix.is_empty()
    }
}

/// What the walk found.
enum Found {
    /// A `.git` directory (at the root or an ancestor).
    Enclosing { top: PathBuf, git_dir: PathBuf },
    /// A `.git` file or link leading to `target`.
    Redirect {
        top: PathBuf,
        entry: PathBuf,
        target: PathBuf,
    },
}

/// Finds and checks the repository of the workspace whose physical roots are `roots` (the
/// first is the primary one).
///
/// # Errors
/// A failure for the model: not a repository (`tool_execution_failed`), or a repository that
/// reaches outside the workspace or belongs to someone else (`sandbox_read_blocked`).
pub(super) fn discover(roots: &[PathBuf]) -> Result<Repo, ToolFailure> {
    let physical_roots: Vec<PathBuf> = roots
        .iter()
        .filter_map(|root| fs::canonicalize(root).ok())
        .collect();
    let Some(cwd) = roots
        .first()
        .and_then(|primary| fs::canonicalize(primary).ok())
    else {
        return Err(ToolFailure::new(
            "the workspace root does not exist, so there is no repository to inspect",
        ));
    };
    let found = walk_up(&cwd)?.ok_or_else(|| {
        ToolFailure::new(format!(
            "{} is not inside a git repository, so there is nothing for git_inspect to show; \
             use ls, read and grep to look at the files",
            cwd.display()
        ))
    })?;
    let (top, git_dir, readable) = match found {
        Found::Enclosing { top, git_dir } => {
            owned_by_user(&git_dir, "the git directory")?;
            let mut readable = physical_roots.clone();
            readable.push(git_dir.clone());
            (top, git_dir, readable)
        }
        Found::Redirect { top, entry, target } => {
            owned_by_user(&entry, "the `.git` entry")?;
            if !inside(&target, &physical_roots) {
                return Err(outside(format!(
                    "{} redirects git to {}, outside the workspace roots; git_inspect reads \
                     only repositories inside the workspace. If that repository is yours, ask \
                     the user to add it as a workspace root.",
                    entry.display(),
                    target.display()
                )));
            }
            owned_by_user(&target, "the git directory")?;
            (top, target, physical_roots.clone())
        }
    };
    let common_dir = common_dir(&git_dir, &readable)?;
    let mut budget = MAX_SCANNED_ENTRIES;
    let mut object_dirs = vec![common_dir.join("objects")];
    if common_dir != git_dir {
        object_dirs.push(git_dir.join("objects"));
    }
    let mut scanned = vec![git_dir.clone(), common_dir];
    for objects in object_dirs {
        for alternate in alternates(&objects, &readable, 0)? {
            scanned.push(alternate);
        }
    }
    scanned.sort();
    scanned.dedup();
    for dir in &scanned {
        no_link_leads_out(dir, &readable, &mut budget)?;
    }
    let prefix = cwd
        .strip_prefix(&top)
        .map(|rest| {
            rest.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")
        })
        .unwrap_or_default();
    Ok(Repo {
        git_dir,
        work_tree: top,
        cwd,
        prefix,
    })
}

/// The first `.git` entry from `start` upwards.
fn walk_up(start: &Path) -> Result<Option<Found>, ToolFailure> {
    for dir in start.ancestors() {
        let entry = dir.join(".git");
        let Ok(meta) = fs::symlink_metadata(&entry) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            let target = fs::canonicalize(&entry).map_err(|err| {
                outside(format!(
                    "{} is a symbolic link that cannot be followed ({err}); git_inspect will \
                     not guess where the repository is",
                    entry.display()
                ))
            })?;
            let target = if target.is_file() {
                gitdir_file_target(&target, dir)?
            } else {
                target
            };
            return Ok(Some(Found::Redirect {
                top: dir.to_path_buf(),
                entry,
                target,
            }));
        }
        if meta.is_dir() {
            if entry.join("HEAD").exists() {
                return Ok(Some(Found::Enclosing {
                    top: dir.to_path_buf(),
                    git_dir: entry,
                }));
            }
            continue;
        }
        let target = gitdir_file_target(&entry, dir)?;
        return Ok(Some(Found::Redirect {
            top: dir.to_path_buf(),
            entry,
            target,
        }));
    }
    Ok(None)
}

/// The directory a `gitdir: <path>` file names (relative paths against `base`), physical.
fn gitdir_file_target(file: &Path, base: &Path) -> Result<PathBuf, ToolFailure> {
    let text = read_small(file)?;
    let Some(named) = text.lines().next().and_then(|l| l.strip_prefix("gitdir: ")) else {
        return Err(ToolFailure::new(format!(
            "{} is not a valid `.git` file (it should start with `gitdir: `)",
            file.display()
        )));
    };
    let named = Path::new(named.trim_end_matches('\r'));
    let joined = if named.is_absolute() {
        named.to_path_buf()
    } else {
        base.join(named)
    };
    fs::canonicalize(&joined).map_err(|err| {
        ToolFailure::new(format!(
            "{} names the git directory {}, which cannot be opened ({err})",
            file.display(),
            joined.display()
        ))
    })
}

/// The common directory (`commondir` of a linked worktree, else the git directory itself).
fn common_dir(git_dir: &Path, readable: &[PathBuf]) -> Result<PathBuf, ToolFailure> {
    let file = git_dir.join("commondir");
    if fs::symlink_metadata(&file).is_err() {
        return Ok(git_dir.to_path_buf());
    }
    let text = read_small(&file)?;
    let named = Path::new(
        text.lines()
            .next()
            .unwrap_or_default()
            .trim_end_matches('\r'),
    );
    let joined = if named.is_absolute() {
        named.to_path_buf()
    } else {
        git_dir.join(named)
    };
    let common = fs::canonicalize(&joined).map_err(|err| {
        ToolFailure::new(format!(
            "{} names {}, which cannot be opened ({err})",
            file.display(),
            joined.display()
        ))
    })?;
    if !inside(&common, readable) {
        return Err(outside(format!(
            "{} points git at {}, outside the workspace; git_inspect reads only repositories \
             inside the workspace roots",
            file.display(),
            common.display()
        )));
    }
    Ok(common)
}

/// The alternate object directories `objects` borrows from, recursively; each must be
/// readable.
fn alternates(
    objects: &Path,
    readable: &[PathBuf],
    depth: usize,
) -> Result<Vec<PathBuf>, ToolFailure> {
    let file = objects.join("info/alternates");
    if fs::symlink_metadata(&file).is_err() {
        return Ok(Vec::new());
    }
    if depth >= MAX_ALTERNATE_DEPTH {
        return Err(outside(format!(
            "{} chains alternates deeper than {MAX_ALTERNATE_DEPTH} levels",
            file.display()
        )));
    }
    let mut out = Vec::new();
    for line in read_small(&file)?.lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('"') {
            return Err(outside(format!(
                "{} lists a quoted alternate (`{line}`); git_inspect does not follow it",
                file.display()
            )));
        }
        let named = Path::new(line);
        let joined = if named.is_absolute() {
            named.to_path_buf()
        } else {
            objects.join(named)
        };
        // A missing alternate is skipped by git too.
        let Ok(alternate) = fs::canonicalize(&joined) else {
            continue;
        };
        if !inside(&alternate, readable) {
            return Err(outside(format!(
                "{} borrows objects from {}, outside the workspace; git_inspect reads only \
                 repositories inside the workspace roots",
                file.display(),
                alternate.display()
            )));
        }
        out.extend(alternates(&alternate, readable, depth + 1)?);
        out.push(alternate);
    }
    Ok(out)
}

/// Refuses a symbolic link under `dir` whose target lies outside `readable`.
fn no_link_leads_out(
    dir: &Path,
    readable: &[PathBuf],
    budget: &mut usize,
) -> Result<(), ToolFailure> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        *budget = budget.checked_sub(1).ok_or_else(|| {
            outside(format!(
                "the git directory {} holds more than {MAX_SCANNED_ENTRIES} files, too many to \
                 check; run `git gc` to pack them",
                dir.display()
            ))
        })?;
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_symlink() {
            // A dangling link reads nothing.
            if let Ok(target) = fs::canonicalize(&path)
                && !inside(&target, readable)
            {
                return Err(outside(format!(
                    "{} is a symbolic link to {}, outside the workspace; git_inspect will not \
                     read through it",
                    path.display(),
                    target.display()
                )));
            }
        } else if kind.is_dir() {
            no_link_leads_out(&path, readable, budget)?;
        }
    }
    Ok(())
}

/// Refuses `path` when it belongs to another user (git's `safe.directory` default).
fn owned_by_user(path: &Path, what: &str) -> Result<(), ToolFailure> {
    let meta = fs::symlink_metadata(path)
        .map_err(|err| ToolFailure::new(format!("cannot inspect {}: {err}", path.display())))?;
    let uid = rustix::process::geteuid().as_raw();
    if meta.uid() == uid {
        return Ok(());
    }
    Err(outside(format!(
        "{what} {} belongs to user {}, not to you (user {uid}); git refuses such repositories \
         unless told they are safe, and so does git_inspect",
        path.display(),
        meta.uid()
    )))
}

/// Whether `path` lies at or under one of `dirs`.
fn inside(path: &Path, dirs: &[PathBuf]) -> bool {
    dirs.iter().any(|dir| path.starts_with(dir))
}

/// Reads a small control file (`.git`, `commondir`, `alternates`).
fn read_small(path: &Path) -> Result<String, ToolFailure> {
    let bytes = fs::read(path)
        .map_err(|err| ToolFailure::new(format!("cannot read {}: {err}", path.display())))?;
    if bytes.len() > 64 * 1024 {
        return Err(ToolFailure::new(format!(
            "{} is larger than a git control file can be",
            path.display()
        )));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A refusal to read outside the workspace.
fn outside(message: String) -> ToolFailure {
    ToolFailure::coded(ErrorCode::SandboxReadBlocked, message)
}
