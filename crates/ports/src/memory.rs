//! Long-term memory: the store behind `memory_create`, `memory_update`, `memory_delete`,
//! `memory_search` and the per-turn retrieval of runtimes.
//!
//! # Scopes and places
//!
//! A memory belongs to a [`MemoryScope`]: the `user` (everywhere), one `workspace` (keyed by its
//! real path) or one `project` (keyed by its git remote URL, else by the workspace). Every call
//! is made from a [`MemoryPlace`] — the workspace and project keys of the caller — and sees
//! only what belongs there:
//!
//! | memory's scope | visible from a place when                    |
//! |----------------|----------------------------------------------|
//! | `user`         | always                                       |
//! | `workspace`    | its key is the place's workspace key         |
//! | `project`      | its key is the place's project key           |
//!
//! Updating or deleting goes by the same rule: an id that is not visible from the place is
//! [`MemoryErrorKind::NotFound`], so one workspace can neither read nor change another's
//! memories, whatever ids it guesses.
//!
//! # Limits
//!
//! Content is at most [`MAX_MEMORY_BYTES`] bytes of UTF-8 and not blank; at most [`MAX_TAGS`]
//! tags of at most [`MAX_TAG_BYTES`] bytes each, normalised by [`normalise_tags`]. Every store
//! applies [`validate_content`] and [`normalise_tags`] and refuses bad input with
//! [`MemoryErrorKind::Invalid`], storing nothing.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The most content a memory holds: 16 KiB of UTF-8.
pub const MAX_MEMORY_BYTES: usize = 16_384;
/// The most tags a memory carries.
pub const MAX_TAGS: usize = 16;
/// The longest tag, in bytes.
pub const MAX_TAG_BYTES: usize = 64;

/// Who a memory belongs to.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MemoryScope {
    /// The user, in every workspace.
    User,
    /// One workspace (its real path).
    Workspace,
    /// One project (its git remote URL, else its workspace).
    Project,
}

impl MemoryScope {
    /// Every scope.
    pub const ALL: [Self; 3] = [Self::User, Self::Workspace, Self::Project];

    /// The name used in arguments, storage and renderings.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Workspace => "workspace",
            Self::Project => "project",
        }
    }
}

impl fmt::Display for MemoryScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MemoryScope {
    type Err = MemoryError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|scope| scope.as_str() == s)
            .ok_or_else(|| {
                MemoryError::invalid(format!(
                    "unknown memory scope `{s}`; expected user, workspace or project"
                ))
            })
    }
}

/// Where a call is made from: the keys that place a new memory and decide what is visible
/// (see the scope rules of [`MemoryScope`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MemoryPlace {
    /// The workspace's key: its real path.
    pub workspace: String,
    /// The project's key: the normalised git remote URL, else the workspace key.
    pub project: String,
}

impl MemoryPlace {
    /// A place with these keys.
    #[must_use]
    pub fn new(workspace: impl Into<String>, project: impl Into<String>) -> Self {
        Self {
            workspace: workspace.into(),
            project: project.into(),
        }
    }

    /// The key a memory of `scope` created here is stored under (`""` for `user`).
    #[must_use]
    pub fn key(&self, scope: MemoryScope) -> &str {
        match scope {
            MemoryScope::User => "",
            MemoryScope::Workspace => &self.workspace,
            MemoryScope::Project => &self.project,
        }
    }
}

/// One memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Memory {
    /// Stable id, never reused.
    pub id: String,
    /// Who it belongs to.
    pub scope: MemoryScope,
    /// The text.
    pub content: String,
    /// Normalised tags (see [`normalise_tags`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// When it last changed, in milliseconds since the Unix epoch.
    pub updated_at_ms: i64,
}

/// A memory to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMemory {
    /// Who it belongs to (placed by the caller's [`MemoryPlace`]).
    pub scope: MemoryScope,
    /// The text.
    pub content: String,
    /// Tags, normalised by the store.
    pub tags: Vec<String>,
}

/// A change to a memory: the fields given replace the old ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryChange {
    /// New text.
    pub content: Option<String>,
    /// New tags (an empty list removes them all).
    pub tags: Option<Vec<String>>,
}

impl MemoryChange {
    /// Whether it changes nothing.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.content.is_none() && self.tags.is_none()
    }
}

/// A full-text search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryQuery {
    /// Words to look for: English words match as prefixes, Chinese and Japanese text as
    /// substrings. Any punctuation is plain text, never query syntax.
    pub text: String,
    /// Only these scopes; empty means every visible one.
    pub scopes: Vec<MemoryScope>,
    /// At most this many results (at least one).
    pub limit: usize,
}

/// Which memories to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryListing {
    /// Only these scopes; empty means every visible one.
    pub scopes: Vec<MemoryScope>,
    /// At most this many (at least one).
    pub limit: usize,
    /// Skip this many of the newest first.
    pub offset: usize,
}

/// Why a store call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryErrorKind {
    /// The input breaks a rule (too long, blank, too many tags, nothing to change): the
    /// caller's fault, and nothing was stored.
    Invalid,
    /// No memory with that id is visible from the place.
    NotFound,
    /// The store cannot be used (a corrupt file, a newer schema, a missing directory).
    Unavailable,
    /// Reading or writing failed (locked too long, disk full).
    Storage,
}

