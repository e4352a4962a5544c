//! The gateway tools `mcp_search`, `mcp_describe` and `mcp_call` (see the [module
//! docs](super)).

use super::index::{SearchDoc, SearchIndex};
use crate::access::ServerAccess;
use crate::config::SearchSettings;
use crate::record::McpToolRecord;
use crate::status::ServerStatus;
use crate::tool::access_denied;
use async_trait::async_trait;
use kun_ports::{
    ErrorCode, ForwardedCall, HostError, NotAdvertisedReason, SideEffect, Tool, ToolContext,
    ToolError, ToolPolicy, ToolResult, ToolSpec,
};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// `mcp_search`.
pub const SEARCH_TOOL: &str = "mcp_search";
/// `mcp_describe`.
pub const DESCRIBE_TOOL: &str = "mcp_describe";
/// `mcp_call`.
pub const CALL_TOOL: &str = "mcp_call";

/// Characters of a description shown in search results.
const SUMMARY_CHARS: usize = 240;
/// Parameters listed per search result.
const MAX_PARAMETERS: usize = 12;

/// A server as the gateway sees it: where it may be used and whether it is up.
#[derive(Clone)]
pub(crate) struct ServerView {
    pub access: Arc<ServerAccess>,
    pub status: Arc<Mutex<ServerStatus>>,
}

/// Every MCP tool known when the gateway was built, and the index over them (built on the
/// first search).
pub(crate) struct GatewayCatalog {
    records: Vec<Arc<McpToolRecord>>,
    by_name: HashMap<String, usize>,
    servers: HashMap<String, ServerView>,
    settings: SearchSettings,
    index: OnceLock<SearchIndex>,
}

/// Why a tool is not offered this turn.
enum Unusable {
    /// Server visibility or trust.
    Access(ToolResult),
    /// Anything else (lists, plan mode, sandbox, server down).
    Filtered(&'static str),
}

impl GatewayCatalog {
    pub(crate) fn new(
        records: Vec<Arc<McpToolRecord>>,
        servers: HashMap<String, ServerView>,
        settings: SearchSettings,
    ) -> Self {
        let by_name = records
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name.clone(), i))
            .collect();
        Self {
            records,
            by_name,
            servers,
            settings,
            index: OnceLock::new(),
        }
    }

    /// Builds the index, if not built yet, on the runtime's blocking pool: a large catalog
    /// takes a while (about 30 µs a tool, 0.3 s for 10,000) and must not hold up the async
    /// thread that serves every session. Without a tokio runtime, [`Self::index`] builds it
    /// in place.
    async fn build_index_off_thread(self: &Arc<Self>) {
        if self.index.get().is_some() {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let catalog = Arc::clone(self);
            // A failed task (the runtime shutting down) leaves the index to `index()`.
            let _ = runtime
                .spawn_blocking(move || {
                    catalog.index();
                })
                .await;
        }
    }

    fn index(&self) -> &SearchIndex {
        self.index.get_or_init(|| {
            SearchIndex::build(self.records.iter().map(|r| SearchDoc::from(r.as_ref())))
        })
    }

    /// Whether the turn may use record `i`: its server's access (visibility and trust), the
    /// server's state, then the host's own catalog filters (asked through the turn's
    /// [`CatalogView`]: provider, lists, plan mode with its configured whitelist, sandbox —
    /// never a copy of them here, so the gateway offers exactly what a direct listing would).
    ///
    /// [`CatalogView`]: kun_ports::CatalogView
    fn check(&self, i: usize, ctx: &ToolContext<'_>) -> Result<(), Unusable> {
        let record = &self.records[i];
        let Some(server) = self.servers.get(&record.address.server) else {
            return Err(Unusable::Filtered("its server is unknown"));
        };
        if let Some(denied) = access_denied(
            &server.access,
            &record.address.server,
            ctx.turn.workspace_roots,
        ) {
            return Err(Unusable::Access(denied));
        }
        // Before the filters: a server that is down makes its provider unavailable, and the
        // model should hear "not connected", not "blocked".
        let connected = server
            .status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .state
            .is_connected();
        if !connected {
            return Err(Unusable::Filtered("its server is not connected right now"));
        }
        if let Err(refusal) = ctx.turn.catalog.visible(&record.name) {
            return Err(Unusable::Filtered(not_visible(&refusal)));
        }
        Ok(())
    }

    fn unknown(name: &str) -> ToolResult {
        ToolResult::failure(
            ErrorCode::InvalidArguments,
            format!("unknown MCP tool `{name}`; call `{SEARCH_TOOL}` to find the exact name"),
        )
    }
}

