//! Where the workspace is, which cargo to run, and what `cargo metadata` says.

use crate::step::Failure;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The workspace root: the parent of this crate's directory.
pub fn root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map_or_else(|| manifest_dir.to_path_buf(), Path::to_path_buf)
}

/// The cargo that runs us (`$CARGO`), else `cargo` from `PATH`.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// A cargo command rooted at the workspace, with short backtraces and no incremental cache.
pub fn cargo_command<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut command = Command::new(cargo());
    command
        .args(args)
        .current_dir(root())
        .env("RUST_BACKTRACE", "0")
        .env("CARGO_INCREMENTAL", "0");
    command
}

/// `cargo metadata --format-version 1 --no-deps`, parsed.
pub fn metadata() -> Result<Value, Failure> {
    let output = cargo_command(["metadata", "--format-version", "1", "--no-deps"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|error| Failure::new(format!("could not run `cargo metadata`: {error}")))?;
    if !output.status.success() {
        return Err(Failure::new(format!(
            "`cargo metadata` failed ({}); fix the manifest error it printed above",
            output.status
        )));
    }
    serde_json::from_slice(&output.stdout).map_err(|error| {
        Failure::new(format!(
            "`cargo metadata` printed something that is not JSON: {error}"
        ))
    })
}

/// The packages of the workspace, as `cargo metadata` lists them (members only).
pub fn members(metadata: &Value) -> Result<Vec<&Value>, Failure> {
    let ids: Vec<&str> = metadata["workspace_members"]
        .as_array()
        .ok_or_else(|| Failure::new("cargo metadata has no `workspace_members` list"))?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let packages = metadata["packages"]
        .as_array()
        .ok_or_else(|| Failure::new("cargo metadata has no `packages` list"))?;
    Ok(packages
        .iter()
        .filter(|package| package["id"].as_str().is_some_and(|id| ids.contains(&id)))
        .collect())
}

/// A package's name (empty when missing, which `cargo metadata` never does).
pub fn name(package: &Value) -> &str {
    package["name"].as_str().unwrap_or_default()
}
