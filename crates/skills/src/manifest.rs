//! Upstream Kun's `skill.json` manifest (strict: unknown keys are an error).
//!
//! `{id?, name, description?, version?, entry?, triggers?: {commands?, promptPatterns?,
//! fileTypes?}, allowedTools?, assets?, priority?}`. Its `allowedTools` **narrow** the turn
//! (upstream's meaning; `restrict-tools` in `SKILL.md`), and its `promptPatterns` are literal
//! text, matched case-insensitively.

use serde::Deserialize;

/// Bounds from upstream: count × length of each list.
const MAX_LIST: usize = 16;
const MAX_TOOLS: usize = 64;
const MAX_ENTRY_CHARS: usize = 256;

/// `triggers` of a manifest.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ManifestTriggers {
    #[serde(default)]
    pub(crate) commands: Vec<String>,
    #[serde(default)]
    pub(crate) prompt_patterns: Vec<String>,
    #[serde(default)]
    pub(crate) file_types: Vec<String>,
}

/// A `skill.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Manifest {
    pub(crate) id: Option<String>,
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    #[serde(default)]
    #[allow(
        dead_code,
        reason = "part of the strict manifest shape; not used by kun"
    )]
    pub(crate) version: Option<String>,
    pub(crate) entry: Option<String>,
    #[serde(default)]
    pub(crate) triggers: ManifestTriggers,
    pub(crate) allowed_tools: Option<Vec<String>>,
    #[serde(default)]
    #[allow(
        dead_code,
        reason = "part of the strict manifest shape; not used by kun"
    )]
    pub(crate) assets: Vec<String>,
    #[serde(default)]
    pub(crate) priority: i64,
}

/// Parses and bounds-checks a manifest.
///
/// # Errors
/// Invalid JSON, unknown keys, wrong types, or a list over its bounds.
pub(crate) fn parse(text: &str) -> Result<Manifest, String> {
    let manifest: Manifest =
        serde_json::from_str(text).map_err(|err| format!("skill.json is not valid: {err}"))?;
    let name = manifest.name.trim();
    if name.is_empty() || name.chars().count() > 256 {
        return Err("skill.json: `name` must be 1 to 256 characters".to_owned());
    }
    let t = &manifest.triggers;
    for (key, list, max) in [
        ("triggers.commands", &t.commands, MAX_LIST),
        ("triggers.promptPatterns", &t.prompt_patterns, MAX_LIST),
        ("triggers.fileTypes", &t.file_types, MAX_LIST),
        (
            "allowedTools",
            manifest.allowed_tools.as_ref().unwrap_or(&Vec::new()),
            MAX_TOOLS,
        ),
    ] {
        if list.len() > max {
            return Err(format!("skill.json: `{key}` has more than {max} entries"));
        }
        if let Some(long) = list.iter().find(|e| e.chars().count() > MAX_ENTRY_CHARS) {
            let shown: String = long.chars().take(40).collect();
            return Err(format!(
                "skill.json: an entry of `{key}` is longer than {MAX_ENTRY_CHARS} characters ({shown}…)"
            ));
        }
    }
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_manifest() {
        let m = parse(
            r#"{"name": "Release", "triggers": {"commands": ["/release"], "promptPatterns": ["cut a release"]}, "allowedTools": ["read", "bash"], "priority": 3}"#,
        )
        .unwrap();
        assert_eq!(m.triggers.commands, ["/release"]);
        assert_eq!(m.allowed_tools.unwrap(), ["read", "bash"]);
        assert!(parse(r#"{"name": "x", "allowed_tools": []}"#).is_err());
        assert!(parse(r#"{"name": ""}"#).is_err());
        let many = format!(r#"{{"name": "x", "allowedTools": {:?}}}"#, vec!["read"; 65]);
        assert!(parse(&many).unwrap_err().contains("more than 64"));
    }
}
