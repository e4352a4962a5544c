//! Building a [`Host`].

use super::{HookSet, Host};
use crate::ledger::InMemoryLedger;
use crate::pinning::{DEFAULT_PINNED_TURNS, TurnPins};
use crate::registry::CapabilityRegistry;
use arc_swap::ArcSwap;
use kun_ports::{ArtifactStore, HookRunner, NameSet, OperationLedger, ReadTracker};
use std::fmt;
use std::sync::Arc;

/// Outputs larger than this (as JSON, or as text for a string output) go to the artifact
/// store: 128 KiB.
pub const DEFAULT_ARTIFACT_THRESHOLD_BYTES: usize = 128 * 1024;

/// Builds a [`Host`]. Every part but the registry has a default:
///
/// | part | default |
/// |---|---|
/// | hooks | none |
/// | operation ledger | in memory ([`InMemoryLedger`]) |
/// | read tracker | none: read-before-edit is off |
/// | artifact store | none: outputs stay inline |
/// | untrusted allow-list | empty |
/// | artifact threshold | 128 KiB |
/// | pinned turns | 4,096 |
#[must_use]
pub struct HostBuilder {
    registry: Arc<CapabilityRegistry>,
    hooks: Option<Arc<dyn HookRunner>>,
    ledger: Option<Arc<dyn OperationLedger>>,
    read_tracker: Option<Arc<dyn ReadTracker>>,
    artifacts: Option<Arc<dyn ArtifactStore>>,
    untrusted_allow_list: NameSet,
    artifact_threshold: usize,
    pinned_turns: usize,
}

impl fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuilder")
            .field("registry", &self.registry)
            .field("hooks", &self.hooks.is_some())
            .field("ledger", &self.ledger.is_some())
            .field("read_tracker", &self.read_tracker.is_some())
            .field("artifacts", &self.artifacts.is_some())
            .field("untrusted_allow_list", &self.untrusted_allow_list)
            .field("artifact_threshold", &self.artifact_threshold)
            .field("pinned_turns", &self.pinned_turns)
            .finish()
    }
}

impl HostBuilder {
    pub(super) fn new(registry: Arc<CapabilityRegistry>) -> Self {
        Self {
            registry,
            hooks: None,
            ledger: None,
            read_tracker: None,
            artifacts: None,
            untrusted_allow_list: NameSet::new(),
            artifact_threshold: DEFAULT_ARTIFACT_THRESHOLD_BYTES,
            pinned_turns: DEFAULT_PINNED_TURNS,
        }
    }

    /// Runs these PreToolUse / PostToolUse hooks.
    pub fn hooks(mut self, hooks: Arc<dyn HookRunner>) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Records operations in this ledger (use a durable one to survive crashes).
    pub fn ledger(mut self, ledger: Arc<dyn OperationLedger>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// Enforces read-before-edit with this tracker, and records reads in it.
    pub fn read_tracker(mut self, tracker: Arc<dyn ReadTracker>) -> Self {
        self.read_tracker = Some(tracker);
        self
    }

    /// Spills large outputs to this store.
    pub fn artifact_store(mut self, store: Arc<dyn ArtifactStore>) -> Self {
        self.artifacts = Some(store);
        self
    }

    /// `auto` tools that run without a prompt under the `untrusted` approval policy.
    pub fn untrusted_allow_list<S: Into<Box<str>>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.untrusted_allow_list = names.into_iter().collect();
        self
    }

    /// Outputs larger than `bytes` are spilled to the artifact store.
    pub const fn artifact_threshold(mut self, bytes: usize) -> Self {
        self.artifact_threshold = bytes;
        self
    }

    /// How many turns the pin table holds before dropping the least recently used half.
    pub const fn pinned_turns(mut self, turns: usize) -> Self {
        self.pinned_turns = turns;
        self
    }

    /// The host.
    pub fn build(self) -> Host {
        Host {
            registry: self.registry,
            hooks: ArcSwap::from_pointee(HookSet(self.hooks)),
            pins: TurnPins::new(self.pinned_turns),
            ledger: self
                .ledger
                .unwrap_or_else(|| Arc::new(InMemoryLedger::default())),
            read_tracker: self.read_tracker,
            artifacts: self.artifacts,
            untrusted_allow_list: self.untrusted_allow_list,
            artifact_threshold: self.artifact_threshold,
        }
    }
}
