//! # kun-mcp-fixture-server
//!
//! A small MCP server built with `rmcp`: the fixture `kun-mcp` is tested and benchmarked
//! against. Its tools cover every annotation kind the adapter maps (SPEC §9), plus the awkward
//! cases a client must survive:
//!
//! | tool | annotations | what it does |
//! |---|---|---|
//! | `echo` | read-only, not destructive, closed world | returns `text` unchanged |
//! | `read_note` | read-only, not destructive, closed world | returns the note stored under `key` |
//! | `delete_note` | destructive | removes the note under `key` |
//! | `web_lookup` | read-only, open world | pretends to look `query` up on the internet |
//! | `add_note` | none | stores `text` under `key` |
//! | `slow` | read-only, closed world | sleeps `millis` milliseconds, then answers |
//! | `exit_mid_call` | read-only, closed world | exits the whole server process mid-call, never answering |
//! | `fail` | read-only, closed world | answers with a tool-level error (`isError: true`) |
//! | `enable_extra_tool` | not read-only, not destructive | adds `extra_tool` and notifies `tools/list_changed` |
//! | `查询天气` | read-only, closed world | a tool whose name is not ASCII |
//!
//! The binary (`kun-mcp-fixture-server`) serves it on stdio. Flags:
//! `--startup-delay-ms N` sleeps before serving (to test start-up timeouts),
//! `--exit-immediately` exits with status 3 before the handshake (a server that fails to
//! start); `--never-start` never answers the handshake (a server that hangs);
//! `--started-marker PATH` appends the process id to `PATH` when launched.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use rmcp::ServiceExt;
//! let service = kun_mcp_fixture_server::FixtureServer::new()
//!     .serve(rmcp::transport::stdio())
//!     .await?;
//! service.waiting().await?;
//! # Ok(()) }
//! ```

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The tool `enable_extra_tool` adds.
pub const EXTRA_TOOL: &str = "extra_tool";

/// The exit status of the process when `exit_mid_call` ends it.
pub const EXIT_MID_CALL_STATUS: i32 = 17;

/// Arguments of `echo`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// The text to send back.
    pub text: String,
}

/// Arguments naming a note.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct NoteKey {
    /// The note's key.
    pub key: String,
}

/// Arguments of `add_note`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddNoteArgs {
    /// The note's key.
    pub key: String,
    /// The note's text.
    pub text: String,
}

/// Arguments of `web_lookup`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct LookupArgs {
    /// What to look up.
    pub query: String,
}

/// Arguments of `slow` and `exit_mid_call`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DelayArgs {
    /// How long to wait first, in milliseconds.
    #[serde(default)]
    pub millis: u64,
}

/// Arguments of `查询天气`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CityArgs {
    /// The city.
    pub city: String,
}

#[derive(Debug, Default)]
struct FixtureState {
    notes: Mutex<BTreeMap<String, String>>,
    extra_enabled: AtomicBool,
}

/// The fixture server. Cloning shares its notes (rmcp clones handlers per session).
#[derive(Debug, Clone)]
pub struct FixtureServer {
    tool_router: ToolRouter<Self>,
    state: Arc<FixtureState>,
}

impl Default for FixtureServer {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_router]
impl FixtureServer {
    /// A server with no notes and without `extra_tool`.
    #[must_use]
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
            state: Arc::default(),
        }
    }

    /// Returns the text unchanged.
    #[tool(annotations(
        title = "Echo",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        args.text
    }

    /// Reads the note stored under a key.
    #[tool(annotations(
        read_only_hint = true,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn read_note(&self, Parameters(args): Parameters<NoteKey>) -> String {
        let notes = self
            .state
            .notes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        notes
            .get(&args.key)
            .cloned()
            .unwrap_or_else(|| format!("no note under `{}`", args.key))
    }

    /// Deletes the note stored under a key. It cannot be undone.
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = true,
        open_world_hint = false
    ))]
    async fn delete_note(&self, Parameters(args): Parameters<NoteKey>) -> String {
        let mut notes = self
            .state
            .notes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match notes.remove(&args.key) {
            Some(_) => format!("deleted `{}`", args.key),
            None => format!("no note under `{}`", args.key),
        }
    }

    /// Looks a query up on the public internet (pretend: it answers locally).
    #[tool(annotations(
        read_only_hint = true,
        destructive_hint = false,
        open_world_hint = true
    ))]
    async fn web_lookup(&self, Parameters(args): Parameters<LookupArgs>) -> String {
        format!("results for `{}`", args.query)
    }

    /// Stores a note under a key.
    #[tool]
    async fn add_note(&self, Parameters(args): Parameters<AddNoteArgs>) -> String {
        let mut notes = self
            .state
            .notes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        notes.insert(args.key.clone(), args.text);
        format!("stored `{}`", args.key)
    }

    /// Waits the given number of milliseconds, then answers (stops early when the client
    /// cancels the request).
    #[tool(annotations(
        read_only_hint = true,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn slow(
        &self,
        Parameters(args): Parameters<DelayArgs>,
        cancel: CancellationToken,
    ) -> String {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(args.millis)) => format!("slept {} ms", args.millis),
            () = cancel.cancelled() => "cancelled".to_owned(),
        }
    }

    /// Exits the whole server process after the given delay, without answering.
    #[tool(annotations(
        read_only_hint = true,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn exit_mid_call(&self, Parameters(args): Parameters<DelayArgs>) -> String {
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        std::process::exit(EXIT_MID_CALL_STATUS);
    }

    /// Always fails with a tool-level error.
    #[tool(annotations(
        read_only_hint = true,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn fail(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text("this tool always fails")])
    }

    /// Adds `extra_tool` to the tool list and tells the client the list changed.
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn enable_extra_tool(&self, peer: Peer<RoleServer>) -> Result<String, ErrorData> {
        self.state.extra_enabled.store(true, Ordering::SeqCst);
        peer.notify_tool_list_changed()
            .await
            .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
        Ok(format!("{EXTRA_TOOL} enabled"))
    }

    /// A tool that appears only after `enable_extra_tool`.
    #[tool(annotations(
        read_only_hint = true,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn extra_tool(&self) -> String {
        "extra".to_owned()
    }

    /// Reports the weather of a city (a fixed answer).
    #[tool(
        name = "查询天气",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn weather(&self, Parameters(args): Parameters<CityArgs>) -> String {
        format!("{}: 晴", args.city)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for FixtureServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            "kun-mcp-fixture-server",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions("Fixture server for kun-mcp tests. Not for real use.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let extra = self.state.extra_enabled.load(Ordering::SeqCst);
        let tools = self
            .tool_router
            .list_all()
            .into_iter()
            .filter(|tool| extra || tool.name != EXTRA_TOOL)
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }
}
