//! The reserved plan file: which file, checked, and written beneath the workspace root
//! without following symbolic links.

use kun_ports::{ErrorCode, ToolFailure};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use std::io;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicU64, Ordering};

/// The longest plan file name.
const MAX_NAME: usize = 100;

/// Normalises a relative path as given by the model: `\` → `/`, empty and `.` segments
/// dropped. Absolute paths and `..` segments are refused.
///
/// ```
/// use kun_gui::plan::normalise_relative;
/// assert_eq!(normalise_relative(".\\.kun//plans/./a.md").unwrap(), ".kun/plans/a.md");
/// assert!(normalise_relative(".kun/plans/../../etc/x.md").is_err());
/// assert!(normalise_relative("/etc/x.md").is_err());
/// ```
///
/// # Errors
/// What is wrong with the path.
pub fn normalise_relative(input: &str) -> Result<String, String> {
    let unified = input.replace('\\', "/");
    if unified.starts_with('/') {
        return Err(format!(
            "`{input}` is absolute; give the path relative to the workspace"
        ));
    }
    let mut parts = Vec::new();
    for part in unified.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(format!("`{input}` has a `..` segment; plan paths may not"));
            }
            other => parts.push(other),
        }
    }
    Ok(parts.join("/"))
}

/// A lower-case, dash-separated file stem from a title (`"Ship v2: parser!"` → `ship-v2-parser`).
fn slug(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_alphanumeric() {
            slug.extend(c.to_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let trimmed: String = slug.trim_end_matches('-').chars().take(80).collect();
    if trimmed.is_empty() {
        "plan".to_owned()
    } else {
        trimmed
    }
}

fn check_name(name: &str) -> Result<(), ToolFailure> {
    let ok = !name.starts_with('.')
        && name.chars().count() <= MAX_NAME
        && !name.chars().any(char::is_control)
        && Path::new(name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("md"))
        && name.len() > 3;
    if ok {
        Ok(())
    } else {
        Err(ToolFailure::invalid(format!(
            "`{name}` is not a plan file name: a visible `.md` file name of at most {MAX_NAME} \
             characters"
        )))
    }
}

/// The checked plan file: a directory relative to the root, and a file name in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanTarget {
    root: std::path::PathBuf,
    dir: Vec<String>,
    name: String,
}

/// Makes temporary names unique within the process.
static TEMP_SERIAL: AtomicU64 = AtomicU64::new(0);

fn blocked(message: String) -> ToolFailure {
    ToolFailure::coded(ErrorCode::SandboxWriteBlocked, message)
}

impl PlanTarget {
    /// Decides the plan file for a call.
    ///
    /// # Errors
    /// `sandbox_write_blocked` for a plan directory outside `root`, `invalid_arguments` for a
    /// `path` that is not a `.md` file directly in it.
    pub fn resolve(
        root: &Path,
        plan_dir: &Path,
        title: &str,
        path: Option<&str>,
    ) -> Result<Self, ToolFailure> {
        let relative_dir = if plan_dir.is_absolute() {
            plan_dir.strip_prefix(root).map_err(|_| {
                blocked(format!(
                    "the plan directory {} is outside the workspace {}; the plan context does \
                     not match this workspace",
                    plan_dir.display(),
                    root.display()
                ))
            })?
        } else {
            plan_dir
        };
        let mut dir = Vec::new();
        for component in relative_dir.components() {
            match component {
                Component::Normal(part) => dir.push(part.to_string_lossy().into_owned()),
                Component::CurDir => {}
                _ => {
                    return Err(blocked(format!(
                        "the plan directory {} leaves the workspace",
                        plan_dir.display()
                    )));
                }
            }
        }
        let name = match path {
            None => format!("{}.md", slug(title)),
            Some(given) => {
                let normal = normalise_relative(given).map_err(ToolFailure::invalid)?;
                let (parent, name) = normal.rsplit_once('/').unwrap_or(("", normal.as_str()));
                if parent != dir.join("/") {
                    return Err(ToolFailure::invalid(format!(
                        "`{given}` is not directly in the plan directory `{}`; use `{}/<name>.md`",
                        dir.join("/"),
                        dir.join("/")
                    )));
                }
                name.to_owned()
            }
        };
        check_name(&name)?;
        Ok(Self {
            root: root.to_path_buf(),
            dir,
            name,
        })
    }

    /// The file relative to the workspace root.
    #[must_use]
    pub fn relative_path(&self) -> String {
        let mut parts = self.dir.clone();
        parts.push(self.name.clone());
        parts.join("/")
    }

    /// Writes `bytes` (see the module docs); returns whether a file was replaced.
    ///
    /// # Errors
    /// `sandbox_write_blocked` when a symbolic link is on the way, `tool_execution_failed`
    /// when the file system refuses.
    pub fn write(&self, bytes: &[u8]) -> Result<bool, ToolFailure> {
        let failed = |what: &str, err: io::Error| {
            if err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
                || err.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error())
            {
                blocked(format!(
                    "{what} {}: a symbolic link (or a file) is in the way; plans are written \
                     only into a real directory in the workspace",
                    self.relative_path()
                ))
            } else {
                ToolFailure::new(format!("{what} {}: {err}", self.relative_path()))
            }
        };
        let dir_flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY;
        // The root itself may be reached through a link (the user chose it); nothing below it.
        let root_flags = OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::RDONLY;
        let mut dir: OwnedFd = rustix::fs::open(&self.root, root_flags, Mode::empty())
            .map_err(|e| failed("cannot open the workspace for", e.into()))?;
        for part in &self.dir {
            match rustix::fs::mkdirat(&dir, part.as_str(), Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(failed("cannot create the plan directory for", e.into())),
            }
            dir = rustix::fs::openat(&dir, part.as_str(), dir_flags, Mode::empty())
                .map_err(|e| failed("cannot open the plan directory for", e.into()))?;
        }
        let replaced = match rustix::fs::statat(
            &dir,
            self.name.as_str(),
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        ) {
            Ok(stat) => {
                if rustix::fs::FileType::from_raw_mode(stat.st_mode)
                    != rustix::fs::FileType::RegularFile
                {
                    return Err(blocked(format!(
                        "{} exists and is not a plain file; plans replace only plain files",
                        self.relative_path()
                    )));
                }
                true
            }
            Err(_) => false,
        };
        let serial = TEMP_SERIAL.fetch_add(1, Ordering::Relaxed);
        let temp = format!(".{}.{}.{serial}.tmp", self.name, std::process::id());
        let file_flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let file = rustix::fs::openat(&dir, temp.as_str(), file_flags, Mode::from_raw_mode(0o644))
            .map_err(|e| failed("cannot create a temporary file for", e.into()))?;
        let written = write_all(&file, bytes)
            .and_then(|()| rustix::fs::fsync(&file).map_err(io::Error::from))
            .and_then(|()| {
                rustix::fs::renameat(&dir, temp.as_str(), &dir, self.name.as_str())
                    .map_err(io::Error::from)
            });
        if let Err(err) = written {
            let _ = rustix::fs::unlinkat(&dir, temp.as_str(), rustix::fs::AtFlags::empty());
            return Err(failed("cannot write", err));
        }
        Ok(replaced)
    }
}

fn write_all(fd: &OwnedFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        let n = rustix::io::write(fd.as_fd(), bytes)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "the write stopped",
            ));
        }
        bytes = &bytes[n..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slug("Ship v2: the parser!"), "ship-v2-the-parser");
        assert_eq!(slug("!!!"), "plan");
        assert_eq!(slug("计划 A"), "计划-a");
    }

    #[test]
    fn names() {
        assert!(check_name("a.md").is_ok());
        assert!(check_name("A.MD").is_ok());
        assert!(check_name(".md").is_err());
        assert!(check_name(".hidden.md").is_err());
        assert!(check_name("a.txt").is_err());
        assert!(check_name("a\u{1b}.md").is_err());
    }
}
