//! The assembly `serve` runs on, kept current while serving.
//!
//! Reloading: every [`POLL_PERIOD`] the configuration files (user, workspace, `--config`,
//! `.mcp.json`) are stat-ed; when one's modification time or size changed (or appeared, or
//! went), the four layers are loaded again and a new [`Assembly`] replaces the old one
//! ([`Assembly::reassemble`] keeps the ledger, the read tracker and the confinement probe).
//! `SIGHUP` forces a reload even when no file looks changed. A configuration that does not
//! load is logged and changes nothing: the previous one keeps serving. A reload narrows an
//! untrusted workspace's layer exactly as the first load does (the trust decision is made
//! again from the user's files), and reports each newly ignored setting once on stderr.
//!
//! After each poll the catalog fingerprint is recomputed (a reload, or a provider that came
//! or went, changes it) and published on a [`watch`] channel that every session follows to
//! send `notifications/tools/list_changed`.
//!
//! MCP servers never hold this up: they connect in the background ([`servers`]), and each
//! catalog they publish (a server's tools arriving, a server failing) republishes the
//! fingerprint at once. A reload that changes `[mcp_servers]` (or the search settings, the
//! name limit or the trust) starts a new set of servers in the background and stops the old
//! ones; a reload that does not keeps them running.
//!
//! Invariant: a call holds the `Arc<Assembly>` it started with, so a reload never changes a
//! running turn; the next `tools/call` uses the new assembly.

use super::servers;
use arc_swap::ArcSwap;
use kun_composition::{Assembly, ConfigPaths, McpAttachment, McpLaunch, Overrides, Settings};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How often the configuration files are checked and the fingerprint recomputed.
pub const POLL_PERIOD: Duration = Duration::from_secs(1);

/// Why a refresh runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The periodic check: reload only when a file looks changed.
    Poll,
    /// `SIGHUP`: reload whether or not a file looks changed.
    Signal,
}

/// What a refresh did with the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reload {
    /// No file changed (and no signal asked).
    Unchanged,
    /// The configuration was loaded again and is now in effect.
    Applied,
    /// The new configuration is bad; the previous one stays in effect.
    Rejected(String),
}

/// A file's modification time and size, or `None` when it does not exist.
type Stamp = Option<(SystemTime, u64)>;

/// The assembly in effect and the fingerprint of its catalog, shared with the tasks that
/// follow the MCP servers.
pub(crate) struct Published {
    current: ArcSwap<Assembly>,
    fingerprint: watch::Sender<String>,
}

impl Published {
    /// Recomputes the fingerprint of the current catalog and publishes it if it changed.
    pub(crate) fn republish(&self) {
        let fingerprint = catalog_fingerprint(&self.current.load());
        self.fingerprint.send_if_modified(|published| {
            if *published == fingerprint {
                false
            } else {
                tracing::info!(%fingerprint, "catalog changed");
                *published = fingerprint;
                true
            }
        });
    }
}

/// The live assembly, its configuration sources and the published fingerprint.
pub struct Live {
    paths: ConfigPaths,
    overrides: Overrides,
    published: Arc<Published>,
    stamps: Mutex<Vec<(PathBuf, Stamp)>>,
    /// The MCP servers; their providers follow each reloaded assembly.
    mcp: Mutex<Option<McpAttachment>>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("paths", &self.paths)
            .field("fingerprint", &*self.published.fingerprint.borrow())
            .finish_non_exhaustive()
    }
}

impl Live {
    /// Starts from an assembly built from `paths` and `overrides`.
    #[must_use]
    pub fn new(paths: ConfigPaths, overrides: Overrides, assembly: Assembly) -> Self {
        let stamps = stamps(&paths);
        let fingerprint = catalog_fingerprint(&assembly);
        Self {
            paths,
            overrides,
            published: Arc::new(Published {
                current: ArcSwap::from_pointee(assembly),
                fingerprint: watch::Sender::new(fingerprint),
            }),
            stamps: Mutex::new(stamps),
            mcp: Mutex::new(None),
        }
    }

    /// Keeps these MCP servers' providers registered in every assembly from now on, and
    /// republishes the fingerprint whenever their catalog changes (must run inside a tokio
    /// runtime). A reload that changes what they were built from replaces them.
    #[must_use]
    pub fn with_mcp(self, mcp: Option<McpAttachment>) -> Self {
        if let Some(mcp) = &mcp {
            servers::follow(Arc::clone(&self.published), mcp.registered());
        }
        *self.mcp.lock().unwrap_or_else(PoisonError::into_inner) = mcp;
        self
    }

