//! The catalog fingerprint: a blake3 hash of what the model is shown.

use crate::canonical::write_canonical;
use kun_ports::{ToolDescriptor, ToolSpec};
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::fmt;

/// A blake3 digest; displays as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The raw bytes.
    #[must_use]
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// 64 lowercase hex digits.
    #[must_use]
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }
}

impl From<blake3::Hash> for Digest {
    fn from(hash: blake3::Hash) -> Self {
        Self(*hash.as_bytes())
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&blake3::Hash::from_bytes(self.0).to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl Serialize for Digest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One tool's name and the hash of its canonical form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolHash {
    /// The tool's name.
    pub name: String,
    /// blake3 of its canonical `{description, input_schema, name}`.
    pub hash: Digest,
}

/// The fingerprint of a catalog.
///
/// Canonical form of one tool: the JSON object `{"description", "input_schema", "name"}`
/// with object keys sorted recursively (byte order), arrays in their order, no whitespace.
/// Only those three fields matter: kind, policy or provider do not change what the model
/// reads.
///
/// * a tool's **hash** is blake3 of its canonical form;
/// * the catalog **fingerprint** is blake3 of the tools' hashes (32 bytes each),
///   concatenated in name order (byte order) — a one-level hash list over the canonical
///   catalog, so a registry computes each tool's hash once and a fingerprint per turn costs
///   microseconds ([`RegistrySnapshot::fingerprint`](crate::RegistrySnapshot::fingerprint)).
///
/// The fingerprint is therefore independent of registration order and of schema key order,
/// and changes with any name, description, schema value or array order
/// (`required: ["a","b"]` vs `["b","a"]`).
///
/// ```
/// use kun_ports::ToolSpec;
/// use kun_registry::fingerprint_specs;
/// let a = ToolSpec::new("a", "A.", serde_json::json!({"type": "object"}));
/// let b = ToolSpec::new("b", "B.", serde_json::json!({"type": "object"}));
/// let one = fingerprint_specs([&a, &b]);
/// let two = fingerprint_specs([&b, &a]);
/// assert_eq!(one.fingerprint, two.fingerprint);
/// assert_eq!(one.tool_count, 2);
/// assert_eq!(one.names().collect::<Vec<_>>(), ["a", "b"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CatalogFingerprint {
    /// blake3 of the canonical catalog, 64 hex digits.
    pub fingerprint: String,
    /// How many tools it covers.
    pub tool_count: usize,
    /// Every tool's hash, sorted by name (byte order).
    pub tools: Vec<ToolHash>,
}

impl CatalogFingerprint {
    /// The tool names, sorted.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }

    /// The hash of one tool, if the catalog has it.
    #[must_use]
    pub fn hash_of(&self, name: &str) -> Option<&Digest> {
        self.tools
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.tools[i].hash)
    }
}

/// The canonical form of one tool: fields in sorted order.
#[derive(Serialize)]
struct CanonicalTool<'a> {
    description: &'a str,
    input_schema: &'a Value,
    name: &'a str,
}

/// Writes the canonical form of `spec` into `out` (cleared first) and hashes it.
fn digest_into(spec: &ToolSpec, out: &mut Vec<u8>) -> Digest {
    out.clear();
    write_canonical(
        out,
        &CanonicalTool {
            description: &spec.description,
            input_schema: &spec.input_schema,
            name: &spec.name,
        },
    );
    blake3::hash(out).into()
}

/// blake3 of the canonical form of one tool.
pub(crate) fn tool_digest(spec: &ToolSpec) -> Digest {
    digest_into(spec, &mut Vec::with_capacity(1024))
}

/// The fingerprint of tools given as (name, hash) **in name order**.
pub(crate) fn fingerprint_from_digests<'a>(
    tools: impl ExactSizeIterator<Item = (&'a str, Digest)>,
) -> CatalogFingerprint {
    let mut catalog = blake3::Hasher::new();
    let tools: Vec<ToolHash> = tools
        .map(|(name, hash)| {
            catalog.update(hash.as_bytes());
            ToolHash {
                name: name.to_owned(),
                hash,
            }
        })
        .collect();
    CatalogFingerprint {
        fingerprint: catalog.finalize().to_hex().to_string(),
        tool_count: tools.len(),
        tools,
    }
}

/// Fingerprints tool specs given in any order. Names are expected to be unique (a registry
/// guarantees it).
pub fn fingerprint_specs<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> CatalogFingerprint {
    let mut sorted: Vec<&ToolSpec> = specs.into_iter().collect();
    if !sorted.is_sorted_by(|a, b| a.name <= b.name) {
        sorted.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    }
    let digests = digest_all(&sorted);
    fingerprint_from_digests(
        sorted
            .iter()
            .zip(digests)
            .map(|(spec, digest)| (spec.name.as_str(), digest)),
    )
}

/// Below this many specs one thread hashes them all: a thread costs more than it saves.
const PARALLEL_FROM: usize = 256;

