//! BM25 over MCP tools, with two kinds of fields.
//!
//! * **Names** — the catalog name, the original name and the title — are scored on their own
//!   (no length normalisation) and boosted ×1.5: a request word in a tool's name is strong
//!   evidence.
//! * **Everything else**, weighted into one term frequency:
//!
//! | field | weight |
//! |---|---|
//! | server name | 1.5 |
//! | description | 1 |
//! | parameters: names, titles, descriptions, string enums (nested) | 0.6 |
//! | risk words from annotations (read-only, destructive, open-world) | 0.3 |
//!
//! Per request term `q` (with its expansion weight `w`):
//! `w · idf · (1.5 · sat(tf_names, 1) + sat(tf_rest, 1 − b + b·len/avg))` with
//! `sat(tf, n) = tf·(k1+1)/(tf + k1·n)`, `k1 = 1.2`, `b = 0.5` and
//! `idf = ln(1 + (N − df + 0.5)/(df + 0.5))`. The sum is multiplied by
//! `0.35 + 0.65 · covered/concepts`: a tool matching more of the request's words ranks above
//! one matching a single word often.
//!
//! A request that **names a server** ("… on GitHub", "in slack", "google maps") prefers that
//! server: its tools are multiplied by 1.5 — but only those that also match another word of
//! the request, so a server named like an ordinary word ("everything", "time") does not pull
//! in tools that match nothing else. Hits below 15% of the best score are dropped. Ties break
//! by position, so results are deterministic.

use super::query::Query;
use super::tokenize::terms;
use crate::annotations::ToolHints;
use crate::record::McpToolRecord;
use serde_json::Value;
use std::collections::HashMap;

const K1: f32 = 1.2;
const B: f32 = 0.5;
const NAMES: f32 = 1.5;
const SERVER: f32 = 1.5;
const DESCRIPTION: f32 = 1.0;
const PARAMETERS: f32 = 0.6;
const RISK: f32 = 0.3;
const COVERAGE_FLOOR: f32 = 0.35;
const RELATIVE_CUTOFF: f32 = 0.15;
/// Multiplier of a tool whose server the request names (and which matches something else).
const SERVER_NAMED: f32 = 1.5;
/// How deep parameter schemas are read.
const MAX_SCHEMA_DEPTH: usize = 4;

/// Where a term was found.
#[derive(Clone, Copy)]
enum Field {
    /// Catalog name, original name, title: scored on their own, boosted by [`NAMES`].
    Names,
    /// Anything else, with this weight.
    Other(f32),
}

/// The text of one tool that search reads.
#[derive(Debug, Clone, Copy)]
pub struct SearchDoc<'a> {
    /// Catalog name.
    pub name: &'a str,
    /// Configured server name.
    pub server: &'a str,
    /// The tool's original name.
    pub tool: &'a str,
    /// Its title, if any.
    pub title: Option<&'a str>,
    /// Its description.
    pub description: &'a str,
    /// Its input schema.
    pub input_schema: &'a Value,
    /// Its annotations.
    pub hints: Option<&'a ToolHints>,
}

impl<'a> From<&'a McpToolRecord> for SearchDoc<'a> {
    fn from(record: &'a McpToolRecord) -> Self {
        Self {
            name: &record.name,
            server: &record.address.server,
            tool: &record.address.tool,
            title: record.title.as_deref(),
            description: &record.description,
            input_schema: &record.input_schema,
            hints: record.hints.as_ref(),
        }
    }
}

/// A term's frequencies in one tool: in its names (catalog name, original name, title) and,
/// weighted, in everything else.
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    names: f32,
    rest: f32,
}

/// One result: the document's position in the index, its score and the request words it
/// matched.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    /// Position of the tool in the documents the index was built from.
    pub doc: usize,
    /// The score (higher is better).
    pub score: f32,
    /// Request words (concepts) the tool matched, in request order, at most 10.
    pub matched: Vec<String>,
}

