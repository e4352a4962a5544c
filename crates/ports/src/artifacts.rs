//! Where large outputs go instead of the model's context.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A stored artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRef {
    /// Stable id.
    pub id: String,
    /// A file holding it, when the store is file-backed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Size in bytes.
    pub byte_size: u64,
}

/// The store failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("artifact store: {message}")]
pub struct ArtifactError {
    /// What failed.
    pub message: String,
}

/// Stores blobs and hands back references.
#[cfg_attr(feature = "testkit", mockall::automock)]
pub trait ArtifactStore: Send + Sync {
    /// Stores `bytes`; `name_hint` may shape the id or file name.
    ///
    /// # Errors
    /// When it cannot be stored.
    fn put(&self, name_hint: &str, bytes: &[u8]) -> Result<ArtifactRef, ArtifactError>;

    /// Reads an artifact back.
    ///
    /// # Errors
    /// When the id is unknown or unreadable.
    fn get(&self, id: &str) -> Result<Vec<u8>, ArtifactError>;
}
