//! Sending files through an instant-messaging bridge (`send_im_attachment`).

use async_trait::async_trait;
use std::path::Path;

/// The bridge refused or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("im bridge: {message}")]
pub struct ImError {
    /// What failed.
    pub message: String,
}

/// An IM conversation the turn is attached to.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait ImBridge: Send + Sync {
    /// Sends a file with an optional caption; returns the bridge's message id.
    ///
    /// # Errors
    /// When the bridge cannot deliver.
    async fn send_attachment(
        &self,
        path: &Path,
        caption: Option<String>,
    ) -> Result<String, ImError>;
}
