//! `SKILL.md`: YAML front matter between `---` lines, then the instruction body.
//!
//! Keys read (everything else is kept by the file and ignored here):
//!
//! | key | meaning |
//! |---|---|
//! | `name`, `description` | Agent Skills; `description` falls back to the first paragraph |
//! | `allowed-tools` | Claude Code: pre-approved while active; a YAML list or a comma/space-separated string |
//! | `restrict-tools` | ours: narrows the turn's allow-list while injected |
//! | `triggers: {commands, patterns, file_types}` | ours: automatic activation (`patterns` are regexes) |
//! | `priority` | ours: added to activation scores |

use serde::Deserialize;

/// A list written either as a YAML list or as one separated string.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum ListOrText {
    /// `[a, b]` or a block list.
    List(Vec<String>),
    /// `a, b c`.
    Text(String),
}

impl ListOrText {
    /// The entries (a string is split on commas and spaces, keeping `Bash(git add *)` whole).
    pub(crate) fn entries(&self) -> Vec<String> {
        match self {
            Self::List(items) => items
                .iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
            Self::Text(text) => crate::names::split_tool_list(text),
        }
    }

    /// The entries of a list of plain strings (commas only separate a string form).
    pub(crate) fn strings(&self) -> Vec<String> {
        match self {
            Self::List(items) => items.clone(),
            Self::Text(text) => text
                .split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        }
    }
}

/// `triggers:` in front matter.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct TriggersYaml {
    pub(crate) commands: Option<ListOrText>,
    pub(crate) patterns: Option<ListOrText>,
    #[serde(alias = "file-types", alias = "fileTypes")]
    pub(crate) file_types: Option<ListOrText>,
}

/// The keys of the front matter we read.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct FrontMatter {
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    #[serde(rename = "allowed-tools", alias = "allowed_tools")]
    pub(crate) allowed_tools: Option<ListOrText>,
    #[serde(rename = "restrict-tools", alias = "restrict_tools")]
    pub(crate) restrict_tools: Option<ListOrText>,
    pub(crate) triggers: Option<TriggersYaml>,
    pub(crate) priority: Option<i64>,
}

/// A `SKILL.md` split into its front matter and body.
#[derive(Debug, Clone, Default)]
pub(crate) struct SkillMd {
    pub(crate) front: FrontMatter,
    pub(crate) body: String,
}

/// Splits `---\n<yaml>\n---\n<body>`; a file without front matter is all body.
pub(crate) fn split(text: &str) -> (Option<&str>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return (Some(yaml), body);
        }
        offset += line.len();
    }
    (None, text)
}

/// Parses a `SKILL.md`.
///
/// # Errors
/// Front matter that is not YAML, or not a mapping of the expected types (the message says
/// which).
pub(crate) fn parse(text: &str) -> Result<SkillMd, String> {
    let (yaml, body) = split(text);
    let front = match yaml {
        Some(yaml) if !yaml.trim().is_empty() => yaml_serde::from_str::<FrontMatter>(yaml)
            .map_err(|err| format!("the YAML front matter is not valid: {err}"))?,
        _ => FrontMatter::default(),
    };
    Ok(SkillMd {
        front,
        body: body.to_owned(),
    })
}

/// The first paragraph of markdown that is not a heading, as one line.
pub(crate) fn first_paragraph(body: &str) -> String {
    let mut lines = Vec::new();
    for line in body.lines() {
        let line = line.trim();
        if line.is_empty() {
            if lines.is_empty() {
                continue;
            }
            break;
        }
        if line.starts_with('#') {
            if lines.is_empty() {
                continue;
            }
            break;
        }
        lines.push(line);
    }
    lines.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_and_body() {
        let md = parse(
            "---\nname: pdf\ndescription: Fill PDF forms\nallowed-tools: Read, Bash(python3 *)\nlicense: MIT\nmetadata:\n  author: x\n---\n# PDF\nDo it.\n",
        )
        .unwrap();
        assert_eq!(md.front.name.as_deref(), Some("pdf"));
        assert_eq!(
            md.front.allowed_tools.unwrap().entries(),
            ["Read", "Bash(python3 *)"]
        );
        assert_eq!(md.body, "# PDF\nDo it.\n");
    }

    #[test]
    fn lists_and_triggers() {
        let md = parse(
            "---\nallowed-tools:\n  - Read\n  - Grep\ntriggers:\n  commands: [/review]\n  patterns:\n    - 'review (this|the) (pr|diff)'\n  file_types: [.rs, ts]\npriority: 5\n---\nbody",
        )
        .unwrap();
        assert_eq!(md.front.allowed_tools.unwrap().entries(), ["Read", "Grep"]);
        let triggers = md.front.triggers.unwrap();
        assert_eq!(triggers.commands.unwrap().strings(), ["/review"]);
        assert_eq!(triggers.file_types.unwrap().strings(), [".rs", "ts"]);
        assert_eq!(md.front.priority, Some(5));
    }

    #[test]
    fn no_front_matter_is_all_body() {
        let md = parse("# Title\n\nFirst paragraph\ncontinues.\n\nSecond.").unwrap();
        assert!(md.front.name.is_none());
        assert_eq!(first_paragraph(&md.body), "First paragraph continues.");
    }

    #[test]
    fn bad_yaml_is_an_error() {
        assert!(parse("---\nname: [unclosed\n---\nbody").is_err());
        assert!(parse("---\npriority: high\n---\n").is_err());
    }
}
