//! Catalog names for MCP tools: `mcp_<server>_<tool>`, characters `[a-z0-9_]`, at most a
//! [`NameLimit`] long (64 by default: what model APIs accept; `kun-tools serve` asks for 54,
//! because Claude Code and Codex put `mcp__<server>__` in front of every name).
//!
//! A name is routed back through an exact reverse map ([`NameTable`]), never by prefix
//! matching (`git` vs `github`). Two rules make every name unique without looking at other
//! servers' tools:
//!
//! * **Server slugs are prefix-free.** No server slug equals another or starts with another
//!   followed by `_`. Then `mcp_<s1>_<t1> = mcp_<s2>_<t2>` forces `s1 = s2`, so names from two
//!   servers never collide, whatever tools the servers add later. A slug that would break the
//!   rule (or is longer than [`NameLimit::server_slug_max`]) becomes its letters and digits
//!   without underscores plus a short hash of the configured name ([`server_slugs`]).
//! * **Within a server**, a tool whose name is over the limit, has no ASCII letters or
//!   digits, or collides with another tool's name gets a short hash suffix of its exact
//!   original name ([`tool_names`]). The choice depends only on the server's tool list, never
//!   on its order.
//!
//! Every name fits the limit by construction: the server slug takes at most half of what
//! follows `mcp_`, so the rest always has room for a one-letter stem, `_` and the hash.
//!
//! | server | tool | limit | name |
//! |---|---|---|---|
//! | `github` | `Search Issues` | 64 | `mcp_github_search_issues` |
//! | `My-Server` | `create.issue` | 64 | `mcp_my_server_create_issue` |
//! | `time` | `查询` | 64 | `mcp_time_tool_<hash>` |
//! | `srv` | 50 × `x` | 64 | `mcp_srv_` + 50 × `x` (58 characters) |
//! | `srv` | 50 × `x` | 54 | `mcp_srv_` + 39 × `x` + `_<hash>` (54 characters) |
//!
//! ```
//! use kun_mcp::naming::{NameLimit, server_slugs, tool_names};
//! let limit = NameLimit::default();
//! let slugs = server_slugs(["github", "git"], limit);
//! assert_eq!(slugs["git"], "git");
//! let names = tool_names("github", &slugs["github"], &["Search Issues"], limit);
//! assert_eq!(names[0].as_deref(), Some("mcp_github_search_issues"));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The longest catalog name model APIs accept.
pub const MAX_NAME_LEN: usize = 64;

/// The longest server slug under any limit; a lower [`NameLimit`] lowers it further.
pub const MAX_SERVER_SLUG_LEN: usize = 24;

const PREFIX: &str = "mcp_";
const TOOL_HASH_LEN: usize = 6;
const SERVER_HASH_LEN: usize = 4;
const MAX_HASH_LEN: usize = 16;

/// How long a catalog name may be: between [`NameLimit::MIN`] and [`NameLimit::MAX`]
/// characters.
///
/// ```
/// use kun_mcp::naming::NameLimit;
/// assert_eq!(NameLimit::default().get(), 64);
/// assert_eq!(NameLimit::new(54).unwrap().get(), 54);
/// assert!(NameLimit::new(65).is_err());
/// assert!(NameLimit::new(12).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NameLimit(usize);

/// A name limit outside [`NameLimit::MIN`]..=[`NameLimit::MAX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "a tool name limit of {given} characters is out of range: use {min} to {max} ({max} is what \
     model APIs accept; clients that prefix `mcp__<server>__` need it lower)",
    min = NameLimit::MIN,
    max = NameLimit::MAX
)]
pub struct NameLimitError {
    /// The limit asked for.
    pub given: usize,
}

impl NameLimit {
    /// The shortest limit: room for `mcp_`, a short server slug and a hashed tool name.
    pub const MIN: usize = 24;
    /// The longest limit: model APIs reject longer tool names.
    pub const MAX: usize = MAX_NAME_LEN;

    /// A limit of `max_len` characters.
    ///
    /// # Errors
    /// When `max_len` is outside [`NameLimit::MIN`]..=[`NameLimit::MAX`].
    pub const fn new(max_len: usize) -> Result<Self, NameLimitError> {
        if max_len < Self::MIN || max_len > Self::MAX {
            return Err(NameLimitError { given: max_len });
        }
        Ok(Self(max_len))
    }

    /// The limit in characters (bytes: names are ASCII).
    #[must_use]
    pub const fn get(self) -> usize {
        self.0
    }

