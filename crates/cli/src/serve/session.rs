//! One MCP session: a manual [`ServerHandler`] over the live assembly.
//!
//! * one session is one thread (`mcp-…`): read-before-edit and session grants are per
//!   session;
//! * each `tools/call` is one turn (`turn-1`, `turn-2`, …), run through the whole pipeline and
//!   released when it ends;
//! * `tools/list` is the catalog for the configured context, sorted by name, with names of
//!   at most `max_tool_name_length` characters ([`ServeOptions`]);
//! * `outputSchema` and `structuredContent` go to the clients [`ServeOptions`] says, decided
//!   from the client's `clientInfo.name`; every result's text block is the tool's rendering
//!   ([`convert`]);
//! * methods `serve` does not offer (prompts, resources, completion, logging) answer `-32601`
//!   naming the method;
//! * approvals go to this session's client ([`ElicitationApprover`] inside one
//!   [`Gate`], so grants and events are per session); so do `user_input` questions
//!   ([`ElicitationInput`]);
//! * a call whose request carries a `progressToken` reports progress ([`McpProgress`]);
//! * when the published catalog fingerprint changes, the session sends
//!   `notifications/tools/list_changed` (until the session ends).

use crate::serve::ask::ElicitationInput;
use crate::serve::convert::{self, unsupported};
use crate::serve::elicit::ElicitationApprover;
use crate::serve::live::Live;
use crate::serve::options::{ServeOptions, Structured};
use crate::serve::progress::McpProgress;
use crate::serve::prompts;
use kun_approval::Gate;
use kun_ports::{AbortSignal, ApprovalGate, ToolCall, ToolHost as _, UserInputChannel};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestMethod, CompleteRequestParams,
    CompleteResult, CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse,
    Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestMethod, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SubscribeRequestMethod, SubscribeRequestParams,
    UnsubscribeRequestMethod, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use tokio_util::sync::{CancellationToken, DropGuard};

/// What clients read about the server.
const INSTRUCTIONS: &str = "kun-tools: a coding agent's tool surface. Every call passes three \
    gates (sandbox, approval, hooks); a blocked call is an error result with a `code` saying \
    why and what to do next. Read a file before editing it.";

/// What the model should know about how its commands run (the probed tier).
fn confinement_line(assembly: &kun_composition::Assembly) -> String {
    let report = assembly.capabilities.report();
    let network = if assembly.settings.sandbox_options.network {
        "with"
    } else {
        "without"
    };
    if report.tier.is_confined() {
        format!(
            "Commands run confined ({}): they write only inside the workspace, {network} network.",
            report.tier.label()
        )
    } else {
        "Commands are not confined on this machine; each one may ask for approval.".to_owned()
    }
}

/// One MCP session.
pub struct Session {
    live: Arc<Live>,
    thread_id: String,
    turns: AtomicU64,
    peer: Arc<OnceLock<Peer<RoleServer>>>,
    gate: Arc<dyn ApprovalGate>,
    /// Asks the person (`user_input`) through elicitation.
    input: Arc<dyn UserInputChannel>,
    /// Ends the list_changed follower when the session (this handler) is dropped.
    follower: CancellationToken,
    _end_follower: DropGuard,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("thread_id", &self.thread_id)
            .field("turns", &self.turns)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A new session (a new thread) over `live`.
    #[must_use]
    pub fn new(live: Arc<Live>) -> Self {
        let peer = Arc::new(OnceLock::new());
        let approver = ElicitationApprover::new(Arc::clone(&peer), Arc::clone(&live));
        let follower = CancellationToken::new();
        Self {
            thread_id: thread_id(),
            turns: AtomicU64::new(0),
            gate: Arc::new(Gate::new(approver)),
            input: Arc::new(ElicitationInput::new(Arc::clone(&peer))),
            _end_follower: follower.clone().drop_guard(),
            follower,
            peer,
            live,
        }
    }