/// The store failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct MemoryError {
    /// Why.
    pub kind: MemoryErrorKind,
    /// What failed and what to do, in plain words.
    pub message: String,
}

impl MemoryError {
    /// An error of `kind`.
    #[must_use]
    pub fn new(kind: MemoryErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// Bad input.
    #[must_use]
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(MemoryErrorKind::Invalid, message)
    }

    /// No visible memory has the id.
    #[must_use]
    pub fn not_found(id: &str) -> Self {
        Self::new(
            MemoryErrorKind::NotFound,
            format!(
                "no memory `{id}` here: it does not exist, or it belongs to another workspace or \
                 project; search or list to find the id"
            ),
        )
    }

    /// A storage failure.
    #[must_use]
    pub fn storage(message: impl Into<String>) -> Self {
        Self::new(MemoryErrorKind::Storage, message)
    }
}

/// Checks a memory's text: not blank, at most [`MAX_MEMORY_BYTES`] bytes.
///
/// ```
/// use kun_ports::{MAX_MEMORY_BYTES, MemoryErrorKind, validate_content};
/// assert!(validate_content("prefers tabs").is_ok());
/// let long = "x".repeat(MAX_MEMORY_BYTES + 1);
/// assert_eq!(validate_content(&long).unwrap_err().kind, MemoryErrorKind::Invalid);
/// ```
///
/// # Errors
/// [`MemoryErrorKind::Invalid`] saying which rule broke.
pub fn validate_content(content: &str) -> Result<(), MemoryError> {
    if content.trim().is_empty() {
        return Err(MemoryError::invalid(
            "the memory's content is empty: give the fact to remember",
        ));
    }
    if content.len() > MAX_MEMORY_BYTES {
        return Err(MemoryError::invalid(format!(
            "the memory's content is {} bytes; the limit is {MAX_MEMORY_BYTES} bytes (16 KiB) of \
             UTF-8: keep one short fact per memory and split longer notes",
            content.len()
        )));
    }
    Ok(())
}

/// Normalises tags: trimmed, lower-cased, duplicates dropped (first kept), order kept.
///
/// ```
/// use kun_ports::normalise_tags;
/// let tags = normalise_tags(vec![" Build ".into(), "build".into(), "测试".into()]).unwrap();
/// assert_eq!(tags, ["build", "测试"]);
/// ```
///
/// # Errors
/// [`MemoryErrorKind::Invalid`] for a blank tag, one longer than [`MAX_TAG_BYTES`], one with
/// control characters, or more than [`MAX_TAGS`] tags.
pub fn normalise_tags(tags: Vec<String>) -> Result<Vec<String>, MemoryError> {
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        let tag = tag.trim().to_lowercase();
        if tag.is_empty() {
            return Err(MemoryError::invalid("a tag is empty: remove it"));
        }
        if tag.len() > MAX_TAG_BYTES {
            return Err(MemoryError::invalid(format!(
                "the tag `{tag}` is {} bytes; tags are at most {MAX_TAG_BYTES} bytes",
                tag.len()
            )));
        }
        if tag.chars().any(char::is_control) {
            return Err(MemoryError::invalid(
                "a tag contains control characters: use plain words",
            ));
        }
        if !out.contains(&tag) {
            out.push(tag);
        }
    }
    if out.len() > MAX_TAGS {
        return Err(MemoryError::invalid(format!(
            "{} tags given; a memory has at most {MAX_TAGS}",
            out.len()
        )));
    }
    Ok(out)
}

/// A memory store. Every method is scoped by the caller's [`MemoryPlace`] (see the
/// scope rules of [`MemoryScope`]); the contract suite is `kun_ports::testkit::memory_store_contract`.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait MemoryStore: Send + Sync {
    /// Creates a memory of `memory.scope`, keyed by `place`.
    ///
    /// # Errors
    /// [`MemoryErrorKind::Invalid`] for bad content or tags (nothing stored); storage failures.
    async fn create(&self, place: &MemoryPlace, memory: NewMemory) -> Result<Memory, MemoryError>;

    /// Applies `change` to the memory `id`, if it is visible from `place`.
    ///
    /// # Errors
    /// [`MemoryErrorKind::NotFound`] when it is not visible; [`MemoryErrorKind::Invalid`] for
    /// an empty change or bad content or tags; storage failures.
    async fn update(
        &self,
        place: &MemoryPlace,
        id: &str,
        change: MemoryChange,
    ) -> Result<Memory, MemoryError>;

    /// Deletes the memory `id` if it is visible from `place`; `false` when it is not.
    ///
    /// # Errors
    /// Storage failures.
    async fn delete(&self, place: &MemoryPlace, id: &str) -> Result<bool, MemoryError>;

    /// The visible memories that best match `query`: most relevant (BM25) first, newer first
    /// among equals.
    ///
    /// # Errors
    /// [`MemoryErrorKind::Invalid`] for a query with no words; storage failures.
    async fn search(
        &self,
        place: &MemoryPlace,
        query: &MemoryQuery,
    ) -> Result<Vec<Memory>, MemoryError>;

    /// The visible memories, most recently changed first.
    ///
    /// # Errors
    /// Storage failures.
    async fn list(
        &self,
        place: &MemoryPlace,
        listing: &MemoryListing,
    ) -> Result<Vec<Memory>, MemoryError>;
}
