//! Benchmark: `grep` and `glob` against ripgrep on the same trees, with the same results.
//!
//! ```text
//! cargo run --release -p kun-builtin-tools --example bench_search
//! ```
//!
//! Trees:
//! * **generated**: about 21,000 files and 120 MB of code-like text (some of it `.gitignore`d,
//!   some hidden, a few binary files), built once and cached under `target/bench-search-tree`;
//! * **cargo registry**: the crate sources on this machine (`~/.cargo/registry/src`), if any.
//!
//! For each tree and query (grep literal, grep regex, grep case-insensitive, glob) it runs our
//! tool (one page holding the whole result) and `rg` (`rg -n`, `rg --files -g`), checks that
//! both found the same lines or files, then times several warm runs of each and prints the
//! medians and the ratio ours/rg (target ≤ 1.2). `BENCH_RUNS` sets the number of timed runs
//! (default 7). `BENCH_ONLY` (a word such as `glob` or `regex`) keeps only the queries whose label
//! contains it, in both tables. `rg` must be on PATH for the comparison (`cargo install ripgrep`).
//!
//! Then **paging**, as a model pages: our tools with the default page size, called again with
//! each `next_cursor` until there is none. Per query it reports our first page, all our pages,
//! one `rg` run over the whole tree, and the ratios (targets ≤ 1.2 for both). The pages joined
//! must equal `rg --sort path`'s output line for line, in order; the program fails if not.

use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::search::{GlobTool, GrepTool};
use kun_builtin_tools::testing::SimpleSandbox;
use kun_ports::{NoProgress, Tool, ToolContext, ToolHostContext};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) type Res<T> = Result<T, Box<dyn Error>>;

#[path = "bench_search/tree.rs"]
mod tree;

#[path = "bench_search/paging.rs"]
mod paging;

fn main() -> Res<()> {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7)
        .max(1);
    let rg = rg_version();
    match &rg {
        Some(version) => println!("comparing with {version}"),
        None => println!(
            "rg not found on PATH: install it with `cargo install ripgrep` to compare; timing ours only"
        ),
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut trees = vec![("generated", tree::generated_tree()?, generated_queries())];
    if let Some(registry) = registry_tree() {
        trees.push(("cargo registry", registry, registry_queries()));
    } else {
        println!("no ~/.cargo/registry/src on this machine: skipping the second tree");
    }
    println!(
        "{runs} interleaved timed runs per query after one warm-up run; medians in milliseconds;"
    );
    println!(
        "cpu = process CPU time (user + system) over all runs, less sensitive to other load\n"
    );
    println!(
        "{:<15} {:<18} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "tree", "query", "ours", "rg", "ours/rg", "cpu o/rg", "results"
    );
    let mut worst: f64 = 0.0;
    for (tree_name, root, queries) in trees {
        let bench = Bench::new(&root);
        for query in queries.into_iter().filter(|q| selected(q.label)) {
            let row = measure(&runtime, &bench, &root, &query, runs, rg.is_some())?;
            let ratio = |ours: f64, theirs: Option<f64>| {
                theirs.map_or("-".to_owned(), |theirs| {
                    format!("{:.2}", ours / theirs.max(1e-9))
                })
            };
            if let Some(rg_wall) = row.rg_wall {
                worst = worst.max(row.ours_wall / rg_wall.max(1e-9));
            }
            println!(
                "{:<15} {:<18} {:>8.1} {:>8} {:>8} {:>8} {:>8}",
                tree_name,
                query.label,
                row.ours_wall,
                row.rg_wall.map_or("-".to_owned(), |ms| format!("{ms:.1}")),
                ratio(row.ours_wall, row.rg_wall),
                ratio(row.ours_cpu, row.rg_cpu),
                row.results
            );
        }
    }
    if rg.is_some() {
        println!("\nworst wall-clock ratio ours/rg: {worst:.2} (target ≤ 1.20)");
    }
    paging::run(&runtime, &tree::generated_tree()?, runs, rg.is_some())?;
    Ok(())
}

/// Whether the query labelled `label` is measured: `BENCH_ONLY`, when set, must occur in it.
pub(crate) fn selected(label: &str) -> bool {
    std::env::var("BENCH_ONLY").map_or(true, |only| label.contains(only.as_str()))
}

/// One line of the report: medians in milliseconds, CPU ticks summed over the runs.
struct Measured {
    ours_wall: f64,
    rg_wall: Option<f64>,
    ours_cpu: f64,
    rg_cpu: Option<f64>,
    results: usize,
}

