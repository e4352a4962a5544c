//! `.mcp.json` at the workspace root: its `mcpServers` entries.

use super::{ConfigError, McpServerEntry};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
struct McpJson {
    #[serde(rename = "mcpServers", default)]
    mcp_servers: BTreeMap<String, McpJsonServer>,
}

#[derive(Deserialize)]
struct McpJsonServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<std::path::PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(rename = "type")]
    transport: Option<String>,
}

/// Reads `.mcp.json`. Its servers are workspace definitions: they start only when the user
/// trusts the workspace or pins the definition (kun-mcp decides, see `Settings::mcp_trust`).
/// A directory of that name counts as absent: it is the mask the bubblewrap tier puts over a
/// missing `.mcp.json` while a confined command runs (kun-sandbox's guards).
///
/// # Errors
/// When the file exists but is not valid.
pub fn read_mcp_json(path: &Path) -> Result<BTreeMap<String, McpServerEntry>, ConfigError> {
    if path.is_dir() {
        return Ok(BTreeMap::new());
    }
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(err) => return Err(ConfigError::file(path, format!("cannot read: {err}"))),
    };
    let parsed: McpJson = serde_json::from_str(&text).map_err(|err| ConfigError {
        file: path.to_path_buf(),
        line: Some(err.line()),
        key: None,
        message: err.to_string(),
    })?;
    Ok(parsed
        .mcp_servers
        .into_iter()
        .map(|(name, s)| {
            let entry = McpServerEntry {
                command: s.command,
                args: s.args,
                env: s.env,
                cwd: s.cwd,
                url: s.url,
                headers: s.headers,
                transport: s.transport,
                ..McpServerEntry::default()
            };
            (name, entry)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn a_directory_mask_reads_as_no_servers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        assert!(read_mcp_json(&path).unwrap().is_empty(), "absent");
        std::fs::create_dir(&path).unwrap();
        assert!(read_mcp_json(&path).unwrap().is_empty(), "a mask");
    }
}
