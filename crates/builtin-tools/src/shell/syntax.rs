//! A command line as plain simple commands, from a `tree-sitter-bash` parse, or why not.
//!
//! The walk is an **allow-list of node kinds** (as codex's command-safety check is): anything
//! not listed below refuses the whole line, and so does any parse error.
//!
//! | node | allowed when |
//! |---|---|
//! | `program`, `list`, `pipeline` | their operators are `;`, `&&`, `\|\|`, `\|` or `\|&` (never `&`) |
//! | `command` | it has a `command_name` and only words as arguments (no `NAME=value` before it) |
//! | `word` | no unquoted `$ \` * ? [ ] { } ~ ( ) < > & ; \|` (expansions, globs, braces, tilde) |
//! | `raw_string` (`'…'`), `number` | always |
//! | `string` (`"…"`) | it holds only text: no `$…`, `` `…` `` or `$(…)` inside |
//! | `concatenation` | each part is one of the above |
//! | `redirected_statement`, `file_redirect` | every redirection duplicates or closes a descriptor (`2>&1`, `>&-`) or goes to `/dev/null` |
//! | `comment` | always |
//!
//! Everything else refuses: substitutions (`$(…)`, backticks, `<(…)`), expansions (`$X`,
//! `${…}`, `$((…))`), `$'…'` and `$"…"` strings, here-documents and here-strings, subshells,
//! `{ …; }`, `(( … ))`, `[[ … ]]`, `if`/`for`/`while`/`case`, function definitions,
//! `declare`-style commands, variable assignments and `!`.
//!
//! Each word's **value** is what bash passes to the program: quotes removed, backslash escapes
//! applied. The grant rules look at values, so `'-'e`, `-\e` and `"-e"` are all `-e`.
//!
//! **The parser never sees a character above U+007F.** tree-sitter-bash 0.25.1's scanner
//! calls the C `isdigit` on a full code point after `{` (upstream issue #337), which reads
//! outside glibc's table: `{` followed by U+E012C kills the process. So the grammar parses an
//! ASCII shadow of the line — every non-ASCII character replaced by as many `a` bytes as it
//! has, so byte offsets agree — and values are read from the original. Bash treats every
//! non-ASCII character as an ordinary word character, as `a` is, so the shadow has the same
//! shape. Control characters other than newline and tab refuse the line: bash keeps them
//! inside words (a `\r` does not end a word) where the grammar treats them as spaces.

use std::fmt;
use tree_sitter::{Node, Parser};

/// The longest command line the parser looks at; longer ones are approved one call at a time.
pub(crate) const MAX_COMMAND_LINE: usize = 20_000;

/// One simple command: the program and its arguments, as bash would pass them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    /// `words[0]` is the program as written (quotes removed); the rest are its arguments.
    pub(crate) words: Vec<String>,
}

/// Why a command line is not plain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotPlain {
    /// Empty, or only comments.
    Empty,
    /// Over [`MAX_COMMAND_LINE`] bytes.
    TooLong,
    /// The grammar could not parse it (or tree-sitter is unavailable).
    Unparsed,
    /// A construct outside the allow-list, by node kind.
    Construct(String),
    /// An operator other than `;`, `&&`, `||`, `|`, `|&`.
    Operator(String),
    /// A redirection to or from a file.
    Redirection,
    /// A here-document or here-string (its body may expand, and it feeds the program input).
    HereDocument,
    /// An unquoted character that bash expands (`*`, `~`, `{`, `$`, …).
    Expands(char),
    /// A control character other than newline and tab.
    Control(char),
}

impl fmt::Display for NotPlain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("it runs no command"),
            Self::TooLong => write!(f, "it is longer than {MAX_COMMAND_LINE} bytes"),
            Self::Unparsed => f.write_str("it does not parse as a plain bash command line"),
            Self::Construct(kind) => write!(f, "it uses {}", describe_kind(kind)),
            Self::Operator(op) if op == "&" => f.write_str("`&` runs a command in the background"),
            Self::Operator(op) => write!(f, "it uses the operator `{op}`"),
            Self::Redirection => f.write_str(
                "it redirects to or from a file (only `2>&1`-style and `/dev/null` redirections \
                 are plain)",
            ),
            Self::HereDocument => f.write_str("it feeds a here-document or here-string"),
            Self::Control(c) => write!(
                f,
                "it contains the control character {}",
                c.escape_unicode()
            ),
            Self::Expands(c) => write!(
                f,
                "an unquoted `{c}` makes bash expand the word (glob, brace, tilde or variable \
                 expansion)"
            ),
        }
    }
}

