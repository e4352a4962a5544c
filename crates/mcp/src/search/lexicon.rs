//! The vocabulary search expands queries with: English synonym groups for the verbs and nouns
//! of tool descriptions, and a Chinese↔English glossary so a Chinese request finds an
//! English-described tool and the reverse.
//!
//! Both are data: a group lists words that ask for the same thing (`delete`, `remove`,
//! `erase`…); a glossary entry maps a Chinese word to the English words it stands for.
//! Words are stemmed when the tables are loaded, so entries are written in plain form.

use super::glossary::GLOSSARY;
use super::tokenize::stem;
use std::collections::HashMap;
use std::sync::OnceLock;

/// Words that ask for the same thing in tool requests. A word may sit in several groups.
const SYNONYM_GROUPS: &[&[&str]] = &[
    // verbs
    &[
        "search", "find", "lookup", "look", "query", "seek", "locate", "grep", "discover", "match",
        "where",
    ],
    &[
        "list",
        "show",
        "enumerate",
        "browse",
        "display",
        "all",
        "every",
        "overview",
        "index",
        "print",
    ],
    &[
        "get", "read", "fetch", "retrieve", "open", "view", "load", "obtain", "describe",
        "inspect", "see", "show", "cat", "contents",
    ],
    &[
        "create",
        "add",
        "new",
        "make",
        "insert",
        "generate",
        "build",
        "register",
        "open",
        "start",
        "init",
        "initialize",
        "setup",
    ],
    &[
        "update", "edit", "modify", "change", "set", "patch", "alter", "amend", "adjust", "revise",
        "replace", "tweak", "fix",
    ],
    &[
        "delete", "remove", "destroy", "drop", "erase", "purge", "clear", "unlink", "trash",
        "discard", "wipe", "forget", "rm", "rmdir",
    ],
    &[
        "send", "post", "publish", "reply", "comment", "message", "notify", "say", "tell",
        "announce", "respond", "answer",
    ],
    &[
        "write",
        "save",
        "store",
        "put",
        "persist",
        "record",
        "dump",
        "overwrite",
        "output",
    ],
    &["move", "rename", "relocate", "mv", "transfer"],
    &["copy", "duplicate", "clone", "fork", "cp"],
    &[
        "run", "execute", "exec", "invoke", "eval", "evaluate", "launch", "perform", "trigger",
        "call",
    ],
    &["stop", "cancel", "abort", "kill", "halt", "terminate"],
    &["navigate", "goto", "visit", "open", "browse", "load", "go"],
    &["click", "press", "tap", "push", "select"],
    &["fill", "type", "enter", "input", "form", "field"],
    &["hover", "mouseover", "point", "mouse", "cursor"],
    &["select", "choose", "pick", "dropdown", "option"],
    &["convert", "translate", "transform", "change"],
    &["compare", "diff", "difference", "delta", "changes"],
    &["merge", "combine", "integrate", "land"],
    &["review", "approve", "critique", "feedback"],
    &["download", "fetch", "scrape", "crawl", "grab", "pull"],
    &["upload", "push", "publish"],
    &["echo", "repeat", "mirror", "parrot"],
    &[
        "sum",
        "add",
        "plus",
        "total",
        "addition",
        "arithmetic",
        "calculate",
        "compute",
    ],
    &["remember", "memorize", "recall", "memory", "knowledge"],
    &["react", "reaction", "emoji"],
    // nouns
    &[
        "file", "document", "doc", "disk", "readme", "yaml", "yml", "json", "toml", "txt", "csv",
        "markdown", "md", "py", "rs", "ts", "js", "go", "java", "xml", "ini", "cfg", "conf", "sh",
        "touch",
    ],
    &[
        "multiple",
        "several",
        "many",
        "batch",
        "bulk",
        "simultaneously",
        "once",
        "various",
        "together",
    ],
    &["directory", "folder", "dir", "mkdir", "ls"],
    &["repository", "repo", "project", "codebase"],
    &["issue", "ticket", "bug", "task", "report", "problem"],
    &["undo", "revert", "reset", "unstage", "rollback", "restore"],
    &["pull", "pr", "mr"],
    &["commit", "changeset", "revision", "sha"],
    &["branch", "ref"],
    &[
        "log", "history", "journal", "recent", "latest", "past", "previous", "earlier",
    ],
    &["stage", "index", "staging"],
    &["unstaged", "working", "uncommitted", "pending", "modified"],
    &["message", "chat", "post", "text"],
    &["channel", "room", "conversation", "group"],
    &["thread", "replies", "discussion"],
    &[
        "user",
        "person",
        "member",
        "people",
        "account",
        "profile",
        "teammate",
        "colleague",
        "team",
    ],
    &[
        "image",
        "picture",
        "photo",
        "screenshot",
        "png",
        "jpeg",
        "jpg",
        "gif",
        "webp",
        "svg",
        "capture",
        "snapshot",
    ],
    &[
        "page", "website", "site", "url", "link", "webpage", "web", "browser", "html",
    ],
    &["time", "clock", "hour", "date", "now", "current"],
    &["timezone", "zone", "tz"],
    &["weather", "forecast", "temperature"],
    &[
        "database",
        "db",
        "sql",
        "table",
        "postgres",
        "postgresql",
        "sqlite",
    ],
    &["entity", "node", "object", "item"],
    &["relation", "relationship", "link", "edge", "connection"],
    &["observation", "fact", "note", "detail"],
    &["graph", "knowledge"],
    &["environment", "env", "variable", "config", "setting"],
    &[
        "size", "length", "bytes", "big", "biggest", "large", "largest", "small", "huge",
    ],
    &["tree", "hierarchy", "structure", "recursive", "nested"],
    &[
        "info",
        "information",
        "metadata",
        "detail",
        "stat",
        "property",
        "attribute",
    ],
    &["allowed", "permitted", "accessible", "permission"],
    &["content", "contents", "text", "body", "source", "inside"],
    &["code", "source", "snippet", "function", "symbol"],
    &[
        "place", "location", "address", "map", "poi", "venue", "spot", "nearby",
    ],
    &["direction", "route", "path", "navigation"],
    &["distance", "far", "travel"],
    &["elevation", "altitude", "height", "high"],
    &[
        "coordinate",
        "latitude",
        "longitude",
        "lat",
        "lng",
        "gps",
        "geographic",
        "geocode",
    ],
    &["error", "exception", "crash", "failure", "problem"],
    &["resource", "reference", "attachment"],
    &["long", "slow", "progress", "lengthy"],
    &["sample", "sampling", "llm", "model", "completion"],
    &["annotation", "annotated", "label"],
];

