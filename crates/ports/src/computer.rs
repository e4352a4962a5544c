//! Desktop automation for `computer_use` (main registry only).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// One desktop action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ComputerAction {
    /// Capture the screen.
    Screenshot,
    /// Click at a point.
    Click {
        /// X in pixels.
        x: u32,
        /// Y in pixels.
        y: u32,
    },
    /// Type text.
    Type {
        /// The text.
        text: String,
    },
    /// Press a key chord such as `ctrl+s`.
    Key {
        /// The chord.
        keys: String,
    },
}

/// What an action produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComputerObservation {
    /// A PNG screenshot after the action, if taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot_png: Option<Vec<u8>>,
}

/// The backend failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("computer backend: {message}")]
pub struct ComputerError {
    /// What failed.
    pub message: String,
}

/// A desktop to act on.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait ComputerBackend: Send + Sync {
    /// Performs an action.
    ///
    /// # Errors
    /// When the action fails.
    async fn act(&self, action: &ComputerAction) -> Result<ComputerObservation, ComputerError>;
}
