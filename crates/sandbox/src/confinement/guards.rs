//! The guard paths of a workspace root, which a confined command must not change even though
//! the root is writable: `.git` (its config and hooks run programs on the host), and our own
//! and our peers' configuration (`.kun`, `.mcp.json`, `.claude`, `.agents`: hooks, MCP servers
//! and agents that run unconfined). The bubblewrap tier re-binds each one read-only.
//!
//! | guard in the root | what the bubblewrap tier does |
//! |---|---|
//! | a directory or file | `--ro-bind` it onto itself |
//! | a `.git` file (`gitdir: X`) | the file, and `X` too when `X` lies inside a writable root |
//! | a symbolic link | refused: a link can be replaced from inside, and bwrap cannot bind onto a link |
//! | missing | a mask: an empty directory is made on the host and bound read-only, so the name cannot be created; removed after the last command using it ends |
//!
//! Masks are empty directories, `.mcp.json` too: git shows no empty directory (so no
//! `?? .mcp.json` in `git status`, nothing for a `git add -A` to pick up while a language
//! server or a background job runs), git's discovery skips an empty `.git` directory (a
//! workspace inside a repository keeps finding it), and a `.mcp.json` directory reads as no
//! servers (`kun-composition` treats it as absent; other clients fail to parse it, which
//! starts nothing either).
//!
//! The masks are counted per process: concurrent commands share one, and it is removed only
//! when none of them runs any more (removing a mount point under a running sandbox would drop
//! its mask there). A mask the user changed meanwhile (a directory no longer empty, a file with
//! other content) is left alone. Another kun-tools process on the same workspace can remove a
//! mask this one still uses; the window is accepted.

use kun_ports::ConfinementError;
use std::collections::HashMap;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The guard names of every workspace root: the protected paths of the in-process tools
/// (`crate::protected`), one list for both.
fn guards() -> impl Iterator<Item = &'static str> {
    crate::protected::guard_names()
}

/// The guard names, for messages.
pub(crate) fn guard_names() -> String {
    guards().collect::<Vec<_>>().join(", ")
}

/// What to re-bind read-only inside the roots, and the masks that had to be made for it.
#[derive(Debug, Default)]
pub(crate) struct GuardPlan {
    /// Paths to `--ro-bind` onto themselves, parents first.
    pub(crate) read_only: Vec<PathBuf>,
    /// Masks held for the run.
    pub(crate) masks: Vec<MaskHold>,
}

/// Plans the guards of every writable root (canonical paths), making masks for missing ones.
///
/// # Errors
/// When a guard is a symbolic link, or a mask cannot be made.
pub(crate) fn plan(roots: &[PathBuf]) -> Result<GuardPlan, ConfinementError> {
    let mut plan = GuardPlan::default();
    for root in roots {
        for name in guards() {
            let path = root.join(name);
            match inspect(&path)? {
                Found::Mask(hold) => plan.masks.push(hold),
                Found::Existing { is_file } => {
                    if name == ".git"
                        && is_file
                        && let Some(gitdir) = gitdir_inside(&path, roots)
                    {
                        plan.read_only.push(gitdir);
                    }
                }
            }
            plan.read_only.push(path);
        }
    }
    plan.read_only.sort_by_key(|path| path.components().count());
    plan.read_only.dedup();
    Ok(plan)
}

/// What a guard path is.
enum Found {
    /// A mask of ours (made now, or shared with a command still running).
    Mask(MaskHold),
    /// The user's own file or directory.
    Existing { is_file: bool },
}

/// Looks at one guard path, making a mask when it is missing. Decided under the mask registry's
/// lock, so a mask another command uses is shared, never mistaken for the user's.
fn inspect(path: &Path) -> Result<Found, ConfinementError> {
    let mut guard = MASKS.lock().unwrap_or_else(PoisonError::into_inner);
    let masks = guard.get_or_insert_with(HashMap::new);
    if let Some((users, _)) = masks.get_mut(path) {
        *users += 1;
        return Ok(Found::Mask(MaskHold {
            path: path.to_path_buf(),
        }));
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let target = std::fs::read_link(path)
                .map_or_else(|_| "?".to_owned(), |t| t.display().to_string());
            Err(ConfinementError::new(format!(
                "`{}` is a symbolic link (to {target}), which a command could replace; it cannot \
                 be kept read-only. Replace the link with the real directory or file, or run the \
                 command with approval outside the sandbox",
                path.display(),
            )))
        }
        Ok(meta) => Ok(Found::Existing {
            is_file: meta.is_file(),
        }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            let made = make(path).map_err(|err| {
                ConfinementError::new(format!(
                    "cannot make the read-only mask `{}` that keeps a command from creating it: \
                     {err}",
                    path.display()
                ))
            })?;
            masks.insert(path.to_path_buf(), (1, made));
            Ok(Found::Mask(MaskHold {
                path: path.to_path_buf(),
            }))
        }
        Err(err) => Err(ConfinementError::new(format!(
            "cannot inspect `{}`: {err}",
            path.display()
        ))),
    }
}

