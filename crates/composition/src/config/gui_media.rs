//! `client_surface`, `[plan]`, `[computer_use]` and `[media.<kind>]`: their tables and their
//! resolved settings. How a layer merges into them (and what an untrusted workspace may do)
//! is in [`super::narrowing`]:
//!
//! | key | from an untrusted workspace | why |
//! |---|---|---|
//! | `client_surface` | applies | it only chooses which GUI tools are listed |
//! | `plan.dir` | ignored (user config and `--config` only) | a repository must not choose where the plan tool writes |
//! | `computer_use.mode` | only `off` | the desktop is the user's |
//! | `computer_use.max_actions_per_turn` | only lower | |
//! | `media` (every `[media.<kind>]` key) | ignored (user config and `--config` only) | `api_key_env` names a variable whose value is sent to `base_url`: a workspace must never send the user's key to its own server |

use kun_gui::ComputerUseMode;
use kun_gui::computer::DEFAULT_ACTIONS_PER_TURN;
use kun_gui::plan::DEFAULT_PLAN_DIR;
use kun_ports::{ClientSurface, MediaKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `[plan]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlanTable {
    /// The directory `create_plan` writes into, relative to the workspace root (default
    /// `.kun/plans`).
    pub dir: Option<PathBuf>,
}

/// `[computer_use]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ComputerUseTable {
    /// `off` (default), `auto` (when the model takes images) or `always`.
    pub mode: Option<ComputerUseMode>,
    /// Actions per turn (default 50).
    pub max_actions_per_turn: Option<u32>,
}

/// `[media.<kind>]`: one OpenAI-compatible endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MediaEndpointTable {
    /// The API root including the version, `https://api.openai.com/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The name of the environment variable holding the API key (none: no key is sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// The voice (speech).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voice: Option<String>,
    /// How long one request may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
    /// The largest response kept, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
}

/// `[media]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MediaTable {
    /// `[media.image]`.
    pub image: Option<MediaEndpointTable>,
    /// `[media.speech]`.
    pub speech: Option<MediaEndpointTable>,
    /// `[media.music]`.
    pub music: Option<MediaEndpointTable>,
    /// `[media.video]`.
    pub video: Option<MediaEndpointTable>,
}

impl MediaTable {
    /// The configured endpoints by kind.
    #[must_use]
    pub fn endpoints(&self) -> Vec<(MediaKind, &MediaEndpointTable)> {
        [
            (MediaKind::Image, &self.image),
            (MediaKind::Speech, &self.speech),
            (MediaKind::Music, &self.music),
            (MediaKind::Video, &self.video),
        ]
        .into_iter()
        .filter_map(|(kind, table)| table.as_ref().map(|t| (kind, t)))
        .collect()
    }
}

/// The resolved GUI settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GuiSettings {
    /// The client surface (default `cli`): goal and todo tools are listed for `gui` only.
    pub client_surface: ClientSurface,
    /// `create_plan`'s directory, relative to the workspace root.
    pub plan_dir: PathBuf,
    /// `computer_use.mode`.
    pub computer_use: ComputerUseMode,
    /// `computer_use.max_actions_per_turn`.
    pub max_actions_per_turn: u32,
}

impl Default for GuiSettings {
    fn default() -> Self {
        Self {
            client_surface: ClientSurface::Cli,
            plan_dir: PathBuf::from(DEFAULT_PLAN_DIR),
            computer_use: ComputerUseMode::Off,
            max_actions_per_turn: DEFAULT_ACTIONS_PER_TURN,
        }
    }
}

/// The resolved `[media.<kind>]` endpoints (only the user's own layers set them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MediaSettings {
    /// The endpoint of each configured kind.
    pub endpoints: BTreeMap<String, MediaEndpointTable>,
}

impl MediaSettings {
    /// The endpoint configured for `kind`.
    #[must_use]
    pub fn endpoint(&self, kind: MediaKind) -> Option<&MediaEndpointTable> {
        self.endpoints.get(kind.as_str())
    }
}

/// Checks the values of one file's GUI and media keys: `(dotted key, text to find the line
/// by, message)` for the first bad one.
pub(super) fn check(file: &super::ConfigFile) -> Result<(), (String, String, String)> {
    if let Some(dir) = file.plan.as_ref().and_then(|p| p.dir.as_ref()) {
        let bad = dir.is_absolute()
            || dir.as_os_str().is_empty()
            || dir.components().any(|c| c.as_os_str() == "..");
        if bad {
            return Err((
                "plan.dir".to_owned(),
                dir.to_string_lossy().into_owned(),
                format!(
                    "`{}` must be a directory relative to the workspace root, without `..`",
                    dir.display()
                ),
            ));
        }
    }
    if file
        .computer_use
        .as_ref()
        .and_then(|c| c.max_actions_per_turn)
        == Some(0)
    {
        return Err((
            "computer_use.max_actions_per_turn".to_owned(),
            "max_actions_per_turn".to_owned(),
            "must be at least 1".to_owned(),
        ));
    }
    for (kind, endpoint) in file.media.iter().flat_map(MediaTable::endpoints) {
        let key = |leaf: &str| format!("media.{}.{leaf}", kind.as_str());
        if let Some(url) = &endpoint.base_url {
            let scheme_ok = url.starts_with("https://") || url.starts_with("http://");
            if !scheme_ok || url.contains(char::is_whitespace) {
                return Err((
                    key("base_url"),
                    url.clone(),
                    format!("`{url}` is not an http(s) URL such as https://api.openai.com/v1"),
                ));
            }
        }
        if let Some(name) = &endpoint.api_key_env {
            let mut chars = name.chars();
            let valid = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err((
                    key("api_key_env"),
                    name.clone(),
                    format!(
                        "`{name}` is not an environment variable name; give the variable's \
                         name (OPENAI_API_KEY), never the key itself"
                    ),
                ));
            }
        }
        if endpoint.timeout_seconds == Some(0) || endpoint.max_bytes == Some(0) {
            return Err((
                key("timeout_seconds"),
                "= 0".to_owned(),
                "timeout_seconds and max_bytes must be at least 1".to_owned(),
            ));
        }
    }
    Ok(())
}