/// Why the host's filters refuse a target, in words for the model.
fn not_visible(refusal: &HostError) -> &'static str {
    match refusal {
        HostError::NotAdvertised { reason, .. } => match reason {
            NotAdvertisedReason::Provider | NotAdvertisedReason::WrongProvider => {
                "its server is blocked in this context"
            }
            NotAdvertisedReason::ToolPolicy => {
                "the allow/deny lists or plan mode exclude it in this context"
            }
            NotAdvertisedReason::Context => "it is not available in this context",
            NotAdvertisedReason::Sandbox => "the sandbox mode blocks it",
        },
        HostError::UnknownTool { .. } => "it is not registered right now",
        HostError::DisabledByPolicy { .. } | HostError::Aborted { .. } => {
            "it cannot be called in this context"
        }
    }
}

fn string_arg<'a>(arguments: &'a Value, key: &str) -> Option<&'a str> {
    arguments
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn summary(text: &str) -> String {
    let mut out: String = text.chars().take(SUMMARY_CHARS).collect();
    if text.chars().count() > SUMMARY_CHARS {
        out.push('…');
    }
    out
}

fn parameter_summary(schema: &Value) -> (Vec<Value>, Vec<Value>) {
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let parameters = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .keys()
                .take(MAX_PARAMETERS)
                .map(|k| json!(k))
                .collect()
        })
        .unwrap_or_default();
    (required, parameters)
}

fn gateway_spec(name: &str, description: &str, schema: Value) -> ToolSpec {
    ToolSpec::new(name, description, schema)
        .with_policy(ToolPolicy::Auto)
        .with_side_effect(SideEffect::ReadOnly)
}

/// The three gateway tools over one catalog.
pub(crate) fn gateway_tools(catalog: &Arc<GatewayCatalog>) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(SearchTool {
            spec: gateway_spec(
                SEARCH_TOOL,
                "Find tools of the connected MCP servers (GitHub, databases, browsers, chat, …) by describing what you need, in your own words, in English or Chinese. Returns tool names with short descriptions and required parameters; then call mcp_describe for the full schema and mcp_call to run one.",
                json!({
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What you want to do, e.g. \"list open pull requests\" or \"删除目录\"."},
                        "top_k": {"type": "integer", "minimum": 1, "description": "How many results (default 5)."},
                        "server": {"type": "string", "description": "Only tools of this MCP server."}
                    },
                    "required": ["query"]
                }),
            ),
            catalog: Arc::clone(catalog),
        }),
        Arc::new(DescribeTool {
            spec: gateway_spec(
                DESCRIBE_TOOL,
                "Show one MCP tool's full input schema, annotations and policy, by the name mcp_search returned.",
                json!({
                    "type": "object",
                    "properties": {"name": {"type": "string", "description": "The tool name from mcp_search, e.g. mcp_github_create_issue."}},
                    "required": ["name"]
                }),
            ),
            catalog: Arc::clone(catalog),
        }),
        Arc::new(CallTool {
            spec: gateway_spec(
                CALL_TOOL,
                "Run an MCP tool found with mcp_search. The call goes through that tool's own checks and approvals, exactly as if it were called directly.",
                json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "The tool name from mcp_search."},
                        "arguments": {"type": "object", "description": "The tool's arguments, matching the schema from mcp_describe."}
                    },
                    "required": ["name"]
                }),
            ),
            catalog: Arc::clone(catalog),
        }),
    ]
}

struct SearchTool {
    spec: ToolSpec,
    catalog: Arc<GatewayCatalog>,
}

