//! `cargo xtask bench memory` (or `cargo run --release -p kun-memory --example bench_memory`).
//!
//! Over 10,000 memories in a real SQLite file: four in five English-like (5,000 words), one in
//! five Chinese (2,000 words, no spaces), words drawn with Zipf frequencies as natural
//! language has them; three scopes, ten workspaces:
//!
//! 1. **create**: time per `create` (one transaction each, WAL).
//! 2. **search**: `memory_search`-style query latency (FTS5, BM25 then recency, visibility
//!    filter, limit 8), p50/p95/max, side by side with the anchor: the same words as a
//!    `LIKE '%word%'` scan of the same table (what a store without a full-text index does).
//! 3. **retrieve**: per-turn retrieval for a 20-word prompt, p50/p95.
//!
//! Options: `--memories N` (default 10000), `--queries N` (default 300).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark program")]

use kun_memory::{RetrievalOptions, SqliteMemoryStore, place_for, retrieve};
use kun_ports::{MemoryPlace, MemoryQuery, MemoryScope, MemoryStore, NewMemory, ToolHostContext};
use std::time::{Duration, Instant};

/// Syllables the synthetic English-like words are made of.
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "de", "ba", "pre", "con", "ter", "ment", "ing",
    "al", "ex", "str", "ion", "ra", "per", "com", "dis", "ver", "ly", "ble", "fi", "go", "hu",
    "zen",
];
/// Han characters the synthetic Chinese words are made of.
const HAN: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处府研越门";

/// A small deterministic generator (xorshift), so every run builds the same corpus.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[(self.next() % words.len() as u64) as usize]
    }
    /// A rank in `0..n` with Zipf-like frequencies (rank r has weight 1/(r+1)), as natural
    /// language has: a few words everywhere, most words rare.
    fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        // Inverse of the continuous approximation of the harmonic CDF.
        let r = ((n as f64 + 1.0).powf(u) - 1.0).floor() as usize;
        r.min(n - 1)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The corpus's vocabularies: 5,000 English-like words and 2,000 two-character Chinese
/// words, each used with Zipf frequencies.
struct Vocabulary {
    en: Vec<String>,
    zh: Vec<String>,
}

impl Vocabulary {
    fn new(rng: &mut Rng) -> Self {
        let han: Vec<char> = HAN.chars().collect();
        let mut en = std::collections::BTreeSet::new();
        while en.len() < 5000 {
            let n = 2 + rng.below(3);
            en.insert((0..n).map(|_| rng.pick(SYLLABLES)).collect::<String>());
        }
        let mut zh = std::collections::BTreeSet::new();
        while zh.len() < 2000 {
            let a = han[rng.below(han.len() as u64) as usize];
            let b = han[rng.below(han.len() as u64) as usize];
            zh.insert(format!("{a}{b}"));
        }
        // Shuffle so Zipf rank is unrelated to spelling.
        let mut en: Vec<String> = en.into_iter().collect();
        let mut zh: Vec<String> = zh.into_iter().collect();
        for list in [&mut en, &mut zh] {
            for i in (1..list.len()).rev() {
                list.swap(i, rng.below(i as u64 + 1) as usize);
            }
        }
        Self { en, zh }
    }

    fn en_word(&self, rng: &mut Rng) -> &str {
        &self.en[rng.zipf(self.en.len())]
    }

    fn zh_word(&self, rng: &mut Rng) -> &str {
        &self.zh[rng.zipf(self.zh.len())]
    }

    /// A memory: four in five English (8–20 words), one in five Chinese (4–11 words, no spaces).
    fn sentence(&self, rng: &mut Rng) -> String {
        if rng.below(5) == 0 {
            let n = 4 + rng.below(8);
            (0..n)
                .map(|_| self.zh_word(rng))
                .collect::<Vec<_>>()
                .join("")
        } else {
            let n = 8 + rng.below(13);
            (0..n)
                .map(|_| self.en_word(rng))
                .collect::<Vec<_>>()
                .join(" ")
        }
    }

