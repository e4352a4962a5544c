//! The built-in design-quality hook (PostToolUse, opt-in).
//!
//! After a successful call of a file editor (a tool whose spec declares
//! [`ToolRole::FileEditor`]: `write`, `edit`) on a front-end file (`.html`, `.htm`, `.css`, `.jsx`,
//! `.tsx`, `.vue`, `.svelte`), it reads the file (the `path` argument, resolved against the
//! workspace root) and looks for concrete problems:
//!
//! | rule | finds | in |
//! |---|---|---|
//! | `inline_style` | `style="…"`, `style={{…}}`, `:style="…"` attributes | markup files |
//! | `important` | `!important` | all |
//! | `fixed_width` | `width`/`min-width` of [`FIXED_WIDTH_MIN_PX`] px or more | all |
//! | `img_missing_alt` | `<img>` without an `alt` attribute | markup files |
//! | `focus_outline_removed` | `outline: none` / `outline: 0` | all |
//!
//! Findings (`{rule, line, message}`, sorted by line, at most [`MAX_FINDINGS`]) are appended to
//! an object output as `design_quality_review`; for any other output they become additional
//! context. No finding, an unreadable or oversized file, an error result: nothing changes.
//! It never blocks and never fails.

use kun_ports::{ContentBlock, HookToolCall, ToolResult, ToolRole};
use regex::Regex;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Widths at or above this many pixels count as fixed layout widths.
pub const FIXED_WIDTH_MIN_PX: f64 = 400.0;
/// At most this many findings are reported per file.
pub const MAX_FINDINGS: usize = 50;
/// Files larger than this are not reviewed.
const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// A kind of design problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DesignRule {
    /// A style attribute on an element.
    InlineStyle,
    /// `!important`.
    Important,
    /// A large fixed pixel width.
    FixedWidth,
    /// An image without alternative text.
    ImgMissingAlt,
    /// The focus outline removed.
    FocusOutlineRemoved,
}

/// One problem found in a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesignFinding {
    /// What kind of problem.
    pub rule: DesignRule,
    /// The 1-based line.
    pub line: usize,
    /// What is wrong and what to do instead.
    pub message: String,
}

/// Which front-end language a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    /// Markup (html, jsx, tsx, vue, svelte): every rule applies.
    Markup,
    /// A stylesheet: no attribute rules.
    Stylesheet,
}

impl FileKind {
    fn of(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "html" | "htm" | "jsx" | "tsx" | "vue" | "svelte" => Some(Self::Markup),
            "css" => Some(Self::Stylesheet),
            _ => None,
        }
    }
}

/// The built-in design review. The rules are compiled the first time a front-end file is
/// reviewed, once per process: most sessions never write one, and compiling six
/// case-insensitive Unicode patterns costs a start-up hundreds of kilobytes of memory.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DesignReview;

/// The compiled rules.
#[derive(Debug)]
struct Rules {
    inline_style: Regex,
    important: Regex,
    fixed_width: Regex,
    outline_removed: Regex,
    img_tag: Regex,
    alt_attribute: Regex,
}

impl Rules {
    fn compile() -> Result<Self, regex::Error> {
        Ok(Self {
            inline_style: Regex::new(r#"(?i)(?:^|[\s:])style\s*=\s*["'{]"#)?,
            important: Regex::new(r"(?i)!\s*important\b")?,
            fixed_width: Regex::new(
                r#"(?i)(?:^|[^\w-])(?:min-width|minWidth|width)\s*:\s*["']?(\d+(?:\.\d+)?)px"#,
            )?,
            outline_removed: Regex::new(r#"(?i)(?:^|[^\w-])outline\s*:\s*["']?(?:none|0)\b"#)?,
            img_tag: Regex::new(r"(?i)<img\b[^>]*>")?,
            alt_attribute: Regex::new(r"(?i)(?:^|\s)(?::|v-bind:)?alt\s*=")?,
        })
    }

    /// The rules, compiled on first use. `None` only if a pattern above were invalid, which
    /// `the_rules_compile` rules out; the review then does nothing, as it promises.
    fn get() -> Option<&'static Self> {
        static RULES: std::sync::LazyLock<Option<Rules>> =
            std::sync::LazyLock::new(|| Rules::compile().ok());
        RULES.as_ref()
    }

    /// The findings for a file's text, sorted by line then rule, at most [`MAX_FINDINGS`].
    fn review(&self, kind: FileKind, text: &str) -> Vec<DesignFinding> {
        let mut findings = Vec::new();
        let markup = kind == FileKind::Markup;
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            if markup && self.inline_style.is_match(line) {
                findings.push(finding(
                    DesignRule::InlineStyle,
                    number,
                    INLINE_STYLE.into(),
                ));
            }
            if self.important.is_match(line) {
                findings.push(finding(DesignRule::Important, number, IMPORTANT.into()));
            }
            let widest = self
                .fixed_width
                .captures_iter(line)
                .filter_map(|c| c.get(1)?.as_str().parse::<f64>().ok())
                .fold(0.0_f64, f64::max);
            if widest >= FIXED_WIDTH_MIN_PX {
                findings.push(finding(
                    DesignRule::FixedWidth,
                    number,
                    format!(
                        "fixed width of {widest}px; use max-width, a percentage or flex/grid \
                         sizing so the layout adapts to narrow screens"
                    ),
                ));
            }
            if self.outline_removed.is_match(line) {
                findings.push(finding(
                    DesignRule::FocusOutlineRemoved,
                    number,
                    OUTLINE.into(),
                ));
            }
        }
        if markup {
            for tag in self.img_tag.find_iter(text) {
                if !self.alt_attribute.is_match(tag.as_str()) {
                    let line = text[..tag.start()].matches('\n').count() + 1;
                    findings.push(finding(DesignRule::ImgMissingAlt, line, IMG_ALT.into()));
                }
            }
        }
        findings.sort_by_key(|f| (f.line, f.rule));
        findings.truncate(MAX_FINDINGS);
        findings
    }
}

