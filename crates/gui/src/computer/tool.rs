//! `computer_use {action, x?, y?, to_x?, to_y?, button?, text?, keys?, direction?, amount?}`.
//!
//! | action | arguments | approval |
//! |---|---|---|
//! | `screenshot` | — | none: it only reads the screen (its call kind is `tool_call`) |
//! | `move` | `x`, `y` | always asked |
//! | `click`, `double_click` | `x`, `y`, `button?` (left) | always asked |
//! | `drag` | `x`, `y` (start), `to_x`, `to_y` | always asked |
//! | `type` | `text` | always asked |
//! | `key` | `keys` (`ctrl+s`, `Return`) | always asked |
//! | `scroll` | `x`, `y`, `direction`, `amount?` (3) | always asked |
//!
//! Coordinates are screenshot pixels; the screenshot is the screen scaled to at most 1280
//! pixels wide, and its text says the scale. Every call counts against the per-turn action
//! budget (default 50); past it, calls fail with `action_budget_exhausted` until the next
//! turn. Screenshots go to the artifact store when one is configured.

use super::screenshot::{MAX_SCREENSHOT_WIDTH, Scale, encode_png};
use async_trait::async_trait;
use base64::Engine as _;
use kun_ports::{
    ArtifactStore, ComputerBackend, ComputerError, ComputerInput, ContentBlock, ErrorCode,
    Modality, MouseButton, Point, ScrollDirection, ToolContext, ToolFailure, ToolHostContext,
    ToolKind, ToolPolicy, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The default number of actions per turn.
pub const DEFAULT_ACTIONS_PER_TURN: u32 = 50;

/// How many turns' counters are kept before old ones are forgotten.
const TURNS_KEPT: usize = 256;

/// When `computer_use` is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComputerUseMode {
    /// Never (the default).
    #[default]
    Off,
    /// When the model takes images as input.
    Auto,
    /// Always.
    Always,
}

impl ComputerUseMode {
    /// The config value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Auto => "auto",
            Self::Always => "always",
        }
    }
}

impl std::str::FromStr for ComputerUseMode {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "off" => Ok(Self::Off),
            "auto" => Ok(Self::Auto),
            "always" => Ok(Self::Always),
            other => Err(format!(
                "`{other}` is not a computer_use mode: off, auto or always"
            )),
        }
    }
}

/// An action of `computer_use`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Capture the screen.
    Screenshot,
    /// Move the pointer to (x, y).
    Move,
    /// Click at (x, y).
    Click,
    /// Double-click at (x, y).
    DoubleClick,
    /// Press at (x, y), move to (to_x, to_y), release.
    Drag,
    /// Type `text`.
    Type,
    /// Press the chord `keys`.
    Key,
    /// Scroll at (x, y).
    Scroll,
}

/// Arguments of `computer_use`: the action and the fields it needs.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComputerUseArgs {
    /// What to do.
    pub action: Action,
    /// X in screenshot pixels (move, click, double_click, drag start, scroll).
    #[serde(default)]
    pub x: Option<u32>,
    /// Y in screenshot pixels.
    #[serde(default)]
    pub y: Option<u32>,
    /// Drag end X in screenshot pixels.
    #[serde(default)]
    pub to_x: Option<u32>,
    /// Drag end Y in screenshot pixels.
    #[serde(default)]
    pub to_y: Option<u32>,
    /// The button to click (left, middle, right; default left).
    #[serde(default)]
    pub button: Option<MouseButton>,
    /// The text to type.
    #[serde(default)]
    pub text: Option<String>,
    /// The key chord, key names joined by `+`: `ctrl+s`, `Return`, `alt+Tab`.
    #[serde(default)]
    pub keys: Option<String>,
    /// Which way to scroll (up, down, left, right).
    #[serde(default)]
    pub direction: Option<ScrollDirection>,
    /// Wheel steps to scroll (default 3).
    #[serde(default)]
    pub amount: Option<u32>,
}

/// A stored screenshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScreenshotInfo {
    /// Screenshot width (the coordinates you give are in these pixels).
    pub width: u32,
    /// Screenshot height.
    pub height: u32,
    /// Screen width.
    pub screen_width: u32,
    /// Screen height.
    pub screen_height: u32,
    /// Screenshot pixels per screen pixel.
    pub scale: f64,
    /// PNG size in bytes.
    pub byte_size: u64,
    /// The artifact holding the PNG.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// The PNG file, when the artifact store keeps files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// What `computer_use` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComputerUseOutput {
    /// The action done.
    pub action: Action,
    /// The screenshot, for `screenshot`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<ScreenshotInfo>,
    /// Where the pointer is after the action, in screenshot pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<[u32; 2]>,
    /// Actions left in this turn.
    pub actions_left: u32,
    /// The PNG, for the image block (not part of the structured output).
    #[serde(skip)]
    #[schemars(skip)]
    pub png: Vec<u8>,
}