/// Checks that ours and `rg` agree, then times interleaved runs of both (so both sides see the
/// same background load).
fn measure(
    runtime: &tokio::runtime::Runtime,
    bench: &Bench,
    root: &Path,
    query: &Query,
    runs: usize,
    with_rg: bool,
) -> Res<Measured> {
    let ours = runtime.block_on(bench.ours(query))?;
    if with_rg {
        compare(query, &ours, &rg_run(root, query)?)?;
    }
    let (mut ours_times, mut rg_times) = (Vec::new(), Vec::new());
    let (mut ours_cpu, mut rg_cpu) = (0u64, 0u64);
    for _ in 0..runs {
        let before = cpu_ticks();
        ours_times.push(runtime.block_on(bench.timed_ours(query))?);
        let middle = cpu_ticks();
        if with_rg {
            rg_times.push(rg_timed(root, query)?);
        }
        let after = cpu_ticks();
        ours_cpu += middle.0.saturating_sub(before.0);
        rg_cpu += after.1.saturating_sub(middle.1);
    }
    Ok(Measured {
        ours_wall: ms(median(ours_times)),
        rg_wall: with_rg.then(|| ms(median(rg_times))),
        ours_cpu: ours_cpu as f64,
        rg_cpu: (with_rg && rg_cpu > 0).then_some(rg_cpu as f64),
        results: ours.len(),
    })
}

