//! `kun-tools call`: one call, or a script of calls, through every gate.
//!
//! Each result prints as one line of `{"is_error", "output"}` JSON (scripts rely on it), or
//! with `--text` as what the model would read: the text blocks as they are, media as a
//! one-line placeholder (`[image image/png, 1234 bytes base64]`); in a script each call's text
//! follows a `=== line N: tool ===` header (`=== line N: tool (error) ===` for an error).
//!
//! MCP servers start only when a call needs them: a built-in tool starts none, an MCP tool
//! only its server ([`crate::on_demand`]).

use crate::Outcome;
use crate::cli::CallArgs;
use crate::{on_demand, setup};
use kun_approval::{Gate, TerminalApprover};
use kun_composition::{AssembleOptions, Assembly, LedgerChoice, McpAttachment};
use kun_gui::TerminalUserInput;
use kun_ports::{
    ApprovalGate, ContentBlock, HostError, ToolCall, ToolHost, ToolResult, UserInputChannel,
};
use serde::Deserialize;
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One line of a `--script`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptLine {
    tool: String,
    #[serde(default)]
    arguments: Value,
    call_id: Option<String>,
}

/// Runs `call`.
pub async fn run(args: CallArgs) -> Outcome {
    let ledger = args
        .ledger
        .clone()
        .or_else(|| default_ledger(&args.common.workspace));
    let options = AssembleOptions {
        ledger: ledger.map_or(LedgerChoice::InMemory, LedgerChoice::Journal),
        thread_state: setup::thread_state(None),
        ..AssembleOptions::default()
    };
    let assembly = match setup::assemble(&args.common, options) {
        Ok(assembly) => assembly,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            return Outcome::Usage;
        }
    };
    // No server starts until a call needs it (see `on_demand`).
    let mcp = match kun_composition::start_mcp(&assembly, kun_composition::McpLaunch::OnDemand) {
        Ok(mcp) => mcp,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            return Outcome::Usage;
        }
    };
    let outcome = run_calls(&assembly, mcp.as_ref(), &args).await;
    if let Some(mcp) = mcp {
        mcp.shutdown().await;
    }
    outcome
}

/// Runs the single call or the script.
async fn run_calls(assembly: &Assembly, mcp: Option<&McpAttachment>, args: &CallArgs) -> Outcome {
    let reads_stdin = args.script.as_deref() == Some(Path::new("-"));
    let approver = approver(args, reads_stdin);
    let asker = asker(reads_stdin);
    let run_id = run_id();
    match &args.script {
        Some(script) => run_script(assembly, mcp, args, approver, asker, script, &run_id).await,
        None => {
            let (Some(tool), Some(arguments)) = (&args.tool, &args.arguments) else {
                eprintln!("kun-tools: call needs TOOL and ARGS_JSON, or --script FILE");
                return Outcome::Usage;
            };
            let arguments: Value = match serde_json::from_str(arguments) {
                Ok(value) => value,
                Err(err) => {
                    eprintln!("kun-tools: ARGS_JSON is not valid JSON: {err}");
                    return Outcome::Usage;
                }
            };
            let turn = args
                .turn
                .clone()
                .unwrap_or_else(|| format!("turn-{run_id}"));
            let call_id = args
                .call_id
                .clone()
                .unwrap_or_else(|| format!("call-{run_id}"));
            on_demand::prepare(assembly, mcp, tool, &arguments).await;
            let call = ToolCall::new(call_id, tool.clone(), arguments);
            match execute(
                assembly,
                &args.thread,
                &turn,
                call,
                &approver,
                asker.as_ref(),
            )
            .await
            {
                Ok(result) => {
                    if args.text {
                        println!("{}", model_view(&result));
                    } else {
                        println!("{}", json_line(&result));
                    }
                    Outcome::Done
                }
                Err(err) => {
                    eprintln!("kun-tools: {err}");
                    Outcome::Refused
                }
            }
        }
    }
}

async fn execute(
    assembly: &Assembly,
    thread: &str,
    turn: &str,
    call: ToolCall,
    approver: &Arc<dyn ApprovalGate>,
    asker: Option<&Arc<dyn UserInputChannel>>,
) -> Result<ToolResult, HostError> {
    let mut ctx = assembly
        .context(thread, turn)
        .approver(Arc::clone(approver));
    if let Some(asker) = asker {
        ctx = ctx.user_input(Arc::clone(asker));
    }
    let ctx = ctx.build();
    assembly.host.execute(call, &ctx).await
}

/// `{"is_error", "output"}`: the line scripts read.
fn json_line(result: &ToolResult) -> Value {
    json!({"is_error": result.is_error, "output": result.output})
}

