//! `kun-tools catalog`.
//!
//! MCP servers are started in the background, waited for up to `--wait-mcp` seconds, listed
//! and stopped; the ones not ready by then are named (`mcp_not_ready` in `--json`, a
//! closing line in the table) and their tools are missing from the list.

use crate::Outcome;
use crate::cli::CatalogArgs;
use crate::setup;
use kun_composition::{AssembleOptions, McpLaunch};
use kun_mcp::{ServerState, ServerStatus};
use serde_json::{Value, json};
use std::time::Duration;

/// Prints the catalog (MCP servers included: they are started, listed and stopped).
pub async fn run(args: CatalogArgs) -> Outcome {
    let assembly = match setup::assemble(&args.common, AssembleOptions::default()) {
        Ok(assembly) => assembly,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            return Outcome::Usage;
        }
    };
    let mcp = match kun_composition::start_mcp(&assembly, McpLaunch::Background) {
        Ok(mcp) => mcp,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            return Outcome::Usage;
        }
    };
    let mut not_ready = Vec::new();
    if let Some(mcp) = &mcp {
        mcp.wait_started(Some(Duration::from_secs_f64(args.wait_mcp)))
            .await;
        not_ready = mcp.not_ready();
    }
    let ctx = assembly.context("catalog", "catalog").build();
    let mut catalog = assembly.catalog(&ctx);
    if let Some(mcp) = mcp {
        mcp.shutdown().await;
    }
    if args.json {
        if mcp_configured(&assembly) {
            catalog["mcp_not_ready"] = json!(not_ready);
        }
        println!("{}", catalog);
    } else {
        print!("{}", table(&catalog));
        print!("{}", not_ready_lines(&not_ready, args.wait_mcp));
    }
    Outcome::Done
}

fn mcp_configured(assembly: &kun_composition::Assembly) -> bool {
    !assembly.settings.mcp_servers.is_empty()
}

/// One line per MCP server that was not ready in time, with its state and why.
fn not_ready_lines(servers: &[ServerStatus], waited: f64) -> String {
    let mut out = String::new();
    if servers.is_empty() {
        return out;
    }
    out.push_str(&format!(
        "MCP servers not ready after {waited} s (their tools are not listed; raise --wait-mcp, or see `kun-tools doctor`):\n"
    ));
    for status in servers {
        let why = match &status.state {
            ServerState::Reconnecting { last_error, .. } => format!(": {last_error}"),
            ServerState::Failed { reason } => format!(": {reason}"),
            _ => String::new(),
        };
        let state = serde_json::to_value(&status.state)
            .ok()
            .and_then(|v| v["state"].as_str().map(str::to_owned))
            .unwrap_or_default();
        out.push_str(&format!("  {} [{state}]{why}\n", status.name));
    }
    out
}

fn table(catalog: &Value) -> String {
    let mut out = String::new();
    let tools = catalog["tools"].as_array().cloned().unwrap_or_default();
    let name_width = tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .map(str::len)
        .max()
        .unwrap_or(4)
        .max(4);
    out.push_str(&format!(
        "{:<name_width$}  {:<17}  {:<10}  {:<9}  PROVIDER\n",
        "TOOL", "KIND", "POLICY", "EFFECT"
    ));
    for tool in &tools {
        let text = |key: &str| tool[key].as_str().unwrap_or("-").to_owned();
        out.push_str(&format!(
            "{:<name_width$}  {:<17}  {:<10}  {:<9}  {}\n",
            text("name"),
            text("kind"),
            text("policy"),
            text("side_effect"),
            text("provider_id")
        ));
    }
    out.push_str(&format!(
        "\n{} tools, fingerprint {}\n",
        tools.len(),
        catalog["fingerprint"].as_str().unwrap_or("-")
    ));
    for provider in catalog["providers"].as_array().into_iter().flatten() {
        let state = match (
            provider["enabled"].as_bool(),
            provider["available"].as_bool(),
        ) {
            (Some(false), _) => "disabled",
            (_, Some(false)) => "unavailable",
            _ => "ready",
        };
        let reason = provider["reason"]
            .as_str()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "provider {} [{}]: {state}{reason}\n",
            provider["id"].as_str().unwrap_or("?"),
            provider["kind"].as_str().unwrap_or("?")
        ));
    }
    out
}