/// `computer_use` (see the module docs).
pub struct ComputerUse {
    spec: ToolSpec,
    backend: Arc<dyn ComputerBackend>,
    artifacts: Option<Arc<dyn ArtifactStore>>,
    mode: ComputerUseMode,
    budget: u32,
    used: Mutex<HashMap<(String, String), u32>>,
}

impl ComputerUse {
    /// The tool over `backend`, listed per `mode`, with `budget` actions per turn.
    #[must_use]
    pub fn new(
        backend: Arc<dyn ComputerBackend>,
        artifacts: Option<Arc<dyn ArtifactStore>>,
        mode: ComputerUseMode,
        budget: u32,
    ) -> Self {
        let spec = ToolSpec::typed::<ComputerUseArgs, ComputerUseOutput>(
            "computer_use",
            "Use the desktop: take a screenshot, move the pointer, click, double-click, drag, \
             type text, press keys, scroll. Coordinates are pixels of the latest screenshot. \
             Every action but screenshot asks the user first.",
        )
        .with_kind(ToolKind::CommandExecution)
        .with_policy(ToolPolicy::Auto);
        Self {
            spec,
            backend,
            artifacts,
            mode,
            budget,
            used: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one action of this turn; `None` when the budget is used up.
    fn spend(&self, thread: &str, turn: &str) -> Option<u32> {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        if used.len() > TURNS_KEPT && !used.contains_key(&(thread.to_owned(), turn.to_owned())) {
            used.clear();
        }
        let count = used
            .entry((thread.to_owned(), turn.to_owned()))
            .or_insert(0);
        if *count >= self.budget {
            return None;
        }
        *count += 1;
        Some(self.budget - *count)
    }

    async fn scale(&self) -> Result<Scale, ToolFailure> {
        let screen = self.backend.screen().await.map_err(backend_failure)?;
        Ok(Scale::for_screen(screen, MAX_SCREENSHOT_WIDTH))
    }

    async fn screenshot(&self, left: u32) -> Result<ComputerUseOutput, ToolFailure> {
        let frame = self.backend.capture().await.map_err(backend_failure)?;
        let scale = Scale::for_screen(frame.size, MAX_SCREENSHOT_WIDTH);
        let png = encode_png(&frame, &scale).map_err(ToolFailure::new)?;
        let stored = match &self.artifacts {
            Some(store) => Some(
                store
                    .put("screenshot.png", &png)
                    .map_err(|e| ToolFailure::new(e.to_string()))?,
            ),
            None => None,
        };
        Ok(ComputerUseOutput {
            action: Action::Screenshot,
            screenshot: Some(ScreenshotInfo {
                width: scale.shot.width,
                height: scale.shot.height,
                screen_width: scale.screen.width,
                screen_height: scale.screen.height,
                scale: (scale.factor() * 10_000.0).round() / 10_000.0,
                byte_size: png.len() as u64,
                artifact_id: stored.as_ref().map(|s| s.id.clone()),
                path: stored.and_then(|s| s.path).map(|p| p.display().to_string()),
            }),
            pointer: None,
            actions_left: left,
            png,
        })
    }
}

fn backend_failure(err: ComputerError) -> ToolFailure {
    match err {
        ComputerError::Invalid(message) => ToolFailure::invalid(message),
        other => ToolFailure::new(other.to_string()),
    }
}

fn need<T>(value: Option<T>, what: &str, action: Action) -> Result<T, ToolFailure> {
    value.ok_or_else(|| {
        ToolFailure::invalid(format!(
            "{} needs `{what}`",
            serde_json::to_value(action)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        ))
    })
}

/// The backend input for a non-screenshot action, in screen pixels.
fn input_for(args: &ComputerUseArgs, scale: &Scale) -> Result<ComputerInput, ToolFailure> {
    let action = args.action;
    let point = |x: Option<u32>, y: Option<u32>, xs: &str, ys: &str| {
        let shot = Point::new(need(x, xs, action)?, need(y, ys, action)?);
        scale.to_screen(shot).map_err(ToolFailure::invalid)
    };
    Ok(match action {
        Action::Screenshot => {
            return Err(ToolFailure::invalid("screenshot is not an input action"));
        }
        Action::Move => ComputerInput::Move {
            to: point(args.x, args.y, "x", "y")?,
        },
        Action::Click | Action::DoubleClick => ComputerInput::Click {
            at: point(args.x, args.y, "x", "y")?,
            button: args.button.unwrap_or_default(),
            count: if action == Action::Click { 1 } else { 2 },
        },
        Action::Drag => ComputerInput::Drag {
            from: point(args.x, args.y, "x", "y")?,
            to: point(args.to_x, args.to_y, "to_x", "to_y")?,
        },
        Action::Type => {
            let text = need(args.text.clone(), "text", action)?;
            if text.is_empty() || text.chars().count() > 2_000 {
                return Err(ToolFailure::invalid(
                    "text must be 1 to 2000 characters; type longer text in parts",
                ));
            }
            ComputerInput::Type { text }
        }
        Action::Key => ComputerInput::Key {
            chord: need(args.keys.clone(), "keys", action)?,
        },
        Action::Scroll => {
            let amount = args.amount.unwrap_or(3);
            if !(1..=50).contains(&amount) {
                return Err(ToolFailure::invalid("amount must be 1 to 50 wheel steps"));
            }
            ComputerInput::Scroll {
                at: point(args.x, args.y, "x", "y")?,
                direction: need(args.direction, "direction", action)?,
                amount,
            }
        }
    })
}

#[async_trait]
impl TypedTool for ComputerUse {
    type Args = ComputerUseArgs;
    type Output = ComputerUseOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn should_advertise(&self, ctx: &ToolHostContext) -> bool {
        match self.mode {
            ComputerUseMode::Off => false,
            ComputerUseMode::Always => true,
            ComputerUseMode::Auto => ctx.input_modalities.contains(&Modality::Image),
        }
    }

    fn call_kind(&self, args: &ComputerUseArgs) -> Option<ToolKind> {
        (args.action == Action::Screenshot).then_some(ToolKind::ToolCall)
    }

    fn explicit_approval(
        &self,
        args: &ComputerUseArgs,
        _ctx: &ToolHostContext,
    ) -> Result<bool, String> {
        Ok(args.action != Action::Screenshot)
    }

    fn render(&self, output: &ComputerUseOutput) -> String {
        let left = output.actions_left;
        match (&output.screenshot, output.pointer) {
            (Some(shot), _) => {
                let scaled = if shot.width == shot.screen_width {
                    String::new()
                } else {
                    format!(
                        ", scaled from the {}×{} screen by {}",
                        shot.screen_width, shot.screen_height, shot.scale
                    )
                };
                let stored = shot
                    .path
                    .as_ref()
                    .map(|p| format!(" Saved as {p}."))
                    .unwrap_or_default();
                format!(
                    "Screenshot {}×{}{scaled}. Give coordinates in these screenshot pixels.{stored} \
                     {left} actions left this turn.",
                    shot.width, shot.height
                )
            }
            (None, Some([x, y])) => format!(
                "Done: {}. The pointer is at ({x}, {y}) in screenshot pixels. {left} actions \
                 left this turn; take a screenshot to see the result.",
                serde_json::to_value(output.action)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            ),
            (None, None) => {
                format!("Done. {left} actions left this turn; take a screenshot to see the result.")
            }
        }
    }

    fn media(&self, output: &ComputerUseOutput) -> Vec<ContentBlock> {
        if output.png.is_empty() {
            return Vec::new();
        }
        vec![ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(&output.png),
            "image/png",
        )]
    }

    async fn run(
        &self,
        args: ComputerUseArgs,
        ctx: ToolContext<'_>,
    ) -> Result<ComputerUseOutput, ToolFailure> {
        let Some(left) = self.spend(ctx.turn.thread_id, ctx.turn.turn_id) else {
            return Err(ToolFailure::coded(
                ErrorCode::ActionBudgetExhausted,
                format!(
                    "this turn used all {} computer_use actions; stop here, tell the user what \
                     is done and what is left, and continue in the next turn",
                    self.budget
                ),
            ));
        };
        if args.action == Action::Screenshot {
            return self.screenshot(left).await;
        }
        let scale = self.scale().await?;
        let input = input_for(&args, &scale)?;
        self.backend
            .perform(&input)
            .await
            .map_err(backend_failure)?;
        let pointer = match input.target() {
            Some(_) => {
                let at = self.backend.pointer().await.map_err(backend_failure)?;
                let shot = scale.to_shot(at);
                Some([shot.x, shot.y])
            }
            None => None,
        };
        Ok(ComputerUseOutput {
            action: args.action,
            screenshot: None,
            pointer,
            actions_left: left,
            png: Vec::new(),
        })
    }
}