/// A BM25 index over tools; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    postings: HashMap<String, Vec<Posting>>,
    doc_len: Vec<f32>,
    avg_len: f32,
    /// Each document's server (an index into `servers`).
    doc_server: Vec<u32>,
    /// Each server's name as search terms (`google-maps` → `google`, `map`).
    servers: Vec<Vec<String>>,
}

impl SearchIndex {
    /// Indexes `docs` (their order defines [`SearchHit::doc`]).
    #[must_use]
    pub fn build<'a>(docs: impl IntoIterator<Item = SearchDoc<'a>>) -> Self {
        let mut postings: HashMap<String, Vec<Posting>> = HashMap::new();
        let mut doc_len = Vec::new();
        let mut tf: HashMap<String, (f32, f32)> = HashMap::new();
        let mut servers: Vec<Vec<String>> = Vec::new();
        let mut server_ids: HashMap<String, u32> = HashMap::new();
        let mut doc_server = Vec::new();
        for (i, doc) in docs.into_iter().enumerate() {
            let next_id = u32::try_from(servers.len()).unwrap_or(u32::MAX);
            let server = *server_ids.entry(doc.server.to_owned()).or_insert_with(|| {
                servers.push(
                    terms(doc.server)
                        .into_iter()
                        .filter(|t| !t.contains('_'))
                        .collect(),
                );
                next_id
            });
            doc_server.push(server);
            tf.clear();
            let mut add = |text: &str, field: Field| {
                for term in terms(text) {
                    let slot = tf.entry(term).or_default();
                    match field {
                        Field::Names => slot.0 += 1.0,
                        Field::Other(weight) => slot.1 += weight,
                    }
                }
            };
            add(doc.name, Field::Names);
            add(doc.tool, Field::Names);
            if let Some(title) = doc.title {
                add(title, Field::Names);
            }
            add(doc.server, Field::Other(SERVER));
            add(doc.description, Field::Other(DESCRIPTION));
            let mut params = String::new();
            schema_text(doc.input_schema, 0, &mut params);
            add(&params, Field::Other(PARAMETERS));
            if let Some(hints) = doc.hints {
                add(&risk_words(hints), Field::Other(RISK));
            }
            let doc_id = u32::try_from(i).unwrap_or(u32::MAX);
            let mut length = 0.0;
            for (term, (names, rest)) in tf.drain() {
                length += rest;
                postings.entry(term).or_default().push(Posting {
                    doc: doc_id,
                    names,
                    rest,
                });
            }
            doc_len.push(length);
        }
        let count = doc_len.len().max(1);
        #[expect(
            clippy::cast_precision_loss,
            reason = "document counts are far below 2^24"
        )]
        let avg_len = (doc_len.iter().sum::<f32>() / count as f32).max(1.0);
        Self {
            postings,
            doc_len,
            avg_len,
            doc_server,
            servers,
        }
    }

    /// For each server the request names (every word of the server's name typed in the
    /// request), the concepts its name covers: `(server, concept bits)`.
    fn named_servers(&self, query: &Query) -> Vec<(u32, u64)> {
        let typed = |word: &str| {
            query
                .terms
                .iter()
                .find(|t| t.term == word && t.weight >= 1.0)
                .map(|t| t.concept.filter(|c| *c < 64).map_or(0, |c| 1u64 << c))
        };
        (0u32..)
            .zip(&self.servers)
            .filter(|(_, words)| !words.is_empty())
            .filter_map(|(id, words)| {
                words
                    .iter()
                    .map(|w| typed(w))
                    .try_fold(0u64, |bits, bit| bit.map(|b| bits | b))
                    .map(|bits| (id, bits))
            })
            .collect()
    }

    /// How many tools are indexed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// Whether nothing is indexed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// The best `limit` tools for `request` among those `accept` admits, best first.
    pub fn search(
        &self,
        request: &str,
        limit: usize,
        mut accept: impl FnMut(usize) -> bool,
    ) -> Vec<SearchHit> {
        let query = Query::parse(request);
        if query.terms.is_empty() || limit == 0 || self.doc_len.is_empty() {
            return Vec::new();
        }
        #[expect(
            clippy::cast_precision_loss,
            reason = "document counts are far below 2^24"
        )]
        let n = self.doc_len.len() as f32;
        let concepts = query.concepts.len();
        let named = self.named_servers(&query);
        let mut scores: HashMap<u32, (f32, u64)> = HashMap::new();
        for term in &query.terms {
            let Some(list) = self.postings.get(&term.term) else {
                continue;
            };
            #[expect(
                clippy::cast_precision_loss,
                reason = "posting lists are far below 2^24"
            )]
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            let bit = term.concept.filter(|c| *c < 64).map_or(0, |c| 1u64 << c);
            for posting in list {
                let len = self.doc_len[posting.doc as usize];
                let saturate = |tf: f32, norm: f32| {
                    if tf > 0.0 {
                        tf * (K1 + 1.0) / (tf + K1 * norm)
                    } else {
                        0.0
                    }
                };
                let names = saturate(posting.names, 1.0);
                let rest = saturate(posting.rest, 1.0 - B + B * len / self.avg_len);
                let slot = scores.entry(posting.doc).or_insert((0.0, 0));
                slot.0 += term.weight * idf * (NAMES * names + rest);
                slot.1 |= bit;
            }
        }
        let mut hits: Vec<(u32, f32, u64)> = scores
            .into_iter()
            .filter(|(doc, _)| accept(*doc as usize))
            .map(|(doc, (score, covered))| {
                let coverage = if concepts == 0 {
                    1.0
                } else {
                    #[expect(clippy::cast_precision_loss, reason = "at most 64 concepts")]
                    let ratio = covered.count_ones() as f32 / concepts.min(64) as f32;
                    ratio
                };
                let server = self.doc_server.get(doc as usize).copied();
                let preferred = named
                    .iter()
                    .any(|(id, name_bits)| Some(*id) == server && covered & !name_bits != 0);
                let boost = if preferred { SERVER_NAMED } else { 1.0 };
                (
                    doc,
                    boost * score * (COVERAGE_FLOOR + (1.0 - COVERAGE_FLOOR) * coverage),
                    covered,
                )
            })
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let best = hits.first().map_or(0.0, |h| h.1);
        hits.into_iter()
            .take_while(|h| h.1 >= best * RELATIVE_CUTOFF)
            .take(limit)
            .map(|(doc, score, covered)| SearchHit {
                doc: doc as usize,
                score,
                matched: query
                    .concepts
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i < 64 && covered & (1 << i) != 0)
                    .map(|(_, c)| c.clone())
                    .take(10)
                    .collect(),
            })
            .collect()
    }
}

/// Words describing a tool's risk, from its annotations.
fn risk_words(hints: &ToolHints) -> String {
    let mut words = Vec::new();
    if hints.read_only == Some(true) {
        words.push("read-only safe");
    }
    if hints.destructive == Some(true) {
        words.push("destructive delete");
    }
    if hints.open_world == Some(true) {
        words.push("external network internet");
    }
    words.join(" ")
}

/// Parameter names, titles, descriptions and string enums, recursively (bounded depth).
fn schema_text(schema: &Value, depth: usize, out: &mut String) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Value::Object(map) = schema else {
        return;
    };
    for key in ["title", "description"] {
        if depth > 0
            && let Some(Value::String(text)) = map.get(key)
        {
            out.push_str(text);
            out.push(' ');
        }
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        for value in values.iter().filter_map(Value::as_str) {
            out.push_str(value);
            out.push(' ');
        }
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        for (name, property) in properties {
            out.push_str(name);
            out.push(' ');
            schema_text(property, depth + 1, out);
        }
    }
    if let Some(items) = map.get("items") {
        schema_text(items, depth + 1, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(options)) = map.get(key) {
            for option in options {
                schema_text(option, depth + 1, out);
            }
        }
    }
}