    /// Remembers the client; the first time, starts following the catalog fingerprint.
    fn attach(&self, peer: &Peer<RoleServer>) {
        if self.peer.set(peer.clone()).is_err() {
            return;
        }
        let mut fingerprints = self.live.fingerprint();
        fingerprints.mark_unchanged();
        let stop = self.follower.clone();
        let peer = peer.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    changed = fingerprints.changed() => if changed.is_err() { return },
                }
                if let Err(err) = peer.notify_tool_list_changed().await {
                    tracing::debug!("list_changed not delivered, session over: {err}");
                    return;
                }
            }
        });
    }

    fn next_turn(&self) -> String {
        format!("turn-{}", self.turns.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// Whether this request's client gets the structured parts (see [`ServeOptions`]).
fn structured_for(options: &ServeOptions, context: &RequestContext<RoleServer>) -> Structured {
    let client = context.client_info();
    options.structured_for(client.as_ref().map(|info| info.name.as_str()))
}

impl ServerHandler for Session {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
        .with_server_info(Implementation::new("kun-tools", env!("CARGO_PKG_VERSION")))
        .with_instructions({
            let assembly = self.live.current();
            let lead = format!("{INSTRUCTIONS} {}", confinement_line(&assembly));
            prompts::instructions(&assembly, &lead)
        })
    }

    /// Only revisions with an `initialize` handshake: approvals are server-to-client
    /// elicitation requests, which later revisions forbid.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.attach(&context.peer);
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.attach(&context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let assembly = self.live.current();
        let options = ServeOptions::from_settings(&assembly.settings);
        let structured = structured_for(&options, &context);
        let ctx = assembly.context(&self.thread_id, "tools-list").build();
        let tools = assembly.registry.list_tools(&ctx);
        let advertised = tools
            .iter()
            .filter(|tool| {
                let fits = options.admits_name(tool.name());
                if !fits {
                    // Clients would prefix it and break the model's session: leave it out.
                    tracing::warn!(
                        tool = tool.name(),
                        max = options.max_tool_name_length,
                        "tool name too long for [serve] max_tool_name_length; not advertised"
                    );
                }
                fits
            })
            .map(|tool| convert::mcp_tool(tool, structured))
            .collect();
        Ok(ListToolsResult::with_all_items(advertised))
    }

    // The methods `serve` does not offer answer `-32601` naming the method (rmcp's defaults
    // give only the method name).

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        // Declared (clients probe it beside prompts); `serve` publishes none.
        Ok(ListResourcesResult::default())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::default())
    }

    async fn read_resource(
        &self,
        _request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Err(unsupported::<ReadResourceRequestMethod>())
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Err(unsupported::<SubscribeRequestMethod>())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Err(unsupported::<UnsubscribeRequestMethod>())
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        Err(unsupported::<CompleteRequestMethod>())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(convert::unsupported_method(&request.method))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(prompts::list(&self.live.current()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::get(&self.live.current(), &request).map(Into::into)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.attach(&context.peer);
        let assembly = self.live.current();
        let structured = structured_for(&ServeOptions::from_settings(&assembly.settings), &context);
        let snapshot = assembly.registry.snapshot();
        let called = snapshot.get(request.name.as_ref()).cloned();
        let turn = self.next_turn();
        let abort = AbortSignal::new();
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| McpProgress::start(context.peer.clone(), token));
        let mut ctx = assembly
            .context(&self.thread_id, &turn)
            .approver(Arc::clone(&self.gate))
            .user_input(Arc::clone(&self.input))
            .abort(abort.clone());
        if let Some(progress) = &progress {
            ctx = ctx.progress(Arc::clone(progress) as Arc<dyn kun_ports::ProgressSink>);
        }
        let ctx = ctx.build();
        let arguments = request
            .arguments
            .map_or_else(|| Value::Object(serde_json::Map::new()), Value::Object);
        let call = ToolCall::new(format!("{turn}-call"), request.name.as_ref(), arguments);
        tracing::debug!(thread = %self.thread_id, %turn, tool = %call.tool_name, "tools/call");
        let run = assembly.host.execute(call, &ctx);
        tokio::pin!(run);
        let outcome = tokio::select! {
            outcome = &mut run => outcome,
            () = context.ct.cancelled() => {
                abort.abort();
                run.await
            }
        };
        assembly.host.release_turn(&self.thread_id, &turn);
        if let Some(progress) = progress {
            progress.finish().await;
        }
        match outcome {
            Ok(result) => Ok(convert::call_result(
                result,
                called.as_ref().map(kun_ports::ToolDescriptor::spec),
                structured,
            )
            .into()),
            Err(err) => Err(convert::host_error(&err)),
        }
    }
}

/// `mcp-` and 12 hex digits, unique per session.
fn thread_id() -> String {
    static SESSIONS: AtomicU64 = AtomicU64::new(0);
    let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let digest = blake3::hash(format!("{}:{nanos}:{n}", std::process::id()).as_bytes());
    format!("mcp-{}", &digest.to_hex()[..12])
}
