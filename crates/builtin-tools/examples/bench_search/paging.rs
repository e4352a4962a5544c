//! Paging as a model pages: the default page size, each `next_cursor` passed back until there is
//! none; timed per query (first page, all pages) against one `rg` run, and checked line for line
//! against `rg --sort path`.

use super::{Res, cpu_ticks, median, ms, selected};
use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::search::{GlobTool, GrepTool};
use kun_builtin_tools::testing::SimpleSandbox;
use kun_ports::{NoProgress, Tool, ToolContext, ToolHostContext};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// One paged query: tool arguments and the `rg` arguments giving the same result.
struct Paged {
    label: &'static str,
    glob: bool,
    args: Value,
    rg: &'static [&'static str],
}

fn queries() -> Vec<Paged> {
    let grep = |label, args, rg| Paged {
        label,
        glob: false,
        args,
        rg,
    };
    vec![
        grep(
            "literal",
            json!({"pattern": "kun_bench_needle", "literal": true}),
            &["-F", "kun_bench_needle"],
        ),
        grep(
            r"fn [a-z]+_handler\(",
            json!({"pattern": r"fn [a-z]+_handler\("}),
            &[r"fn [a-z]+_handler\("],
        ),
        grep(
            r"\bzq[a-z]{3}x\b",
            json!({"pattern": r"\bzq[a-z]{3}x\b"}),
            &[r"\bzq[a-z]{3}x\b"],
        ),
        grep(
            "error_code_7 -i",
            json!({"pattern": "error_code_7", "ignoreCase": true}),
            &["-i", "error_code_7"],
        ),
        Paged {
            label: "glob *.rs",
            glob: true,
            args: json!({"pattern": "*.rs"}),
            rg: &["-g", "*.rs"],
        },
    ]
}

/// Our tools with the default limits (what a model gets).
struct Pager {
    ctx: ToolHostContext,
    grep: GrepTool,
    glob: GlobTool,
}

/// One paging run: the rows in order, the pages, the time to the first page and to the last.
struct Run {
    rows: Vec<String>,
    pages: usize,
    first: Duration,
    all: Duration,
}

impl Pager {
    async fn call(&self, query: &Paged, args: Value) -> Res<Value> {
        let ctx = ToolContext {
            turn: kun_ports::ToolTurn::of(&self.ctx, &kun_ports::OpenCatalog),
            call_id: "bench",
            sandbox: &SimpleSandbox,
            progress: &NoProgress,
        };
        let tool: &dyn Tool = if query.glob { &self.glob } else { &self.grep };
        let result = tool.execute(args, ctx).await?;
        if result.is_error {
            return Err(format!("{}: error {}", query.label, result.output).into());
        }
        Ok(result.output)
    }

    async fn run(&self, query: &Paged) -> Res<Run> {
        let start = Instant::now();
        let mut first = None;
        let mut rows = Vec::new();
        let mut pages = 0usize;
        let mut cursor: Option<String> = None;
        loop {
            let mut args = query.args.clone();
            if let Some(cursor) = &cursor {
                args["cursor"] = json!(cursor);
            }
            let output = self.call(query, args).await?;
            first.get_or_insert_with(|| start.elapsed());
            pages += 1;
            collect(query, &output, &mut rows)?;
            match output["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => {
                    let total = output["total"].as_u64().unwrap_or_default();
                    if usize::try_from(total).ok() != Some(rows.len()) {
                        return Err(format!(
                            "{}: last page says total {total}, the pages held {}",
                            query.label,
                            rows.len()
                        )
                        .into());
                    }
                    break;
                }
            }
            if pages > 100_000 {
                return Err(format!("{}: paging does not end", query.label).into());
            }
        }
        Ok(Run {
            rows,
            pages,
            first: first.unwrap_or_default(),
            all: start.elapsed(),
        })
    }
}

/// Appends a page's entries as comparable rows: `path:line:text` (the text left out when we
/// clipped it), or the path.
fn collect(query: &Paged, output: &Value, rows: &mut Vec<String>) -> Res<()> {
    if query.glob {
        for path in output["files"].as_array().into_iter().flatten() {
            rows.push(path.as_str().unwrap_or_default().to_owned());
        }
        return Ok(());
    }
    for m in output["matches"].as_array().into_iter().flatten() {
        let (Some(path), Some(line), Some(text)) =
            (m["path"].as_str(), m["line"].as_u64(), m["text"].as_str())
        else {
            return Err(format!("malformed match {m}").into());
        };
        rows.push(row(path, line, text, text.contains("… [line clipped: ")));
    }
    Ok(())
}

fn row(path: &str, line: u64, text: &str, clipped: bool) -> String {
    if clipped {
        format!("{path}:{line}")
    } else {
        format!("{path}:{line}:{text}")
    }
}

fn rg_command(root: &Path, query: &Paged, sorted: bool) -> Command {
    let mut command = Command::new("rg");
    command
        .current_dir(root)
        .env_remove("RIPGREP_CONFIG_PATH")
        .args(["--no-config", "--no-require-git", "--color", "never"]);
    if sorted {
        command.args(["--sort", "path"]);
    }
    if query.glob {
        command.arg("--files");
    } else {
        command.args(["--line-number", "--no-heading", "--with-filename", "--null"]);
    }
    command.args(query.rg);
    command
}