    /// The longest server slug under this limit: at most half of what follows `mcp_` and
    /// its `_`, and never more than [`MAX_SERVER_SLUG_LEN`].
    #[must_use]
    pub const fn server_slug_max(self) -> usize {
        let half = (self.0 - PREFIX.len() - 1) / 2;
        if half < MAX_SERVER_SLUG_LEN {
            half
        } else {
            MAX_SERVER_SLUG_LEN
        }
    }

    /// The longest server hash: it must fit in the slug.
    const fn server_hash_max(self) -> usize {
        let max = self.server_slug_max();
        if max < MAX_HASH_LEN {
            max
        } else {
            MAX_HASH_LEN
        }
    }
}

impl Default for NameLimit {
    /// [`MAX_NAME_LEN`]: what model APIs accept.
    fn default() -> Self {
        Self(MAX_NAME_LEN)
    }
}

impl fmt::Display for NameLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Lowercases ASCII letters, keeps `[a-z0-9_]`, turns every other run of characters into one
/// `_`, and trims `_` at both ends. May return an empty string.
///
/// ```
/// use kun_mcp::naming::slug;
/// assert_eq!(slug("Search Issues"), "search_issues");
/// assert_eq!(slug("create.issue"), "create_issue");
/// assert_eq!(slug("a__b"), "a__b");
/// assert_eq!(slug("x_-y"), "x_y");
/// assert_eq!(slug("getHTTPStatus"), "gethttpstatus");
/// assert_eq!(slug("查询"), "");
/// ```
#[must_use]
pub fn slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.trim().chars() {
        let lower = ch.to_ascii_lowercase();
        if lower.is_ascii_lowercase() || lower.is_ascii_digit() || lower == '_' {
            out.push(lower);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_owned()
}

/// Hex digits of the BLAKE3 hash of `parts` joined by NUL.
fn hash_hex(parts: &[&str], len: usize) -> String {
    let mut hasher = blake3::Hasher::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            hasher.update(&[0]);
        }
        hasher.update(part.as_bytes());
    }
    let hex = hasher.finalize().to_hex();
    hex[..len.min(hex.len())].to_owned()
}

/// Truncates an ASCII slug to at most `max` bytes without leaving a trailing `_`.
fn truncate_slug(text: &str, max: usize) -> &str {
    let cut = &text[..text.len().min(max)];
    cut.trim_end_matches('_')
}

/// The slug of every server name, prefix-free (see the module docs), at most
/// [`NameLimit::server_slug_max`] long. Deterministic: the result depends only on the set of
/// names and the limit.
///
/// ```
/// use kun_mcp::naming::{NameLimit, server_slugs};
/// let slugs = server_slugs(["git", "git_hub", "My-Server", "my server"], NameLimit::default());
/// assert_eq!(slugs["git"], "git");
/// assert!(!slugs["git_hub"].starts_with("git_"));
/// assert_ne!(slugs["My-Server"], slugs["my server"]);
/// ```
#[must_use]
pub fn server_slugs<'a>(
    names: impl IntoIterator<Item = &'a str>,
    limit: NameLimit,
) -> BTreeMap<String, String> {
    let names: BTreeSet<&str> = names.into_iter().collect();
    let slug_max = limit.server_slug_max();
    let hash_max = limit.server_hash_max();
    let first_hash = SERVER_HASH_LEN.min(hash_max);
    let mut slugs: BTreeMap<String, String> = BTreeMap::new();
    let mut hashed: BTreeMap<String, usize> = BTreeMap::new();
    for name in &names {
        let base = slug(name);
        if base.is_empty() || base.len() > slug_max {
            hashed.insert((*name).to_owned(), first_hash);
        }
        slugs.insert((*name).to_owned(), base);
    }
    loop {
        for (name, len) in &hashed {
            slugs.insert(name.clone(), compact_server_slug(name, *len, slug_max));
        }
        let conflicting = prefix_conflicts(&slugs);
        if conflicting.is_empty() {
            return slugs;
        }
        let mut grew = false;
        for name in conflicting {
            let len = hashed.entry(name).or_insert(0);
            let next = if *len == 0 { first_hash } else { *len + 2 };
            if next <= hash_max && next != *len {
                *len = next;
                grew = true;
            }
        }
        if !grew {
            // Only identical configured names could get here, and a set has none.
            return slugs;
        }
    }
}

/// `[a-z0-9]` of the name's slug (no underscores), truncated, plus `len` hash digits: at
/// most `slug_max` characters.
fn compact_server_slug(name: &str, len: usize, slug_max: usize) -> String {
    let letters: String = slug(name).chars().filter(|c| *c != '_').collect();
    let room = slug_max.saturating_sub(len);
    let stem = if letters.is_empty() {
        "server"
    } else {
        letters.as_str()
    };
    let stem = &stem[..stem.len().min(room)];
    format!("{stem}{}", hash_hex(&[name], len))
}

