//! Finding skills on disk.
//!
//! Roots, in order (the first skill with an id wins; later ones are diagnostics):
//! the workspace's `.agents/skills`, `.claude/skills`, `.codex/skills`, `.kun/skills`,
//! `skills`, then the user's `$XDG_CONFIG_HOME/kun/skills` (or `~/.config/kun/skills`).
//! Each root holds up to [`MAX_SKILLS_PER_ROOT`] skill folders (name order), each a folder
//! with a `SKILL.md` (or a `skill.json` manifest naming its entry file).
//!
//! The workspace is untrusted input:
//!
//! | hostile shape | what happens |
//! |---|---|
//! | a root or skill folder whose real path leaves the workspace (a symlink to `/etc`) | skipped, diagnostic |
//! | a `SKILL.md` (or entry) whose real path leaves its skill folder | skipped, diagnostic |
//! | a file over [`MAX_SKILL_FILE_BYTES`] (a manifest over [`MAX_MANIFEST_BYTES`]) | skipped unread, diagnostic |
//! | a FIFO, device or directory named `SKILL.md` | skipped unopened, diagnostic |
//! | malformed YAML or JSON | skipped, diagnostic naming the file |
//! | `allowed-tools` in an untrusted workspace | kept for display, pre-approve nothing, diagnostic |
//!
//! Never a failure of the whole catalog: every problem is a [`Diagnostic`] naming the file.

use crate::catalog::{Diagnostic, SkillCatalog};
use crate::front_matter::{self, ListOrText};
use crate::manifest::{self, Manifest};
use crate::names::{ToolRule, kun_tool_name};
use crate::skill::{PreApproval, PromptPattern, Skill, SkillOrigin, SkillSource, Triggers};
use crate::slug::skill_slug;
use kun_ports::WorkspaceStanding;
use regex::RegexBuilder;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The workspace folders searched, in order.
pub const WORKSPACE_SKILL_DIRS: [&str; 5] = [
    ".agents/skills",
    ".claude/skills",
    ".codex/skills",
    ".kun/skills",
    "skills",
];

/// Skill folders read per root (name order); the rest are a diagnostic.
pub const MAX_SKILLS_PER_ROOT: usize = 64;

/// The largest `SKILL.md` (or entry file) read.
pub const MAX_SKILL_FILE_BYTES: u64 = 262_144;

/// The largest `skill.json` read.
pub const MAX_MANIFEST_BYTES: u64 = 65_536;

/// The longest prompt pattern accepted, in characters.
pub const MAX_PATTERN_CHARS: usize = 256;

/// The compiled size a prompt pattern may take (the `regex` crate's limit; matching is
/// linear in the prompt whatever the pattern).
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// Where and how to look.
#[derive(Debug, Clone)]
pub struct DiscoveryOptions {
    /// The workspace root.
    pub workspace: PathBuf,
    /// The user's skills folder, if any.
    pub user_dir: Option<PathBuf>,
    /// Whether the workspace's skills count as the user's own.
    pub standing: WorkspaceStanding,
    /// Skill ids to leave out.
    pub disabled: BTreeSet<String>,
}

impl DiscoveryOptions {
    /// The workspace alone (untrusted, no user folder).
    #[must_use]
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            user_dir: None,
            standing: WorkspaceStanding::Untrusted,
            disabled: BTreeSet::new(),
        }
    }

    /// Also reads the user's skills folder.
    #[must_use]
    pub fn with_user_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.user_dir = Some(dir.into());
        self
    }

    /// Sets the workspace's standing.
    #[must_use]
    pub const fn with_standing(mut self, standing: WorkspaceStanding) -> Self {
        self.standing = standing;
        self
    }

    /// Leaves these ids out.
    #[must_use]
    pub fn with_disabled<S: AsRef<str>>(mut self, ids: impl IntoIterator<Item = S>) -> Self {
        self.disabled = ids
            .into_iter()
            .map(|id| crate::slug::normalize_skill_id(id.as_ref()))
            .collect();
        self
    }

    /// `$XDG_CONFIG_HOME/kun/skills`, else `~/.config/kun/skills`.
    #[must_use]
    pub fn standard_user_dir() -> Option<PathBuf> {
        std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
            .map(|dir| dir.join("kun").join("skills"))
    }
}

