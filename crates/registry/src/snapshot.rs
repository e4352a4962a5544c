//! An immutable view of the registered providers and their tools.

use crate::fingerprint::{
    CatalogFingerprint, Digest, digest_all, fingerprint_from_digests, tool_digest,
};
use crate::registry::RegistryError;
use kun_ports::{ProviderKind, SideEffect, Tool, ToolDescriptor, ToolKind, ToolProvider};
use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// The longest tool name model APIs accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// One registered provider and the tools it had when it was registered.
#[derive(Clone)]
pub(crate) struct ProviderEntry {
    pub(crate) provider: Arc<dyn ToolProvider>,
    pub(crate) id: Arc<str>,
    pub(crate) kind: ProviderKind,
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    /// The digest of each tool's canonical form, computed on first use; shared by clones.
    digests: Arc<[OnceLock<Digest>]>,
}

impl ProviderEntry {
    /// Reads the provider's id, kind and tools once.
    pub(crate) fn capture(provider: Arc<dyn ToolProvider>) -> Self {
        let tools = provider.tools();
        Self {
            id: Arc::from(provider.id()),
            kind: provider.kind(),
            digests: tools.iter().map(|_| OnceLock::new()).collect(),
            tools,
            provider,
        }
    }
}

/// One registered tool: its descriptor, its provider, and the spec fields the filters read.
pub(crate) struct ToolEntry {
    pub(crate) descriptor: ToolDescriptor,
    /// Index of the provider in the snapshot.
    pub(crate) provider: usize,
    /// The tool's name (allocated in name order at build, so listings walk nearby memory).
    pub(crate) name: Box<str>,
    pub(crate) kind: ToolKind,
    pub(crate) read_only: bool,
    pub(crate) user_interaction: bool,
    digest: (Arc<[OnceLock<Digest>]>, usize),
}

impl ToolEntry {
    /// The digest of the tool's canonical form (computed once per registered tool).
    pub(crate) fn digest(&self) -> Digest {
        *self
            .digest_cell()
            .get_or_init(|| tool_digest(self.descriptor.spec()))
    }

    fn digest_cell(&self) -> &OnceLock<Digest> {
        let (cells, index) = &self.digest;
        &cells[*index]
    }
}

/// The providers and tools of a registry at one moment. Cheap to share (`Arc`), never mutated.
///
/// A [`RegistrySnapshot`] is built once per registration change and never mutated, so a
/// turn can hold one for as long as it runs (see [`crate::CapabilityRegistry`]). Everything
/// the catalog filters need that does not depend on the turn is computed here, at
/// registration:
///
/// * tools sorted by name (byte order), so a listing is already in catalog order;
/// * per tool, the few spec fields the filters read (kind, read-only, user interaction) kept
///   inline, so a listing walks one contiguous array instead of every tool object;
/// * per tool, a lazily computed digest of its canonical form, shared by every later
///   snapshot holding the same tool, for cheap fingerprints;
/// * the index of advertised tools (`model_advertised = false` tools are left out of it, so a
///   listing never even looks at them);
/// * a name → tool map for `resolve`;
/// * each tool's provider, by index.
///
/// Invariant: tool names are unique across all providers and match `^[a-zA-Z0-9_-]{1,64}$`;
/// provider ids are unique and non-empty; registration refuses anything else.
pub struct RegistrySnapshot {
    providers: Vec<ProviderEntry>,
    /// Sorted by name (byte order).
    tools: Vec<ToolEntry>,
    /// Indices into `tools` of the tools with `model_advertised`, ascending (so sorted by name).
    advertised: Vec<usize>,
    by_name: FxHashMap<Box<str>, usize>,
}

impl RegistrySnapshot {
    /// A snapshot with no providers.
    #[must_use]
    pub fn empty() -> Self {
        Self {
            providers: Vec::new(),
            tools: Vec::new(),
            advertised: Vec::new(),
            by_name: FxHashMap::default(),
        }
    }

    /// Builds a snapshot from captured providers, in registration order.
    pub(crate) fn build(providers: Vec<ProviderEntry>) -> Result<Self, RegistryError> {
        let mut ids: FxHashSet<&str> = FxHashSet::default();
        for entry in &providers {
            if entry.id.is_empty() {
                return Err(RegistryError::EmptyProviderId);
            }
            if !ids.insert(&entry.id) {
                return Err(RegistryError::DuplicateProvider {
                    id: entry.id.to_string(),
                });
            }
        }

        let total: usize = providers.iter().map(|p| p.tools.len()).sum();
        let mut owner: FxHashMap<&str, usize> = FxHashMap::default();
        owner.reserve(total);
        let mut found = Vec::with_capacity(total);
        for (index, entry) in providers.iter().enumerate() {
            for (position, tool) in entry.tools.iter().enumerate() {
                let name = tool.spec().name.as_str();
                validate_tool_name(name, &entry.id)?;
                if let Some(&first) = owner.get(name) {
                    return Err(RegistryError::DuplicateTool {
                        name: name.to_owned(),
                        first_provider: providers[first].id.to_string(),
                        second_provider: entry.id.to_string(),
                    });
                }
                owner.insert(name, index);
                found.push((name, index, position));
            }
        }
        drop(owner);
        drop(ids);

        found.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let tools: Vec<ToolEntry> = found
            .into_iter()
            .map(|(name, index, position)| {
                let entry = &providers[index];
                let tool = &entry.tools[position];
                let spec = tool.spec();
                ToolEntry {
                    descriptor: ToolDescriptor::new(
                        Arc::clone(tool),
                        Arc::clone(&entry.id),
                        entry.kind,
                    ),
                    provider: index,
                    name: Box::from(name),
                    kind: spec.kind,
                    read_only: spec.side_effect == SideEffect::ReadOnly,
                    user_interaction: spec.user_interaction,
                    digest: (Arc::clone(&entry.digests), position),
                }
            })
            .collect();
        let advertised = tools
            .iter()
            .enumerate()
            .filter(|(_, t)| t.descriptor.spec().model_advertised)
            .map(|(i, _)| i)
            .collect();
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        Ok(Self {
            providers,
            tools,
            advertised,
            by_name,
        })
    }

