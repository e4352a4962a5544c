//! Text → search terms.
//!
//! * NFKC first (full-width letters become ASCII, compatibility forms fold).
//! * **Latin** words: runs of ASCII letters and digits, split on `_`, `-`, spaces and
//!   punctuation, and on camelCase (`getHTTPStatus` → `get`, `http`, `status`). Each part is
//!   lowercased and stemmed ([`stem`]); a capitalised two-part name is one word (`GitHub` →
//!   `github`, `JavaScript` → `javascript`); stop words, one-letter words and bare numbers are
//!   dropped. An identifier made of several parts also yields its joined form
//!   (`search_issues`), so exact names still score.
//! * **Han** runs: a single character stays itself; longer runs yield every 2-, 3- and 4-gram
//!   (`创建议题` → `创建`, `建议`, `议题`, `创建议`, `建议题`, `创建议题`).
//! * Other scripts (kana, hangul, accented Latin letters) are dropped.
//!
//! ```
//! use kun_mcp::search::tokenize::terms;
//! assert_eq!(terms("getHTTPStatus"), ["get", "http", "status", "get_http_status"]);
//! assert_eq!(terms("创建议题"), ["创建", "建议", "议题", "创建议", "建议题", "创建议题"]);
//! ```

use unicode_normalization::UnicodeNormalization;

/// English words that carry no meaning for tool search.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "do", "does", "for", "from", "has", "have", "how", "i", "if", "in", "into", "is",
    "it", "its", "me", "my", "of", "on", "or", "our", "please", "should", "so", "some", "that",
    "the", "their", "them", "then", "there", "these", "this", "those", "to", "tool", "tools", "us",
    "use", "using", "via", "want", "was", "we", "were", "what", "when", "which", "will", "with",
    "would", "you", "your",
];

/// Whether `c` is a Han (CJK ideograph) character.
#[must_use]
pub fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2A6DF
        | 0x2A700..=0x2EBEF | 0x30000..=0x3134F)
}

/// A light English stemmer: plural and verb endings off, then a final `e` off, so `create`,
/// `creates`, `created` and `creating` all become `creat`; `directories` and `directory`
/// become `directory`. Words of three letters or fewer, and words with digits, are kept.
///
/// ```
/// use kun_mcp::search::tokenize::stem;
/// for w in ["create", "creates", "created", "creating"] { assert_eq!(stem(w), "creat"); }
/// assert_eq!(stem("directories"), stem("directory"));
/// assert_eq!(stem("branches"), "branch");
/// assert_eq!(stem("committed"), "commit");
/// assert_eq!(stem("status"), "status");
/// ```
#[must_use]
pub fn stem(word: &str) -> String {
    if !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word.to_owned();
    }
    if word.len() <= 3 {
        // `prs` → `pr`, `ids` → `id`; `bus`, `gas`, `yes` stay.
        let plural = word.len() == 3
            && word.ends_with('s')
            && !word.ends_with("ss")
            && !word.ends_with("us")
            && !word.ends_with("as")
            && !word.ends_with("es");
        return if plural {
            word[..2].to_owned()
        } else {
            word.to_owned()
        };
    }
    let mut s = word.to_owned();
    if s.ends_with("ly") && s.len() >= 7 {
        s.truncate(s.len() - 2);
    }
    if s.ends_with("ies") && s.len() > 4 {
        s.truncate(s.len() - 3);
        s.push('y');
    } else if s.ends_with("es")
        && ["s", "x", "z", "ch", "sh"]
            .iter()
            .any(|end| s[..s.len() - 2].ends_with(end))
    {
        s.truncate(s.len() - 2);
    } else if s.ends_with('s') && !s.ends_with("ss") && !s.ends_with("us") && !s.ends_with("is") {
        s.truncate(s.len() - 1);
    }
    for suffix in ["ing", "ed"] {
        if s.ends_with(suffix) && s.len() - suffix.len() >= 3 {
            s.truncate(s.len() - suffix.len());
            undouble(&mut s);
            break;
        }
    }
    if s.ends_with('e') && s.len() > 3 {
        s.pop();
    }
    s
}

/// `stopp` → `stop`, `committ` → `commit` (but `fill`, `pass`, `add` stay).
fn undouble(s: &mut String) {
    let bytes = s.as_bytes();
    let n = bytes.len();
    if n >= 4 && bytes[n - 1] == bytes[n - 2] && !matches!(bytes[n - 1], b'l' | b's' | b'z' | b'd')
    {
        s.pop();
    }
}

fn keep(word: &str) -> bool {
    word.len() >= 2 && !word.bytes().all(|b| b.is_ascii_digit()) && !STOP_WORDS.contains(&word)
}

/// Whether a run is a capitalised name of two camel parts (`GitHub`, `JavaScript`, `OpenAI`,
/// `MySQL`): a product name, one word, not an identifier to split (`git` and `hub` would match
/// the wrong things).
fn is_brand(run: &str) -> bool {
    run.starts_with(|c: char| c.is_ascii_uppercase())
        && run.bytes().all(|b| b.is_ascii_alphabetic())
        && camel_parts(run).len() == 2
}