impl DesignReview {
    /// Reviews the file a file editor's call touched ([`ToolRole::FileEditor`], the role the
    /// tool declares, never its name) and annotates the result. Does nothing for other tools,
    /// other files, error results or unreadable files.
    pub(crate) async fn annotate(
        &self,
        call: &HookToolCall,
        result: &mut ToolResult,
        context: &mut Vec<String>,
    ) {
        if result.is_error || call.role != ToolRole::FileEditor {
            return;
        }
        let Some(path) = target_path(call) else {
            return;
        };
        let Some(kind) = FileKind::of(&path) else {
            return;
        };
        let Some(text) = read_small_file(&path).await else {
            return;
        };
        let Some(rules) = Rules::get() else {
            return;
        };
        let findings = rules.review(kind, &text);
        if findings.is_empty() {
            return;
        }
        match &mut result.output {
            Value::Object(map) => {
                map.insert(
                    "design_quality_review".into(),
                    serde_json::to_value(&findings).unwrap_or(Value::Null),
                );
                // The model reads the rendering, not the output: say it there too.
                if !result.content.is_empty() {
                    result
                        .content
                        .push(ContentBlock::text(render(&path, &findings)));
                }
            }
            _ => context.push(render(&path, &findings)),
        }
    }
}

const INLINE_STYLE: &str = "inline style attribute; move these rules into a stylesheet or a \
                            class so they can be reused, themed and overridden";
const IMPORTANT: &str = "`!important` defeats the cascade; raise the selector's specificity or \
                         restructure the rules instead";
const OUTLINE: &str = "focus outline removed; keyboard users lose track of focus, so give \
                       `:focus-visible` a clearly visible style instead";
const IMG_ALT: &str = "<img> without alt text; describe the image in `alt`, or use `alt=\"\"` \
                       if it is purely decorative";

fn finding(rule: DesignRule, line: usize, message: String) -> DesignFinding {
    DesignFinding {
        rule,
        line,
        message,
    }
}

/// The file a call wrote: `path` (or Claude Code's `file_path`), relative to the workspace root.
fn target_path(call: &HookToolCall) -> Option<PathBuf> {
    let raw = call
        .arguments
        .get("path")
        .or_else(|| call.arguments.get("file_path"))?
        .as_str()?;
    let path = Path::new(raw);
    Some(if path.is_absolute() {
        path.to_path_buf()
    } else {
        call.turn.cwd.join(path)
    })
}

async fn read_small_file(path: &Path) -> Option<String> {
    let meta = tokio::fs::metadata(path).await.ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = tokio::fs::read(path).await.ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn render(path: &Path, findings: &[DesignFinding]) -> String {
    let mut text = format!("design quality review of {}:", path.display());
    for f in findings {
        let rule = serde_json::to_value(f.rule).unwrap_or(Value::Null);
        let rule = rule.as_str().unwrap_or_default();
        text.push_str(&format!("\n- line {} [{rule}]: {}", f.line, f.message));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(kind: FileKind, text: &str) -> Vec<(DesignRule, usize)> {
        Rules::compile()
            .unwrap()
            .review(kind, text)
            .into_iter()
            .map(|f| (f.rule, f.line))
            .collect()
    }

    #[test]
    fn the_rules_compile() {
        assert!(Rules::compile().is_ok());
        assert!(Rules::get().is_some());
    }

    #[test]
    fn widths_below_the_threshold_and_max_width_pass() {
        let css = ".a { width: 320px; max-width: 1200px; }\n.b { min-width: 480px }\n";
        assert_eq!(
            rules(FileKind::Stylesheet, css),
            [(DesignRule::FixedWidth, 2)]
        );
    }

    #[test]
    fn jsx_style_objects_and_multiline_img_tags() {
        let tsx = "<div style={{ minWidth: '640px' }}>\n<img\n  src={logo}\n/>\n<img alt=\"\" src=\"x\"/>\n";
        assert_eq!(
            rules(FileKind::Markup, tsx),
            [
                (DesignRule::InlineStyle, 1),
                (DesignRule::FixedWidth, 1),
                (DesignRule::ImgMissingAlt, 2)
            ]
        );
    }

    #[test]
    fn stylesheets_have_no_attribute_rules() {
        let css = "a:focus { outline: none !important; }\n";
        assert_eq!(
            rules(FileKind::Stylesheet, css),
            [
                (DesignRule::Important, 1),
                (DesignRule::FocusOutlineRemoved, 1)
            ]
        );
    }

    #[test]
    fn data_alt_is_not_alt_and_style_tags_are_not_inline() {
        let html = "<style>p{}</style>\n<img data-alt=\"x\" src=\"a.png\">\n";
        assert_eq!(
            rules(FileKind::Markup, html),
            [(DesignRule::ImgMissingAlt, 2)]
        );
    }
}
