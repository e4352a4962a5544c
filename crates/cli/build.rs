//! Link-time settings for the `kun-tools` binary (issue 13: `serve`'s resident memory).
//!
//! **Packed relative relocations.** On Linux with glibc ≥ 2.36 the binary is linked with
//! `-z pack-relative-relocs` (`DT_RELR`). A position-independent Rust binary of this size
//! carries about 54,000 relative relocations; as classic `RELA` entries they take 1.3 MB
//! that the dynamic loader reads at every start and that stay resident for the life of the
//! process. Packed, they take 16 KB. The linkers mark such a binary as needing
//! `GLIBC_ABI_DT_RELR`, which older C libraries lack (the binary would not start there), so
//! the flag is passed only when the build runs on the system it targets and `getconf` reports
//! a glibc new enough.
//!
//! **Hot-text layout.** Release links on Linux get `layout/hot-text.ld`, a linker script
//! that gathers the functions a `serve` session runs into one output section placed before
//! `.text` (see `cargo xtask layout`, which regenerates it). The kernel maps code in 64 KiB
//! windows around each page first executed; gathered, the code that runs keeps about 5 MiB
//! resident instead of 10. The script uses `INSERT BEFORE`, which lld (rustc's default
//! linker on x86-64 Linux) and GNU ld understand; it is left out when the build names its
//! own linker or linker flags (mold, gold), where it might not be.

use std::path::Path;
use std::process::Command;

/// The first glibc whose loader applies `DT_RELR`.
const RELR_GLIBC: (u32, u32) = (2, 36);

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=layout/hot-text.ld");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let target = Target::from_env();
    if !target.linux {
        return;
    }
    if target.gnu && target.native && glibc_version().is_some_and(|v| v >= RELR_GLIBC) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let script = Path::new(&var("CARGO_MANIFEST_DIR")).join("layout/hot-text.ld");
    if target.release && target.default_linker && script.is_file() {
        // Two arguments, so a comma in the path cannot split it.
        println!("cargo:rustc-link-arg-bins=-Xlinker");
        println!("cargo:rustc-link-arg-bins=--script={}", script.display());
    }
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_default()
}

/// What the build targets, as cargo tells a build script.
struct Target {
    linux: bool,
    gnu: bool,
    /// Built on the system it runs on.
    native: bool,
    release: bool,
    /// No linker and no linker flags chosen by the user (`linker = …`, `-C linker=…`,
    /// `-C link-arg=-fuse-ld=…`, `-C linker-flavor=…`).
    default_linker: bool,
}

impl Target {
    fn from_env() -> Self {
        let flags = var("CARGO_ENCODED_RUSTFLAGS");
        Self {
            linux: var("CARGO_CFG_TARGET_OS") == "linux",
            gnu: var("CARGO_CFG_TARGET_ENV") == "gnu",
            native: var("HOST") == var("TARGET"),
            release: var("PROFILE") == "release",
            default_linker: std::env::var_os("RUSTC_LINKER").is_none()
                && !flags.contains("linker")
                && !flags.contains("fuse-ld"),
        }
    }
}

/// The running glibc's version, from `getconf GNU_LIBC_VERSION` ("glibc 2.36").
fn glibc_version() -> Option<(u32, u32)> {
    let output = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let (major, minor) = text.trim().strip_prefix("glibc ")?.split_once('.')?;
    let minor = minor.split('.').next()?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}
