//! `cargo xtask bench [NAME…] [-- ARGS…]`: runs benchmark programs.
//!
//! Each benchmark is an example named `bench_<name>` in the crate it measures, run with
//! `cargo run --release -p <package> --example bench_<name>`. A benchmark whose example does
//! not exist yet is reported as not built and skipped.

use crate::step::{self, Action, Failure, Step};
use crate::workspace::{self, cargo_command, name};
use serde_json::Value;

/// One benchmark program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bench {
    /// What to type after `cargo xtask bench`.
    pub name: &'static str,
    /// The package that owns the example.
    pub package: &'static str,
    /// The example's name.
    pub example: &'static str,
    /// What it measures (SPEC §11).
    pub measures: &'static str,
}

/// Every benchmark, in the order `cargo xtask bench` runs them.
pub const BENCHES: [Bench; 8] = [
    Bench {
        name: "catalog",
        package: "kun-registry",
        example: "bench_catalog",
        measures: "list_tools over 1,000 tools, fingerprint, no-op pipeline overhead",
    },
    Bench {
        name: "search",
        package: "kun-builtin-tools",
        example: "bench_search",
        measures: "grep and glob vs rg on the same tree",
    },
    Bench {
        name: "edit",
        package: "kun-builtin-tools",
        example: "bench_edit",
        measures: "edit on a 10 MiB file",
    },
    Bench {
        name: "serve",
        package: "kun-cli",
        example: "bench_serve",
        measures: "serve round trip for read/grep vs the filesystem MCP server",
    },
    Bench {
        name: "startup",
        package: "kun-cli",
        example: "bench_startup",
        measures: "serve initialize and call read with an MCP server that takes 8 s to start",
    },
    Bench {
        name: "mcp",
        package: "kun-mcp",
        example: "bench_mcp",
        measures: "BM25 search over 10,000 MCP tools vs a plain scan; one gated MCP call vs a direct rmcp call",
    },
    Bench {
        name: "memory",
        package: "kun-memory",
        example: "bench_memory",
        measures: "memory search latency (p50/p95) over 10,000 memories vs a LIKE scan",
    },
    Bench {
        name: "web",
        package: "kun-web",
        example: "bench_web",
        measures: "web_fetch throughput against a local server vs a plain GET",
    },
];

/// Runs the named benchmarks (all available ones when none is named); arguments after `--`
/// go to every benchmark program.
pub fn run(args: &[String]) -> Result<(), Failure> {
    let (names, passed) = match args.iter().position(|arg| arg == "--") {
        Some(split) => (&args[..split], &args[split + 1..]),
        None => (args, &[][..]),
    };
    let chosen = choose(names)?;
    let metadata = workspace::metadata()?;
    let (ready, missing): (Vec<Bench>, Vec<Bench>) =
        chosen.iter().partition(|bench| is_built(&metadata, bench));
    for bench in &missing {
        println!(
            "not built yet: {} (example `{}` in {})",
            bench.name, bench.example, bench.package
        );
    }
    let total = ready.len();
    for (index, bench) in ready.into_iter().enumerate() {
        let mut command = cargo_command([
            "run",
            "--release",
            "--package",
            bench.package,
            "--example",
            bench.example,
        ]);
        if !passed.is_empty() {
            command.arg("--").args(passed);
        }
        step::run(
            Step {
                name: bench.name,
                action: Action::Run(command),
            },
            index + 1,
            total,
        )?;
    }
    if total == 0 {
        println!("no benchmark is built yet");
    }
    if !names.is_empty() && !missing.is_empty() {
        return Err(Failure::new(format!(
            "asked for {} benchmark(s) that are not built yet: {}",
            missing.len(),
            missing
                .iter()
                .map(|bench| bench.name)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(())
}

/// The benchmarks for the given names, in table order; all of them when no name is given.
fn choose(names: &[String]) -> Result<Vec<Bench>, Failure> {
    if let Some(unknown) = names
        .iter()
        .find(|wanted| !BENCHES.iter().any(|bench| bench.name == wanted.as_str()))
    {
        let known: Vec<String> = BENCHES
            .iter()
            .map(|bench| format!("  {:<8} {}", bench.name, bench.measures))
            .collect();
        return Err(Failure::new(format!(
            "no benchmark named `{unknown}`; known benchmarks:\n{}",
            known.join("\n")
        )));
    }
    Ok(BENCHES
        .into_iter()
        .filter(|bench| names.is_empty() || names.iter().any(|wanted| wanted == bench.name))
        .collect())
}

/// Whether the bench's package exists in the workspace and has the example target.
fn is_built(metadata: &Value, bench: &Bench) -> bool {
    let Ok(members) = workspace::members(metadata) else {
        return false;
    };
    members
        .iter()
        .filter(|package| name(package) == bench.package)
        .filter_map(|package| package["targets"].as_array())
        .flatten()
        .any(|target| {
            target["name"] == bench.example
                && target["kind"]
                    .as_array()
                    .is_some_and(|kinds| kinds.iter().any(|kind| kind == "example"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Value {
        json!({
            "workspace_members": ["reg", "bt"],
            "packages": [
                {"name": "kun-registry", "id": "reg", "targets": [
                    {"name": "kun_registry", "kind": ["lib"]},
                    {"name": "bench_catalog", "kind": ["example"]},
                ]},
                {"name": "kun-builtin-tools", "id": "bt", "targets": [
                    {"name": "kun_builtin_tools", "kind": ["lib"]},
                    // A test with the right name is not an example.
                    {"name": "bench_search", "kind": ["test"]},
                ]},
            ],
        })
    }

    #[test]
    fn only_existing_examples_count_as_built() {
        let built: Vec<&str> = BENCHES
            .iter()
            .filter(|bench| is_built(&sample(), bench))
            .map(|bench| bench.name)
            .collect();
        assert_eq!(built, ["catalog"]);
    }

    #[test]
    fn names_choose_in_table_order_and_unknown_names_fail() {
        let all: Vec<&str> = choose(&[]).unwrap().iter().map(|b| b.name).collect();
        assert_eq!(
            all,
            [
                "catalog", "search", "edit", "serve", "startup", "mcp", "memory", "web"
            ]
        );
        let some = choose(&["mcp".to_owned(), "catalog".to_owned()]).unwrap();
        assert_eq!(
            some.iter().map(|b| b.name).collect::<Vec<_>>(),
            ["catalog", "mcp"]
        );
        let error = choose(&["catalgo".to_owned()]).unwrap_err().to_string();
        assert!(error.contains("no benchmark named `catalgo`"), "{error}");
        assert!(error.contains("catalog"), "{error}");
    }

    #[test]
    fn every_benchmark_is_an_example_named_after_it() {
        for bench in BENCHES {
            assert_eq!(bench.example, format!("bench_{}", bench.name));
        }
    }
}