/// Words for the node kinds a person asked about would recognise.
fn describe_kind(kind: &str) -> String {
    let what = match kind {
        "command_substitution" => "command substitution (`$(…)` or backticks)",
        "process_substitution" => "process substitution (`<(…)`)",
        "simple_expansion" | "expansion" => "variable expansion (`$NAME`, `${…}`)",
        "arithmetic_expansion" => "arithmetic expansion (`$((…))`)",
        "ansi_c_string" => "a `$'…'` string",
        "translated_string" | "$" => "a `$` expansion",
        "variable_assignment" | "variable_assignments" => "a variable assignment",
        "subshell" => "a subshell (`(…)`)",
        "compound_statement" => "a compound command (`{ …; }` or `((…))`)",
        "function_definition" => "a function definition",
        "declaration_command" => "a declaration (`declare`, `export`, `local`, …)",
        "unset_command" => "`unset`",
        "test_command" => "a test (`[[ … ]]` or `[ … ]`)",
        "negated_command" => "`!`",
        "heredoc_redirect" | "herestring_redirect" => "a here-document or here-string",
        "if_statement"
        | "while_statement"
        | "for_statement"
        | "c_style_for_statement"
        | "case_statement" => "a control-flow statement",
        "subscript" => "an array subscript",
        "words after a redirection" => "arguments after a redirection (`cmd 2>&1 arg`)",
        other => return format!("`{other}`"),
    };
    what.to_owned()
}

/// The simple commands of `source`, in order, or why it is not plain.
///
/// # Errors
/// [`NotPlain`] for anything outside the allow-list (see the module docs).
pub(crate) fn simple_commands(source: &str) -> Result<Vec<SimpleCommand>, NotPlain> {
    if source.len() > MAX_COMMAND_LINE {
        return Err(NotPlain::TooLong);
    }
    if let Some(c) = source
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t'))
    {
        return Err(NotPlain::Control(c));
    }
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|_| NotPlain::Unparsed)?;
    let tree = parser
        .parse(ascii_shadow(source), None)
        .ok_or(NotPlain::Unparsed)?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(NotPlain::Unparsed);
    }
    let mut commands = Vec::new();
    Walk { source }.statement(root, &mut commands)?;
    if commands.is_empty() {
        return Err(NotPlain::Empty);
    }
    Ok(commands)
}

/// `source` with every non-ASCII character replaced by as many `a` bytes as it takes, so the
/// byte offsets of the shadow's nodes are those of the original (see the module docs).
fn ascii_shadow(source: &str) -> String {
    let mut shadow = String::with_capacity(source.len());
    for c in source.chars() {
        if c.is_ascii() {
            shadow.push(c);
        } else {
            shadow.extend(std::iter::repeat_n('a', c.len_utf8()));
        }
    }
    shadow
}

/// The original text the nodes of the shadow's tree point into.
struct Walk<'s> {
    source: &'s str,
}

