//! The GUI and media providers of an assembly (kun-gui, kun-media), from the settings.
//!
//! | provider | registries | listed when |
//! |---|---|---|
//! | `user_input` (`user_input`, `request_user_input`) | main | always |
//! | `plan` (`create_plan`) | main | in a plan context |
//! | `gui` (goal and todo tools) | main | `client_surface = "gui"` (or `--surface gui`) |
//! | `computer_use` | main only (not `Delegable`) | `[computer_use] mode` is `always`, or `auto` and the model takes images, and there is an X display |
//! | `media.image`, `media.speech`, `media.music`, `media.video` | main and child | `[media.<kind>]` is configured, its key variable set, and the artifact store opened |
//!
//! `computer_use` can never reach the child registry: its provider does not implement
//! [`Delegable`](kun_ports::Delegable), and every entrance of the child registry requires it.
//!
//! ```compile_fail,E0277
//! use std::sync::Arc;
//! use kun_composition::ChildRegistryBuilder;
//! use kun_gui::{ComputerUseMode, ComputerUseProvider, X11Desktop};
//! let provider = ComputerUseProvider::new(
//!     Arc::new(X11Desktop::new(None)), None, ComputerUseMode::Always, 50, Ok(()),
//! );
//! let mut child = ChildRegistryBuilder::default();
//! child.add(Arc::new(provider)); // error: `ComputerUseProvider` is not `Delegable`
//! ```

use crate::config::Settings;
use kun_gui::{
    ComputerUseMode, ComputerUseProvider, FileThreadState, GoalTodoProvider, MemoryThreadState,
    PinnedThreadState, PlanProvider, UserInputProvider, X11Desktop,
};
use kun_media::{Endpoint, MediaProvider, OpenAiMediaBackend};
use kun_ports::{ArtifactStore, ComputerBackend, MediaKind, ThreadState, ToolProvider};
use kun_registry::artifacts::DirArtifactStore;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where goals and todos are kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ThreadStateChoice {
    /// In memory: gone with the process (the default).
    #[default]
    InMemory,
    /// A file per thread in `dir` (default: [`kun_gui::default_thread_state_dir`]); with
    /// `pinned`, every thread uses that one id (`serve`: a stable id per workspace).
    Files {
        /// The directory.
        dir: PathBuf,
        /// One thread id for every session.
        pinned: Option<String>,
    },
}

/// `$XDG_DATA_HOME/kun/artifacts` (or `~/.local/share/kun/artifacts`).
#[must_use]
pub fn default_artifact_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share")))
        .map(|data| data.join("kun").join("artifacts"))
}

/// What a reload keeps: the thread store, the artifact store and the desktop connection.
#[derive(Clone)]
pub(crate) struct GuiMediaKept {
    thread_state: Arc<dyn ThreadState>,
    artifacts: Result<Arc<dyn ArtifactStore>, String>,
    desktop: Arc<X11Desktop>,
}

impl GuiMediaKept {
    /// The stores for these choices.
    pub(crate) fn new(thread_state: &ThreadStateChoice, artifacts_dir: Option<PathBuf>) -> Self {
        let thread_state: Arc<dyn ThreadState> = match thread_state {
            ThreadStateChoice::InMemory => Arc::new(MemoryThreadState::default()),
            ThreadStateChoice::Files { dir, pinned: None } => {
                Arc::new(FileThreadState::new(dir.clone()))
            }
            ThreadStateChoice::Files {
                dir,
                pinned: Some(id),
            } => Arc::new(PinnedThreadState::new(
                Arc::new(FileThreadState::new(dir.clone())),
                id.clone(),
            )),
        };
        let artifacts = artifacts_dir
            .or_else(default_artifact_dir)
            .ok_or_else(|| "no HOME or XDG_DATA_HOME to keep generated files in".to_owned())
            .and_then(|dir| DirArtifactStore::open(dir).map_err(|err| err.to_string()))
            .map(|store| Arc::new(store) as Arc<dyn ArtifactStore>);
        Self {
            thread_state,
            artifacts,
            desktop: Arc::new(X11Desktop::new(None)),
        }
    }
}