    /// A query: one to three words (English), or one Chinese word.
    fn query(&self, rng: &mut Rng) -> String {
        if rng.below(5) == 0 {
            self.zh_word(rng).to_owned()
        } else {
            let n = 1 + rng.below(3);
            (0..n)
                .map(|_| self.en_word(rng))
                .collect::<Vec<_>>()
                .join(" ")
        }
    }
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The anchor: every query word as `content LIKE '%word%'`, OR-ed, same visibility, newest
/// first, limit 8.
fn like_scan(conn: &rusqlite::Connection, place: &MemoryPlace, words: &[String]) -> usize {
    let likes: Vec<String> = (0..words.len())
        .map(|i| format!("content LIKE ?{}", i + 3))
        .collect();
    let sql = format!(
        "SELECT id, content FROM memories WHERE (scope = 'user' OR (scope = 'workspace' AND scope_key = ?1) \
         OR (scope = 'project' AND scope_key = ?2)) AND ({}) ORDER BY updated_at DESC LIMIT 8",
        likes.join(" OR ")
    );
    let mut statement = conn.prepare_cached(&sql).unwrap();
    let mut params: Vec<String> = vec![place.workspace.clone(), place.project.clone()];
    params.extend(words.iter().map(|w| format!("%{w}%")));
    let rows = statement
        .query_map(rusqlite::params_from_iter(params.iter()), |row| {
            row.get::<_, i64>(0)
        })
        .unwrap();
    rows.count()
}

fn main() {
    let memories = arg("--memories", 10_000);
    let queries = arg("--queries", 300);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join("memory.sqlite");
    let store = SqliteMemoryStore::open(&file).unwrap();
    let workspaces: Vec<tempfile::TempDir> =
        (0..10).map(|_| tempfile::tempdir().unwrap()).collect();
    let places: Vec<MemoryPlace> = workspaces.iter().map(|w| place_for(w.path())).collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let vocabulary = Vocabulary::new(&mut rng);

    println!(
        "== kun-memory over {memories} memories (SQLite {}, FTS5)",
        rusqlite::version()
    );
    let started = Instant::now();
    runtime.block_on(async {
        for i in 0..memories {
            let scope = MemoryScope::ALL[i % 3];
            let place = &places[(rng.below(places.len() as u64)) as usize];
            let content = vocabulary.sentence(&mut rng);
            store
                .create(
                    place,
                    NewMemory {
                        scope,
                        content,
                        tags: Vec::new(),
                    },
                )
                .await
                .unwrap();
        }
    });
    let took = started.elapsed();
    println!(
        "create:                        {:>10.1} µs per memory ({:.0} creates/s)",
        micros(took) / memories as f64,
        memories as f64 / took.as_secs_f64()
    );

    let here = &places[0];
    let anchor = rusqlite::Connection::open(&file).unwrap();
    let texts: Vec<String> = (0..queries).map(|_| vocabulary.query(&mut rng)).collect();
    let mut fts = Vec::with_capacity(queries);
    let mut like = Vec::with_capacity(queries);
    let (mut fts_hits, mut like_hits) = (0, 0);
    for (round, text) in texts
        .iter()
        .cycle()
        .take(queries + queries / 10)
        .enumerate()
    {
        // Interleaved so both see the same load; the first tenth warms up.
        let q = MemoryQuery {
            text: text.clone(),
            scopes: Vec::new(),
            limit: 8,
        };
        let started = Instant::now();
        let found = runtime.block_on(store.search(here, &q)).unwrap();
        let fts_took = started.elapsed();
        let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
        let started = Instant::now();
        let scanned = like_scan(&anchor, here, &words);
        let like_took = started.elapsed();
        if round >= queries / 10 {
            fts.push(fts_took);
            like.push(like_took);
            fts_hits += found.len();
            like_hits += scanned;
        }
    }
    fts.sort();
    like.sort();
    println!(
        "search (FTS5, BM25, limit 8):  {:>10.1} µs p50, {:.1} µs p95, {:.1} µs max ({} queries, {:.1} hits each)",
        micros(percentile(&fts, 0.5)),
        micros(percentile(&fts, 0.95)),
        micros(percentile(&fts, 1.0)),
        fts.len(),
        fts_hits as f64 / fts.len() as f64
    );
    println!(
        "anchor: LIKE scan, limit 8:    {:>10.1} µs p50, {:.1} µs p95 ({:.1} hits each, unranked)",
        micros(percentile(&like, 0.5)),
        micros(percentile(&like, 0.95)),
        like_hits as f64 / like.len() as f64
    );
    println!(
        "ratio search / LIKE scan:      {:>10.2}× at p50",
        percentile(&fts, 0.5).as_secs_f64() / percentile(&like, 0.5).as_secs_f64()
    );

    let ctx = ToolHostContext::builder("bench", "turn")
        .workspace(workspaces[0].path())
        .build();
    let mut turns = Vec::new();
    for _ in 0..100 {
        let prompt: Vec<String> = (0..20)
            .map(|_| vocabulary.en_word(&mut rng).to_owned())
            .collect();
        let prompt = format!("Could you please {} ?", prompt.join(" "));
        let started = Instant::now();
        let found = runtime
            .block_on(retrieve(&store, &prompt, &ctx, RetrievalOptions::default()))
            .unwrap();
        turns.push(started.elapsed());
        assert!(found.memories.len() <= 8);
    }
    turns.sort();
    println!(
        "retrieve (20-word prompt):     {:>10.1} µs p50, {:.1} µs p95",
        micros(percentile(&turns, 0.5)),
        micros(percentile(&turns, 0.95))
    );
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0)
        + std::fs::metadata(file.with_extension("sqlite-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
    println!(
        "file size:                     {:>10.1} MiB",
        size as f64 / (1024.0 * 1024.0)
    );
}
