//! `kun-tools catalog`.

use crate::Outcome;
use crate::cli::CatalogArgs;
use crate::setup;
use kun_composition::AssembleOptions;
use serde_json::Value;

/// Prints the catalog (MCP servers included: they are started, listed and stopped).
pub async fn run(args: CatalogArgs) -> Outcome {
    let assembly = match setup::assemble(&args.common, AssembleOptions::default()) {
        Ok(assembly) => assembly,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            return Outcome::Usage;
        }
    };
    let mcp = match kun_composition::attach_mcp(&assembly).await {
        Ok(mcp) => mcp,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            return Outcome::Usage;
        }
    };
    let ctx = assembly.context("catalog", "catalog").build();
    let catalog = assembly.catalog(&ctx);
    if let Some(mcp) = mcp {
        mcp.shutdown().await;
    }
    if args.json {
        println!("{}", catalog);
    } else {
        print!("{}", table(&catalog));
    }
    Outcome::Done
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
