//! Catalog and pipeline benchmarks against the TypeScript peer's figures
//! (`/work/shared/reference/bench-recipe.md`).
//!
//! Run with `cargo run --release -p kun-registry --example bench_catalog`.
//!
//! Builds the recipe's synthetic catalog (1,000 tools over 11 providers), its contexts S1 and
//! S3, and its execute setup X1, and prints the median (with p10 and p90) of each operation
//! beside the peer's median and the ratio. Timing uses `std::time::Instant` over batches of
//! many iterations; the machine is noisy, so compare medians.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[allow(dead_code)]
#[path = "../tests/support/sandbox.rs"]
mod sandbox;

use async_trait::async_trait;
use kun_ports::{
    ApprovalPolicy, ClientSurface, ProviderKind, ProviderPolicy, SandboxMode, SideEffect,
    ThreadMode, Tool, ToolCall, ToolContext, ToolError, ToolHost, ToolHostContext, ToolKind,
    ToolPolicy, ToolProvider, ToolResult, ToolSpec,
};
use kun_registry::{
    CapabilityRegistry, CatalogFilters, Host, fingerprint_catalog, fingerprint_specs,
};
use sandbox::SpecSandbox;
use serde_json::{Value, json};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

const TOOLS: usize = 1000;
const PROVIDER_KINDS: [ProviderKind; 11] = [
    ProviderKind::BuiltIn,
    ProviderKind::Mcp,
    ProviderKind::Mcp,
    ProviderKind::Mcp,
    ProviderKind::Web,
    ProviderKind::Skill,
    ProviderKind::Memory,
    ProviderKind::Extension,
    ProviderKind::Image,
    ProviderKind::Delegation,
    ProviderKind::Gui,
];

/// When a synthetic tool advertises itself (the recipe's `shouldAdvertise`).
#[derive(Clone, Copy)]
enum Advertise {
    Always,
    InAgentMode,
    InPlanMode,
}

struct BenchTool {
    spec: ToolSpec,
    advertise: Advertise,
}

#[async_trait]
impl Tool for BenchTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn should_advertise(&self, ctx: &ToolHostContext) -> bool {
        match self.advertise {
            Advertise::Always => true,
            Advertise::InAgentMode => ctx.thread_mode == ThreadMode::Agent,
            Advertise::InPlanMode => ctx.thread_mode == ThreadMode::Plan,
        }
    }

    async fn execute<'a>(
        &self,
        _arguments: Value,
        _ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::ok(Value::String("ok".to_owned())))
    }
}

struct BenchProvider {
    id: String,
    kind: ProviderKind,
    tools: Vec<Arc<dyn Tool>>,
}

impl ToolProvider for BenchProvider {
    fn id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> ProviderKind {
        self.kind
    }