impl Walk<'_> {
    fn text(&self, node: Node<'_>) -> &str {
        self.source.get(node.byte_range()).unwrap_or_default()
    }

    /// A statement-level node: a container, a command, a redirected command or a comment.
    fn statement(&self, node: Node<'_>, out: &mut Vec<SimpleCommand>) -> Result<(), NotPlain> {
        match node.kind() {
            "program" | "list" | "pipeline" => {
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if child.is_named() {
                        self.statement(child, out)?;
                    } else if !matches!(child.kind(), ";" | "&&" | "||" | "|" | "|&") {
                        return Err(NotPlain::Operator(child.kind().to_owned()));
                    }
                }
                Ok(())
            }
            "redirected_statement" => {
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    match child.kind() {
                        "file_redirect" => self.harmless_redirect(child)?,
                        "heredoc_redirect" | "herestring_redirect" => {
                            return Err(NotPlain::HereDocument);
                        }
                        _ if child.is_named() => self.statement(child, out)?,
                        other => return Err(NotPlain::Operator(other.to_owned())),
                    }
                }
                Ok(())
            }
            "command" => {
                out.push(self.command(node)?);
                Ok(())
            }
            "comment" => Ok(()),
            other => Err(NotPlain::Construct(other.to_owned())),
        }
    }

    /// `2>&1`, `>&-`, `<&0`, or any redirection to or from `/dev/null`.
    fn harmless_redirect(&self, node: Node<'_>) -> Result<(), NotPlain> {
        let mut cursor = node.walk();
        let mut operator = None;
        let mut target = None;
        for child in node.children(&mut cursor) {
            match child.kind() {
                "file_descriptor" => {}
                _ if !child.is_named() => operator = Some(child.kind()),
                // The grammar puts words after a redirection (`cmd 2>&1 arg`) into it: they
                // are the command's arguments, which this walk does not see, so refuse.
                _ if target.is_some() => {
                    return Err(NotPlain::Construct("words after a redirection".to_owned()));
                }
                _ => target = Some(child),
            }
        }
        let harmless = match (operator, target) {
            (Some(">&-" | "<&-"), None) => true,
            (Some(">&" | "<&"), Some(fd)) => {
                fd.kind() == "number" && self.text(fd).bytes().all(|b| b.is_ascii_digit())
            }
            (Some(">" | ">>" | "<" | "&>" | "&>>" | ">|"), Some(path)) => {
                path.kind() == "word" && self.text(path) == "/dev/null"
            }
            _ => false,
        };
        if harmless {
            Ok(())
        } else {
            Err(NotPlain::Redirection)
        }
    }

    /// A simple command's words; assignments, substitutions and other arguments refuse.
    fn command(&self, node: Node<'_>) -> Result<SimpleCommand, NotPlain> {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "command_name" => {
                    let mut inner = child.walk();
                    let mut parts = child.named_children(&mut inner);
                    match (parts.next(), parts.next()) {
                        (Some(name), None) => words.push(self.word(name)?),
                        _ => return Err(NotPlain::Construct("command_name".to_owned())),
                    }
                }
                "file_redirect" => self.harmless_redirect(child)?,
                "heredoc_redirect" | "herestring_redirect" => {
                    return Err(NotPlain::HereDocument);
                }
                _ if child.is_named() => words.push(self.word(child)?),
                other => return Err(NotPlain::Construct(other.to_owned())),
            }
        }
        if words.is_empty() {
            return Err(NotPlain::Construct("command".to_owned()));
        }
        Ok(SimpleCommand { words })
    }

    /// The value of one word-like node (see the module docs).
    fn word(&self, node: Node<'_>) -> Result<String, NotPlain> {
        match node.kind() {
            "word" => unquoted_value(self.text(node)),
            "number" => Ok(self.text(node).to_owned()),
            "raw_string" => {
                let text = self.text(node);
                Ok(text
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text)
                    .to_owned())
            }
            "string" => {
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if !matches!(child.kind(), "\"" | "string_content") {
                        return Err(NotPlain::Construct(child.kind().to_owned()));
                    }
                }
                let text = self.text(node);
                let inner = text
                    .strip_prefix('"')
                    .and_then(|t| t.strip_suffix('"'))
                    .unwrap_or(text);
                Ok(double_quoted_value(inner))
            }
            "concatenation" => {
                let mut value = String::new();
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    value.push_str(&self.word(child)?);
                }
                Ok(value)
            }
            other => Err(NotPlain::Construct(other.to_owned())),
        }
    }
}

/// Characters bash expands or treats as syntax in an unquoted word.
const EXPANDING: &[char] = &[
    '$', '`', '*', '?', '[', ']', '{', '}', '~', '(', ')', '<', '>', '&', ';', '|', '!', '\'', '"',
];