/// The providers for `settings`: all for the main registry; the media ones for the child too.
pub(crate) struct GuiMediaProviders {
    pub main: Vec<Arc<dyn ToolProvider>>,
    pub media: Vec<Arc<MediaProvider>>,
}

pub(crate) fn providers(settings: &Settings, kept: &GuiMediaKept) -> GuiMediaProviders {
    let gui = &settings.gui;
    let desktop = if gui.computer_use == ComputerUseMode::Off {
        Ok(())
    } else {
        kept.desktop
            .probe()
            .map(|_| ())
            .map_err(|err| format!("computer_use cannot run: {err}"))
    };
    let backend: Arc<dyn ComputerBackend> = kept.desktop.clone();
    let computer = ComputerUseProvider::new(
        backend,
        kept.artifacts.as_ref().ok().cloned(),
        gui.computer_use,
        gui.max_actions_per_turn,
        desktop,
    );
    let media: Vec<Arc<MediaProvider>> = MediaKind::ALL
        .into_iter()
        .map(|kind| Arc::new(media_provider(settings, kept, kind)))
        .collect();
    let mut main: Vec<Arc<dyn ToolProvider>> = vec![
        Arc::new(UserInputProvider::new()),
        Arc::new(PlanProvider::new(gui.plan_dir.clone())),
        Arc::new(GoalTodoProvider::new(Arc::clone(&kept.thread_state))),
        Arc::new(computer),
    ];
    main.extend(media.iter().map(|p| Arc::clone(p) as Arc<dyn ToolProvider>));
    GuiMediaProviders { main, media }
}

fn media_provider(settings: &Settings, kept: &GuiMediaKept, kind: MediaKind) -> MediaProvider {
    let name = kind.as_str();
    let tool = kind.tool_name();
    let store = match &kept.artifacts {
        Ok(store) => Arc::clone(store),
        Err(reason) => {
            let fallback: Arc<dyn ArtifactStore> =
                Arc::new(kun_registry::artifacts::InMemoryArtifactStore::new());
            return MediaProvider::unavailable(
                kind,
                fallback,
                format!("{tool} has nowhere to keep what it generates: {reason}"),
            );
        }
    };
    let Some(table) = settings.media.endpoint(kind) else {
        return MediaProvider::unavailable(
            kind,
            store,
            format!(
                "[media.{name}] is not configured: set base_url and model (and api_key_env) in \
                 your user config to enable {tool}"
            ),
        );
    };
    let (Some(base_url), Some(model)) = (&table.base_url, &table.model) else {
        return MediaProvider::unavailable(
            kind,
            store,
            format!("[media.{name}] needs both base_url and model"),
        );
    };
    let mut endpoint = Endpoint::new(base_url, model);
    if let Some(var) = &table.api_key_env {
        match std::env::var(var) {
            Ok(key) if !key.trim().is_empty() => endpoint.api_key = Some(key),
            _ => {
                return MediaProvider::unavailable(
                    kind,
                    store,
                    format!(
                        "{var} (named by [media.{name}] api_key_env) is not set; export it \
                         before starting kun-tools to enable {tool}"
                    ),
                );
            }
        }
    }
    endpoint.voice.clone_from(&table.voice);
    if let Some(seconds) = table.timeout_seconds {
        endpoint.timeout = Duration::from_secs(u64::from(seconds));
    }
    if let Some(bytes) = table.max_bytes {
        endpoint.max_bytes = bytes;
    }
    match kun_media::http_client() {
        Ok(client) => MediaProvider::ready(
            kind,
            Arc::new(OpenAiMediaBackend::new(kind, endpoint, client)),
            store,
            model,
        ),
        Err(reason) => MediaProvider::unavailable(kind, store, reason),
    }
}