/// What the model reads: text blocks as they are, media as one-line placeholders.
fn model_view(result: &ToolResult) -> String {
    let parts: Vec<String> = result
        .model_content()
        .into_iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text,
            ContentBlock::Image { data, mime_type } => {
                format!("[image {mime_type}, {} bytes base64]", data.len())
            }
            ContentBlock::Audio { data, mime_type } => {
                format!("[audio {mime_type}, {} bytes base64]", data.len())
            }
            ContentBlock::ResourceLink { uri, name, .. } => format!("[resource {name}: {uri}]"),
        })
        .collect();
    parts.join("\n")
}

async fn run_script(
    assembly: &Assembly,
    mcp: Option<&McpAttachment>,
    args: &CallArgs,
    approver: Arc<dyn ApprovalGate>,
    asker: Option<Arc<dyn UserInputChannel>>,
    script: &Path,
    run_id: &str,
) -> Outcome {
    let lines: Vec<String> = match read_lines(script) {
        Ok(lines) => lines,
        Err(err) => {
            eprintln!("kun-tools: --script {}: {err}", script.display());
            return Outcome::Usage;
        }
    };
    let mut outcome = Outcome::Done;
    for (index, text) in lines.iter().enumerate() {
        let number = index + 1;
        if text.trim().is_empty() {
            continue;
        }
        let line: ScriptLine = match serde_json::from_str(text) {
            Ok(line) => line,
            Err(err) => {
                println!(
                    "{}",
                    json!({"line": number, "invalid": format!("not a script line: {err}")})
                );
                outcome = Outcome::Usage;
                continue;
            }
        };
        let turn = match &args.turn {
            Some(turn) => format!("{turn}-{number}"),
            None => format!("turn-{run_id}-{number}"),
        };
        let call_id = line.call_id.unwrap_or_else(|| format!("call-{number}"));
        let tool = line.tool.clone();
        on_demand::prepare(assembly, mcp, &tool, &line.arguments).await;
        let call = ToolCall::new(call_id, line.tool, line.arguments);
        match execute(
            assembly,
            &args.thread,
            &turn,
            call,
            &approver,
            asker.as_ref(),
        )
        .await
        {
            Ok(result) if args.text => {
                let error = if result.is_error { " (error)" } else { "" };
                println!("=== line {number}: {tool}{error} ===");
                println!("{}", model_view(&result));
            }
            Ok(result) => println!("{}", json_line(&result)),
            Err(err) => {
                println!("{}", json!({"line": number, "refused": err.to_string()}));
                if outcome == Outcome::Done {
                    outcome = Outcome::Refused;
                }
            }
        }
    }
    outcome
}

fn read_lines(script: &Path) -> std::io::Result<Vec<String>> {
    if script == Path::new("-") {
        std::io::stdin().lock().lines().collect()
    } else {
        std::fs::read_to_string(script).map(|text| text.lines().map(str::to_owned).collect())
    }
}

/// `--yes`, `--no`, a terminal prompt, or a denial when nobody can be asked.
fn approver(args: &CallArgs, stdin_taken: bool) -> Arc<dyn ApprovalGate> {
    if args.yes {
        return Arc::new(Gate::allow_all());
    }
    if args.no {
        return Arc::new(Gate::deny_all("denied with --no"));
    }
    if !stdin_taken && let Some(terminal) = TerminalApprover::stdio_if_terminal() {
        return Arc::new(Gate::new(terminal));
    }
    Arc::new(Gate::deny_all(
        "nobody can be asked: stdin is not a terminal; pass --yes or --no",
    ))
}

/// Who answers `user_input`: the person at the terminal, when stdin and stderr are one and
/// stdin is not the script; nobody otherwise (the tools then say input is not available).
fn asker(stdin_taken: bool) -> Option<Arc<dyn UserInputChannel>> {
    if stdin_taken {
        return None;
    }
    TerminalUserInput::stdio_if_terminal().map(|t| Arc::new(t) as Arc<dyn UserInputChannel>)
}

/// A short id unique to this process run.
fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let digest = blake3::hash(format!("{}:{nanos}", std::process::id()).as_bytes());
    digest.to_hex()[..12].to_owned()
}

/// `$XDG_STATE_HOME/kun/ledger/<hash of the workspace>.jsonl` (or `~/.local/state/…`).
fn default_ledger(workspace: &Path) -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state"))
        })?;
    let absolute = std::path::absolute(workspace).ok()?;
    let key = blake3::hash(absolute.to_string_lossy().as_bytes()).to_hex();
    Some(
        state
            .join("kun")
            .join("ledger")
            .join(format!("{}.jsonl", &key[..16])),
    )
}
