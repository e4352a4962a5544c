//! Workspace agent files in Claude Code's sub-agent format: `.kun/agents/*.md` and
//! `.claude/agents/**/*.md`.
//!
//! ```text
//! ---
//! name: test-runner            # required
//! description: Runs the tests  # required
//! tools: Read, Grep, Bash      # comma list; absent = inherit
//! disallowedTools: Write       # never these; `mcp__<server>` blocks a server
//! model: inherit               # absent or inherit = the configured model
//! ---
//! The system prompt.
//! ```
//!
//! The workspace is untrusted input; every problem is a [`Diagnostic`] naming the file:
//!
//! | hostile shape | what happens |
//! |---|---|
//! | a file or folder whose real path leaves the workspace | skipped |
//! | a file over [`MAX_AGENT_FILE_BYTES`], a FIFO or device | skipped unread |
//! | malformed YAML, no `name`, no `description` | skipped |
//! | more than [`MAX_AGENT_FILES`] files | the rest skipped |
//! | a tool name that is not a kun tool | that entry ignored |

use crate::profile::{AgentProfile, ProfileOrigin, ToolChoice};
use kun_ports::{ChildModel, kun_tool_name};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The largest agent file read.
pub const MAX_AGENT_FILE_BYTES: u64 = 262_144;

/// Agent files read per workspace.
pub const MAX_AGENT_FILES: usize = 128;

/// How deep `.claude/agents` is searched.
const MAX_DEPTH: usize = 4;

/// The agent folders of a workspace, in order (the first profile of a name wins).
pub const AGENT_DIRS: [&str; 2] = [".kun/agents", ".claude/agents"];

/// A problem with one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file.
    pub file: PathBuf,
    /// What is wrong and what happened.
    pub message: String,
}

/// A list written as a YAML list or one comma-separated string.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum ListOrText {
    List(Vec<String>),
    Text(String),
}

impl ListOrText {
    fn entries(&self) -> Vec<String> {
        let entries: Vec<String> = match self {
            Self::List(items) => items.iter().map(|s| s.trim().to_owned()).collect(),
            Self::Text(text) => text.split(',').map(|s| s.trim().to_owned()).collect(),
        };
        entries.into_iter().filter(|s| !s.is_empty()).collect()
    }
}

#[derive(Debug, Deserialize)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
    tools: Option<ListOrText>,
    #[serde(rename = "disallowedTools", alias = "disallowed-tools")]
    disallowed_tools: Option<ListOrText>,
    model: Option<String>,
}

/// Reads every agent file of a workspace.
#[must_use]
pub fn workspace_profiles(workspace: &Path) -> (Vec<AgentProfile>, Vec<Diagnostic>) {
    let mut profiles = Vec::new();
    let mut diagnostics = Vec::new();
    let Ok(real_workspace) = std::fs::canonicalize(workspace) else {
        return (profiles, diagnostics);
    };
    let mut files = Vec::new();
    for (i, dir) in AGENT_DIRS.iter().enumerate() {
        let depth = if i == 0 { 1 } else { MAX_DEPTH };
        collect(
            &workspace.join(dir),
            &real_workspace,
            depth,
            &mut files,
            &mut diagnostics,
        );
    }
    if files.len() > MAX_AGENT_FILES {
        diagnostics.push(Diagnostic {
            file: workspace.to_path_buf(),
            message: format!(
                "{} agent files; only the first {MAX_AGENT_FILES} are read",
                files.len()
            ),
        });
        files.truncate(MAX_AGENT_FILES);
    }
    for file in files {
        match read_profile(&file, &real_workspace) {
            Ok((profile, warnings)) => {
                diagnostics.extend(warnings);
                profiles.push(profile);
            }
            Err(message) => diagnostics.push(Diagnostic {
                file,
                message: format!("skipped: {message}"),
            }),
        }
    }
    (profiles, diagnostics)
}

