//! Lexical path arithmetic: normalising `.` and `..` without touching the filesystem, and
//! spelling a path relative to a root the way tool results show it.
//!
//! Lexical results are what tools display and use as a command's working directory; they are
//! never what the sandbox checks (see [`crate::physical`]).

use std::path::{Component, Path, PathBuf};

/// Removes `.` components and applies `..` by dropping the previous component.
///
/// Invariant: for an absolute input the result is absolute, contains no `.` or `..`
/// components, and `..` at the filesystem root stays at the root (as the kernel does).
/// A relative input keeps leading `..` components it cannot cancel.
#[must_use]
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => out.push(prefix.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                Some(Component::ParentDir | Component::CurDir) | None => out.push(".."),
            },
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// `input` made absolute against `base` (when relative) and normalised.
#[must_use]
pub(crate) fn absolute_against(input: &Path, base: &Path) -> PathBuf {
    if input.is_absolute() {
        normalize(input)
    } else {
        normalize(&base.join(input))
    }
}

/// `path` relative to `root`, `/`-separated, `.` when they are equal; `None` when `path` does
/// not lie inside `root`. Both must be normalised the same way.
#[must_use]
pub(crate) fn relative_to(path: &Path, root: &Path) -> Option<String> {
    let rest = path.strip_prefix(root).ok()?;
    let parts: Vec<_> = rest
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    if parts.is_empty() {
        Some(".".to_owned())
    } else {
        Some(parts.join("/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_cases() {
        let cases = [
            ("/ws/a/./b", "/ws/a/b"),
            ("/ws/a/../b", "/ws/b"),
            ("/ws/../../..", "/"),
            ("/../etc", "/etc"),
            ("/ws/a/", "/ws/a"),
            ("a/../../b", "../b"),
            ("./a/.", "a"),
            ("..", ".."),
        ];
        for (input, expected) in cases {
            assert_eq!(
                normalize(Path::new(input)),
                PathBuf::from(expected),
                "{input}"
            );
        }
    }

    #[test]
    fn absolute_against_keeps_absolute_inputs() {
        let base = Path::new("/ws");
        assert_eq!(
            absolute_against(Path::new("/etc/x"), base),
            PathBuf::from("/etc/x")
        );
        assert_eq!(
            absolute_against(Path::new("src/../x"), base),
            PathBuf::from("/ws/x")
        );
        assert_eq!(
            absolute_against(Path::new("../x"), base),
            PathBuf::from("/x")
        );
    }

    #[test]
    fn relative_to_spells_slash_paths() {
        let root = Path::new("/ws");
        assert_eq!(relative_to(Path::new("/ws"), root).as_deref(), Some("."));
        assert_eq!(
            relative_to(Path::new("/ws/a/b.rs"), root).as_deref(),
            Some("a/b.rs")
        );
        assert_eq!(relative_to(Path::new("/wsx/a"), root), None);
        assert_eq!(relative_to(Path::new("/"), root), None);
    }
}