/// The repository directory a `.git` file points at, when it lies inside a writable root.
fn gitdir_inside(git_file: &Path, roots: &[PathBuf]) -> Option<PathBuf> {
    let text = std::fs::read_to_string(git_file).ok()?;
    let target = text
        .lines()
        .find_map(|line| line.strip_prefix("gitdir:"))?
        .trim();
    let base = git_file.parent()?;
    let target = std::fs::canonicalize(base.join(target)).ok()?;
    roots
        .iter()
        .any(|root| target.starts_with(root))
        .then_some(target)
}

/// Masks in use in this process: path → (users, what was made).
static MASKS: Mutex<Option<HashMap<PathBuf, (usize, Made)>>> = Mutex::new(None);

/// What a mask is on the host, to recognise it when removing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Made {
    device: u64,
    inode: u64,
}

/// One command's use of a mask; dropping the last use removes the mask.
#[derive(Debug)]
pub(crate) struct MaskHold {
    path: PathBuf,
}

impl Drop for MaskHold {
    fn drop(&mut self) {
        let mut guard = MASKS.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(masks) = guard.as_mut() else { return };
        let Some((users, made)) = masks.get_mut(&self.path) else {
            return;
        };
        *users -= 1;
        if *users > 0 {
            return;
        }
        let made = *made;
        masks.remove(&self.path);
        remove_if_unchanged(&self.path, made);
    }
}

fn make(path: &Path) -> std::io::Result<Made> {
    std::fs::DirBuilder::new().mode(0o755).create(path)?;
    let meta = std::fs::symlink_metadata(path)?;
    Ok(Made {
        device: meta.dev(),
        inode: meta.ino(),
    })
}

/// Removes the mask unless the user changed it: it must still be our directory, and empty
/// (`remove_dir` fails otherwise, and then it stays).
fn remove_if_unchanged(path: &Path, made: Made) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.dev() != made.device || meta.ino() != made.inode {
        return;
    }
    if let Err(err) = std::fs::remove_dir(path)
        && err.kind() != std::io::ErrorKind::DirectoryNotEmpty
    {
        tracing::debug!(path = %path.display(), %err, "a guard mask was not removed");
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn existing_guards_are_kept_and_missing_ones_masked_until_the_last_user_ends() {
        let temp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(temp.path()).unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        let roots = [root.clone()];
        let first = plan(&roots).unwrap();
        assert_eq!(first.read_only.len(), 5);
        assert_eq!(first.masks.len(), 4, ".git exists; four masks");
        assert!(root.join(".kun").is_dir());
        assert!(root.join(".mcp.json").is_dir());
        let second = plan(&roots).unwrap();
        assert_eq!(second.masks.len(), 4, "the second user shares the masks");
        drop(first);
        assert!(root.join(".kun").is_dir(), "still used by the second plan");
        drop(second);
        for name in [".kun", ".mcp.json", ".claude", ".agents"] {
            assert!(!root.join(name).exists(), "{name} mask left behind");
        }
        assert!(root.join(".git").is_dir(), "the real .git stays");
    }

    #[test]
    fn a_mask_the_user_filled_stays() {
        let temp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(temp.path()).unwrap();
        let held = plan(std::slice::from_ref(&root)).unwrap();
        std::fs::write(root.join(".kun/config.toml"), "# mine\n").unwrap();
        std::fs::write(root.join(".claude/settings.json"), "{}").unwrap();
        drop(held);
        assert!(root.join(".kun/config.toml").exists());
        assert!(root.join(".claude/settings.json").exists());
        assert!(!root.join(".mcp.json").exists(), "an unchanged mask goes");
    }

    #[test]
    fn a_symlinked_guard_is_refused_and_a_git_file_brings_its_gitdir() {
        let temp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(temp.path()).unwrap();
        std::fs::create_dir_all(root.join("real/.git-dir")).unwrap();
        std::fs::write(root.join(".git"), "gitdir: real/.git-dir\n").unwrap();
        let held = plan(std::slice::from_ref(&root)).unwrap();
        assert!(held.read_only.contains(&root.join("real/.git-dir")));
        drop(held);
        std::os::unix::fs::symlink("/etc", root.join(".kun")).unwrap();
        let err = plan(std::slice::from_ref(&root)).unwrap_err();
        assert!(err.message.contains(".kun` is a symbolic link"), "{err}");
    }
}