/// CPU clock ticks (user + system) of this process and of its waited-for children, from
/// `/proc/self/stat`; zeros where that file does not exist.
pub(crate) fn cpu_ticks() -> (u64, u64) {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return (0, 0);
    };
    // Fields after the command name: state is field 3; utime, stime, cutime, cstime are 14-17.
    let fields: Vec<u64> = stat
        .rsplit_once(')')
        .map(|(_, rest)| {
            rest.split_whitespace()
                .skip(11)
                .take(4)
                .filter_map(|f| f.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    match fields.as_slice() {
        [utime, stime, cutime, cstime] => (utime + stime, cutime + cstime),
        _ => (0, 0),
    }
}

/// One query, as tool arguments and as `rg` arguments.
struct Query {
    label: &'static str,
    kind: QueryKind,
    args: Value,
    rg: Vec<&'static str>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum QueryKind {
    Grep,
    Glob,
}

fn grep(label: &'static str, args: Value, rg: Vec<&'static str>) -> Query {
    Query {
        label,
        kind: QueryKind::Grep,
        args,
        rg,
    }
}

fn glob(pattern: &'static str) -> Query {
    Query {
        label: "glob",
        kind: QueryKind::Glob,
        args: json!({"pattern": pattern}),
        rg: vec!["-g", pattern],
    }
}

fn generated_queries() -> Vec<Query> {
    vec![
        grep(
            "grep literal",
            json!({"pattern": "kun_bench_needle", "literal": true}),
            vec!["-F", "kun_bench_needle"],
        ),
        grep(
            "grep regex",
            json!({"pattern": r"fn [a-z]+_handler_\d+\("}),
            vec![r"fn [a-z]+_handler_\d+\("],
        ),
        grep(
            "grep ignore-case",
            json!({"pattern": "error_code_7", "ignoreCase": true}),
            vec!["-i", "error_code_7"],
        ),
        glob("*.rs"),
    ]
}

fn registry_queries() -> Vec<Query> {
    vec![
        grep(
            "grep literal",
            json!({"pattern": "unsafe impl", "literal": true}),
            vec!["-F", "unsafe impl"],
        ),
        grep(
            "grep regex",
            json!({"pattern": r"fn \w+_mut\("}),
            vec![r"fn \w+_mut\("],
        ),
        grep(
            "grep ignore-case",
            json!({"pattern": "deprecated", "ignoreCase": true}),
            vec!["-i", "deprecated"],
        ),
        glob("*.toml"),
    ]
}

/// Results as comparable rows: `path:line` for grep (plus the text when we did not clip it),
/// the path for glob.
type Rows = BTreeSet<String>;

/// Our tools over one tree, with pages large enough to hold any result.
struct Bench {
    ctx: ToolHostContext,
    grep: GrepTool,
    glob: GlobTool,
}

impl Bench {
    fn new(root: &Path) -> Self {
        let limits = OutputLimits::new(100_000_000, usize::MAX / 4);
        let ctx = ToolHostContext::builder("bench", "turn")
            .workspace(root.to_path_buf())
            .build();
        Self {
            ctx,
            grep: GrepTool::new(limits),
            glob: GlobTool::new(limits),
        }
    }

    async fn call(&self, query: &Query) -> Res<Value> {
        let ctx = ToolContext {
            turn: kun_ports::ToolTurn::of(&self.ctx, &kun_ports::OpenCatalog),
            call_id: "bench",
            sandbox: &SimpleSandbox,
            progress: &NoProgress,
        };
        let tool: &dyn Tool = match query.kind {
            QueryKind::Grep => &self.grep,
            QueryKind::Glob => &self.glob,
        };
        let result = tool.execute(query.args.clone(), ctx).await?;
        if result.is_error || result.output.get("next_cursor").is_some() {
            return Err(format!("{}: unexpected result {}", query.label, result.output).into());
        }
        Ok(result.output)
    }

    async fn timed_ours(&self, query: &Query) -> Res<Duration> {
        let start = Instant::now();
        let output = self.call(query).await?;
        let elapsed = start.elapsed();
        drop(output);
        Ok(elapsed)
    }

    async fn ours(&self, query: &Query) -> Res<Rows> {
        let output = self.call(query).await?;
        let mut rows = Rows::new();
        match query.kind {
            QueryKind::Grep => {
                for m in output["matches"].as_array().into_iter().flatten() {
                    let (path, line, text) =
                        (m["path"].as_str(), m["line"].as_u64(), m["text"].as_str());
                    let (Some(path), Some(line), Some(text)) = (path, line, text) else {
                        return Err(format!("malformed match {m}").into());
                    };
                    rows.insert(row(
                        path,
                        line,
                        (!text.contains("… [line clipped: ")).then_some(text),
                    ));
                }
            }
            QueryKind::Glob => {
                for path in output["files"].as_array().into_iter().flatten() {
                    rows.insert(path.as_str().unwrap_or_default().to_owned());
                }
            }
        }
        let total = output["total"].as_u64().unwrap_or_default();
        if usize::try_from(total).ok() != Some(rows.len()) {
            return Err(format!(
                "{}: total {total} but {} distinct rows",
                query.label,
                rows.len()
            )
            .into());
        }
        Ok(rows)
    }
}

fn row(path: &str, line: u64, text: Option<&str>) -> String {
    match text {
        Some(text) => format!("{path}:{line}:{text}"),
        None => format!("{path}:{line}"),
    }
}

fn rg_command(root: &Path, query: &Query) -> Command {
    let mut command = Command::new("rg");
    command
        .current_dir(root)
        .env_remove("RIPGREP_CONFIG_PATH")
        .args(["--no-config", "--no-require-git", "--color", "never"]);
    match query.kind {
        QueryKind::Grep => {
            command.args(["--line-number", "--no-heading", "--with-filename", "--null"])
        }
        QueryKind::Glob => command.arg("--files"),
    };
    command.args(&query.rg);
    command
}

fn rg_timed(root: &Path, query: &Query) -> Res<Duration> {
    let start = Instant::now();
    let output = rg_command(root, query).output()?;
    let elapsed = start.elapsed();
    if output.status.code() == Some(2) {
        return Err(format!("rg failed: {}", String::from_utf8_lossy(&output.stderr)).into());
    }
    Ok(elapsed)
}

/// `rg`'s results as rows; our clipped lines are compared by `path:line` only.
fn rg_run(root: &Path, query: &Query) -> Res<Rows> {
    let output = rg_command(root, query).output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut rows = Rows::new();
    for line in stdout.lines() {
        match query.kind {
            QueryKind::Glob => {
                rows.insert(line.to_owned());
            }
            QueryKind::Grep => {
                let Some((path, rest)) = line.split_once('\0') else {
                    continue;
                };
                let Some((number, text)) = rest.split_once(':') else {
                    continue;
                };
                let text = text.trim_end_matches('\r');
                let number: u64 = number.parse()?;
                rows.insert(row(path, number, (text.len() <= 400).then_some(text)));
            }
        }
    }
    Ok(rows)
}

fn compare(query: &Query, ours: &Rows, theirs: &Rows) -> Res<()> {
    if ours == theirs {
        return Ok(());
    }
    let only_ours: Vec<_> = ours.difference(theirs).take(5).collect();
    let only_rg: Vec<_> = theirs.difference(ours).take(5).collect();
    Err(format!(
        "{}: results differ ({} ours, {} rg); only ours: {only_ours:?}; only rg: {only_rg:?}",
        query.label,
        ours.len(),
        theirs.len()
    )
    .into())
}

pub(crate) fn rg_version() -> Option<String> {
    let output = Command::new("rg").arg("--version").output().ok()?;
    output.status.success().then(|| {
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap_or("rg")
            .to_owned()
    })
}

pub(crate) fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

pub(crate) fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn registry_tree() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))?;
    let src = home.join("registry").join("src");
    src.is_dir().then(|| src.canonicalize().unwrap_or(src))
}
