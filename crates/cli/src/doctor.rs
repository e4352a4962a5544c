//! `kun-tools doctor`: what is configured, from where, and what is wrong.
//!
//! Reports, in order: the configuration files and whether each exists; whether the workspace
//! is trusted and why, with the command that would trust it; every configuration error (each
//! file is checked on its own, so all bad files show at once); the effective value of every
//! key and the layer it came from; every workspace setting that was not applied (an untrusted
//! workspace may only narrow) with the rule that left it out; the providers and why any is
//! unavailable; the catalog size and fingerprint; the command confinement tier and why; each
//! MCP server's state, with the exact `[trust] mcp_servers` line for a refused workspace
//! definition. With errors, the providers and tier are those of the defaults, and the report
//! says so.

use crate::Outcome;
use crate::cli::DoctorArgs;
use crate::setup;
use kun_composition::config::trust::trust_command;
use kun_composition::{AssembleOptions, Assembly, ConfigError, Settings, Source};
use kun_ports::ProviderKind;
use kun_registry::fingerprint_catalog;
use serde_json::{Value, json};
use std::fmt::Write as _;

/// Runs `doctor`: exit 0 when every configuration file is valid, 1 otherwise.
pub async fn run(args: &DoctorArgs) -> Outcome {
    let sources = match setup::sources(&args.common(), args.approval_fallback) {
        Ok(sources) => sources,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            return Outcome::Usage;
        }
    };
    let errors = Settings::check(&sources.paths);
    let loaded = if errors.is_empty() {
        Settings::load(&sources.paths, &sources.overrides)
    } else {
        Err(errors[0].clone())
    };
    let (effective, settings) = match loaded {
        Ok(settings) => (Some(settings.effective()), settings),
        Err(_) => (None, Settings::defaults(&sources.paths.workspace)),
    };
    let trust = trust_report(&settings, effective.is_some());
    let report = match kun_composition::assemble(settings, AssembleOptions::default()) {
        Ok(assembly) => {
            let mut report = report(&sources, &errors, effective, Some(&assembly));
            mcp_servers(&assembly, args.wait_mcp, &mut report).await;
            report
        }
        Err(err) => {
            let mut report = report(&sources, &errors, effective, None);
            report["assembly_error"] = json!(err.to_string());
            report
        }
    };
    let mut report = report;
    if let Value::Object(map) = &mut report {
        map.extend(trust);
    }
    if args.json {
        println!("{report}");
    } else {
        print!("{}", text(&report));
    }
    if errors.is_empty() && report.get("assembly_error").is_none() {
        Outcome::Done
    } else {
        Outcome::Refused
    }
}

fn report(
    sources: &setup::Sources,
    errors: &[ConfigError],
    effective: Option<Vec<kun_composition::config::EffectiveValue>>,
    assembly: Option<&Assembly>,
) -> Value {
    let paths = &sources.paths;
    let mut files: Vec<Value> = paths
        .layers()
        .into_iter()
        .map(|layer| {
            let path = &layer.path;
            json!({"layer": layer_name(&layer.source), "path": path, "exists": path.is_file()})
        })
        .collect();
    let mcp_json = paths.workspace.join(".mcp.json");
    files.push(json!({"layer": ".mcp.json", "path": mcp_json, "exists": mcp_json.is_file()}));
    let errors: Vec<Value> = errors
        .iter()
        .map(|err| {
            json!({
                "file": err.file,
                "line": err.line,
                "key": err.key,
                "message": err.message,
                "text": err.to_string(),
            })
        })
        .collect();
    let mut report = json!({
        "workspace": paths.workspace,
        "files": files,
        "errors": errors,
        "effective": effective,
    });
    if let Some(assembly) = assembly {
        let ctx = assembly.context("doctor", "doctor").build();
        let catalog = assembly.registry.list_tools(&ctx);
        let providers: Vec<Value> = assembly
            .registry
            .diagnostics()
            .into_iter()
            .map(|p| {
                let listed = catalog
                    .iter()
                    .filter(|tool| *tool.provider_id() == *p.id)
                    .count();
                let mut entry = json!({
                    "id": p.id,
                    "kind": p.kind,
                    "enabled": p.policy.enabled,
                    "available": p.policy.available,
                    "reason": p.policy.reason,
                    "tool_count": p.tool_count,
                    "listed": listed,
                });
                if p.policy.enabled
                    && p.policy.available
                    && listed < p.tool_count
                    && let Some(why) = not_listed_why(&p.id, p.kind, &assembly.settings)
                {
                    entry["not_listed"] = json!(why);
                }
                entry
            })
            .collect();
        let fingerprint = fingerprint_catalog(&catalog);
        report["providers"] = json!(providers);
        report["catalog"] =
            json!({"tools": fingerprint.tool_count, "fingerprint": fingerprint.fingerprint});
        report["confinement"] = json!({
            "tier": assembly.capabilities.tier(),
            "reason": assembly.capabilities.reason(),
        });
        agents(assembly, &mut report);
        report["memory"] = kun_composition::memory_status(&assembly.settings);
        report["web"] = kun_composition::web_status(&assembly.settings);
    }
    report
}

