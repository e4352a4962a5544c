//! Retrieval for runtimes: the memories worth showing the model before a turn, with the
//! user's prompt as the query.
//!
//! At most [`RetrievalOptions::limit`] memories (8 by default) visible from the turn's primary
//! workspace, ranked by BM25 then recency, rendered `- [id] (scope) content` within
//! [`RetrievalOptions::byte_budget`] bytes: a memory that does not fit what is left is skipped
//! and the next one tried. Common English words are left out of the query (they match
//! everything and rank nothing).

use crate::place_for;
use crate::render::render_memory;
use kun_ports::{Memory, MemoryError, MemoryQuery, MemoryStore, ToolHostContext};

/// How much retrieval may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrievalOptions {
    /// At most this many memories.
    pub limit: usize,
    /// At most this many bytes of rendered text.
    pub byte_budget: usize,
}

impl Default for RetrievalOptions {
    fn default() -> Self {
        Self {
            limit: 8,
            byte_budget: 4096,
        }
    }
}

/// What retrieval found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retrieved {
    /// The memories, best first.
    pub memories: Vec<Memory>,
    /// Their rendering, one `- [id] (scope) content` item each (empty when none).
    pub text: String,
}

/// Words too common to search for.
const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "do", "does",
    "for", "from", "have", "how", "i", "if", "in", "is", "it", "me", "my", "of", "on", "or", "our",
    "please", "should", "so", "that", "the", "this", "to", "us", "was", "we", "what", "when",
    "where", "which", "why", "will", "with", "would", "you", "your",
];

/// How many words of a prompt are searched for at most.
const MAX_QUERY_WORDS: usize = 48;

/// The query for a prompt: its words without the common ones, at most `MAX_QUERY_WORDS` (48).
#[must_use]
pub fn prompt_query(prompt: &str) -> String {
    prompt
        .split(|c: char| !(c.is_alphanumeric() || crate::segment::is_cjk(c)))
        .filter(|word| !word.is_empty() && !STOPWORDS.contains(&word.to_lowercase().as_str()))
        .take(MAX_QUERY_WORDS)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The memories for a turn whose prompt is `prompt`.
///
/// # Errors
/// When the store fails. A prompt with no searchable words retrieves nothing.
pub async fn retrieve(
    store: &dyn MemoryStore,
    prompt: &str,
    ctx: &ToolHostContext,
    options: RetrievalOptions,
) -> Result<Retrieved, MemoryError> {
    let text = prompt_query(prompt);
    if options.limit == 0 || crate::segment::fts_query(&text).is_none() {
        return Ok(Retrieved::default());
    }
    let place = place_for(ctx.primary_root());
    let query = MemoryQuery {
        text,
        scopes: Vec::new(),
        limit: options.limit,
    };
    let mut out = Retrieved::default();
    for memory in store.search(&place, &query).await? {
        let item = render_memory(&memory);
        let needed = item.len() + usize::from(!out.text.is_empty());
        if out.text.len() + needed > options.byte_budget {
            continue;
        }
        if !out.text.is_empty() {
            out.text.push('\n');
        }
        out.text.push_str(&item);
        out.memories.push(memory);
    }
    Ok(out)
}
