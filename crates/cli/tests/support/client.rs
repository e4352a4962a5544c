//! An rmcp client for `kun-tools serve`: it answers elicitations from a script, counts
//! `tools/list_changed`, and introduces itself with a chosen `clientInfo.name` (what `serve`
//! decides the structured parts on).

use super::Env;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ProtocolVersion, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// How long any one request may take.
pub const LIMIT: Duration = Duration::from_secs(60);

/// A scripted client.
#[derive(Clone)]
pub struct Client {
    pub name: &'static str,
    pub elicitation: bool,
    pub answers: Arc<Mutex<VecDeque<&'static str>>>,
    pub asked: Arc<Mutex<Vec<ElicitRequestParams>>>,
    pub list_changed: Arc<Notify>,
}

impl Default for Client {
    fn default() -> Self {
        Self {
            name: "serve-test",
            elicitation: false,
            answers: Arc::default(),
            asked: Arc::default(),
            list_changed: Arc::default(),
        }
    }
}

impl Client {
    /// A client that declares elicitation (and denies when it has no scripted answer).
    pub fn asking() -> Self {
        Self {
            elicitation: true,
            ..Self::default()
        }
    }
    /// The same client under another `clientInfo.name`.
    pub fn named(self, name: &'static str) -> Self {
        Self { name, ..self }
    }
    pub fn answer(&self, decision: &'static str) {
        self.answers.lock().unwrap().push_back(decision);
    }
    pub fn asked(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicitation {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new(self.name, "0"))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.lock().unwrap().push(request);
        let decision = self.answers.lock().unwrap().pop_front().unwrap_or("deny");
        Ok(match decision {
            "decline" => ElicitResult::new(ElicitationAction::Decline),
            "cancel" => ElicitResult::new(ElicitationAction::Cancel),
            decision => {
                let mut result = ElicitResult::new(ElicitationAction::Accept);
                result.content = Some(json!({ "decision": decision }));
                result
            }
        })
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }
}

pub type Session = RunningService<RoleClient, Client>;

/// `kun-tools serve --workspace WS EXTRA…` over stdio.
pub async fn stdio(env: &Env, extra: &[&str], client: Client) -> Session {
    let ws = env.ws_arg();
    let mut args = vec!["serve", "--workspace", ws.as_str()];
    args.extend_from_slice(extra);
    let cmd = tokio::process::Command::from(env.command(&args));
    let transport = TokioChildProcess::new(cmd).unwrap();
    tokio::time::timeout(LIMIT, client.serve(transport))
        .await
        .expect("initialize timed out")
        .expect("initialize failed")
}

pub async fn call(
    session: &Session,
    tool: &str,
    args: Value,
) -> Result<CallToolResult, ServiceError> {
    let Value::Object(arguments) = args else {
        panic!("arguments must be an object")
    };
    let request = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    tokio::time::timeout(LIMIT, session.call_tool(request))
        .await
        .expect("tools/call timed out")
}

pub async fn tools(session: &Session) -> Vec<Tool> {
    tokio::time::timeout(LIMIT, session.list_all_tools())
        .await
        .expect("tools/list timed out")
        .unwrap()
}

pub fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

/// The text blocks of a result, joined by newlines: what the model reads.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn protocol_error(result: Result<CallToolResult, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// Checks a result against `serve`'s contract for a client that gets the structured parts:
/// `structuredContent` on a success exactly when the tool declares an `outputSchema`, and
/// then it validates; on an error it is `{code, error, …}` and the text starts with the
/// message. Returns the text.
pub fn contract(tool: &Tool, result: &CallToolResult) -> String {
    let text = text(result);
    assert!(!text.is_empty() || !result.content.is_empty(), "{result:?}");
    if result.is_error == Some(true) {
        let structured = result.structured_content.as_ref().expect("an error's code");
        assert!(structured["code"].is_string(), "{structured}");
        let message = structured["error"].as_str().unwrap();
        assert!(text.starts_with(message), "{text:?} vs {structured}");
        return text;
    }
    match (&tool.output_schema, &result.structured_content) {
        (Some(schema), Some(value)) => {
            let schema = Value::Object((**schema).clone());
            assert_eq!(schema["type"], "object", "{}: {schema}", tool.name);
            let validator = jsonschema::validator_for(&schema).unwrap();
            let problems: Vec<String> = validator
                .iter_errors(value)
                .map(|e| e.to_string())
                .collect();
            assert!(
                problems.is_empty(),
                "{}: {problems:?} in {value}",
                tool.name
            );
        }
        (None, None) => {}
        (schema, value) => panic!(
            "{}: outputSchema {schema:?} but structuredContent {value:?}",
            tool.name
        ),
    }
    text
}

/// The tools once `done` holds for them, waiting for `tools/list_changed` in between: MCP
/// servers connect in the background, so their tools arrive after `initialize`.
pub async fn listed_when(
    session: &Session,
    client: &Client,
    done: impl Fn(&[Tool]) -> bool,
) -> Vec<Tool> {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let listed = tools(session).await;
        if done(&listed) {
            return listed;
        }
        tokio::time::timeout_at(deadline, client.list_changed.notified())
            .await
            .unwrap_or_else(|_| panic!("still not listed: {:?}", names(&listed)));
    }
}

/// The tools once `tool` is among them.
pub async fn until_listed(session: &Session, client: &Client, tool: &str) -> Vec<Tool> {
    listed_when(session, client, |listed| {
        listed.iter().any(|t| t.name == tool)
    })
    .await
}

/// The tools once an MCP server's tools are among them (the search gateway's own tools do
/// not count): enough for a test with one server, whose tools arrive together.
pub async fn with_mcp_tools(session: &Session, client: &Client) -> Vec<Tool> {
    listed_when(session, client, |listed| {
        listed.iter().any(|t| {
            t.name.starts_with("mcp_")
                && !["mcp_search", "mcp_describe", "mcp_call"].contains(&t.name.as_ref())
        })
    })
    .await
}