/// Skills (ids and skipped files) and delegation (runner state, profiles and skipped agent
/// files).
fn agents(assembly: &Assembly, report: &mut Value) {
    let skills = assembly.skills.catalog();
    report["skills"] = json!({
        "ids": skills.ids(),
        "diagnostics": skills.diagnostics(),
    });
    let profiles = assembly.delegation.profiles();
    report["delegation"] = json!({
        "runner": assembly.runner,
        "runner_state": assembly.runner.describe(),
        "profiles": profiles.iter().map(|p| json!({
            "name": p.name,
            "description": p.description,
            "tools": p.tools,
            "origin": p.origin,
        })).collect::<Vec<_>>(),
        "diagnostics": profiles.diagnostics(),
    });
}

/// The memory file and the web tools, as text lines.
fn memory_and_web(report: &Value, out: &mut String) {
    let str_of = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let memory = &report["memory"];
    if !memory.is_null() {
        let path = str_of(&memory["path"]);
        let state = if let Some(error) = memory["error"].as_str() {
            format!("unusable: {error}")
        } else if memory["exists"] == true {
            format!(
                "schema version {}, {} memories",
                memory["schema_version"], memory["memories"]
            )
        } else {
            format!("absent, {}", str_of(&memory["note"]))
        };
        let _ = writeln!(out, "memory: {path} ({state})");
    }
    let web = &report["web"];
    if let Some(providers) = web["providers"].as_array() {
        let guard = if web["allow_private_addresses"] == true {
            "private addresses ALLOWED"
        } else {
            "private addresses blocked"
        };
        let _ = writeln!(out, "web ({guard}):");
        for p in providers {
            let backend = p["backend"]
                .as_str()
                .map(|b| format!(" [{b}]"))
                .unwrap_or_default();
            let state = if p["available"] == true {
                "available".to_owned()
            } else {
                format!("unavailable: {}", str_of(&p["reason"]))
            };
            let _ = writeln!(out, "  {}{backend}: {state}", str_of(&p["tool"]));
        }
    }
}

/// Starts the servers in the background, waits up to `wait` seconds, and reports each
/// one's state then (`connected`, `starting`, `reconnecting` or `failed` with the reason,
/// `refused`, `disabled`).
async fn mcp_servers(assembly: &Assembly, wait: f64, report: &mut Value) {
    match kun_composition::start_mcp(assembly, kun_composition::McpLaunch::Background) {
        Ok(Some(mcp)) => {
            mcp.wait_started(Some(std::time::Duration::from_secs_f64(wait)))
                .await;
            report["mcp_servers"] = json!(mcp.statuses());
            report["mcp_waited_seconds"] = json!(wait);
            mcp.shutdown().await;
        }
        Ok(None) => report["mcp_servers"] = json!([]),
        Err(err) => report["mcp_error"] = json!(err.to_string()),
    }
}

/// `trust` (the workspace's standing, why, and the command that trusts it) and `ignored`
/// (every workspace setting left out, with its rule and the line reported at load).
fn trust_report(settings: &Settings, loaded: bool) -> serde_json::Map<String, Value> {
    let workspace = &settings.workspace;
    let trust = &settings.trust.workspace;
    let ignored: Vec<Value> = settings
        .ignored
        .iter()
        .map(|entry| {
            let mut value = json!(entry);
            value["reason"] = json!(entry.rule.describe());
            value["line"] = json!(entry.line(workspace));
            value
        })
        .collect();
    let mut map = serde_json::Map::new();
    map.insert(
        "trust".to_owned(),
        json!({
            "trusted": trust.is_trusted(),
            "how": trust,
            "reason": trust.describe(),
            "command": trust_command(workspace),
            "known": loaded,
        }),
    );
    map.insert("ignored".to_owned(), Value::Array(ignored));
    map
}