/// The loaded tables, stemmed.
pub(crate) struct Lexicon {
    /// stem → stems of every word sharing a group with it.
    synonyms: HashMap<String, Vec<String>>,
    /// Chinese word → English stems.
    zh_to_en: HashMap<&'static str, Vec<String>>,
    /// English stem → Chinese words.
    en_to_zh: HashMap<String, Vec<&'static str>>,
    /// The longest Chinese entry, in characters.
    longest_zh: usize,
}

impl Lexicon {
    /// The shared tables (built once).
    pub(crate) fn get() -> &'static Self {
        static LEXICON: OnceLock<Lexicon> = OnceLock::new();
        LEXICON.get_or_init(Self::load)
    }

    fn load() -> Self {
        let mut synonyms: HashMap<String, Vec<String>> = HashMap::new();
        for group in SYNONYM_GROUPS {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            for s in &stems {
                let entry = synonyms.entry(s.clone()).or_default();
                for other in &stems {
                    if other != s && !entry.contains(other) {
                        entry.push(other.clone());
                    }
                }
            }
        }
        let mut zh_to_en = HashMap::new();
        let mut en_to_zh: HashMap<String, Vec<&'static str>> = HashMap::new();
        let mut longest_zh = 1;
        for (zh, words) in GLOSSARY {
            let stems: Vec<String> = words.iter().map(|w| stem(w)).collect();
            for s in &stems {
                en_to_zh.entry(s.clone()).or_default().push(zh);
            }
            longest_zh = longest_zh.max(zh.chars().count());
            zh_to_en.insert(*zh, stems);
        }
        Self {
            synonyms,
            zh_to_en,
            en_to_zh,
            longest_zh,
        }
    }

    /// Stems sharing a synonym group with `stem`.
    pub(crate) fn synonyms(&self, stem: &str) -> &[String] {
        self.synonyms.get(stem).map_or(&[], Vec::as_slice)
    }

    /// Chinese words glossed by an English stem.
    pub(crate) fn chinese_for(&self, stem: &str) -> &[&'static str] {
        self.en_to_zh.get(stem).map_or(&[], Vec::as_slice)
    }

    /// Segments a Han run by forward maximum matching against the glossary: each match with
    /// its English stems. Characters no entry covers are skipped.
    pub(crate) fn segment(&self, run: &str) -> Vec<(&'static str, &[String])> {
        let chars: Vec<char> = run.chars().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let mut matched = None;
            for len in (1..=self.longest_zh.min(chars.len() - i)).rev() {
                let candidate: String = chars[i..i + len].iter().collect();
                if let Some((key, stems)) = self.zh_to_en.get_key_value(candidate.as_str()) {
                    matched = Some((*key, stems.as_slice(), len));
                    break;
                }
            }
            match matched {
                Some((key, stems, len)) => {
                    out.push((key, stems));
                    i += len;
                }
                None => i += 1,
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synonyms_are_symmetric_and_stemmed() {
        let lex = Lexicon::get();
        assert!(lex.synonyms(&stem("delete")).contains(&stem("remove")));
        assert!(lex.synonyms(&stem("remove")).contains(&stem("delete")));
        assert!(lex.synonyms(&stem("folder")).contains(&stem("directory")));
        assert!(lex.synonyms("nonsense").is_empty());
    }

    #[test]
    fn segmentation_prefers_longest_entries() {
        let lex = Lexicon::get();
        let words: Vec<&str> = lex
            .segment("帮我查看文件夹里的所有文件")
            .iter()
            .map(|(zh, _)| *zh)
            .collect();
        assert_eq!(words, ["查看", "文件夹", "所有", "文件"]);
        let words: Vec<&str> = lex
            .segment("创建拉取请求")
            .iter()
            .map(|(zh, _)| *zh)
            .collect();
        assert_eq!(words, ["创建", "拉取请求"]);
        assert!(lex.chinese_for(&stem("file")).contains(&"文件"));
    }
}
