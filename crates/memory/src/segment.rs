//! How text is cut into search tokens, for the index and for queries alike.
//!
//! FTS5's `unicode61` tokenizer splits on anything that is not a letter or digit, folds case
//! and diacritics — right for English, useless for Chinese and Japanese, which have no spaces:
//! a whole sentence would be one token. So before text reaches FTS5, every run of Han, kana
//! and CJK iteration marks is rewritten here:
//!
//! | text in a memory        | `body` column (and `tags`)     | `chars` column   |
//! |-------------------------|--------------------------------|------------------|
//! | `Deploy via staging`    | `Deploy via staging`           | —                |
//! | `数据库迁移`             | `数据 据库 库迁 迁移` (bigrams)  | `数 据 库 迁 移` |
//! | `用 cargo 跑测试`        | `用 cargo 跑测 测试`            | `用 跑 测 试`    |
//!
//! A query is cut the same way and becomes an FTS5 expression of quoted phrases joined by
//! `OR` (BM25 ranks memories matching more of them first):
//!
//! | query word | FTS5 phrase                     | matches                          |
//! |------------|---------------------------------|----------------------------------|
//! | `deploy`   | `{body tags} : "deploy"*`       | words starting with `deploy`     |
//! | `数据库`    | `{body tags} : "数据 据库"`      | the substring 数据库             |
//! | `库`       | `chars : "库"`                  | the character anywhere           |
//!
//! Only letters, digits and CJK characters ever reach a quoted phrase, so nothing in a query
//! is FTS5 syntax: quotes, `*`, `:`, `^`, `NEAR(…)`, `AND`/`OR` typed by the model are plain
//! words or dropped punctuation.

/// Whether `c` is written without spaces between words (Han, Hiragana, Katakana, the
/// iteration mark and the prolonged sound mark), so runs of it are cut into bigrams.
#[must_use]
pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3005}'                  // 々 iteration mark
        | '\u{3040}'..='\u{309F}'   // Hiragana
        | '\u{30A0}'..='\u{30FF}'   // Katakana (with ー)
        | '\u{31F0}'..='\u{31FF}'   // Katakana phonetic extensions
        | '\u{3400}'..='\u{4DBF}'   // CJK extension A
        | '\u{4E00}'..='\u{9FFF}'   // CJK unified ideographs
        | '\u{F900}'..='\u{FAFF}'   // CJK compatibility ideographs
        | '\u{FF66}'..='\u{FF9F}'   // half-width Katakana
        | '\u{20000}'..='\u{3134F}' // CJK extensions B–G
    )
}

/// One piece of a text: a run of word characters, or a run of CJK characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Letters and digits (any script but CJK).
    Word(&'a str),
    /// Han and kana.
    Cjk(&'a str),
}

/// Cuts `text` into words and CJK runs; everything else separates them.
#[must_use]
pub fn pieces(text: &str) -> Vec<Piece<'_>> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Cjk,
        Other,
    }
    let class = |c: char| {
        if is_cjk(c) {
            Class::Cjk
        } else if c.is_alphanumeric() {
            Class::Word
        } else {
            Class::Other
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut current = Class::Other;
    for (at, c) in text.char_indices() {
        let next = class(c);
        if next != current {
            push(&mut out, &text[start..at]);
            start = at;
            current = next;
        }
    }
    push(&mut out, &text[start..]);
    out
}

/// Adds a run of one class (told by its first character); separators are dropped.
fn push<'a>(out: &mut Vec<Piece<'a>>, run: &'a str) {
    if run.is_empty() {
        return;
    }
    let first = run.chars().next().unwrap_or(' ');
    if is_cjk(first) {
        out.push(Piece::Cjk(run));
    } else if first.is_alphanumeric() {
        out.push(Piece::Word(run));
    }
}

/// The overlapping character pairs of a CJK run (the run itself when it is one character).
#[must_use]
pub fn bigrams(run: &str) -> Vec<String> {
    let chars: Vec<char> = run.chars().collect();
    if chars.len() < 2 {
        return vec![run.to_owned()];
    }
    chars.windows(2).map(|pair| pair.iter().collect()).collect()
}

/// What the index stores for a text: the `body` (words and CJK bigrams) and the `chars`
/// column (every CJK character alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indexed {
    /// Words and CJK bigrams, space-separated.
    pub body: String,
    /// CJK characters, space-separated.
    pub chars: String,
}

/// The index form of `text` (see the module table).
#[must_use]
pub fn index_form(text: &str) -> Indexed {
    let mut body: Vec<String> = Vec::new();
    let mut chars: Vec<String> = Vec::new();
    for piece in pieces(text) {
        match piece {
            Piece::Word(word) => body.push(word.to_owned()),
            Piece::Cjk(run) => {
                body.extend(bigrams(run));
                chars.extend(run.chars().map(String::from));
            }
        }
    }
    Indexed {
        body: body.join(" "),
        chars: chars.join(" "),
    }
}

