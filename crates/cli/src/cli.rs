//! The command line (fixed interface: scripts outside the project drive it).

use clap::{Args, Parser, Subcommand};
use kun_composition::config::ApprovalFallback;
use kun_ports::{ApprovalPolicy, ClientSurface, MemoryScope, SandboxMode, ThreadMode};
use std::net::SocketAddr;
use std::path::PathBuf;

/// kun-tools: the tool surface of a coding agent — a filtered catalog and a gated pipeline.
#[derive(Debug, Parser)]
#[command(name = "kun-tools", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the catalog the model would see, with its fingerprint and provider diagnostics.
    Catalog(CatalogArgs),
    /// Run one call (or a script of calls) through every gate.
    Call(CallArgs),
    /// Serve the gated tool surface as an MCP server (stdio, or streamable HTTP with --http).
    Serve(ServeArgs),
    /// Show the effective configuration and where each value came from, the workspace's
    /// trust and what it left out, the providers, the configuration errors and the command
    /// confinement tier.
    Doctor(DoctorArgs),
    /// List the skills found (and every skipped file), and for a prompt what activates.
    Skills(SkillsArgs),
    /// Trust a workspace: add its canonical path to `[trust] workspaces` in the user config,
    /// and print what its configuration changes from now on.
    Trust(TrustArgs),
    /// List, search or remove the memories a workspace sees.
    Memory(MemoryArgs),
}

fn parse_mode<T: std::str::FromStr>(value: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    value.parse::<T>().map_err(|err| err.to_string())
}

fn parse_fallback(value: &str) -> Result<ApprovalFallback, String> {
    match value {
        "deny" => Ok(ApprovalFallback::Deny),
        "allow" => Ok(ApprovalFallback::Allow),
        other => Err(format!("`{other}` is not a fallback; use deny or allow")),
    }
}

/// Flags shared by every command that builds a catalog.
#[derive(Debug, Args)]
pub struct Common {
    /// The workspace root.
    #[arg(long, value_name = "DIR")]
    pub workspace: PathBuf,
    /// A configuration file applied after the user and workspace ones.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Sandbox mode: read-only | workspace-write | danger-full-access | external-sandbox.
    #[arg(long, value_name = "MODE", value_parser = parse_mode::<SandboxMode>)]
    pub sandbox: Option<SandboxMode>,
    /// Approval policy: always | on-request | suggest | untrusted | never | auto.
    #[arg(long, value_name = "POLICY", value_parser = parse_mode::<ApprovalPolicy>)]
    pub approval: Option<ApprovalPolicy>,
    /// Thread mode: agent | plan.
    #[arg(long, value_name = "MODE", value_parser = parse_mode::<ThreadMode>)]
    pub mode: Option<ThreadMode>,
    /// Only these tools (comma-separated).
    #[arg(long, value_name = "a,b", value_delimiter = ',')]
    pub allow_tools: Option<Vec<String>>,
    /// Never these tools (comma-separated).
    #[arg(long, value_name = "a,b", value_delimiter = ',')]
    pub deny_tools: Option<Vec<String>>,
    /// The client surface: cli | gui | api (goal and todo tools are listed for gui only).
    #[arg(long, value_name = "SURFACE", value_parser = parse_mode::<ClientSurface>)]
    pub surface: Option<ClientSurface>,
    /// Trust the workspace for this run: its .kun/config.toml and .mcp.json apply as the
    /// user's own, its hooks run and its MCP servers start (`kun-tools trust DIR` to keep it).
    #[arg(long)]
    pub trust_workspace: bool,
}

/// `kun-tools catalog`.
#[derive(Debug, Args)]
pub struct CatalogArgs {
    /// Shared flags.
    #[command(flatten)]
    pub common: Common,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// How long to wait for the MCP servers to start before listing; the servers not ready
    /// by then are named (their tools are missing from the list).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_WAIT_MCP, value_parser = parse_seconds)]
    pub wait_mcp: f64,
}

/// The default of `--wait-mcp`: long enough for a typical server to start, short enough
/// that a hanging one does not stall the command.
pub const DEFAULT_WAIT_MCP: f64 = 5.0;

/// Seconds, from 0 to one hour.
fn parse_seconds(text: &str) -> Result<f64, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if (0.0..=3600.0).contains(&seconds) {
        Ok(seconds)
    } else {
        Err(format!("{seconds} seconds is out of range: use 0 to 3600"))
    }
}