    /// Stops the MCP servers.
    pub async fn shutdown_mcp(&self) {
        let mcp = self
            .mcp
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mcp) = mcp {
            mcp.shutdown().await;
        }
    }

    /// The assembly in effect now.
    #[must_use]
    pub fn current(&self) -> Arc<Assembly> {
        self.published.current.load_full()
    }

    /// Follows the catalog fingerprint.
    #[must_use]
    pub fn fingerprint(&self) -> watch::Receiver<String> {
        self.published.fingerprint.subscribe()
    }

    /// Reloads the configuration if `trigger` asks for it, then republishes the fingerprint.
    pub fn refresh(&self, trigger: Trigger) -> Reload {
        let reload = self.reload(trigger);
        match &reload {
            Reload::Applied => tracing::info!("configuration reloaded"),
            Reload::Rejected(err) => tracing::warn!(
                "configuration not reloaded, the previous one stays in effect: {err}"
            ),
            Reload::Unchanged => {}
        }
        self.published.republish();
        reload
    }

    fn reload(&self, trigger: Trigger) -> Reload {
        let now = stamps(&self.paths);
        {
            let mut seen = self.stamps.lock().unwrap_or_else(PoisonError::into_inner);
            if trigger == Trigger::Poll && *seen == now {
                return Reload::Unchanged;
            }
            *seen = now;
        }
        let settings = match Settings::load(&self.paths, &self.overrides) {
            Ok(settings) => settings,
            Err(err) => return Reload::Rejected(err.to_string()),
        };
        // A workspace setting left out is reported once: at start-up, or at the first reload
        // that meets it (an agent that writes `.kun/config.toml` sees nothing widen, and the
        // user sees why).
        let before = self.current();
        let new = settings
            .ignored
            .iter()
            .filter(|entry| !before.settings.ignored.contains(entry));
        crate::setup::report_ignored(new, &settings);
        match self.current().reassemble(settings) {
            Ok(next) => {
                self.follow_servers(&next);
                self.published.current.store(Arc::new(next));
                Reload::Applied
            }
            Err(err) => Reload::Rejected(err.to_string()),
        }
    }

    /// Keeps the MCP servers registered in `next`: the running ones when `next` configures
    /// the same servers, otherwise a new set started in the background (the old set is shut
    /// down in the background too).
    fn follow_servers(&self, next: &Assembly) {
        let mut mcp = self.mcp.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(running) = mcp.as_mut()
            && running.runs(&next.settings)
        {
            running.retarget(next);
            return;
        }
        if mcp.is_none() && next.settings.mcp_servers.is_empty() {
            return;
        }
        if tokio::runtime::Handle::try_current().is_err() {
            tracing::warn!("MCP servers not changed: no runtime to start them on");
            return;
        }
        let started = match kun_composition::start_mcp(next, McpLaunch::Background) {
            Ok(started) => started,
            Err(err) => {
                tracing::warn!("MCP servers not changed, the running ones stay: {err}");
                if let Some(running) = mcp.as_mut() {
                    running.retarget(next);
                }
                return;
            }
        };
        if let Some(started) = &started {
            servers::follow(Arc::clone(&self.published), started.registered());
        }
        tracing::info!("MCP servers changed by the configuration; restarting them");
        if let Some(old) = std::mem::replace(&mut *mcp, started) {
            tokio::spawn(old.shutdown());
        }
    }

    /// Polls until `stop` fires.
    pub async fn watch(self: Arc<Self>, stop: CancellationToken) {
        let mut ticks = tokio::time::interval(POLL_PERIOD);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = ticks.tick() => {}
            }
            let live = Arc::clone(&self);
            // Loading and listing touch the file system: keep them off the async workers.
            if let Err(err) = tokio::task::spawn_blocking(move || live.refresh(Trigger::Poll)).await
            {
                tracing::warn!("configuration check failed: {err}");
            }
        }
    }
}

fn stamps(paths: &ConfigPaths) -> Vec<(PathBuf, Stamp)> {
    paths
        .files()
        .into_iter()
        .map(|path| {
            let stamp = std::fs::metadata(&path).ok().map(|meta| {
                (
                    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    meta.len(),
                )
            });
            (path, stamp)
        })
        .collect()
}

/// The fingerprint of the catalog every session lists (the configured context).
fn catalog_fingerprint(assembly: &Assembly) -> String {
    let ctx = assembly.context("serve", "fingerprint").build();
    // From the registry's snapshot: each tool is hashed once, not on every poll.
    assembly.registry.fingerprinted_tools(&ctx).1.fingerprint
}