    fn policy(&self) -> ProviderPolicy {
        ProviderPolicy::ready()
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
}

fn provider_of(i: usize) -> usize {
    i / 91
}

fn tool_name(i: usize) -> String {
    format!("mcp__srv{:02}__tool_{i:04}", provider_of(i))
}

fn tool_kind(i: usize) -> ToolKind {
    match i % 10 {
        1 => ToolKind::FileChange,
        2 => ToolKind::CommandExecution,
        _ => ToolKind::ToolCall,
    }
}

/// The recipe's schema for tool `i`, parsed from JSON text (keys deliberately unsorted).
fn schema(i: usize) -> Value {
    let text = format!(
        r#"{{"type":"object","properties":{{"path":{{"type":"string","description":"Workspace-relative path of the resource handled by tool {i}."}},"query":{{"type":"string","description":"Search expression or identifier for operation {i}."}},"limit":{{"type":"integer","minimum":1,"maximum":500,"default":50,"description":"Maximum number of results to return."}},"mode":{{"type":"string","enum":["fast","balanced","thorough"],"description":"Execution strategy."}},"options":{{"type":"object","description":"Additional flags.","properties":{{"recursive":{{"type":"boolean","description":"Descend into sub-directories."}},"tags":{{"type":"array","items":{{"type":"string"}},"description":"Labels to attach."}}}},"additionalProperties":false}}}},"required":["path","query"],"additionalProperties":false}}"#
    );
    serde_json::from_str(&text).unwrap()
}

fn bench_tool(i: usize) -> BenchTool {
    let kind = tool_kind(i);
    let mut spec = ToolSpec::new(
        tool_name(i),
        format!(
            "Tool {i} of provider srv{:02}: performs a synthetic {kind} operation over workspace resources and returns structured results.",
            provider_of(i)
        ),
        schema(i),
    )
    .with_kind(kind)
    .with_policy(ToolPolicy::Auto);
    if i.is_multiple_of(3) {
        spec = spec.with_side_effect(SideEffect::ReadOnly);
    }
    if i % 50 == 49 {
        spec = spec.hidden();
    }
    let advertise = match i % 16 {
        5 => Advertise::InAgentMode,
        13 => Advertise::InPlanMode,
        _ => Advertise::Always,
    };
    BenchTool { spec, advertise }
}

fn providers() -> Vec<Arc<dyn ToolProvider>> {
    let mut tools: Vec<Vec<Arc<dyn Tool>>> = vec![Vec::new(); PROVIDER_KINDS.len()];
    for i in 0..TOOLS {
        tools[provider_of(i)].push(Arc::new(bench_tool(i)));
    }
    tools
        .into_iter()
        .enumerate()
        .map(|(p, tools)| {
            Arc::new(BenchProvider {
                id: format!("srv{p:02}"),
                kind: PROVIDER_KINDS[p],
                tools,
            }) as Arc<dyn ToolProvider>
        })
        .collect()
}

fn filters() -> CatalogFilters {
    CatalogFilters::new(Arc::new(SpecSandbox::confined()))
}

fn base_context() -> kun_ports::ToolHostContextBuilder {
    ToolHostContext::builder("thr_bench", "turn_bench")
        .workspace(std::env::temp_dir().join("kun-bench-workspace"))
        .surface(ClientSurface::Api)
        .mode(ThreadMode::Agent)
        .sandbox(SandboxMode::WorkspaceWrite)
        .approval(ApprovalPolicy::Auto)
}

fn context_s1() -> ToolHostContext {
    let allowed_providers: Vec<String> = (0..11)
        .filter(|p| *p != 8)
        .map(|p| format!("srv{p:02}"))
        .collect();
    // Context lists arrive as JSON too (recipe: JSON round trip).
    let allowed_tools: Vec<String> = serde_json::from_value(json!(
        (0..TOOLS)
            .filter(|i| i % 10 != 7)
            .map(tool_name)
            .collect::<Vec<_>>()
    ))
    .unwrap();
    let blocked_tools: Vec<String> = (0..TOOLS).filter(|i| i % 10 == 3).map(tool_name).collect();
    base_context()
        .allowed_providers(allowed_providers)
        .blocked_providers(["srv09"])
        .allowed_tools(allowed_tools)
        .blocked_tools(blocked_tools)
        .build()
}

fn context_s3() -> ToolHostContext {
    base_context().build()
}

/// Per-operation nanoseconds: `samples` batches of `batch` iterations each.
fn measure(samples: usize, batch: usize, mut op: impl FnMut()) -> Stats {
    for _ in 0..batch.max(10) {
        op();
    }
    let mut per_op: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                op();
            }
            start.elapsed().as_secs_f64() * 1e9 / batch as f64
        })
        .collect();
    per_op.sort_by(f64::total_cmp);
    let at = |q: f64| per_op[((per_op.len() - 1) as f64 * q).round() as usize];
    Stats {
        p10: at(0.1),
        median: at(0.5),
        p90: at(0.9),
    }
}

struct Stats {
    p10: f64,
    median: f64,
    p90: f64,
}

