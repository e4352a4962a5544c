//! `cargo xtask fuzz [TARGET] [--seconds N]`: runs the cargo-fuzz targets of `fuzz/` (one,
//! or each in turn), each for N seconds (default 60).
//!
//! cargo-fuzz needs a nightly compiler: a `nightly` rustup toolchain is used when one is
//! installed, otherwise the default toolchain with `RUSTC_BOOTSTRAP=1` (which lets a stable
//! compiler take the sanitizer flags). `fuzz/` is its own workspace, outside `cargo xtask ci`.
//! Crashes land in `fuzz/artifacts/TARGET/`; keep each as a regression test in the crate
//! that owns the code.

use crate::step::{self, Action, Failure, Step};
use crate::workspace;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Seconds per target when `--seconds` is not given.
const DEFAULT_SECONDS: u64 = 60;

/// What was asked for.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    target: Option<String>,
    seconds: u64,
}

fn parse(args: &[String]) -> Result<Request, Failure> {
    let mut request = Request {
        target: None,
        seconds: DEFAULT_SECONDS,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                let value = args.next().ok_or_else(|| {
                    Failure::new("--seconds needs a number of seconds, e.g. --seconds 600")
                })?;
                request.seconds = value.parse().map_err(|_| {
                    Failure::new(format!(
                        "--seconds {value}: not a whole number of seconds, e.g. --seconds 600"
                    ))
                })?;
            }
            name if !name.starts_with('-') && request.target.is_none() => {
                request.target = Some(name.to_owned());
            }
            other => {
                return Err(Failure::new(format!(
                    "unknown fuzz argument `{other}`; usage: cargo xtask fuzz [TARGET] [--seconds N]"
                )));
            }
        }
    }
    Ok(request)
}

/// The `[[bin]]` names of `fuzz/Cargo.toml`, in file order.
fn targets(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin && let Some(rest) = line.strip_prefix("name") {
            let value = rest.trim_start().trim_start_matches('=').trim();
            names.push(value.trim_matches('"').to_owned());
        }
    }
    names
}

fn fuzz_dir() -> PathBuf {
    workspace::root().join("fuzz")
}

/// Whether a `nightly` rustup toolchain is installed.
fn has_nightly() -> bool {
    Command::new("rustup")
        .args(["toolchain", "list"])
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("nightly"))
}

fn command(dir: &Path, nightly: bool, target: &str, seconds: u64) -> Command {
    // The rustup proxy (not `$CARGO`, a fixed toolchain's binary) so `+nightly` works.
    let mut command = Command::new("cargo");
    if nightly {
        command.arg("+nightly");
    } else {
        command.env("RUSTC_BOOTSTRAP", "1");
    }
    command
        .args([
            "fuzz",
            "run",
            target,
            "--",
            &format!("-max_total_time={seconds}"),
        ])
        .current_dir(dir)
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTC")
        .env("CARGO_INCREMENTAL", "0");
    command
}

/// Runs the chosen targets.
pub fn run(args: &[String]) -> Result<(), Failure> {
    let request = parse(args)?;
    let dir = fuzz_dir();
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml"))
        .map_err(|err| Failure::new(format!("cannot read fuzz/Cargo.toml: {err}")))?;
    let all = targets(&manifest);
    let chosen: Vec<String> = match &request.target {
        Some(name) if all.contains(name) => vec![name.clone()],
        Some(name) => {
            return Err(Failure::new(format!(
                "no fuzz target `{name}`; the targets are: {}",
                all.join(", ")
            )));
        }
        None => all,
    };
    let has_cargo_fuzz = Command::new("cargo")
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !has_cargo_fuzz {
        return Err(Failure::new(
            "cargo-fuzz is not installed; install it with `cargo install cargo-fuzz`",
        ));
    }
    let nightly = has_nightly();
    if !nightly {
        println!("no nightly toolchain: building with RUSTC_BOOTSTRAP=1 on the default one");
    }
    let total = chosen.len();
    for (index, target) in chosen.iter().enumerate() {
        let name: &'static str = Box::leak(target.clone().into_boxed_str());
        step::run(
            Step {
                name,
                action: Action::Run(command(&dir, nightly, target, request.seconds)),
            },
            index + 1,
            total,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse() {
        let args = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            parse(&args(&[])),
            Ok(Request {
                target: None,
                seconds: DEFAULT_SECONDS
            })
        );
        assert_eq!(
            parse(&args(&["edit_engine", "--seconds", "600"])),
            Ok(Request {
                target: Some("edit_engine".to_owned()),
                seconds: 600
            })
        );
        assert!(parse(&args(&["--seconds"])).is_err());
        assert!(parse(&args(&["--seconds", "ten"])).is_err());
        assert!(parse(&args(&["a", "b"])).is_err());
    }

    #[test]
    fn targets_are_the_bin_names() {
        let manifest = "[package]\nname = \"kun-fuzz\"\n\n[[bin]]\nname = \"one\"\npath = \"x\"\n\n[dependencies]\nname = 1\n\n[[bin]]\nname = \"two\"\n";
        assert_eq!(targets(manifest), ["one", "two"]);
    }

    #[test]
    fn the_fuzz_manifest_lists_targets_that_exist() {
        let dir = fuzz_dir();
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
        let names = targets(&manifest);
        assert!(names.len() >= 6, "{names:?}");
        for name in names {
            assert!(
                dir.join("fuzz_targets")
                    .join(format!("{name}.rs"))
                    .is_file(),
                "{name}"
            );
        }
    }
}
