//! HTML → Markdown (with `htmd`, turndown-compatible: headings, links, lists, tables, fenced
//! code blocks) and HTML → plain text, both on the page's main content.
//!
//! Main content: the first `<main>` (or `role="main"`), else the only `<article>`, else
//! `<body>`. Inside it, what is never content is dropped: `script`, `style`, `noscript`,
//! `template`, `iframe`, `object`, `embed`, `svg`, `canvas`, `nav`, `aside`, `footer`,
//! `form`, `button`, `select`, `input`, `textarea`. The `<title>` is returned separately.

use htmd::{HtmlToMarkdown, Node};
use markup5ever_rcdom::NodeData;
use std::rc::Rc;

/// Tags whose whole subtree is dropped.
const DROPPED: &[&str] = &[
    "script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas", "nav",
    "aside", "footer", "form", "button", "select", "input", "textarea", "head",
];

/// Tags that end a line of plain text.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "blockquote",
    "br",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tr",
    "ul",
];

/// A converted page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The `<title>`, trimmed, when there is one.
    pub title: Option<String>,
    /// Markdown or plain text of the main content.
    pub content: String,
}

fn tag(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

fn attr(node: &Node, wanted: &str) -> Option<String> {
    match &node.data {
        NodeData::Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|a| &*a.name.local == wanted)
            .map(|a| a.value.to_string()),
        _ => None,
    }
}

/// Every element below `node` (depth first) for which `pick` holds.
fn find_all(node: &Rc<Node>, pick: &dyn Fn(&Node) -> bool, out: &mut Vec<Rc<Node>>) {
    for child in node.children.borrow().iter() {
        if pick(child) {
            out.push(Rc::clone(child));
        }
        find_all(child, pick, out);
    }
}

fn first(node: &Rc<Node>, pick: &dyn Fn(&Node) -> bool) -> Option<Rc<Node>> {
    let mut found = Vec::new();
    find_all(node, pick, &mut found);
    found.into_iter().next()
}