/// One root to search.
struct Root {
    dir: PathBuf,
    origin: SkillOrigin,
    /// The real path everything found must stay inside (the workspace's); `None` for the
    /// user's own folder.
    confine: Option<PathBuf>,
}

/// Searches every root; see the module docs.
#[must_use]
pub fn discover(options: &DiscoveryOptions) -> SkillCatalog {
    let mut found = Found::default();
    let workspace_real = std::fs::canonicalize(&options.workspace).ok();
    let mut roots: Vec<Root> = WORKSPACE_SKILL_DIRS
        .iter()
        .map(|rel| Root {
            dir: options.workspace.join(rel),
            origin: SkillOrigin::Workspace,
            confine: Some(
                workspace_real
                    .clone()
                    .unwrap_or_else(|| options.workspace.clone()),
            ),
        })
        .collect();
    if let Some(dir) = &options.user_dir {
        roots.push(Root {
            dir: dir.clone(),
            origin: SkillOrigin::User,
            confine: None,
        });
    }
    for root in &roots {
        found.searched.push(root.dir.clone());
        search_root(root, options, &mut found);
    }
    SkillCatalog::new(found.skills, found.diagnostics, found.searched)
}

#[derive(Default)]
struct Found {
    skills: Vec<Arc<Skill>>,
    diagnostics: Vec<Diagnostic>,
    searched: Vec<PathBuf>,
    ids: BTreeSet<String>,
}

impl Found {
    fn note(&mut self, file: &Path, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic {
            file: file.to_path_buf(),
            message: message.into(),
        });
    }
}

/// Whether `real` lies inside `within` (both real paths).
fn inside(real: &Path, within: &Path) -> bool {
    real.starts_with(within)
}

fn search_root(root: &Root, options: &DiscoveryOptions, found: &mut Found) {
    let Ok(real) = std::fs::canonicalize(&root.dir) else {
        return; // no such folder: nothing to find
    };
    if let Some(confine) = &root.confine
        && !inside(&real, confine)
    {
        found.note(
            &root.dir,
            format!(
                "skipped: this skills folder resolves to {} outside the workspace",
                real.display()
            ),
        );
        return;
    }
    if !real.is_dir() {
        return;
    }
    let mut folders: Vec<PathBuf> = Vec::new();
    if is_package(&root.dir) {
        folders.push(root.dir.clone());
    }
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(&root.dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect(),
        Err(err) => {
            found.note(&root.dir, format!("cannot list this skills folder: {err}"));
            return;
        }
    };
    entries.sort();
    if entries.len() > MAX_SKILLS_PER_ROOT {
        found.note(
            &root.dir,
            format!(
                "holds {} folders; only the first {MAX_SKILLS_PER_ROOT} (name order) are read",
                entries.len()
            ),
        );
        entries.truncate(MAX_SKILLS_PER_ROOT);
    }
    folders.extend(entries);
    for folder in folders {
        load_folder(&folder, root, options, found);
    }
}

fn is_package(dir: &Path) -> bool {
    dir.join("SKILL.md").exists() || dir.join("skill.json").exists()
}

fn load_folder(folder: &Path, root: &Root, options: &DiscoveryOptions, found: &mut Found) {
    let Ok(real) = std::fs::canonicalize(folder) else {
        return;
    };
    if let Some(confine) = &root.confine
        && !inside(&real, confine)
    {
        found.note(
            folder,
            format!(
                "skipped: this skill folder resolves to {} outside the workspace",
                real.display()
            ),
        );
        return;
    }
    if !is_package(folder) {
        return; // a plain folder (scripts, assets of another layout): not a skill
    }
    let origin = root.origin;
    let standing = options.standing;
    let loaded = load_package(folder, &real, origin, standing);
    let (skill, warnings) = match loaded {
        Ok(loaded) => loaded,
        Err((file, message)) => {
            found.note(&file, format!("skipped: {message}"));
            return;
        }
    };
    for (file, message) in warnings {
        found.note(&file, message);
    }
    if options.disabled.contains(&skill.id) {
        return;
    }
    if !found.ids.insert(skill.id.clone()) {
        found.note(
            &skill.source.path,
            format!(
                "skipped: duplicate skill id `{}` (an earlier folder already defines it)",
                skill.id
            ),
        );
        return;
    }
    found.skills.push(Arc::new(skill));
}