/// One searchable piece of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryPiece {
    /// A word, lower-cased: matches words starting with it.
    Word(String),
    /// A CJK run of two or more characters, as its bigrams: matches the run as a substring.
    Phrase(Vec<String>),
    /// One CJK character: matches it anywhere.
    Char(String),
}

impl QueryPiece {
    /// The FTS5 clause for this piece.
    #[must_use]
    pub fn clause(&self) -> String {
        match self {
            // Lower-cased so `AND`, `OR`, `NOT`, `NEAR` are never operators (they are quoted
            // anyway; this keeps the expression readable in logs).
            Self::Word(word) => format!("{{body tags}} : \"{word}\"*"),
            Self::Phrase(grams) => format!("{{body tags}} : \"{}\"", grams.join(" ")),
            Self::Char(c) => format!("chars : \"{c}\""),
        }
    }
}

/// The distinct pieces of a query, in order.
#[must_use]
pub fn query_pieces(text: &str) -> Vec<QueryPiece> {
    let mut out: Vec<QueryPiece> = Vec::new();
    for piece in pieces(text) {
        let piece = match piece {
            Piece::Word(word) => QueryPiece::Word(word.to_lowercase()),
            Piece::Cjk(run) if run.chars().count() == 1 => QueryPiece::Char(run.to_owned()),
            Piece::Cjk(run) => QueryPiece::Phrase(bigrams(run)),
        };
        if !out.contains(&piece) {
            out.push(piece);
        }
    }
    out
}

/// The pieces joined by `OR`, or `None` when there are none.
#[must_use]
pub fn expression(pieces: &[QueryPiece]) -> Option<String> {
    (!pieces.is_empty()).then(|| {
        pieces
            .iter()
            .map(QueryPiece::clause)
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

/// The FTS5 expression for a query, or `None` when it has no words.
///
/// ```
/// use kun_memory::segment::fts_query;
/// assert_eq!(
///     fts_query("deploy 数据库 NEAR(").as_deref(),
///     Some(r#"{body tags} : "deploy"* OR {body tags} : "数据 据库" OR {body tags} : "near"*"#)
/// );
/// assert_eq!(fts_query("\"* ()"), None);
/// ```
#[must_use]
pub fn fts_query(text: &str) -> Option<String> {
    expression(&query_pieces(text))
}

/// The token that places a memory in the index's `place` column, so a search only scores
/// memories visible from the caller: `u` for `user`, `w` or `p` and a 64-bit FNV-1a hash of
/// the key for `workspace` and `project`. (The store checks the keys exactly as well; the
/// token only narrows what FTS5 scores.)
#[must_use]
pub fn place_token(scope: kun_ports::MemoryScope, key: &str) -> String {
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    match scope {
        kun_ports::MemoryScope::User => "u".to_owned(),
        kun_ports::MemoryScope::Workspace => format!("w{hash:016x}"),
        kun_ports::MemoryScope::Project => format!("p{hash:016x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_form_table() {
        let cases = [
            ("Deploy via staging", "Deploy via staging", ""),
            ("数据库迁移", "数据 据库 库迁 迁移", "数 据 库 迁 移"),
            ("用 cargo 跑测试", "用 cargo 跑测 测试", "用 跑 测 试"),
            (
                "テストは並列",
                "テス スト トは は並 並列",
                "テ ス ト は 並 列",
            ),
            ("a-b_c.d", "a b c d", ""),
            ("café, naïve!", "café naïve", ""),
            ("", "", ""),
            ("数据，库存", "数据 库存", "数 据 库 存"),
        ];
        for (text, body, chars) in cases {
            let got = index_form(text);
            assert_eq!(got.body, body, "{text}");
            assert_eq!(got.chars, chars, "{text}");
        }
    }

    #[test]
    fn query_table() {
        let cases: [(&str, Option<&str>); 8] = [
            ("deploy", Some(r#"{body tags} : "deploy"*"#)),
            ("Deploy deploy", Some(r#"{body tags} : "deploy"*"#)),
            ("库", Some(r#"chars : "库""#)),
            ("迁移", Some(r#"{body tags} : "迁移""#)),
            (
                "make AND \"check\"",
                Some(r#"{body tags} : "make"* OR {body tags} : "and"* OR {body tags} : "check"*"#),
            ),
            (
                "content:make",
                Some(r#"{body tags} : "content"* OR {body tags} : "make"*"#),
            ),
            ("", None),
            ("* ^ () \" -", None),
        ];
        for (query, expected) in cases {
            assert_eq!(fts_query(query).as_deref(), expected, "{query}");
        }
    }

    #[test]
    fn cjk_classes() {
        for c in ['数', '々', 'ー', 'テ', 'は', 'ｱ', '𠀀'] {
            assert!(is_cjk(c), "{c}");
        }
        for c in ['a', 'é', '한', '1', '，', ' '] {
            assert!(!is_cjk(c), "{c}");
        }
    }
}