fn layer_name(source: &Source) -> &'static str {
    match source {
        Source::Default => "default",
        Source::User(_) => "user",
        Source::Workspace(_) => "workspace",
        Source::ConfigFlag(_) => "--config",
        Source::CommandLine => "command line",
        Source::McpJson(_) => ".mcp.json",
    }
}

/// The report as text.
fn text(report: &Value) -> String {
    let mut out = String::new();
    // Names, commands and paths can come from a repository's files: never print their
    // control characters raw (they could drive the terminal).
    let str_of = |v: &Value| {
        let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        text.chars()
            .flat_map(|c| {
                let escaped: Vec<char> = if c.is_control() {
                    c.escape_default().collect()
                } else {
                    vec![c]
                };
                escaped
            })
            .collect::<String>()
    };
    let _ = writeln!(out, "workspace: {}", str_of(&report["workspace"]));
    out.push_str("\nconfiguration files (later ones win):\n");
    for file in report["files"].as_array().into_iter().flatten() {
        let state = if file["exists"] == true {
            ""
        } else {
            " (absent)"
        };
        let _ = writeln!(
            out,
            "  {:<10} {}{state}",
            str_of(&file["layer"]),
            str_of(&file["path"])
        );
    }
    let trust = &report["trust"];
    if trust["known"] == true {
        let _ = writeln!(out, "\nworkspace trust: {}", str_of(&trust["reason"]));
        if trust["trusted"] == false {
            let _ = writeln!(
                out,
                "  to trust it: {} (or --trust-workspace for one run)",
                str_of(&trust["command"])
            );
        }
    }
    let errors = report["errors"].as_array().cloned().unwrap_or_default();
    if errors.is_empty() {
        out.push_str("\nconfiguration errors: none\n");
    } else {
        let _ = writeln!(out, "\nconfiguration errors: {}", errors.len());
        for err in &errors {
            let _ = writeln!(out, "  {}", str_of(&err["text"]));
        }
    }
    match report["effective"].as_array() {
        Some(values) => {
            out.push_str("\neffective configuration:\n");
            let width = values
                .iter()
                .filter_map(|v| v["key"].as_str())
                .map(str::len)
                .max()
                .unwrap_or(0)
                .min(32);
            for value in values {
                let source = describe_source(&value["source"]);
                let _ = writeln!(
                    out,
                    "  {:<width$} = {}  ({source})",
                    str_of(&value["key"]),
                    value["value"]
                );
            }
        }
        None => out.push_str(
            "\neffective configuration: unavailable until the errors above are fixed; \
             providers and confinement below are those of the defaults\n",
        ),
    }
    if let Some(ignored) = report["ignored"].as_array().filter(|i| !i.is_empty()) {
        let _ = writeln!(out, "\nignored workspace settings: {}", ignored.len());
        for entry in ignored {
            let effect = entry["in_effect"]
                .as_str()
                .map(|v| format!("; in effect: {v}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {} = {}  ({}): {}{effect}",
                str_of(&entry["key"]),
                str_of(&entry["given"]),
                str_of(&entry["file"]),
                str_of(&entry["reason"]),
            );
        }
        if trust["trusted"] == false {
            let _ = writeln!(
                out,
                "  they apply once the workspace is trusted: {}",
                str_of(&trust["command"])
            );
        }
    }
    if let Some(err) = report.get("assembly_error") {
        let _ = writeln!(out, "\nassembly failed: {}", str_of(err));
    }
    if let Some(providers) = report["providers"].as_array() {
        out.push_str("\nproviders:\n");
        for p in providers {
            let state = match (p["enabled"].as_bool(), p["available"].as_bool()) {
                (Some(false), _) => "disabled",
                (_, Some(false)) => "unavailable",
                _ => "ready",
            };
            let reason = p["reason"]
                .as_str()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            let hidden = p["not_listed"]
                .as_str()
                .map(|why| format!(", {} listed here: {why}", p["listed"]))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {} [{}]: {state}, {} tools{reason}{hidden}",
                str_of(&p["id"]),
                str_of(&p["kind"]),
                p["tool_count"]
            );
        }
        let _ = writeln!(
            out,
            "\ncatalog: {} tools, fingerprint {}",
            report["catalog"]["tools"],
            str_of(&report["catalog"]["fingerprint"])
        );
        let _ = writeln!(
            out,
            "command confinement: {} ({})",
            str_of(&report["confinement"]["tier"]),
            str_of(&report["confinement"]["reason"])
        );
        memory_and_web(report, &mut out);
    }
    agents_text(report, &mut out);
    if let Some(servers) = report["mcp_servers"].as_array() {
        out.push_str(
            "
MCP servers:
",
        );
        if servers.is_empty() {
            out.push_str("  (none configured)\n");
        }
        for server in servers {
            let detail = ["last_error", "reason", "tool_count"]
                .iter()
                .find_map(|key| {
                    server
                        .get(*key)
                        .filter(|v| !v.is_null())
                        .map(|v| format!(" ({key}: {})", str_of(v)))
                })
                .unwrap_or_default();
            let detail = if server["state"] == "starting" {
                format!(
                    " (not ready after {} s; its tools are missing until it is)",
                    report["mcp_waited_seconds"]
                )
            } else {
                detail
            };
            let _ = writeln!(
                out,
                "  {} [{} {}]: {}{detail}",
                str_of(&server["name"]),
                str_of(&server["transport"]),
                str_of(&server["target"]),
                str_of(&server["state"]),
            );
            if server["state"] == "refused" && server["defined_by"] == "workspace" {
                let _ = writeln!(
                    out,
                    "    defined by the workspace; to trust this exact definition, add to your user config:\n      [trust] mcp_servers = [{}]",
                    server["definition"]
                );
            }
        }
    }
    if let Some(err) = report["mcp_error"].as_str() {
        let _ = writeln!(
            out,
            "
MCP configuration error: {err}"
        );
    }
    out
}