type Warnings = Vec<(PathBuf, String)>;

/// Reads one skill folder.
fn load_package(
    folder: &Path,
    real_folder: &Path,
    origin: SkillOrigin,
    standing: WorkspaceStanding,
) -> Result<(Skill, Warnings), (PathBuf, String)> {
    let manifest_path = folder.join("skill.json");
    let manifest: Option<Manifest> = if manifest_path.exists() {
        let text = read_inside(&manifest_path, real_folder, MAX_MANIFEST_BYTES)
            .map_err(|m| (manifest_path.clone(), m))?;
        Some(manifest::parse(&text).map_err(|m| (manifest_path.clone(), m))?)
    } else {
        None
    };
    let entry = manifest
        .as_ref()
        .and_then(|m| m.entry.clone())
        .unwrap_or_else(|| "SKILL.md".to_owned());
    if Path::new(&entry).is_absolute() || entry.split('/').any(|part| part == "..") {
        return Err((
            manifest_path,
            format!("the entry `{entry}` must be a relative path inside the skill folder"),
        ));
    }
    let entry_path = folder.join(&entry);
    let text = read_inside(&entry_path, real_folder, MAX_SKILL_FILE_BYTES)
        .map_err(|m| (entry_path.clone(), m))?;
    let md = front_matter::parse(&text).map_err(|m| (entry_path.clone(), m))?;
    let folder_name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut warnings = Warnings::new();
    let mut warn = |message: String| warnings.push((entry_path.clone(), message));
    let front = &md.front;
    let (id, name) = match &manifest {
        Some(m) => (
            skill_slug(m.id.as_deref().unwrap_or(&m.name)),
            m.name.trim().to_owned(),
        ),
        None => (
            skill_slug(&folder_name),
            front
                .name
                .clone()
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| folder_name.clone()),
        ),
    };
    let description = manifest
        .as_ref()
        .and_then(|m| m.description.clone())
        .or_else(|| front.description.clone())
        .map(|d| d.trim().to_owned())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| front_matter::first_paragraph(&md.body));
    let allowed_tools = tool_rules(front.allowed_tools.as_ref(), "allowed-tools", &mut warn);
    let pre_approval = match (origin, standing) {
        (SkillOrigin::Workspace, WorkspaceStanding::Untrusted) => {
            if !allowed_tools.is_empty() {
                warn(format!(
                    "allowed-tools ({}) pre-approve nothing: the workspace is not trusted \
                     (trust it with `kun-tools trust DIR` to let its skills pre-approve tools)",
                    allowed_tools
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            PreApproval::IgnoredUntrusted
        }
        _ => PreApproval::Granted,
    };
    let restrict_source = manifest
        .as_ref()
        .and_then(|m| m.allowed_tools.clone())
        .map(ListOrText::List)
        .or_else(|| front.restrict_tools.clone());
    let restrict_tools = restrict_source
        .map(|list| tool_names(&list, "restrict-tools", &mut warn))
        .map(|mut names| {
            names.sort();
            names.dedup();
            names
        });
    let triggers = triggers(manifest.as_ref(), front, &mut warn);
    let priority = manifest
        .as_ref()
        .map_or(front.priority.unwrap_or(0), |m| m.priority);
    let skill = Skill {
        id,
        name,
        description,
        source: SkillSource {
            origin,
            path: entry_path.clone(),
        },
        body: md.body,
        triggers,
        priority,
        allowed_tools,
        pre_approval,
        restrict_tools,
    };
    Ok((skill, warnings))
}

fn tool_rules(
    list: Option<&ListOrText>,
    key: &str,
    warn: &mut impl FnMut(String),
) -> Vec<ToolRule> {
    let Some(list) = list else {
        return Vec::new();
    };
    let mut rules = Vec::new();
    for entry in list.entries() {
        match ToolRule::parse(&entry) {
            Some(rule) => rules.push(rule),
            None => warn(format!("{key}: `{entry}` is not a kun tool; ignored")),
        }
    }
    rules.sort();
    rules.dedup();
    rules
}

fn tool_names(list: &ListOrText, key: &str, warn: &mut impl FnMut(String)) -> Vec<String> {
    let mut names = Vec::new();
    for entry in list.entries() {
        // A rule's specifier cannot narrow finer than a tool: `Bash(git *)` restricts to bash.
        let bare = entry.split('(').next().unwrap_or(&entry);
        match kun_tool_name(bare) {
            Some(name) => names.push(name),
            None => warn(format!("{key}: `{entry}` is not a kun tool; ignored")),
        }
    }
    names
}

fn triggers(
    manifest: Option<&Manifest>,
    front: &front_matter::FrontMatter,
    warn: &mut impl FnMut(String),
) -> Triggers {
    let (commands, patterns, file_types) = match manifest {
        Some(m) => (
            m.triggers.commands.clone(),
            // Upstream's prompt patterns are literal text.
            m.triggers
                .prompt_patterns
                .iter()
                .map(|p| regex::escape(p))
                .collect(),
            m.triggers.file_types.clone(),
        ),
        None => {
            let t = front.triggers.clone().unwrap_or_default();
            let strings = |l: Option<ListOrText>| l.map(|l| l.strings()).unwrap_or_default();
            (
                strings(t.commands),
                strings(t.patterns),
                strings(t.file_types),
            )
        }
    };
    let mut compiled = Vec::new();
    for source in patterns.into_iter().take(16) {
        if source.chars().count() > MAX_PATTERN_CHARS {
            warn(format!(
                "triggers.patterns: a pattern longer than {MAX_PATTERN_CHARS} characters; ignored"
            ));
            continue;
        }
        match RegexBuilder::new(&source)
            .case_insensitive(true)
            .size_limit(PATTERN_SIZE_LIMIT)
            .dfa_size_limit(PATTERN_SIZE_LIMIT)
            .build()
        {
            Ok(regex) => compiled.push(PromptPattern { source, regex }),
            Err(err) => warn(format!(
                "triggers.patterns: `{source}` is not a valid regex ({err}); ignored"
            )),
        }
    }
    Triggers {
        commands: commands
            .into_iter()
            .map(|c| c.trim().to_lowercase())
            .filter(|c| !c.is_empty())
            .take(16)
            .collect(),
        patterns: compiled,
        file_types: file_types
            .into_iter()
            .map(|t| {
                let t = t.trim().to_lowercase();
                if t.starts_with('.') {
                    t
                } else {
                    format!(".{t}")
                }
            })
            .filter(|t| t.len() > 1)
            .take(16)
            .collect(),
    }
}

/// Reads a skill file: its real path must stay inside `real_folder`, it must be a regular
/// file of at most `max` bytes, and UTF-8. Nothing larger than `max` is ever read.
fn read_inside(path: &Path, real_folder: &Path, max: u64) -> Result<String, String> {
    let real = std::fs::canonicalize(path).map_err(|err| format!("cannot open: {err}"))?;
    if !inside(&real, real_folder) {
        return Err(format!(
            "it resolves to {} outside its skill folder",
            real.display()
        ));
    }
    let meta = std::fs::metadata(&real).map_err(|err| format!("cannot open: {err}"))?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    if meta.len() > max {
        return Err(format!("{} bytes exceeds the {max} byte limit", meta.len()));
    }
    let mut bytes = Vec::new();
    File::open(&real)
        .and_then(|file| file.take(max + 1).read_to_end(&mut bytes))
        .map_err(|err| format!("cannot read: {err}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("grew past the {max} byte limit while being read"));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())
}