#[async_trait]
impl Tool for SearchTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        let Some(query) = string_arg(&arguments, "query") else {
            return Ok(ToolResult::failure(
                ErrorCode::InvalidArguments,
                "`query` is required: describe what you want to do, e.g. {\"query\": \"create an issue\"}",
            ));
        };
        let catalog = &self.catalog;
        let limit = catalog
            .settings
            .results_for(arguments.get("top_k").and_then(Value::as_u64));
        let server = string_arg(&arguments, "server");
        let mut offered = 0usize;
        let usable: Vec<bool> = (0..catalog.records.len())
            .map(|i| {
                let ok = catalog.check(i, &ctx).is_ok()
                    && server.is_none_or(|s| catalog.records[i].address.server == s);
                offered += usize::from(ok);
                ok
            })
            .collect();
        catalog.build_index_off_thread().await;
        let hits = catalog.index().search(query, limit, |i| usable[i]);
        let results: Vec<Value> = hits
            .into_iter()
            .map(|hit| {
                let record = &catalog.records[hit.doc];
                let (required, parameters) = parameter_summary(&record.input_schema);
                json!({
                    "name": record.name,
                    "server": record.address.server,
                    "tool": record.address.tool,
                    "title": record.title,
                    "description": summary(&record.description),
                    "score": (f64::from(hit.score) * 1000.0).round() / 1000.0,
                    "matched": hit.matched,
                    "required": required,
                    "parameters": parameters,
                    "policy": record.class.policy,
                    "kind": record.class.kind,
                    "read_only": record.class.side_effect == SideEffect::ReadOnly,
                })
            })
            .collect();
        let next = if results.is_empty() {
            "No MCP tool matched; rephrase the request, or drop `server`."
        } else {
            "Call mcp_describe {\"name\": …} for the full schema, then mcp_call {\"name\": …, \"arguments\": {…}}."
        };
        Ok(ToolResult::ok(json!({
            "query": query,
            "searched": offered,
            "results": results,
            "next": next,
        })))
    }
}

struct DescribeTool {
    spec: ToolSpec,
    catalog: Arc<GatewayCatalog>,
}

#[async_trait]
impl Tool for DescribeTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        let Some(name) = string_arg(&arguments, "name") else {
            return Ok(ToolResult::failure(
                ErrorCode::InvalidArguments,
                "`name` is required: pass a tool name returned by mcp_search",
            ));
        };
        let catalog = &self.catalog;
        let Some(&i) = catalog.by_name.get(name) else {
            return Ok(GatewayCatalog::unknown(name));
        };
        match catalog.check(i, &ctx) {
            Err(Unusable::Access(result)) => return Ok(result),
            Err(Unusable::Filtered(why)) => {
                return Ok(ToolResult::tool_error(format!(
                    "MCP tool `{name}` is not available in this context: {why}"
                )));
            }
            Ok(()) => {}
        }
        let record = &catalog.records[i];
        let mut output = Map::new();
        output.insert("name".to_owned(), json!(record.name));
        output.insert("server".to_owned(), json!(record.address.server));
        output.insert("tool".to_owned(), json!(record.address.tool));
        if let Some(title) = &record.title {
            output.insert("title".to_owned(), json!(title));
        }
        output.insert("description".to_owned(), json!(record.description));
        output.insert("input_schema".to_owned(), record.input_schema.clone());
        if let Some(schema) = &record.output_schema {
            output.insert("output_schema".to_owned(), schema.clone());
        }
        if let Some(hints) = &record.hints {
            output.insert("annotations".to_owned(), json!(hints));
        }
        output.insert("policy".to_owned(), json!(record.class.policy));
        output.insert("kind".to_owned(), json!(record.class.kind));
        output.insert("side_effect".to_owned(), json!(record.class.side_effect));
        Ok(ToolResult::ok(Value::Object(output)))
    }
}

struct CallTool {
    spec: ToolSpec,
    catalog: Arc<GatewayCatalog>,
}

#[async_trait]
impl Tool for CallTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// Names the target: the host then runs `mcp_<server>_<tool>` through its own gates.
    fn forward(&self, arguments: &Value) -> Option<Result<ForwardedCall, String>> {
        let Some(name) = string_arg(arguments, "name") else {
            return Some(Err(
                "`name` is required: pass a tool name returned by mcp_search".to_owned(),
            ));
        };
        if !self.catalog.by_name.contains_key(name) {
            return Some(Err(format!(
                "unknown MCP tool `{name}`; call `{SEARCH_TOOL}` to find the exact name"
            )));
        }
        let target_arguments = match arguments.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(Value::Object(map)) => Value::Object(map.clone()),
            Some(_) => {
                return Some(Err(format!(
                    "`arguments` must be a JSON object with the parameters of `{name}`"
                )));
            }
        };
        Some(Ok(ForwardedCall {
            tool_name: name.to_owned(),
            arguments: target_arguments,
        }))
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        _ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        let target = string_arg(&arguments, "name").unwrap_or("the tool");
        Ok(ToolResult::failure(
            ErrorCode::ToolExecutionFailed,
            format!(
                "{CALL_TOOL} only runs through a host that forwards it to its target; call `{target}` directly instead"
            ),
        ))
    }
}