/// `kun-tools call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// Shared flags.
    #[command(flatten)]
    pub common: Common,
    /// Approve every prompt.
    #[arg(long, conflicts_with = "no")]
    pub yes: bool,
    /// Deny every prompt.
    #[arg(long)]
    pub no: bool,
    /// Run JSON lines `{"tool": …, "arguments": …}` from FILE (`-` for stdin), one turn each.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tool", "arguments"])]
    pub script: Option<PathBuf>,
    /// The thread id (read-before-edit and the ledger are per thread).
    #[arg(long, default_value = "cli")]
    pub thread: String,
    /// The turn id (default: unique per run, so separate runs never replay each other).
    #[arg(long)]
    pub turn: Option<String>,
    /// The call id (with --thread and --turn it identifies the operation in the ledger).
    #[arg(long)]
    pub call_id: Option<String>,
    /// The operation ledger file (default: one per workspace under the user state directory).
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
    /// Print what the model would read (the tool's rendering; media as a one-line
    /// placeholder) instead of `{"is_error", "output"}` JSON.
    #[arg(long)]
    pub text: bool,
    /// The tool to call.
    #[arg(required_unless_present = "script")]
    pub tool: Option<String>,
    /// Its arguments as a JSON object.
    #[arg(required_unless_present = "script")]
    pub arguments: Option<String>,
}

/// `kun-tools serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Shared flags.
    #[command(flatten)]
    pub common: Common,
    /// What an approval becomes when the client cannot be asked (no elicitation): deny | allow.
    #[arg(long, value_name = "deny|allow", value_parser = parse_fallback)]
    pub approval_fallback: Option<ApprovalFallback>,
    /// Serve streamable HTTP on this address (at /mcp) instead of stdio. Loopback only unless
    /// KUN_TOKEN is set, in which case every request must carry `Authorization: Bearer <token>`.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// The thread whose goals and todos the sessions share (default: one per workspace, the
    /// same across restarts).
    #[arg(long, value_name = "ID")]
    pub thread: Option<String>,
}

/// `kun-tools skills`.
#[derive(Debug, Args)]
pub struct SkillsArgs {
    /// Shared flags.
    #[command(flatten)]
    pub common: Common,
    /// A prompt: show which skills it activates, their scores and the narrowed allow-list.
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
    /// A file involved in the prompt (its type can activate skills); repeatable.
    #[arg(long, value_name = "PATH")]
    pub file: Vec<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `kun-tools doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The workspace root.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub workspace: PathBuf,
    /// A configuration file applied after the user and workspace ones.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Sandbox mode: read-only | workspace-write | danger-full-access | external-sandbox.
    #[arg(long, value_name = "MODE", value_parser = parse_mode::<SandboxMode>)]
    pub sandbox: Option<SandboxMode>,
    /// Approval policy: always | on-request | suggest | untrusted | never | auto.
    #[arg(long, value_name = "POLICY", value_parser = parse_mode::<ApprovalPolicy>)]
    pub approval: Option<ApprovalPolicy>,
    /// Thread mode: agent | plan.
    #[arg(long, value_name = "MODE", value_parser = parse_mode::<ThreadMode>)]
    pub mode: Option<ThreadMode>,
    /// What an approval becomes when the client cannot be asked: deny | allow.
    #[arg(long, value_name = "deny|allow", value_parser = parse_fallback)]
    pub approval_fallback: Option<ApprovalFallback>,
    /// Trust the workspace for this run (see `catalog --help`).
    #[arg(long)]
    pub trust_workspace: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// How long to wait for the MCP servers to start before reporting their states (a server
    /// still starting by then shows as `starting`).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_WAIT_MCP, value_parser = parse_seconds)]
    pub wait_mcp: f64,
}

/// `kun-tools trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The workspace to trust.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

impl DoctorArgs {
    /// The flags as the shared set (no tool lists).
    #[must_use]
    pub fn common(&self) -> Common {
        Common {
            workspace: self.workspace.clone(),
            config: self.config.clone(),
            sandbox: self.sandbox,
            approval: self.approval,
            mode: self.mode,
            allow_tools: None,
            deny_tools: None,
            surface: None,
            trust_workspace: self.trust_workspace,
        }
    }
}

/// `kun-tools memory`.
#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: MemoryCommand,
    /// The workspace whose memories to show (with the user's and its project's).
    #[arg(long, value_name = "DIR", global = true, default_value = ".")]
    pub workspace: PathBuf,
    /// A configuration file applied after the user and workspace ones.
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
}

/// `kun-tools memory list|search|rm`.
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// The memories, most recently changed first.
    List {
        /// Only this scope: user | workspace | project.
        #[arg(long, value_parser = parse_mode::<MemoryScope>)]
        scope: Option<MemoryScope>,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Skip this many.
        #[arg(long, default_value_t = 0)]
        offset: usize,
    },
    /// The memories that best match a query.
    Search {
        /// Keywords.
        query: String,
        /// Only this scope: user | workspace | project.
        #[arg(long, value_parser = parse_mode::<MemoryScope>)]
        scope: Option<MemoryScope>,
        /// At most this many.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Remove one memory (it must be visible from the workspace).
    Rm {
        /// Its id (`m42`).
        id: String,
    },
}
