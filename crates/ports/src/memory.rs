//! Long-term memory (`memory_create`, `memory_update`, `memory_delete`, retrieval).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// Who a memory belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryScope {
    /// The user, across workspaces.
    User,
    /// One workspace.
    Workspace,
    /// One project.
    Project,
}

/// One memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    /// Stable id.
    pub id: String,
    /// Scope.
    pub scope: MemoryScope,
    /// Text.
    pub content: String,
}

/// The store failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("memory store: {message}")]
pub struct MemoryError {
    /// What failed.
    pub message: String,
}

/// A memory store.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait MemoryStore: Send + Sync {
    /// Creates a memory.
    ///
    /// # Errors
    /// On storage failure.
    async fn create(&self, scope: MemoryScope, content: &str) -> Result<Memory, MemoryError>;
    /// Replaces a memory's text.
    ///
    /// # Errors
    /// On unknown id or storage failure.
    async fn update(&self, id: &str, content: &str) -> Result<Memory, MemoryError>;
    /// Deletes a memory; `false` when it did not exist.
    ///
    /// # Errors
    /// On storage failure.
    async fn delete(&self, id: &str) -> Result<bool, MemoryError>;
    /// The best matches for a query, at most `limit`.
    ///
    /// # Errors
    /// On storage failure.
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<Memory>, MemoryError>;
}
