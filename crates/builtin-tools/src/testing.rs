//! Test support (feature `testing`): a temporary workspace with a turn context, so any tool
//! can be exercised without a session or a host.
//!
//! The sandbox here is deliberately simple (canonicalise, then check containment); the real
//! one lives in `kun-sandbox` and is wired by `kun-composition`.
//!
//! ```
//! use kun_builtin_tools::testing::TestWorkspace;
//! let ws = TestWorkspace::new();
//! ws.write("src/lib.rs", "fn main() {}\n");
//! assert!(ws.path("src/lib.rs").exists());
//! ```

use kun_ports::{
    ConfinementTier, ErrorCode, NoProgress, PathAccess, PathError, ResolvedPath, SandboxMode,
    SandboxPolicy, SandboxVerdict, ToolContext, ToolHostContext, ToolKind,
};
use std::path::{Component, Path, PathBuf};

/// A sandbox for tests: paths must stay inside the roots (symlinks followed through the
/// nearest existing ancestor); every tool kind is allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimpleSandbox;

impl SandboxPolicy for SimpleSandbox {
    fn check_tool(&self, _tool_name: &str, _kind: ToolKind, _mode: SandboxMode) -> SandboxVerdict {
        SandboxVerdict::Allowed
    }

    /// A path outside the roots is `sandbox_read_blocked` for reads and
    /// `sandbox_write_blocked` for writes.
    fn resolve_path(
        &self,
        input: &str,
        roots: &[PathBuf],
        _mode: SandboxMode,
        access: PathAccess,
    ) -> Result<ResolvedPath, PathError> {
        let code = match access {
            PathAccess::Read => ErrorCode::SandboxReadBlocked,
            PathAccess::Write => ErrorCode::SandboxWriteBlocked,
        };
        let escape = || PathError {
            code,
            message: format!("{input} is outside the workspace"),
        };
        let root = roots.first().ok_or_else(escape)?;
        let lexical = normalize(&root.join(input));
        let physical = physical(&lexical);
        let root_physical = root.canonicalize().map_err(|_| escape())?;
        let relative = physical
            .strip_prefix(&root_physical)
            .map_err(|_| escape())?;
        let relative = relative.to_string_lossy().replace('\\', "/");
        Ok(ResolvedPath {
            lexical,
            physical,
            root: Some(root.clone()),
            relative: if relative.is_empty() {
                ".".to_owned()
            } else {
                relative
            },
        })
    }

    fn confinement_tier(&self) -> ConfinementTier {
        ConfinementTier::None
    }
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn physical(lexical: &Path) -> PathBuf {
    let mut suffix = Vec::new();
    let mut current = lexical.to_path_buf();
    loop {
        if let Ok(real) = current.canonicalize() {
            return suffix
                .iter()
                .rev()
                .fold(real, |acc: PathBuf, part| acc.join(part));
        }
        match (
            current.file_name().map(ToOwned::to_owned),
            current.parent().map(Path::to_path_buf),
        ) {
            (Some(name), Some(parent)) => {
                suffix.push(name);
                current = parent;
            }
            _ => return lexical.to_path_buf(),
        }
    }
}

/// A temporary workspace and a turn context rooted in it.
#[derive(Debug)]
pub struct TestWorkspace {
    dir: tempfile::TempDir,
    /// The turn context (workspace-write, on-request, thread `thread-test`, turn `turn-1`).
    pub ctx: ToolHostContext,
}

impl Default for TestWorkspace {
    fn default() -> Self {
        Self::new()
    }
}

impl TestWorkspace {
    /// A fresh empty workspace.
    ///
    /// # Panics
    /// When no temporary directory can be created (test support only).
    #[must_use]
    #[allow(clippy::expect_used)]
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("create a temporary workspace");
        let root = dir
            .path()
            .canonicalize()
            .unwrap_or_else(|_| dir.path().to_path_buf());
        let ctx = ToolHostContext::builder("thread-test", "turn-1")
            .workspace(root)
            .build();
        Self { dir, ctx }
    }

    /// The workspace root.
    #[must_use]
    pub fn root(&self) -> &Path {
        self.ctx.primary_root()
    }

    /// A path inside the workspace.
    #[must_use]
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    /// Writes a file (creating parents).
    ///
    /// # Panics
    /// When the file cannot be written (test support only).
    #[allow(clippy::expect_used)]
    pub fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent directories");
        }
        std::fs::write(path, content).expect("write test file");
    }

    /// Reads a file as text.
    ///
    /// # Panics
    /// When the file cannot be read (test support only).
    #[must_use]
    #[allow(clippy::expect_used)]
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).expect("read test file")
    }

    /// A tool context for one call in this workspace.
    #[must_use]
    pub fn tool_context<'a>(&'a self, call_id: &'a str) -> ToolContext<'a> {
        ToolContext {
            turn: kun_ports::ToolTurn::of(&self.ctx, &kun_ports::OpenCatalog),
            call_id,
            sandbox: &SimpleSandbox,
            progress: &NoProgress,
        }
    }

    /// Keeps the directory alive; returns its path.
    #[must_use]
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}