/// The digest of every spec, in order. A large catalog is split across the machine's cores:
/// walking a thousand scattered schema trees is bound by memory latency, which more cores
/// hide (see `cargo xtask bench catalog`).
pub(crate) fn digest_all(specs: &[&ToolSpec]) -> Vec<Digest> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let threads = threads.min(specs.len() / (PARALLEL_FROM / 2)).clamp(1, 8);
    let digest_run = |run: &[&ToolSpec]| -> Vec<Digest> {
        let mut buffer = Vec::with_capacity(1024);
        run.iter()
            .map(|spec| digest_into(spec, &mut buffer))
            .collect()
    };
    if threads == 1 {
        return digest_run(specs);
    }
    let runs: Vec<&[&ToolSpec]> = specs.chunks(specs.len().div_ceil(threads)).collect();
    std::thread::scope(|scope| {
        // This thread takes the first run itself; the others go to scoped threads.
        let workers: Vec<_> = runs[1..]
            .iter()
            .map(|&run| scope.spawn(move || digest_run(run)))
            .collect();
        let mut digests = digest_run(runs[0]);
        for (worker, &run) in workers.into_iter().zip(&runs[1..]) {
            // Hashing does not panic; should a worker die anyway, its run is redone here.
            digests.extend(worker.join().unwrap_or_else(|_| digest_run(run)));
        }
        digests
    })
}

/// Fingerprints a listing (for example the output of `list_tools`).
#[must_use]
pub fn fingerprint_catalog(tools: &[ToolDescriptor]) -> CatalogFingerprint {
    fingerprint_specs(tools.iter().map(ToolDescriptor::spec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &str, description: &str, schema: Value) -> ToolSpec {
        ToolSpec::new(name, description, schema)
    }

    #[test]
    fn empty_catalog_hashes_nothing() {
        let fp = fingerprint_specs([]);
        assert_eq!(fp.fingerprint, blake3::hash(b"").to_hex().to_string());
        assert_eq!(fp.tool_count, 0);
    }

    #[test]
    fn canonical_bytes_are_the_documented_shape() {
        let s = spec("t", "D.", json!({"type": "object", "properties": {}}));
        let u = spec("u", "E.", json!({"required": ["b", "a"], "type": "object"}));
        let fp = fingerprint_specs([&u, &s]);
        let t_bytes: &[u8] =
            br#"{"description":"D.","input_schema":{"properties":{},"type":"object"},"name":"t"}"#;
        let u_bytes: &[u8] =
            br#"{"description":"E.","input_schema":{"required":["b","a"],"type":"object"},"name":"u"}"#;
        let t_hash = blake3::hash(t_bytes);
        let u_hash = blake3::hash(u_bytes);
        assert_eq!(fp.tools[0].hash, Digest::from(t_hash));
        assert_eq!(fp.tools[1].hash, Digest::from(u_hash));
        let mut list = t_hash.as_bytes().to_vec();
        list.extend_from_slice(u_hash.as_bytes());
        assert_eq!(fp.fingerprint, blake3::hash(&list).to_hex().to_string());
    }

    #[test]
    fn names_sort_by_bytes_not_locale() {
        let names = ["b", "B", "_x", "a", "Z", "mcp_a"];
        let specs: Vec<_> = names.iter().map(|n| spec(n, "", json!({}))).collect();
        let fp = fingerprint_specs(&specs);
        assert_eq!(
            fp.names().collect::<Vec<_>>(),
            ["B", "Z", "_x", "a", "b", "mcp_a"]
        );
        assert!(fp.hash_of("mcp_a").is_some());
        assert!(fp.hash_of("nope").is_none());
    }

    #[test]
    fn kind_and_policy_do_not_matter() {
        let a = spec("t", "D.", json!({}));
        let b = a.clone().with_kind(kun_ports::ToolKind::FileChange);
        assert_eq!(
            fingerprint_specs([&a]).fingerprint,
            fingerprint_specs([&b]).fingerprint
        );
    }

    #[test]
    fn a_large_catalog_split_across_threads_hashes_like_one_thread() {
        let specs: Vec<ToolSpec> = (0..1000)
            .map(|i| spec(&format!("t{i:04}"), &format!("Tool {i}."), json!({"i": i})))
            .collect();
        let parallel = fingerprint_specs(&specs);
        let serial =
            fingerprint_from_digests(specs.iter().map(|s| (s.name.as_str(), tool_digest(s))));
        assert_eq!(parallel, serial);
        assert_eq!(parallel.tool_count, 1000);
    }

    #[test]
    fn digest_displays_as_hex() {
        let d = Digest::from(blake3::hash(b"x"));
        assert_eq!(d.to_string(), d.to_hex());
        assert_eq!(d.to_hex().len(), 64);
        assert_eq!(serde_json::to_value(d).unwrap(), json!(d.to_hex()));
    }
}