/// The names whose slugs break prefix-freeness: both of an equal pair, the longer of a
/// prefix pair.
fn prefix_conflicts(slugs: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut conflicting = BTreeSet::new();
    for (a_name, a) in slugs {
        for (b_name, b) in slugs {
            if a_name == b_name {
                continue;
            }
            if a == b {
                conflicting.insert(a_name.clone());
            } else if b.len() > a.len()
                && b.starts_with(a.as_str())
                && b[a.len()..].starts_with('_')
            {
                conflicting.insert(b_name.clone());
            }
        }
    }
    conflicting
}

/// The catalog name of each tool of one server, in the order given, each at most `limit`
/// long. `None` marks a tool that cannot be named apart from another (the server listed the
/// same name twice); it is left out of the catalog.
///
/// `server` is the configured server name (hashed into suffixes), `server_slug` its entry in
/// [`server_slugs`] for the same limit.
#[must_use]
pub fn tool_names(
    server: &str,
    server_slug: &str,
    tools: &[&str],
    limit: NameLimit,
) -> Vec<Option<String>> {
    let head = format!("{PREFIX}{server_slug}_");
    let max_len = limit.get();
    // Room after the head for `<stem>_<hash>` with a stem of at least one letter.
    let hash_max = MAX_HASH_LEN.min(max_len.saturating_sub(head.len() + 2));
    let first_hash = TOOL_HASH_LEN.min(hash_max);
    let bases: Vec<(String, bool)> = tools
        .iter()
        .map(|tool| {
            let s = slug(tool);
            let lossy = s.is_empty();
            let name = format!("{head}{}", if lossy { "tool" } else { s.as_str() });
            let long = name.len() > max_len;
            (name, lossy || long)
        })
        .collect();
    let mut base_count: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, _) in &bases {
        *base_count.entry(name.as_str()).or_default() += 1;
    }
    let mut hash_len: Vec<Option<usize>> = bases
        .iter()
        .map(|(name, forced)| (*forced || base_count[name.as_str()] > 1).then_some(first_hash))
        .collect();
    loop {
        let names: Vec<String> = tools
            .iter()
            .zip(&bases)
            .zip(&hash_len)
            .map(|((tool, (base, _)), len)| match len {
                None => base.clone(),
                Some(len) => hashed_tool_name(&head, server, tool, *len, max_len),
            })
            .collect();
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for name in &names {
            *count.entry(name.as_str()).or_default() += 1;
        }
        let mut grew = false;
        for (i, name) in names.iter().enumerate() {
            if count[name.as_str()] > 1 {
                let next = hash_len[i].map_or(first_hash, |len| len + 2);
                if next <= hash_max && Some(next) != hash_len[i] {
                    hash_len[i] = Some(next);
                    grew = true;
                }
            }
        }
        if !grew {
            let mut seen = BTreeSet::new();
            return names
                .into_iter()
                .map(|name| seen.insert(name.clone()).then_some(name))
                .collect();
        }
    }
}

fn hashed_tool_name(
    head: &str,
    server: &str,
    tool: &str,
    hash_len: usize,
    max_len: usize,
) -> String {
    let s = slug(tool);
    let stem = if s.is_empty() { "tool" } else { s.as_str() };
    let room = max_len.saturating_sub(head.len() + 1 + hash_len);
    let stem = truncate_slug(stem, room);
    let stem = if stem.is_empty() { "t" } else { stem };
    format!("{head}{stem}_{}", hash_hex(&[server, tool], hash_len))
}

/// Where a catalog name routes: the configured server and the tool's original name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct ToolAddress {
    /// The configured server name.
    pub server: String,
    /// The tool's name as the server lists it.
    pub tool: String,
}

/// The exact reverse map from catalog names to tools. Lookups are whole-name only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameTable {
    by_name: BTreeMap<String, ToolAddress>,
}

impl NameTable {
    /// An empty table.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a name. Returns `false` (and changes nothing) when the name is already taken.
    pub fn insert(&mut self, name: String, address: ToolAddress) -> bool {
        if self.by_name.contains_key(&name) {
            return false;
        }
        self.by_name.insert(name, address);
        true
    }

    /// The tool a catalog name stands for.
    #[must_use]
    pub fn resolve(&self, name: &str) -> Option<&ToolAddress> {
        self.by_name.get(name)
    }

    /// Every (name, address), sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ToolAddress)> {
        self.by_name.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// How many names it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether it is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

#[cfg(test)]
mod tests;
