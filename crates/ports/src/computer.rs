//! Desktop automation for `computer_use` (main registry only: its provider is not
//! [`Delegable`](crate::Delegable)).
//!
//! A [`ComputerBackend`] captures the screen and drives the pointer and keyboard, in
//! **screen pixels**. The `computer_use` tool scales screenshots for the model and maps the
//! model's screenshot coordinates back to screen pixels; a backend never scales.
//!
//! ```
//! use kun_ports::{ComputerInput, MouseButton, Point};
//! let click = ComputerInput::Click { at: Point::new(10, 20), button: MouseButton::Left, count: 2 };
//! assert_eq!(click.target(), Some(Point::new(10, 20)));
//! assert!(Point::new(10, 20).within(kun_ports::ScreenSize { width: 11, height: 21 }));
//! ```

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The size of the screen in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenSize {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// A point on the screen, in pixels from the top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    /// Pixels from the left edge.
    pub x: u32,
    /// Pixels from the top edge.
    pub y: u32,
}

impl Point {
    /// A point.
    #[must_use]
    pub const fn new(x: u32, y: u32) -> Self {
        Self { x, y }
    }

    /// Whether the point is on a screen of `size`.
    #[must_use]
    pub const fn within(self, size: ScreenSize) -> bool {
        self.x < size.width && self.y < size.height
    }
}

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MouseButton {
    /// The primary button.
    #[default]
    Left,
    /// The wheel button.
    Middle,
    /// The secondary button.
    Right,
}

/// A scroll direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScrollDirection {
    /// Towards the top.
    Up,
    /// Towards the bottom.
    Down,
    /// Towards the left.
    Left,
    /// Towards the right.
    Right,
}

/// One input action, in screen pixels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ComputerInput {
    /// Moves the pointer.
    Move {
        /// Where to.
        to: Point,
    },
    /// Moves the pointer, then clicks `count` times.
    Click {
        /// Where.
        at: Point,
        /// Which button.
        button: MouseButton,
        /// 1 for a click, 2 for a double click.
        count: u8,
    },
    /// Presses the left button at `from`, moves to `to`, releases.
    Drag {
        /// Where the drag starts.
        from: Point,
        /// Where it ends.
        to: Point,
    },
    /// Types text, character by character.
    Type {
        /// The text.
        text: String,
    },
    /// Presses a key chord such as `ctrl+s` or `Return`, and releases it.
    Key {
        /// The chord: key names joined by `+`.
        chord: String,
    },
    /// Moves the pointer, then scrolls.
    Scroll {
        /// Where.
        at: Point,
        /// Which way.
        direction: ScrollDirection,
        /// How many wheel steps.
        amount: u32,
    },
}

impl ComputerInput {
    /// Where the pointer ends up, for the actions that move it.
    #[must_use]
    pub const fn target(&self) -> Option<Point> {
        match self {
            Self::Move { to } | Self::Drag { to, .. } => Some(*to),
            Self::Click { at, .. } | Self::Scroll { at, .. } => Some(*at),
            Self::Type { .. } | Self::Key { .. } => None,
        }
    }
}

/// A captured screen: RGB pixels, 3 bytes each, row by row from the top-left.
#[derive(Clone, PartialEq, Eq)]
pub struct Frame {
    /// The size of the capture (the screen's).
    pub size: ScreenSize,
    /// `width × height × 3` bytes.
    pub rgb: Vec<u8>,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("size", &self.size)
            .field("bytes", &self.rgb.len())
            .finish()
    }
}

/// Why a backend cannot act.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ComputerError {
    /// There is no desktop to act on (no `DISPLAY`, a display that refuses the connection, a
    /// missing extension); the provider is unavailable with this reason.
    #[error("no desktop: {0}")]
    Unavailable(String),
    /// The action does not fit (a point off the screen, a key name that does not exist, a
    /// character the keyboard cannot type).
    #[error("{0}")]
    Invalid(String),
    /// The desktop failed mid-action.
    #[error("desktop: {0}")]
    Failed(String),
}

/// A desktop to act on.
///
/// Invariants every adapter keeps (checked by `testkit::computer_backend_contract`): a frame
/// has the screen's size and `width × height × 3` bytes; after an action that moves the
/// pointer, [`ComputerBackend::pointer`] reads back the target; a point off the screen is
/// [`ComputerError::Invalid`] and moves nothing; an unknown key name is `Invalid`.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait ComputerBackend: Send + Sync {
    /// Whether there is a desktop, and its size.
    ///
    /// # Errors
    /// [`ComputerError::Unavailable`] with the reason.
    async fn screen(&self) -> Result<ScreenSize, ComputerError>;

    /// Captures the whole screen.
    ///
    /// # Errors
    /// When there is no desktop or the capture fails.
    async fn capture(&self) -> Result<Frame, ComputerError>;

    /// Performs one input action.
    ///
    /// # Errors
    /// [`ComputerError::Invalid`] for an action that does not fit (nothing happens), else
    /// when there is no desktop or it fails.
    async fn perform(&self, input: &ComputerInput) -> Result<(), ComputerError>;

    /// Where the pointer is now.
    ///
    /// # Errors
    /// When there is no desktop.
    async fn pointer(&self) -> Result<Point, ComputerError>;
}
