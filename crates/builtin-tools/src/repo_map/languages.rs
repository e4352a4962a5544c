//! Definition extraction per language with tree-sitter: which node kinds are definitions and
//! where their names are.

use std::path::Path;
use tree_sitter::{Language, Node, Parser};

/// A language the repo map understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Rust.
    Rust,
    /// Python.
    Python,
    /// JavaScript (and JSX).
    JavaScript,
    /// TypeScript.
    TypeScript,
    /// TSX.
    Tsx,
    /// Go.
    Go,
}

impl Lang {
    /// The language of a file, by extension.
    #[must_use]
    pub fn of(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "rs" => Some(Self::Rust),
            "py" | "pyi" => Some(Self::Python),
            "js" | "jsx" | "mjs" | "cjs" => Some(Self::JavaScript),
            "ts" | "mts" | "cts" => Some(Self::TypeScript),
            "tsx" => Some(Self::Tsx),
            "go" => Some(Self::Go),
            _ => None,
        }
    }

    fn grammar(self) -> Language {
        match self {
            Self::Rust => tree_sitter_rust::LANGUAGE.into(),
            Self::Python => tree_sitter_python::LANGUAGE.into(),
            Self::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Self::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Self::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Self::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }

    /// The definition kind a node stands for, if it is a definition in this language.
    fn definition_kind(self, node_kind: &str) -> Option<&'static str> {
        let kind = match (self, node_kind) {
            (Self::Rust, "function_item" | "function_signature_item") => "fn",
            (Self::Rust, "struct_item") => "struct",
            (Self::Rust, "enum_item") => "enum",
            (Self::Rust, "trait_item") => "trait",
            (Self::Rust, "type_item") => "type",
            (Self::Rust, "const_item") => "const",
            (Self::Rust, "static_item") => "static",
            (Self::Rust, "mod_item") => "mod",
            (Self::Rust, "macro_definition") => "macro",
            (Self::Rust, "impl_item") => "impl",
            (Self::Python, "function_definition") => "def",
            (Self::Python, "class_definition") => "class",
            (
                Self::JavaScript | Self::TypeScript | Self::Tsx,
                "function_declaration" | "generator_function_declaration",
            ) => "function",
            (
                Self::JavaScript | Self::TypeScript | Self::Tsx,
                "class_declaration" | "abstract_class_declaration",
            ) => "class",
            (Self::JavaScript | Self::TypeScript | Self::Tsx, "method_definition") => "method",
            (Self::TypeScript | Self::Tsx, "interface_declaration") => "interface",
            (Self::TypeScript | Self::Tsx, "type_alias_declaration") => "type",
            (Self::TypeScript | Self::Tsx, "enum_declaration") => "enum",
            (Self::JavaScript | Self::TypeScript | Self::Tsx, "variable_declarator") => "const",
            (Self::Go, "function_declaration") => "func",
            (Self::Go, "method_declaration") => "method",
            (Self::Go, "type_spec") => "type",
            _ => return None,
        };
        Some(kind)
    }
}

/// One definition found in a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Definition {
    /// `fn`, `struct`, `class`, `method`, …
    pub kind: &'static str,
    /// The defined name (`impl` blocks: the implemented type).
    pub name: String,
    /// 1-based line.
    pub line: usize,
    /// The first line of the definition, trimmed and clipped.
    pub signature: String,
}

/// The longest signature kept, in characters.
const MAX_SIGNATURE_CHARS: usize = 160;

/// Parses `source` and lists its definitions in source order. `None` when parsing fails.
#[must_use]
pub fn definitions(lang: Lang, source: &str) -> Option<Vec<Definition>> {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    let tree = parser.parse(source, None)?;
    let mut found = Vec::new();
    collect(lang, tree.root_node(), source, &mut found);
    Some(found)
}

fn collect(lang: Lang, node: Node<'_>, source: &str, found: &mut Vec<Definition>) {
    if let Some(kind) = lang.definition_kind(node.kind())
        && let Some(name) = definition_name(lang, node, source)
    {
        found.push(Definition {
            kind,
            name,
            line: node.start_position().row + 1,
            signature: signature(node, source),
        });
    }
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        collect(lang, child, source, found);
    }
}

fn definition_name(lang: Lang, node: Node<'_>, source: &str) -> Option<String> {
    let text = |n: Node<'_>| n.utf8_text(source.as_bytes()).ok().map(str::to_owned);
    match (lang, node.kind()) {
        (Lang::Rust, "impl_item") => {
            let ty = text(node.child_by_field_name("type")?)?;
            match node.child_by_field_name("trait").and_then(text) {
                Some(tr) => Some(format!("{tr} for {ty}")),
                None => Some(ty),
            }
        }
        (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "variable_declarator") => {
            // Only `const f = () => …` / `function` expressions count as definitions.
            let value = node.child_by_field_name("value")?;
            matches!(
                value.kind(),
                "arrow_function" | "function_expression" | "function" | "class"
            )
            .then(|| node.child_by_field_name("name").and_then(text))
            .flatten()
        }
        _ => node.child_by_field_name("name").and_then(text),
    }
}

/// The whole source line the definition starts on (so `export`/`pub` prefixes show), trimmed.
fn signature(node: Node<'_>, source: &str) -> String {
    let row = node.start_position().row;
    let first = source.lines().nth(row).unwrap_or_default().trim();
    let first = first.strip_suffix('{').unwrap_or(first).trim_end();
    if first.chars().count() > MAX_SIGNATURE_CHARS {
        let clipped: String = first.chars().take(MAX_SIGNATURE_CHARS).collect();
        format!("{clipped}…")
    } else {
        first.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(lang: Lang, src: &str) -> Vec<(String, &'static str)> {
        definitions(lang, src)
            .unwrap()
            .into_iter()
            .map(|d| (d.name, d.kind))
            .collect()
    }

    #[test]
    fn rust_items_and_impl_methods() {
        let src = "pub struct Catalog;\nimpl Catalog {\n    pub fn list(&self) {}\n}\ntrait Port {}\nimpl Port for Catalog {}\n";
        assert_eq!(
            names(Lang::Rust, src),
            [
                ("Catalog".to_owned(), "struct"),
                ("Catalog".to_owned(), "impl"),
                ("list".to_owned(), "fn"),
                ("Port".to_owned(), "trait"),
                ("Port for Catalog".to_owned(), "impl"),
            ]
        );
    }

    #[test]
    fn typescript_arrow_constants_but_not_plain_values() {
        let src = "export const handler = async () => 1;\nconst LIMIT = 3;\ninterface Shape { x: number }\n";
        assert_eq!(
            names(Lang::TypeScript, src),
            [
                ("handler".to_owned(), "const"),
                ("Shape".to_owned(), "interface")
            ]
        );
    }
}