    /// The providers, in registration order.
    pub(crate) fn provider_entries(&self) -> &[ProviderEntry] {
        &self.providers
    }

    /// The tools, sorted by name.
    pub(crate) fn tool_entries(&self) -> &[ToolEntry] {
        &self.tools
    }

    /// Indices of advertised tools, sorted by name.
    pub(crate) fn advertised_indices(&self) -> &[usize] {
        &self.advertised
    }

    /// The entry of a tool by name.
    pub(crate) fn entry(&self, name: &str) -> Option<&ToolEntry> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The provider entry at `index`.
    pub(crate) fn provider_at(&self, index: usize) -> &ProviderEntry {
        &self.providers[index]
    }

    /// A registered tool by name, whatever the context.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&ToolDescriptor> {
        self.entry(name).map(|e| &e.descriptor)
    }

    /// The kind of the provider serving `tool_name`, if registered.
    #[must_use]
    pub fn provider_kind_of(&self, tool_name: &str) -> Option<ProviderKind> {
        self.get(tool_name).map(|d| d.provider_kind())
    }

    /// The fingerprint of a listing taken from this snapshot. Tools registered here reuse
    /// their digest, computed once per registered tool; any other descriptor is hashed now.
    /// Equal to [`fingerprint_catalog`](crate::fingerprint_catalog) of the same listing.
    #[must_use]
    pub fn fingerprint(&self, listing: &[ToolDescriptor]) -> CatalogFingerprint {
        let mut sorted: Vec<&ToolDescriptor> = listing.iter().collect();
        if !sorted.is_sorted_by(|a, b| a.name() <= b.name()) {
            sorted.sort_unstable_by(|a, b| a.name().cmp(b.name()));
        }
        // The registered entry of each listed tool (`None`: not this snapshot's tool).
        let entries: Vec<Option<&ToolEntry>> = sorted
            .iter()
            .map(|d| {
                self.entry(d.name())
                    .filter(|e| Arc::ptr_eq(e.descriptor.tool(), d.tool()))
            })
            .collect();
        // The first fingerprint of a snapshot (first turn, reload) hashes every tool: as one
        // batch, so a large catalog is split across the cores (see `digest_all`).
        let missing: Vec<&ToolEntry> = entries
            .iter()
            .flatten()
            .filter(|e| e.digest_cell().get().is_none())
            .copied()
            .collect();
        if !missing.is_empty() {
            let specs: Vec<&kun_ports::ToolSpec> =
                missing.iter().map(|e| e.descriptor.spec()).collect();
            for (entry, digest) in missing.iter().zip(digest_all(&specs)) {
                // Another thread may have set it meanwhile: the same value either way.
                let _ = entry.digest_cell().set(digest);
            }
        }
        fingerprint_from_digests(sorted.into_iter().zip(entries).map(|(d, entry)| {
            let digest = entry.map_or_else(|| tool_digest(d.spec()), ToolEntry::digest);
            (d.name(), digest)
        }))
    }

    /// Every registered tool (advertised or not), sorted by name.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &ToolDescriptor> {
        self.tools.iter().map(|t| &t.descriptor)
    }

    /// The registered providers, in registration order.
    pub fn providers(&self) -> impl ExactSizeIterator<Item = &Arc<dyn ToolProvider>> {
        self.providers.iter().map(|p| &p.provider)
    }

    /// How many tools are registered.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl fmt::Debug for RegistrySnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistrySnapshot")
            .field(
                "providers",
                &self.providers.iter().map(|p| &*p.id).collect::<Vec<_>>(),
            )
            .field("tools", &self.tools.len())
            .finish()
    }
}

/// Whether `name` is a tool name model APIs accept: 1–64 characters of `[a-zA-Z0-9_-]`.
#[must_use]
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn validate_tool_name(name: &str, provider: &str) -> Result<(), RegistryError> {
    if is_valid_tool_name(name) {
        Ok(())
    } else {
        Err(RegistryError::InvalidToolName {
            name: name.to_owned(),
            provider: provider.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::is_valid_tool_name;

    #[test]
    fn tool_names_follow_model_api_rules() {
        for ok in [
            "read",
            "mcp_github_create_issue",
            "a-b",
            "X9",
            &"a".repeat(64),
        ] {
            assert!(is_valid_tool_name(ok), "{ok}");
        }
        for bad in ["", "mcp:github", "a b", "é", "a.b", &"a".repeat(65)] {
            assert!(!is_valid_tool_name(bad), "{bad}");
        }
    }
}
