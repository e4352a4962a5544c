//! Validation of one `{matcher, hooks}` group and of each hook in it.

use super::{
    CommandHook, ConfigError, DEFAULT_TIMEOUT, HookGroup, HookSpec, MAX_TIMEOUT_SECS, WorkflowHook,
    WorkflowMode,
};
use crate::matcher::ToolMatcher;
use serde_json::{Map, Value};
use std::time::Duration;

const GROUP_KEYS: &[&str] = &["hooks", "matcher"];
const COMMAND_KEYS: &[&str] = &["command", "timeout", "type"];
const WORKFLOW_KEYS: &[&str] = &["mode", "secret_env", "timeout", "type", "url"];

pub(super) fn parse_group(at: &str, value: &Value) -> Result<HookGroup, ConfigError> {
    let object = as_object(at, value, "a `{matcher, hooks}` table")?;
    reject_unknown_keys(at, object, GROUP_KEYS)?;
    let matcher = match object.get("matcher") {
        None | Some(Value::Null) => ToolMatcher::any(),
        Some(Value::String(pattern)) => {
            ToolMatcher::compile(Some(pattern)).map_err(|source| ConfigError::BadMatcher {
                at: at.to_owned(),
                source,
            })?
        }
        Some(_) => {
            return Err(ConfigError::WrongType {
                at: format!("{at}.matcher"),
                expected: "a string (a tool-name regex, or `*`)",
            });
        }
    };
    let hooks = object
        .get("hooks")
        .ok_or_else(|| ConfigError::MissingKey {
            at: at.to_owned(),
            key: "hooks",
        })?
        .as_array()
        .ok_or_else(|| ConfigError::WrongType {
            at: format!("{at}.hooks"),
            expected: "a list of hooks",
        })?
        .iter()
        .enumerate()
        .map(|(index, hook)| parse_hook(&format!("{at}.hooks[{index}]"), hook))
        .collect::<Result<_, _>>()?;
    Ok(HookGroup { matcher, hooks })
}

fn parse_hook(at: &str, value: &Value) -> Result<HookSpec, ConfigError> {
    let object = as_object(at, value, "a hook table with a `type`")?;
    let kind = required_str(at, object, "type")?;
    match kind {
        "command" => {
            reject_unknown_keys(at, object, COMMAND_KEYS)?;
            let command = required_str(at, object, "command")?;
            if command.trim().is_empty() {
                return Err(ConfigError::EmptyCommand { at: at.to_owned() });
            }
            Ok(HookSpec::Command(CommandHook {
                command: command.to_owned(),
                timeout: timeout(at, object)?,
            }))
        }
        "workflow" => {
            reject_unknown_keys(at, object, WORKFLOW_KEYS)?;
            Ok(HookSpec::Workflow(WorkflowHook {
                url: url(at, required_str(at, object, "url")?)?,
                mode: mode(at, object)?,
                timeout: timeout(at, object)?,
                secret_env: secret_env(at, object)?,
            }))
        }
        other => Err(ConfigError::UnknownHookType {
            at: at.to_owned(),
            found: other.to_owned(),
        }),
    }
}

fn as_object<'a>(
    at: &str,
    value: &'a Value,
    expected: &'static str,
) -> Result<&'a Map<String, Value>, ConfigError> {
    value.as_object().ok_or_else(|| ConfigError::WrongType {
        at: at.to_owned(),
        expected,
    })
}

fn reject_unknown_keys(
    at: &str,
    object: &Map<String, Value>,
    allowed: &'static [&'static str],
) -> Result<(), ConfigError> {
    match object.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(ConfigError::UnknownKey {
            at: at.to_owned(),
            key: key.clone(),
            allowed,
        }),
        None => Ok(()),
    }
}

fn required_str<'a>(
    at: &str,
    object: &'a Map<String, Value>,
    key: &'static str,
) -> Result<&'a str, ConfigError> {
    match object.get(key) {
        None | Some(Value::Null) => Err(ConfigError::MissingKey {
            at: at.to_owned(),
            key,
        }),
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(ConfigError::WrongType {
            at: format!("{at}.{key}"),
            expected: "a string",
        }),
    }
}

fn timeout(at: &str, object: &Map<String, Value>) -> Result<Duration, ConfigError> {
    let Some(value) = object.get("timeout") else {
        return Ok(DEFAULT_TIMEOUT);
    };
    let bad = || ConfigError::BadTimeout {
        at: at.to_owned(),
        found: value.to_string(),
    };
    let seconds = value.as_f64().ok_or_else(bad)?;
    if !(seconds > 0.0 && seconds <= MAX_TIMEOUT_SECS) {
        return Err(bad());
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| bad())
}

fn url(at: &str, text: &str) -> Result<reqwest::Url, ConfigError> {
    let bad = |reason: String| ConfigError::BadUrl {
        at: at.to_owned(),
        url: text.to_owned(),
        reason,
    };
    let url = reqwest::Url::parse(text).map_err(|err| bad(err.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(format!(
            "the scheme is `{}`, not http or https",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("it has no host".to_owned()));
    }
    Ok(url)
}

fn mode(at: &str, object: &Map<String, Value>) -> Result<WorkflowMode, ConfigError> {
    let Some(value) = object.get("mode") else {
        return Ok(WorkflowMode::default());
    };
    let text = value.as_str().ok_or_else(|| ConfigError::WrongType {
        at: format!("{at}.mode"),
        expected: "one of observe, block, rewrite",
    })?;
    [
        WorkflowMode::Observe,
        WorkflowMode::Block,
        WorkflowMode::Rewrite,
    ]
    .into_iter()
    .find(|mode| mode.as_str() == text)
    .ok_or_else(|| ConfigError::UnknownMode {
        at: at.to_owned(),
        found: text.to_owned(),
    })
}

fn secret_env(at: &str, object: &Map<String, Value>) -> Result<Option<String>, ConfigError> {
    let Some(value) = object.get("secret_env") else {
        return Ok(None);
    };
    let name = value.as_str().ok_or_else(|| ConfigError::WrongType {
        at: format!("{at}.secret_env"),
        expected: "the name of an environment variable",
    })?;
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(Some(name.to_owned()))
    } else {
        Err(ConfigError::BadEnvName {
            at: at.to_owned(),
            name: name.to_owned(),
        })
    }
}