fn human(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn report(label: &str, stats: &Stats, peer_ns: Option<f64>, target_ns: f64) {
    let peer = peer_ns.map_or_else(|| "—".to_owned(), human);
    let ratio = peer_ns.map_or_else(
        || "—".to_owned(),
        |p| format!("{:.1}× faster", p / stats.median),
    );
    let verdict = if stats.median <= target_ns {
        "ok"
    } else {
        "OVER"
    };
    println!(
        "{label:<47} {:>10} (p10 {:>10}, p90 {:>10})  peer {:>9}  {ratio:>13}  target ≤ {} {verdict}",
        human(stats.median),
        human(stats.p10),
        human(stats.p90),
        peer,
        human(target_ns),
    );
}

fn main() {
    let registry = CapabilityRegistry::with_providers(filters(), providers()).unwrap();
    let s1 = context_s1();
    let s3 = context_s3();
    let listed_s1 = registry.list_tools(&s1);
    let listed_s3 = registry.list_tools(&s3);
    let commands = |list: &[kun_ports::ToolDescriptor]| {
        list.iter()
            .filter(|d| d.spec().kind == ToolKind::CommandExecution)
            .count()
    };

    println!("kun-registry catalog benchmarks (release build; medians of per-op time)");
    println!(
        "catalog: {} tools, {} providers",
        registry.snapshot().len(),
        registry.diagnostics().len()
    );
    println!();

    let list_s1 = measure(200, 50, || {
        black_box(registry.list_tools(black_box(&s1)));
    });
    report(
        "list_tools, context S1 (every filter)",
        &list_s1,
        Some(1.72e6),
        50e3,
    );
    let list_s3 = measure(200, 50, || {
        black_box(registry.list_tools(black_box(&s3)));
    });
    report(
        "list_tools, context S3 (no lists)",
        &list_s3,
        Some(0.49e6),
        25e3,
    );

    let snapshot = registry.snapshot();
    let all_specs: Vec<&ToolSpec> = snapshot.tools().map(|d| d.spec()).collect();
    let all_tools: Vec<kun_ports::ToolDescriptor> = snapshot.tools().cloned().collect();
    let fp_cached = measure(200, 20, || {
        black_box(snapshot.fingerprint(black_box(&all_tools)));
    });
    report(
        "fingerprint, 1,000 specs (registry)",
        &fp_cached,
        Some(30.6e6),
        1e6,
    );
    let fp_s1_cached = measure(200, 20, || {
        black_box(snapshot.fingerprint(black_box(&listed_s1)));
    });
    report(
        "fingerprint, S1 listing (registry)",
        &fp_s1_cached,
        None,
        1e6,
    );
    // First use: a snapshot that has hashed nothing yet (first turn, reload after a change).
    let mut first_use: Vec<f64> = (0..30)
        .map(|_| {
            let fresh = CapabilityRegistry::with_providers(filters(), providers()).unwrap();
            let snapshot = fresh.snapshot();
            let tools: Vec<kun_ports::ToolDescriptor> = snapshot.tools().cloned().collect();
            let start = Instant::now();
            black_box(snapshot.fingerprint(black_box(&tools)));
            start.elapsed().as_secs_f64() * 1e9
        })
        .collect();
    first_use.sort_by(f64::total_cmp);
    let at = |q: f64| first_use[((first_use.len() - 1) as f64 * q).round() as usize];
    report(
        "fingerprint, 1,000 specs (registry, first use)",
        &Stats {
            p10: at(0.1),
            median: at(0.5),
            p90: at(0.9),
        },
        Some(30.6e6),
        1e6,
    );
    let fp_cold = measure(40, 5, || {
        black_box(fingerprint_specs(black_box(all_specs.iter().copied())));
    });
    report(
        "fingerprint, 1,000 specs (cold, from specs)",
        &fp_cold,
        Some(30.6e6),
        1e6,
    );
    let fp_s1_cold = measure(40, 5, || {
        black_box(fingerprint_catalog(black_box(&listed_s1)));
    });
    report("fingerprint, S1 listing (cold)", &fp_s1_cold, None, 1e6);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let x1 = execute_x1(&runtime);
    report(
        "execute no-op, every gate (X1, steady state)",
        &x1,
        Some(36.3e3),
        3e3,
    );

    let all = fingerprint_specs(all_specs.iter().copied());
    assert_eq!(
        all,
        snapshot.fingerprint(&all_tools),
        "cached and cold agree"
    );
    println!();
    println!(
        "S1 lists {} tools (peer 469); S3 lists {} (peer 746).",
        listed_s1.len(),
        listed_s3.len()
    );
    println!(
        "  The difference is filter 4 (sandbox): under workspace-write SPEC §5 lists command tools \
         (they run confined, or with a forced approval), while the peer hides every \
         command_execution tool not named bash/background_shell. Command tools listed: S1 {}, \
         S3 {}; without them: S1 {}, S3 {}.",
        commands(&listed_s1),
        commands(&listed_s3),
        listed_s1.len() - commands(&listed_s1),
        listed_s3.len() - commands(&listed_s3),
    );
    println!(
        "  Fingerprint of the 1,000 specs: {} (blake3, byte order; not comparable to the peer's sha256).",
        &all.fingerprint[..16]
    );
    println!(
        "  \"registry\" fingerprints reuse each registered tool's hash (computed once, at first \
         use); \"cold\" ones serialise and hash every spec, as the peer does on every call. The \
         cold path is bound by walking 1,000 scattered JSON trees, not by hashing."
    );
}

/// X1: a host over one no-op tool, context S3, unique call ids, 5,000 warm-up calls.
fn execute_x1(runtime: &tokio::runtime::Runtime) -> Stats {
    let noop = BenchTool {
        spec: ToolSpec::new(
            "noop",
            "Does nothing.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        )
        .with_policy(ToolPolicy::Auto),
        advertise: Advertise::Always,
    };
    let provider: Arc<dyn ToolProvider> = Arc::new(BenchProvider {
        id: "builtin".to_owned(),
        kind: ProviderKind::BuiltIn,
        tools: vec![Arc::new(noop)],
    });
    let registry = Arc::new(CapabilityRegistry::with_providers(filters(), vec![provider]).unwrap());
    let host = Host::builder(registry).build();
    let ctx = context_s3();
    let mut k = 0_u64;
    let mut call = || {
        k += 1;
        ToolCall::new(format!("call_{k}"), "noop", json!({"text": "ping"}))
    };
    runtime.block_on(async {
        for _ in 0..5_000 {
            let result = host.execute(call(), &ctx).await.unwrap();
            assert!(!result.is_error, "{result:?}");
        }
        let samples = 200;
        let batch: u32 = 500;
        let mut per_op = Vec::with_capacity(samples);
        for _ in 0..samples {
            let start = Instant::now();
            for _ in 0..batch {
                black_box(host.execute(call(), &ctx).await.unwrap());
            }
            per_op.push(start.elapsed().as_secs_f64() * 1e9 / f64::from(batch));
        }
        per_op.sort_by(f64::total_cmp);
        let at = |q: f64| per_op[((per_op.len() - 1) as f64 * q).round() as usize];
        Stats {
            p10: at(0.1),
            median: at(0.5),
            p90: at(0.9),
        }
    })
}