/// The skills and delegation lines.
fn agents_text(report: &Value, out: &mut String) {
    let str_of = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let diagnostics = |v: &Value, out: &mut String| {
        for d in v.as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "    skipped or noted: {}: {}",
                str_of(&d["file"]),
                str_of(&d["message"])
            );
        }
    };
    if let Some(ids) = report["skills"]["ids"].as_array() {
        let names: Vec<String> = ids.iter().map(str_of).collect();
        let _ = writeln!(
            out,
            "\nskills: {}{}",
            names.len(),
            if names.is_empty() {
                String::new()
            } else {
                format!(" ({})", names.join(", "))
            }
        );
        diagnostics(&report["skills"]["diagnostics"], out);
    }
    if let Some(state) = report["delegation"]["runner_state"].as_str() {
        let _ = writeln!(out, "\ndelegation runner: {state}");
        out.push_str("agent profiles:\n");
        for p in report["delegation"]["profiles"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let tools = match p["tools"]["policy"].as_str() {
                Some("explicit") => p["tools"]["tools"]
                    .as_array()
                    .map(|t| t.iter().map(str_of).collect::<Vec<_>>().join(", "))
                    .unwrap_or_default(),
                Some(policy) => policy.replace('_', "-"),
                None => "?".to_owned(),
            };
            let origin = match p["origin"]["layer"].as_str() {
                Some("workspace") => format!("workspace {}", str_of(&p["origin"]["path"])),
                Some(layer) => layer.replace('_', "-"),
                None => "?".to_owned(),
            };
            let _ = writeln!(out, "  {} [{tools}] ({origin})", str_of(&p["name"]));
        }
        diagnostics(&report["delegation"]["diagnostics"], out);
    }
}

/// `{"layer": "workspace", "path": "…"}` → `workspace config …`.
fn describe_source(source: &Value) -> String {
    let layer = source["layer"].as_str().unwrap_or("default");
    let path = source["path"].as_str();
    match (layer, path) {
        ("user", Some(path)) => format!("user config {path}"),
        ("workspace", Some(path)) => format!("workspace config {path}"),
        ("config_flag", Some(path)) => format!("--config {path}"),
        ("mcp_json", Some(path)) => path.to_owned(),
        ("command_line", _) => "command line".to_owned(),
        _ => "default".to_owned(),
    }
}

/// Why a ready provider's tools are missing from this context's catalog, for the providers
/// that are listed only in some contexts (GUI surface, plan mode).
fn not_listed_why(id: &str, kind: ProviderKind, settings: &Settings) -> Option<String> {
    match (id, kind) {
        (_, ProviderKind::Gui) => Some(format!(
            "goal and todo tools are listed for the GUI client surface only (client_surface = \
             \"gui\" or --surface gui; here \"{}\")",
            settings.gui.client_surface
        )),
        ("plan", _) => Some("create_plan is listed in plan mode only (--mode plan)".to_owned()),
        _ => None,
    }
}