/// `rg --sort path`'s rows, in its order.
fn rg_rows(root: &Path, query: &Paged) -> Res<Vec<String>> {
    let output = rg_command(root, query, true).output()?;
    if output.status.code() == Some(2) {
        return Err(format!("rg failed: {}", String::from_utf8_lossy(&output.stderr)).into());
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut rows = Vec::new();
    for line in stdout.lines() {
        if query.glob {
            rows.push(line.to_owned());
            continue;
        }
        let Some((path, rest)) = line.split_once('\0') else {
            continue;
        };
        let Some((number, text)) = rest.split_once(':') else {
            continue;
        };
        let text = text.trim_end_matches('\r');
        rows.push(row(path, number.parse()?, text, text.len() > 400));
    }
    Ok(rows)
}

/// One unsorted (parallel) `rg` run over the whole tree, as `rg` is used.
fn rg_timed(root: &Path, query: &Paged) -> Res<Duration> {
    let start = Instant::now();
    let output = rg_command(root, query, false).output()?;
    let elapsed = start.elapsed();
    if output.status.code() == Some(2) {
        return Err(format!("rg failed: {}", String::from_utf8_lossy(&output.stderr)).into());
    }
    Ok(elapsed)
}

/// Fails with the first difference when the pages joined are not `rg --sort path`'s output.
fn same_as_rg(label: &str, ours: &[String], theirs: &[String]) -> Res<()> {
    if ours == theirs {
        return Ok(());
    }
    let at = ours
        .iter()
        .zip(theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(theirs.len()));
    Err(format!(
        "{label}: the pages differ from rg --sort path ({} ours, {} rg); first difference at row {at}: \
         ours {:?}, rg {:?}",
        ours.len(),
        theirs.len(),
        ours.get(at),
        theirs.get(at)
    )
    .into())
}

/// Pages through every query, checks each against `rg`, and prints the table.
pub(crate) fn run(
    runtime: &tokio::runtime::Runtime,
    root: &Path,
    runs: usize,
    with_rg: bool,
) -> Res<()> {
    let pager = Pager {
        ctx: ToolHostContext::builder("bench", "turn")
            .workspace(root.to_path_buf())
            .build(),
        grep: GrepTool::new(OutputLimits::default()),
        glob: GlobTool::new(OutputLimits::default()),
    };
    println!(
        "\npaging through every result with the default page ({} lines / {} KB), generated tree; medians in ms",
        OutputLimits::default().max_lines,
        OutputLimits::default().max_bytes / 1024
    );
    println!(
        "{:<22} {:>7} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}",
        "query", "results", "pages", "first", "all", "rg", "first/rg", "all/rg", "cpu a/rg"
    );
    let mut worst: f64 = 0.0;
    for query in queries().into_iter().filter(|q| selected(q.label)) {
        let checked = runtime.block_on(pager.run(&query))?;
        if with_rg {
            same_as_rg(query.label, &checked.rows, &rg_rows(root, &query)?)?;
        }
        let (mut first, mut all, mut rg) = (Vec::new(), Vec::new(), Vec::new());
        let (mut ours_cpu, mut rg_cpu) = (0u64, 0u64);
        for _ in 0..runs {
            let before = cpu_ticks();
            let run = runtime.block_on(pager.run(&query))?;
            let middle = cpu_ticks();
            if run.rows.len() != checked.rows.len() {
                return Err(format!("{}: the result changed between runs", query.label).into());
            }
            first.push(run.first);
            all.push(run.all);
            if with_rg {
                rg.push(rg_timed(root, &query)?);
            }
            let after = cpu_ticks();
            ours_cpu += middle.0.saturating_sub(before.0);
            rg_cpu += after.1.saturating_sub(middle.1);
        }
        let (first, all) = (ms(median(first)), ms(median(all)));
        let rg = with_rg.then(|| ms(median(rg)));
        let ratio =
            |ours: f64| rg.map_or("-".to_owned(), |rg| format!("{:.2}", ours / rg.max(1e-9)));
        if let Some(rg) = rg {
            worst = worst.max(all / rg.max(1e-9)).max(first / rg.max(1e-9));
        }
        let cpu = if with_rg && rg_cpu > 0 {
            format!("{:.2}", ours_cpu as f64 / rg_cpu as f64)
        } else {
            "-".to_owned()
        };
        println!(
            "{:<22} {:>7} {:>6} {:>8.1} {:>8.1} {:>8} {:>8} {:>8} {:>9}",
            query.label,
            checked.rows.len(),
            checked.pages,
            first,
            all,
            rg.map_or("-".to_owned(), |ms| format!("{ms:.1}")),
            ratio(first),
            ratio(all),
            cpu
        );
    }
    if with_rg {
        println!(
            "\npages joined equal rg --sort path line for line; worst paging ratio ours/rg: {worst:.2} (target ≤ 1.20)"
        );
    }
    Ok(())
}
