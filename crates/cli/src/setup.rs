//! Shared start-up: logging, configuration and assembly.

use crate::cli::Common;
use kun_composition::config::{ApprovalFallback, TrustFlag};
use kun_composition::{
    AssembleOptions, Assembly, ConfigPaths, Overrides, Settings, ThreadStateChoice,
};
use std::path::{Path, PathBuf};

/// The log filter when `RUST_LOG` is not set: warnings, except rmcp's. rmcp logs every
/// JSON-RPC error it answers (`-32601` for a client probing `prompts/list`, `-32602`, a
/// newer protocol version offered) as a warning, so normal protocol negotiation would fill
/// the client's stderr pane; its errors still show.
pub const DEFAULT_LOG_FILTER: &str = "warn,rmcp=error";

/// Logs go to stderr (stdout belongs to results and to the MCP protocol); `RUST_LOG` filters
/// (default [`DEFAULT_LOG_FILTER`]).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}

/// The workspace as an absolute path, or a usage error.
pub fn workspace(common: &Common) -> Result<PathBuf, String> {
    let path = &common.workspace;
    let absolute = std::path::absolute(path)
        .map_err(|err| format!("--workspace {}: {err}", path.display()))?;
    if !absolute.is_dir() {
        return Err(format!("--workspace {}: not a directory", path.display()));
    }
    Ok(absolute)
}

/// Where the configuration comes from and the flags that override it.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The configuration files.
    pub paths: ConfigPaths,
    /// The command-line layer.
    pub overrides: Overrides,
}

/// The configuration sources for these flags.
pub fn sources(common: &Common, fallback: Option<ApprovalFallback>) -> Result<Sources, String> {
    let workspace = workspace(common)?;
    let overrides = Overrides {
        sandbox: common.sandbox,
        approval: common.approval,
        mode: common.mode,
        approval_fallback: fallback,
        allow_tools: common.allow_tools.clone(),
        deny_tools: common.deny_tools.clone(),
        trust: if common.trust_workspace {
            TrustFlag::ThisRun
        } else {
            TrustFlag::AsConfigured
        },
        client_surface: common.surface,
    };
    let paths = ConfigPaths::standard(&workspace, common.config.clone());
    Ok(Sources { paths, overrides })
}

/// Loaded configuration with its sources.
#[derive(Debug)]
pub struct Loaded {
    /// The configuration files.
    pub paths: ConfigPaths,
    /// The command-line layer.
    pub overrides: Overrides,
    /// The effective settings.
    pub settings: Settings,
}

/// Loads every layer for these flags and reports, once on stderr, every workspace setting
/// that was not applied (an untrusted workspace may only narrow).
pub fn load(common: &Common, fallback: Option<ApprovalFallback>) -> Result<Loaded, String> {
    let Sources { paths, overrides } = sources(common, fallback)?;
    let settings = Settings::load(&paths, &overrides).map_err(|err| err.to_string())?;
    report_ignored(&settings.ignored, &settings);
    Ok(Loaded {
        paths,
        overrides,
        settings,
    })
}

/// Prints one stderr line per ignored setting (naming the key, the file and the command that
/// would trust the workspace).
pub fn report_ignored<'a>(
    ignored: impl IntoIterator<Item = &'a kun_composition::config::Ignored>,
    settings: &Settings,
) {
    for entry in ignored {
        eprintln!("kun-tools: {}", entry.line(&settings.workspace));
    }
}

/// Loads configuration and assembles the host; errors are printed as usage errors.
pub fn assemble(common: &Common, options: AssembleOptions) -> Result<Assembly, String> {
    let loaded = load(common, None)?;
    kun_composition::assemble(loaded.settings, options).map_err(|err| err.to_string())
}

/// Goals and todos in a file per thread under the user state directory (in memory when there
/// is no home); with `pinned`, every session uses that thread id.
#[must_use]
pub fn thread_state(pinned: Option<String>) -> ThreadStateChoice {
    match kun_gui::default_thread_state_dir() {
        Some(dir) => ThreadStateChoice::Files { dir, pinned },
        None => ThreadStateChoice::InMemory,
    }
}

/// `ws-` and 16 hex digits of the workspace's canonical path: `serve`'s thread for goals and
/// todos when `--thread` is not given, the same across restarts.
#[must_use]
pub fn workspace_thread(workspace: &Path) -> String {
    let canonical = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let digest = blake3::hash(canonical.to_string_lossy().as_bytes());
    format!("ws-{}", &digest.to_hex()[..16])
}