fn collect(
    dir: &Path,
    real_workspace: &Path,
    depth: usize,
    files: &mut Vec<PathBuf>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Ok(real) = std::fs::canonicalize(dir) else {
        return;
    };
    if !real.starts_with(real_workspace) {
        diagnostics.push(Diagnostic {
            file: dir.to_path_buf(),
            message: format!(
                "skipped: resolves to {} outside the workspace",
                real.display()
            ),
        });
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if files.len() > MAX_AGENT_FILES {
            return;
        }
        if path.is_dir() {
            if depth > 1 {
                collect(&path, real_workspace, depth - 1, files, diagnostics);
            }
        } else if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
}

type Parsed = (AgentProfile, Vec<Diagnostic>);

fn read_profile(path: &Path, real_workspace: &Path) -> Result<Parsed, String> {
    let text = read_inside(path, real_workspace)?;
    parse(&text, path)
}

/// Parses one agent file.
///
/// # Errors
/// Malformed YAML, or no `name` / `description`.
pub fn parse(text: &str, path: &Path) -> Result<(AgentProfile, Vec<Diagnostic>), String> {
    let (yaml, body) =
        split(text).ok_or("no front matter (`---` lines with name and description)")?;
    let front: FrontMatter = yaml_serde::from_str(yaml)
        .map_err(|err| format!("the YAML front matter is not valid: {err}"))?;
    let name = front
        .name
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .ok_or("no `name` in the front matter")?;
    let description = front
        .description
        .map(|d| d.trim().to_owned())
        .filter(|d| !d.is_empty())
        .ok_or("no `description` in the front matter")?;
    let mut warnings = Vec::new();
    let mut note = |message: String| {
        warnings.push(Diagnostic {
            file: path.to_path_buf(),
            message,
        });
    };
    let tools = front.tools.map_or(ToolChoice::Inherit, |list| {
        ToolChoice::explicit(tool_names(&list, "tools", &mut note))
    });
    let mut blocked_tools = Vec::new();
    let mut blocked_mcp_servers = Vec::new();
    for entry in front
        .disallowed_tools
        .map(|l| l.entries())
        .unwrap_or_default()
    {
        if let Some(server) = entry.strip_prefix("mcp__") {
            let server = server.split("__").next().unwrap_or(server);
            blocked_mcp_servers.push(server.trim_end_matches('*').to_owned());
        } else if let Some(name) = kun_tool_name(&entry) {
            blocked_tools.push(name);
        } else {
            note(format!(
                "disallowedTools: `{entry}` is not a kun tool; ignored"
            ));
        }
    }
    let mut profile = AgentProfile::new(
        name,
        description,
        body.trim().to_owned(),
        tools,
        ProfileOrigin::Workspace(path.to_path_buf()),
    );
    profile.model = ChildModel::from_setting(front.model.as_deref());
    profile.blocked_tools = blocked_tools;
    profile.blocked_mcp_servers = blocked_mcp_servers;
    Ok((profile, warnings))
}

fn tool_names(list: &ListOrText, key: &str, note: &mut impl FnMut(String)) -> Vec<String> {
    let mut names = Vec::new();
    for entry in list.entries() {
        let bare = entry.split('(').next().unwrap_or(&entry);
        match kun_tool_name(bare) {
            Some(name) => names.push(name),
            None => note(format!("{key}: `{entry}` is not a kun tool; ignored")),
        }
    }
    names
}

/// `---\n<yaml>\n---\n<body>`.
fn split(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// Reads a regular file of at most [`MAX_AGENT_FILE_BYTES`] whose real path is inside the
/// workspace; nothing larger is ever read.
fn read_inside(path: &Path, real_workspace: &Path) -> Result<String, String> {
    let real = std::fs::canonicalize(path).map_err(|err| format!("cannot open: {err}"))?;
    if !real.starts_with(real_workspace) {
        return Err(format!(
            "it resolves to {} outside the workspace",
            real.display()
        ));
    }
    let meta = std::fs::metadata(&real).map_err(|err| format!("cannot open: {err}"))?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    if meta.len() > MAX_AGENT_FILE_BYTES {
        return Err(format!(
            "{} bytes exceeds the {MAX_AGENT_FILE_BYTES} byte limit",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    File::open(&real)
        .and_then(|f| f.take(MAX_AGENT_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|err| format!("cannot read: {err}"))?;
    if bytes.len() as u64 > MAX_AGENT_FILE_BYTES {
        return Err("grew past the byte limit while being read".to_owned());
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_sub_agent() {
        let (p, warnings) = parse(
            "---\nname: test-runner\ndescription: Runs tests and reports failures\ntools: Read, Grep, Bash, TodoWrite\ndisallowedTools: Write, mcp__github\nmodel: sonnet\n---\nYou run the tests.\n",
            Path::new("a.md"),
        )
        .unwrap();
        assert_eq!(p.name, "test-runner");
        assert_eq!(
            p.tools,
            ToolChoice::Explicit(vec!["bash".into(), "grep".into(), "read".into()])
        );
        assert_eq!(p.blocked_tools, ["write"]);
        assert_eq!(p.blocked_mcp_servers, ["github"]);
        assert_eq!(p.model, ChildModel::Named("sonnet".into()));
        assert_eq!(p.system_prompt, "You run the tests.");
        assert!(warnings[0].message.contains("TodoWrite"));
    }

    #[test]
    fn required_keys_and_inherit() {
        assert!(parse("---\nname: x\n---\n", Path::new("a.md")).is_err());
        assert!(parse("---\ndescription: x\n---\n", Path::new("a.md")).is_err());
        assert!(parse("no front matter", Path::new("a.md")).is_err());
        let (p, _) = parse(
            "---\nname: x\ndescription: y\nmodel: inherit\n---\nbody",
            Path::new("a.md"),
        )
        .unwrap();
        assert_eq!(p.tools, ToolChoice::Inherit);
        assert_eq!(p.model, ChildModel::Inherit);
    }
}
