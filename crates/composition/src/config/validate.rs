//! Checks of one file's values that its types cannot express, each naming the file, the line
//! and the key: limits of at least 1, tool-name lengths a client accepts, environment
//! variable names, trust entries, pinned MCP definitions and `Origin`s.

use super::file::ConfigFile;
use super::{ConfigError, DEFAULT_MAX_TOOL_NAME_LENGTH, line_of};
use std::path::Path;

/// The shortest `serve.max_tool_name_length`: room for `mcp_`, a short server slug and a
/// tool hash.
pub const MIN_TOOL_NAME_LENGTH: u32 = 24;

/// The longest `serve.max_tool_name_length`: model APIs reject longer names.
pub const MAX_TOOL_NAME_LENGTH: u32 = 64;

struct Check<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Check<'_> {
    fn fail(&self, key: &str, needle: &str, message: String) -> ConfigError {
        ConfigError {
            file: self.path.to_path_buf(),
            line: line_of(self.text, needle).or_else(|| line_of(self.text, key)),
            key: Some(key.to_owned()),
            message,
        }
    }
}

/// Validates the values of `file`, read from `path` with contents `text`.
///
/// # Errors
/// The first bad value.
pub fn file(file: &ConfigFile, path: &Path, text: &str) -> Result<(), ConfigError> {
    let check = Check { path, text };
    super::gui_media::check(file)
        .map_err(|(key, needle, message)| check.fail(&key, &needle, message))?;
    if let Some(limits) = &file.limits {
        for (key, value) in [
            ("max_output_lines", limits.max_output_lines),
            ("max_output_bytes", limits.max_output_bytes),
            ("bash_timeout_seconds", limits.bash_timeout_seconds),
        ] {
            if value == Some(0) {
                let dotted = format!("limits.{key}");
                return Err(check.fail(&dotted, key, "must be at least 1".to_owned()));
            }
        }
    }
    if let Some(length) = file.serve.as_ref().and_then(|s| s.max_tool_name_length)
        && !(MIN_TOOL_NAME_LENGTH..=MAX_TOOL_NAME_LENGTH).contains(&length)
    {
        return Err(check.fail(
            "serve.max_tool_name_length",
            "max_tool_name_length",
            format!(
                "must be between {MIN_TOOL_NAME_LENGTH} and {MAX_TOOL_NAME_LENGTH} (default {DEFAULT_MAX_TOOL_NAME_LENGTH}: Claude Code and Codex add `mcp__<server>__` and model APIs reject names over 64 characters)"
            ),
        ));
    }
    for name in file.shell.iter().flat_map(|s| s.env.iter().flatten()) {
        if !is_env_name(name) {
            return Err(check.fail(
                "shell.env",
                name,
                format!(
                    "{} is not an environment variable name (letters, digits and `_`, not starting with a digit); list names only, never values",
                    super::narrowing::render(name)
                ),
            ));
        }
    }
    if let Some(trust) = &file.trust {
        for entry in trust.workspaces.iter().flatten() {
            if super::trust::expand(entry).is_none() {
                return Err(check.fail(
                    "trust.workspaces",
                    &entry.to_string_lossy(),
                    format!(
                        "`{}` must be an absolute path or start with `~/`",
                        entry.display()
                    ),
                ));
            }
        }
        for pin in trust.mcp_servers.iter().flatten() {
            if let Err(message) = kun_mcp::DefinitionId::parse(pin) {
                return Err(check.fail("trust.mcp_servers", pin, message));
            }
        }
    }
    for origin in file
        .serve
        .iter()
        .flat_map(|s| s.allowed_origins.iter().flatten())
    {
        if let Err(message) = origin_pattern(origin) {
            return Err(check.fail("serve.allowed_origins", origin, message));
        }
    }
    if let Some(exceptions) = file
        .sandbox
        .as_ref()
        .and_then(|s| s.protected_path_exceptions.as_ref())
    {
        for path in exceptions {
            if path.is_absolute() || path.components().any(|c| c.as_os_str() == "..") {
                return Err(check.fail(
                    "sandbox.protected_path_exceptions",
                    &path.to_string_lossy(),
                    format!(
                        "`{}` must be a path relative to the workspace root, without `..`",
                        path.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Checks an `allowed_origins` entry: `scheme://host` with an optional `:port` or `:*`, and
/// nothing after (an `Origin` header has no path).
///
/// # Errors
/// What is wrong with it.
pub fn origin_pattern(origin: &str) -> Result<(), String> {
    let shape =
        "an origin such as `https://app.example.com`, `http://localhost:3000` or `http://devbox:*`";
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Err(format!("`{origin}` is not {shape}"));
    };
    let (host, port) = match rest.strip_prefix('[').and_then(|r| r.find(']')) {
        Some(end) => rest.split_at(end + 2),
        None => rest.find(':').map_or((rest, ""), |i| rest.split_at(i)),
    };
    if let Some(port) = port.strip_prefix(':') {
        if port != "*" && port.parse::<u16>().is_err() {
            return Err(format!("`{origin}`: the port must be a number or `*`"));
        }
    } else if !port.is_empty() {
        return Err(format!("`{origin}` is not {shape}"));
    }
    let valid_host = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-.[]:".contains(c));
    if !matches!(scheme, "http" | "https") || !valid_host {
        return Err(format!("`{origin}` is not {shape}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_patterns() {
        for good in [
            "https://app.example.com",
            "http://localhost:3000",
            "http://devbox:*",
            "http://[::1]:8080",
        ] {
            assert_eq!(origin_pattern(good), Ok(()), "{good}");
        }
        for bad in [
            "app.example.com",
            "ftp://x",
            "https://x/path",
            "http://x:port",
            "https://",
            "null",
        ] {
            assert!(origin_pattern(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn env_names() {
        assert!(is_env_name("AWS_PROFILE") && is_env_name("_X1"));
        assert!(!is_env_name("1X") && !is_env_name("A=B") && !is_env_name(""));
    }
}
