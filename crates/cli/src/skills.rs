//! `kun-tools skills --workspace DIR [--prompt TEXT] [--file PATH]… [--json]`: the skills
//! discovered (with every diagnostic), and for a prompt what activates, the scores, the
//! narrowed allow-list and the pre-approvals.
//!
//! JSON: `{"skills": [{id, name, description, source, allowed_tools, restrict_tools}],
//! "diagnostics": [{file, message}], "activations": [{id, score, reason, injected}],
//! "narrowed_tools": [...] | null, "pre_approved_tools": [...]}`. Tool names a skill gives
//! that are not in this configuration's catalog are diagnostics too.

use crate::Outcome;
use crate::cli::SkillsArgs;
use crate::setup;
use kun_composition::AssembleOptions;
use kun_ports::ToolHost as _;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

/// Runs `skills`.
pub fn run(args: &SkillsArgs) -> Outcome {
    let assembly = match setup::assemble(&args.common, AssembleOptions::default()) {
        Ok(assembly) => assembly,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            return Outcome::Usage;
        }
    };
    let catalog = assembly.skills.catalog();
    let ctx = assembly.context("skills", "skills").build();
    let tools: BTreeSet<String> = assembly
        .host
        .list_tools(&ctx)
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    let mut diagnostics: Vec<Value> = catalog
        .diagnostics()
        .iter()
        .map(|d| json!({"file": d.file, "message": d.message}))
        .collect();
    let skills: Vec<Value> = catalog
        .skills()
        .iter()
        .map(|s| {
            let allowed: Vec<String> = s.allowed_tools.iter().map(ToString::to_string).collect();
            let named = s
                .allowed_tools
                .iter()
                .map(|r| ("allowed-tools", r.tool.as_str()))
                .chain(
                    s.restrict_tools
                        .iter()
                        .flatten()
                        .map(|t| ("restrict-tools", t.as_str())),
                );
            for (key, tool) in named {
                if !tools.contains(tool) {
                    diagnostics.push(json!({
                        "file": s.source.path,
                        "message": format!("{key}: `{tool}` is not a tool of this catalog"),
                    }));
                }
            }
            json!({
                "id": s.id,
                "name": s.name,
                "description": s.description,
                "source": s.source.path,
                "allowed_tools": allowed,
                "restrict_tools": s.restrict_tools,
            })
        })
        .collect();
    let files: Vec<&Path> = args.file.iter().map(std::path::PathBuf::as_path).collect();
    let activation = args
        .prompt
        .as_deref()
        .map(|prompt| catalog.activate(prompt, &files))
        .unwrap_or_default();
    let report = json!({
        "skills": skills,
        "diagnostics": diagnostics,
        "activations": activation.activations,
        "narrowed_tools": activation.narrowed_tools,
        "pre_approved_tools": activation
            .pre_approved
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
    });
    if args.json {
        println!("{report}");
    } else {
        print!("{}", text(&report, args.prompt.is_some()));
    }
    Outcome::Done
}

fn text(report: &Value, prompted: bool) -> String {
    let mut out = String::new();
    let list = |key: &str| report[key].as_array().cloned().unwrap_or_default();
    let skills = list("skills");
    let _ = writeln!(out, "skills ({}):", skills.len());
    for s in &skills {
        let _ = writeln!(
            out,
            "  {}  {}\n      {}",
            s["id"].as_str().unwrap_or("?"),
            s["description"].as_str().unwrap_or(""),
            s["source"].as_str().unwrap_or("")
        );
        let allowed = s["allowed_tools"].as_array().cloned().unwrap_or_default();
        if !allowed.is_empty() {
            let names: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
            let _ = writeln!(
                out,
                "      allowed-tools (pre-approve): {}",
                names.join(", ")
            );
        }
        if let Some(restrict) = s["restrict_tools"].as_array() {
            let names: Vec<&str> = restrict.iter().filter_map(Value::as_str).collect();
            let _ = writeln!(out, "      restrict-tools (narrow): {}", names.join(", "));
        }
    }
    let diagnostics = list("diagnostics");
    if !diagnostics.is_empty() {
        let _ = writeln!(out, "diagnostics ({}):", diagnostics.len());
        for d in &diagnostics {
            let _ = writeln!(
                out,
                "  {}: {}",
                d["file"].as_str().unwrap_or("?"),
                d["message"].as_str().unwrap_or("")
            );
        }
    }
    if prompted {
        let activations = list("activations");
        let _ = writeln!(out, "activations ({}):", activations.len());
        for a in &activations {
            let _ = writeln!(
                out,
                "  {}  score {}  {}{}",
                a["id"].as_str().unwrap_or("?"),
                a["score"],
                a["reason"].as_str().unwrap_or(""),
                if a["injected"] == true {
                    ""
                } else {
                    "  (skipped: over the injection budget)"
                }
            );
        }
        let narrowed = match report["narrowed_tools"].as_array() {
            Some(names) => names
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", "),
            None => "(not narrowed)".to_owned(),
        };
        let _ = writeln!(out, "allow-list: {narrowed}");
        let pre: Vec<&str> = report["pre_approved_tools"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "pre-approved: {}",
            if pre.is_empty() {
                "(none)".to_owned()
            } else {
                pre.join(", ")
            }
        );
    }
    out
}
