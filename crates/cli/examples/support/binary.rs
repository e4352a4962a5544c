//! Shared by the `serve` and `startup` benchmarks: builds the binaries they drive.

use std::error::Error;
use std::path::{Path, PathBuf};

/// Builds `bin` of `package` with the profile the running example was built with (release
/// or debug) and returns its path.
pub fn build(package: &str, bin: &str) -> Result<PathBuf, Box<dyn Error>> {
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot locate the target directory")?;
    let release = profile_dir
        .file_name()
        .is_some_and(|name| name == "release");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    command.args(["build", "--quiet", "-p", package, "--bin", bin]);
    if release {
        command.arg("--release");
    }
    if !command.status()?.success() {
        return Err(format!("building {bin} failed").into());
    }
    Ok(profile_dir.join(bin))
}
