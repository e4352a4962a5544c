//! A local OpenAI-compatible chat-completions server for tests (feature `test-server`): it
//! answers `POST /v1/chat/completions` with scripted replies, in order, and records every
//! request (path, `Authorization` header, JSON body). It listens on 127.0.0.1 only.

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One scripted reply.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerReply {
    /// A chat completion.
    Completion {
        /// The message text.
        content: Option<String>,
        /// Tool calls: (tool, arguments); sent with the arguments as a JSON text.
        calls: Vec<(String, Value)>,
        /// `usage.prompt_tokens`.
        prompt_tokens: u64,
        /// `usage.completion_tokens`.
        completion_tokens: u64,
    },
    /// An HTTP status with a body (and `Retry-After` when given).
    Status {
        /// The status.
        status: u16,
        /// The body.
        body: String,
        /// `Retry-After`.
        retry_after: Option<String>,
    },
    /// Waits this long, then answers `"late"`.
    Stall(Duration),
}

impl ServerReply {
    /// A final answer (10 prompt, 2 completion tokens).
    #[must_use]
    pub fn answer(text: &str) -> Self {
        Self::Completion {
            content: Some(text.to_owned()),
            calls: Vec::new(),
            prompt_tokens: 10,
            completion_tokens: 2,
        }
    }

    /// Tool calls (10 prompt, 2 completion tokens).
    #[must_use]
    pub fn calls(calls: Vec<(&str, Value)>) -> Self {
        Self::Completion {
            content: None,
            calls: calls
                .into_iter()
                .map(|(name, args)| (name.to_owned(), args))
                .collect(),
            prompt_tokens: 10,
            completion_tokens: 2,
        }
    }

    /// A status with a body.
    #[must_use]
    pub fn status(status: u16, body: &str) -> Self {
        Self::Status {
            status,
            body: body.to_owned(),
            retry_after: None,
        }
    }
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The path.
    pub path: String,
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// The JSON body (`null` when it was not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// The names of the tools offered.
    #[must_use]
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The content of the message with this role, the first one.
    #[must_use]
    pub fn first(&self, role: &str) -> Option<String> {
        self.messages()
            .into_iter()
            .find(|m| m["role"] == role)
            .and_then(|m| m["content"].as_str().map(str::to_owned))
    }

    /// The contents of every `tool` message, in order.
    #[must_use]
    pub fn tool_results(&self) -> Vec<String> {
        self.messages()
            .into_iter()
            .filter(|m| m["role"] == "tool")
            .filter_map(|m| m["content"].as_str().map(str::to_owned))
            .collect()
    }

    fn messages(&self) -> Vec<Value> {
        self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

#[derive(Debug)]
struct State {
    replies: Vec<ServerReply>,
    repeat_last: bool,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// The server; stops when dropped.
#[derive(Debug)]
pub struct OpenAiTestServer {
    addr: SocketAddr,
    state: Arc<State>,
    task: JoinHandle<()>,
}

impl Drop for OpenAiTestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl OpenAiTestServer {
    /// Starts a server answering with `replies` in order (past the end: 500), repeating the
    /// last one forever when `repeat_last`.
    ///
    /// # Errors
    /// When no loopback port can be bound.
    pub async fn start(replies: Vec<ServerReply>, repeat_last: bool) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            replies,
            repeat_last,
            requests: Mutex::new(Vec::new()),
        });
        let serving = Arc::clone(&state);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = Arc::clone(&serving);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let state = Arc::clone(&state);
                        async move { Ok::<_, Infallible>(answer(&state, request).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Self { addr, state, task })
    }

    /// `http://127.0.0.1:PORT/v1`.
    #[must_use]
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request so far.
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

async fn answer(state: &State, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_owned();
    let authorization = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = request
        .into_body()
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let index = {
        let mut requests = state
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        requests.push(RecordedRequest {
            path: path.clone(),
            authorization,
            body,
        });
        requests.len() - 1
    };
    if path != "/v1/chat/completions" {
        return respond(StatusCode::NOT_FOUND, "no such path".to_owned(), None);
    }
    let reply = state
        .replies
        .get(index)
        .or_else(|| state.replies.last().filter(|_| state.repeat_last))
        .cloned();
    match reply {
        None => respond(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the test server has no scripted reply left".to_owned(),
            None,
        ),
        Some(ServerReply::Stall(wait)) => {
            tokio::time::sleep(wait).await;
            respond(
                StatusCode::OK,
                completion(Some("late"), &[], index, 0, 0),
                None,
            )
        }
        Some(ServerReply::Status {
            status,
            body,
            retry_after,
        }) => respond(
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body,
            retry_after,
        ),
        Some(ServerReply::Completion {
            content,
            calls,
            prompt_tokens,
            completion_tokens,
        }) => respond(
            StatusCode::OK,
            completion(
                content.as_deref(),
                &calls,
                index,
                prompt_tokens,
                completion_tokens,
            ),
            None,
        ),
    }
}

fn completion(
    content: Option<&str>,
    calls: &[(String, Value)],
    index: usize,
    prompt_tokens: u64,
    completion_tokens: u64,
) -> String {
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = Value::from(
            calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({"id": format!("call_{index}_{i}"), "type": "function",
                           "function": {"name": name, "arguments": args.to_string()}})
                })
                .collect::<Vec<_>>(),
        );
    }
    json!({
        "id": format!("chatcmpl-{index}"),
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })
    .to_string()
}

fn respond(status: StatusCode, body: String, retry_after: Option<String>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    if let Some(value) = retry_after.and_then(|v| hyper::header::HeaderValue::from_str(&v).ok()) {
        response
            .headers_mut()
            .insert(hyper::header::RETRY_AFTER, value);
    }
    response
}