/// All text below `node`, whitespace collapsed.
fn text_of(node: &Node) -> String {
    fn walk(node: &Node, out: &mut String) {
        if let NodeData::Text { contents } = &node.data {
            out.push_str(&contents.borrow());
        }
        for child in node.children.borrow().iter() {
            walk(child, out);
        }
    }
    let mut out = String::new();
    walk(node, &mut out);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The title and the main-content node of a parsed document.
fn main_content(document: &Rc<Node>) -> (Option<String>, Rc<Node>) {
    let title = first(document, &|n| tag(n) == Some("title"))
        .map(|t| text_of(&t))
        .filter(|t| !t.is_empty());
    let main = first(document, &|n| {
        tag(n) == Some("main") || attr(n, "role").as_deref() == Some("main")
    });
    let root = main
        .or_else(|| {
            let mut articles = Vec::new();
            find_all(document, &|n| tag(n) == Some("article"), &mut articles);
            (articles.len() == 1).then(|| articles.remove(0))
        })
        .or_else(|| first(document, &|n| tag(n) == Some("body")))
        .unwrap_or_else(|| Rc::clone(document));
    (title, root)
}

fn converter() -> HtmlToMarkdown {
    HtmlToMarkdown::builder()
        .skip_tags(DROPPED.to_vec())
        .build()
}

/// The page's main content as Markdown.
///
/// ```
/// let page = kun_web::html::to_markdown(
///     "<html><head><title>Guide</title></head><body><nav>Home</nav><main>\
///      <h1>Install</h1><p>See <a href=\"https://example.com/dl\">downloads</a>.</p>\
///      <pre><code class=\"language-sh\">cargo install kun</code></pre></main></body></html>",
/// );
/// assert_eq!(page.title.as_deref(), Some("Guide"));
/// assert!(page.content.starts_with("# Install"));
/// assert!(page.content.contains("[downloads](https://example.com/dl)"));
/// assert!(page.content.contains("```sh\ncargo install kun\n```"));
/// assert!(!page.content.contains("Home"));
/// ```
#[must_use]
pub fn to_markdown(html: &str) -> Page {
    let converter = converter();
    let Ok(document) = converter.html_to_tree(html) else {
        return Page {
            title: None,
            content: html.to_owned(),
        };
    };
    let (title, root) = main_content(&document);
    Page {
        title,
        content: converter.tree_to_markdown(&root).trim().to_owned(),
    }
}

/// The page's main content as plain text: one line per block, whitespace collapsed (kept in
/// `<pre>`), no markup.
#[must_use]
pub fn to_text(html: &str) -> Page {
    let Ok(document) = converter().html_to_tree(html) else {
        return Page {
            title: None,
            content: html.to_owned(),
        };
    };
    let (title, root) = main_content(&document);
    let mut lines = TextLines::default();
    lines.walk(&root, false);
    Page {
        title,
        content: lines.finish(),
    }
}

/// Plain text, built line by line.
#[derive(Default)]
struct TextLines {
    done: Vec<String>,
    line: String,
}

impl TextLines {
    fn walk(&mut self, node: &Node, in_pre: bool) {
        match &node.data {
            NodeData::Text { contents } => {
                let text = contents.borrow();
                if in_pre {
                    let mut parts = text.split('\n');
                    if let Some(first) = parts.next() {
                        self.line.push_str(first);
                    }
                    for part in parts {
                        self.break_line();
                        self.line.push_str(part);
                    }
                } else {
                    for word in text.split_whitespace() {
                        if !self.line.is_empty() && !self.line.ends_with(' ') {
                            self.line.push(' ');
                        }
                        self.line.push_str(word);
                    }
                    if text.ends_with(char::is_whitespace) && !self.line.is_empty() {
                        self.line.push(' ');
                    }
                }
            }
            NodeData::Element { .. } => {
                let name = tag(node).unwrap_or_default();
                if DROPPED.contains(&name) {
                    return;
                }
                let block = BLOCKS.contains(&name);
                if block {
                    self.break_line();
                }
                let pre = in_pre || name == "pre";
                for child in node.children.borrow().iter() {
                    self.walk(child, pre);
                }
                if block {
                    self.break_line();
                }
            }
            _ => {
                for child in node.children.borrow().iter() {
                    self.walk(child, in_pre);
                }
            }
        }
    }

    fn break_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        let line = line.trim_end();
        if !line.is_empty() {
            self.done.push(line.to_owned());
        }
    }

    fn finish(mut self) -> String {
        self.break_line();
        self.done.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<!doctype html><html><head><title> The  Guide </title><style>p{}</style></head>
<body><header><a href="/">Site</a></header><nav><a href="/a">Menu item</a></nav>
<main>
  <h1>Getting started</h1>
  <p>Read the <a href="https://example.com/docs">full docs</a> first.</p>
  <h2>Install</h2>
  <pre><code class="language-rust">fn main() {
    println!("hi");
}</code></pre>
  <ul><li>one</li><li>two</li></ul>
  <script>alert("x")</script>
</main>
<aside>Related links</aside><footer>© 2026</footer></body></html>"#;

    #[test]
    fn markdown_keeps_headings_links_code_and_drops_chrome() {
        let page = to_markdown(PAGE);
        assert_eq!(page.title.as_deref(), Some("The Guide"));
        let md = &page.content;
        for needle in [
            "# Getting started",
            "## Install",
            "[full docs](https://example.com/docs)",
            "```rust\nfn main() {\n    println!(\"hi\");\n}\n```",
            "*   one",
        ] {
            assert!(md.contains(needle), "missing {needle:?} in:\n{md}");
        }
        for absent in ["Menu item", "Related links", "©", "alert", "Site", "p{}"] {
            assert!(!md.contains(absent), "{absent:?} should be dropped:\n{md}");
        }
    }

    #[test]
    fn text_has_no_markup() {
        let page = to_text(PAGE);
        let text = &page.content;
        assert!(text.starts_with("Getting started\nRead the full docs first.\nInstall\nfn main() {\n    println!(\"hi\");\n}"), "{text}");
        assert!(
            !text.contains('#') && !text.contains("](") && !text.contains("```"),
            "{text}"
        );
        assert!(!text.contains("Menu item"), "{text}");
    }

    #[test]
    fn falls_back_to_the_only_article_then_the_body() {
        let article = "<body><div>chrome</div><article><h1>Post</h1></article></body>";
        assert_eq!(to_markdown(article).content, "# Post");
        let two = "<body><article><h2>A</h2></article><article><h2>B</h2></article></body>";
        let md = to_markdown(two).content;
        assert!(md.contains("## A") && md.contains("## B"), "{md}");
        assert_eq!(
            to_markdown("<p>just <b>text</b></p>").content,
            "just **text**"
        );
    }
}