/// Splits one ASCII alphanumeric run on camelCase boundaries.
fn camel_parts(run: &str) -> Vec<String> {
    let chars: Vec<char> = run.chars().collect();
    let mut parts = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let boundary = i > 0 && {
            let prev = chars[i - 1];
            let next = chars.get(i + 1).copied();
            (prev.is_ascii_lowercase() && c.is_ascii_uppercase())
                || (prev.is_ascii_uppercase()
                    && c.is_ascii_uppercase()
                    && next.is_some_and(|n| n.is_ascii_lowercase()))
                || (prev.is_ascii_alphabetic() != c.is_ascii_alphabetic()
                    && prev.is_ascii_digit()
                    && c.is_ascii_alphabetic()
                    && current.len() > 1)
        };
        if boundary && !current.is_empty() {
            parts.push(std::mem::take(&mut current));
        }
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

/// Han n-grams of one run (see the module docs); at most 80 characters of it are used.
fn han_terms(run: &[char], out: &mut Vec<String>) {
    let run = &run[..run.len().min(80)];
    if run.len() == 1 {
        out.push(run[0].to_string());
        return;
    }
    for n in 2..=4 {
        if run.len() < n {
            break;
        }
        for window in run.windows(n) {
            out.push(window.iter().collect());
        }
    }
}

/// One identifier-like chunk (letters, digits, `_`, `-`, `.`, `/`, `:`): its parts, then
/// the joined form when there are several.
fn latin_terms(chunk: &str, out: &mut Vec<String>) {
    let mut parts = Vec::new();
    for run in chunk.split(|c: char| !c.is_ascii_alphanumeric()) {
        if run.is_empty() {
            continue;
        }
        if is_brand(run) {
            let word = run.to_ascii_lowercase();
            if keep(&word) {
                parts.push(stem(&word));
            }
            continue;
        }
        for part in camel_parts(run) {
            if keep(&part) {
                parts.push(stem(&part));
            }
        }
    }
    let joined = (parts.len() > 1).then(|| parts.join("_"));
    out.extend(parts);
    out.extend(joined);
}

/// NFKC, skipped for ASCII text (which it never changes).
fn normalize(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        std::borrow::Cow::Borrowed(text)
    } else {
        std::borrow::Cow::Owned(text.nfkc().collect())
    }
}

/// Every term of `text`, in order (duplicates kept: they are term frequencies).
#[must_use]
pub fn terms(text: &str) -> Vec<String> {
    let normalized = normalize(text);
    let mut out = Vec::new();
    let mut chunk = String::new();
    let mut han: Vec<char> = Vec::new();
    for c in normalized.chars() {
        let identifier = c.is_ascii_alphanumeric() || matches!(c, '_' | '-');
        if identifier {
            chunk.push(c);
        } else if !chunk.is_empty() {
            latin_terms(&chunk, &mut out);
            chunk.clear();
        }
        if is_han(c) {
            han.push(c);
        } else if !han.is_empty() {
            han_terms(&han, &mut out);
            han.clear();
        }
    }
    if !chunk.is_empty() {
        latin_terms(&chunk, &mut out);
    }
    if !han.is_empty() {
        han_terms(&han, &mut out);
    }
    out
}

/// The Han runs of `text` (after NFKC), for glossary lookups.
#[must_use]
pub fn han_runs(text: &str) -> Vec<String> {
    let normalized = normalize(text);
    let mut runs = Vec::new();
    let mut current = String::new();
    for c in normalized.chars() {
        if is_han(c) {
            current.push(c);
        } else if !current.is_empty() {
            runs.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_splitting() {
        assert_eq!(terms("search_issues"), ["search", "issu", "search_issu"]);
        assert_eq!(
            terms("get-tiny-image"),
            ["get", "tiny", "imag", "get_tiny_imag"]
        );
        assert_eq!(
            terms("listPullRequests"),
            ["list", "pull", "request", "list_pull_request"]
        );
        assert_eq!(terms("Read the file"), ["read", "fil"]);
        assert_eq!(terms("a 42 x9"), ["x9"]);
        assert_eq!(terms("ＦＩＬＥ"), ["fil"], "full-width folds through NFKC");
        assert_eq!(terms("v2Api"), ["v2", "api", "v2_api"]);
    }

    #[test]
    fn han_ngrams_and_mixed_text() {
        assert_eq!(terms("查"), ["查"]);
        assert_eq!(
            terms("读取文件"),
            ["读取", "取文", "文件", "读取文", "取文件", "读取文件"]
        );
        assert_eq!(terms("用git提交"), ["用", "git", "提交"]);
        assert_eq!(han_runs("把 README 文件读出来"), ["把", "文件读出来"]);
        assert!(
            terms("ファイル 파일").is_empty(),
            "kana and hangul are dropped"
        );
    }

    #[test]
    fn stems_agree_across_forms() {
        let groups: &[&[&str]] = &[
            &["file", "files"],
            &["update", "updated", "updates", "updating"],
            &["delete", "deleted", "deleting"],
            &["message", "messages", "messaging"],
            &["query", "queries"],
            &["list", "lists", "listing", "listed"],
            &["commit", "commits", "committed"],
            &["stop", "stopped", "stopping"],
        ];
        for group in groups {
            let first = stem(group[0]);
            for word in *group {
                assert_eq!(stem(word), first, "{word} vs {}", group[0]);
            }
        }
        assert_eq!(stem("fill"), "fill");
        assert_eq!(stem("address"), "address");
    }
}
