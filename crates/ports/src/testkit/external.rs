//! Locating the external programs some integration tests drive (language servers, third-party
//! MCP servers), which `.ci/run` installs at pinned versions under the workspace's `target/`.

use std::path::{Path, PathBuf};

/// Finds an external test program: the path in `env_var` if set, else `relative` (for example
/// `target/ci-venv/bin/mcp-server-time`) under the workspace root above `manifest_dir` (pass
/// `env!("CARGO_MANIFEST_DIR")`).
///
/// When it is missing: under `CI` this panics (CI must have installed it), elsewhere it prints
/// why the test is skipped and returns `None`.
#[must_use]
pub fn external_test_program(manifest_dir: &str, env_var: &str, relative: &str) -> Option<PathBuf> {
    let from_env = std::env::var_os(env_var).map(PathBuf::from);
    let installed = Path::new(manifest_dir)
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .map(|root| root.join(relative))
        .filter(|path| path.exists());
    let found = from_env.or(installed);
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{relative} must be installed in CI (.ci/run installs it), or set {env_var}"
        );
        eprintln!("skipping: {relative} is not installed (run .ci/run, or set {env_var})");
    }
    found
}