/// An unquoted word's value: backslash escapes applied, line continuations removed; an
/// unescaped expanding character refuses.
fn unquoted_value(text: &str) -> Result<String, NotPlain> {
    let mut value = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(escaped) => value.push(escaped),
            },
            c if EXPANDING.contains(&c) => return Err(NotPlain::Expands(c)),
            c => value.push(c),
        }
    }
    Ok(value)
}

/// A double-quoted string's value: `\$ \` \" \\` and line continuations are escapes, every
/// other backslash is literal.
fn double_quoted_value(inner: &str) -> String {
    let mut value = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(escaped) = chars.next() {
                        value.push(escaped);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => value.push('\\'),
            }
        } else {
            value.push(c);
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(source: &str) -> Vec<Vec<String>> {
        simple_commands(source)
            .unwrap_or_else(|e| panic!("{source:?}: {e}"))
            .into_iter()
            .map(|c| c.words)
            .collect()
    }

    #[test]
    fn plain_lines_become_word_lists() {
        let table: &[(&str, &[&[&str]])] = &[
            ("cargo test -p kun", &[&["cargo", "test", "-p", "kun"]]),
            (
                "ls -la src; cargo test && echo ok",
                &[&["ls", "-la", "src"], &["cargo", "test"], &["echo", "ok"]],
            ),
            (
                "cargo test 2>&1 | tail -n 5",
                &[&["cargo", "test"], &["tail", "-n", "5"]],
            ),
            (
                "grep -rn 'a b' \"src\" 2>/dev/null",
                &[&["grep", "-rn", "a b", "src"]],
            ),
            (
                "echo '-'e -\\e \"-e\" a\\ b",
                &[&["echo", "-e", "-e", "-e", "a b"]],
            ),
            ("echo \"a\\\"b\\$c\\n\"", &[&["echo", "a\"b$c\\n"]]),
            ("'ca'\"rgo\" test", &[&["cargo", "test"]]),
            ("ls # a comment; rm -rf /", &[&["ls"]]),
            (
                "cargo test\ncargo build\n",
                &[&["cargo", "test"], &["cargo", "build"]],
            ),
            ("ls >&- 2>&1 <&0 >/dev/null", &[&["ls"]]),
            ("echo -- 0x10 1.5", &[&["echo", "--", "0x10", "1.5"]]),
        ];
        for (source, expected) in table {
            let expected: Vec<Vec<String>> = expected
                .iter()
                .map(|c| c.iter().map(|w| (*w).to_owned()).collect())
                .collect();
            assert_eq!(words(source), expected, "{source:?}");
        }
    }

    #[test]
    fn anything_else_is_not_plain() {
        let table: &[(&str, NotPlain)] = &[
            ("", NotPlain::Empty),
            ("# only a comment", NotPlain::Empty),
            ("ls &&", NotPlain::Unparsed),
            ("echo 'open", NotPlain::Unparsed),
            ("sleep 1 &", NotPlain::Operator("&".into())),
            (
                "echo $(id)",
                NotPlain::Construct("command_substitution".into()),
            ),
            (
                "echo \"$(id)\"",
                NotPlain::Construct("command_substitution".into()),
            ),
            (
                "echo `id`",
                NotPlain::Construct("command_substitution".into()),
            ),
            ("echo $HOME", NotPlain::Construct("simple_expansion".into())),
            (
                "echo \"$HOME\"",
                NotPlain::Construct("simple_expansion".into()),
            ),
            ("echo ${a[$(id)]}", NotPlain::Construct("expansion".into())),
            (
                "echo $((1+2))",
                NotPlain::Construct("arithmetic_expansion".into()),
            ),
            (
                "echo $'\\x2de'",
                NotPlain::Construct("ansi_c_string".into()),
            ),
            (
                "diff <(ls) <(ls)",
                NotPlain::Construct("process_substitution".into()),
            ),
            (
                "FOO=bar cargo test",
                NotPlain::Construct("variable_assignment".into()),
            ),
            (
                "a[$(id)]=1",
                NotPlain::Construct("variable_assignment".into()),
            ),
            (
                "declare -a x",
                NotPlain::Construct("declaration_command".into()),
            ),
            (
                "(( c[$(id)] ))",
                NotPlain::Construct("compound_statement".into()),
            ),
            ("[[ -v x ]]", NotPlain::Construct("test_command".into())),
            ("[ -v x ]", NotPlain::Construct("test_command".into())),
            (
                "f() { ls; }; f",
                NotPlain::Construct("function_definition".into()),
            ),
            ("(cd x && ls)", NotPlain::Construct("subshell".into())),
            ("! ls", NotPlain::Construct("negated_command".into())),
            (
                "if true; then ls; fi",
                NotPlain::Construct("if_statement".into()),
            ),
            ("echo hi > out.txt", NotPlain::Redirection),
            ("cat < /etc/passwd", NotPlain::Redirection),
            ("ls 2>&1 >> log", NotPlain::Redirection),
            ("ls >& out", NotPlain::Redirection),
            (
                "ls 2>&1 src",
                NotPlain::Construct("words after a redirection".into()),
            ),
            ("cat <<EOF\n$(id)\nEOF", NotPlain::HereDocument),
            ("cat <<'EOF'\nplain\nEOF", NotPlain::HereDocument),
            ("cat <<< x", NotPlain::HereDocument),
            ("ls *.rs", NotPlain::Expands('*')),
            ("ls ?", NotPlain::Expands('?')),
            ("cat ~/.ssh/id_rsa", NotPlain::Expands('~')),
            ("echo a=~", NotPlain::Expands('~')),
            ("echo {a,b}", NotPlain::Expands('{')),
            ("echo x{-exec,rm}", NotPlain::Expands('{')),
        ];
        for (source, expected) in table {
            assert_eq!(
                simple_commands(source).as_ref(),
                Err(expected),
                "{source:?}"
            );
        }
    }

    /// Upstream issue #337: `{` then a code point the C `isdigit` table does not cover crashed
    /// the process inside the grammar's scanner. The shadow keeps the grammar away from them.
    #[test]
    fn characters_that_crash_the_grammar_never_reach_it() {
        for source in [
            "{\u{E012C}",
            "{\u{31860}",
            "echo {1..\u{E0100}",
            "ls {\u{10FFFF}",
        ] {
            assert!(simple_commands(source).is_err(), "{source:?}");
        }
        assert_eq!(
            words("grep -n 'caf\u{e9} \u{4e2d}' \u{e9}t\u{e9}.md"),
            [["grep", "-n", "caf\u{e9} \u{4e2d}", "\u{e9}t\u{e9}.md"]]
        );
        assert_eq!(
            words("echo \"\u{1F600}\" x\u{E012C}"),
            [["echo", "\u{1F600}", "x\u{E012C}"]]
        );
    }

    #[test]
    fn control_characters_other_than_newline_and_tab_refuse() {
        for c in ['\r', '\0', '\u{b}', '\u{c}', '\u{1b}', '\u{7f}', '\u{85}'] {
            let source = format!("cargo{c}test");
            assert_eq!(
                simple_commands(&source),
                Err(NotPlain::Control(c)),
                "{source:?}"
            );
        }
        assert_eq!(words("cargo\ttest"), [["cargo", "test"]]);
    }

    #[test]
    fn overlong_lines_are_not_parsed() {
        let long = format!("echo {}", "a".repeat(MAX_COMMAND_LINE));
        assert_eq!(simple_commands(&long), Err(NotPlain::TooLong));
    }

    #[test]
    fn every_refusal_reads_as_a_reason() {
        let reasons = [
            NotPlain::Operator("&".into()).to_string(),
            NotPlain::Construct("command_substitution".into()).to_string(),
            NotPlain::Redirection.to_string(),
            NotPlain::Expands('*').to_string(),
        ];
        assert_eq!(reasons[0], "`&` runs a command in the background");
        assert!(reasons[1].contains("$(…)"), "{}", reasons[1]);
        assert!(reasons[2].contains("file"), "{}", reasons[2]);
        assert!(reasons[3].contains("`*`"), "{}", reasons[3]);
    }
}
