//! Opening one connection to a server with rmcp: stdio or streamable HTTP, the `initialize`
//! handshake under the start-up timeout, and `tools/list`.
//!
//! A stdio server is prepared by the shared process code of kun-ports
//! ([`kun_ports::process`]): its own session and process group, and the environment by
//! allow-list — the base names (`PATH`, `HOME`, `LANG`, `LC_*`, …) plus the server's configured
//! `env`, nothing else of ours (as the official MCP SDKs do). rmcp spawns it through
//! process-wrap (`KillOnDrop`); the [`GroupGuard`] in [`Connected`] kills its whole group when
//! the connection is dropped, on every path (handshake failure, loss, shutdown). MCP servers
//! are the user's own programs and are not confined by the sandbox.
//!
//! A stdio server's stderr is read into a bounded tail, so a server that fails to start is
//! reported with what it said.

use crate::config::{McpServerConfig, TransportConfig};
use crate::remote::RemoteTool;
use kun_ports::process::{EnvAllowList, GroupGuard, new_session};
use process_wrap::tokio::{CommandWrap, KillOnDrop};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

/// Lines of a server's stderr kept for diagnostics.
const STDERR_TAIL_LINES: usize = 20;
/// Characters kept of one stderr line.
const STDERR_LINE_CHARS: usize = 400;

/// The client side of one live connection.
pub(crate) type Client = RunningService<RoleClient, ClientEvents>;

/// Our client handler: identifies us and forwards `tools/list_changed`.
#[derive(Clone)]
pub(crate) struct ClientEvents {
    tools_changed: mpsc::UnboundedSender<()>,
    info: ClientConfig,
}

impl ClientHandler for ClientEvents {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // The supervisor may have stopped listening; nothing to do then.
        let _ = self.tools_changed.send(());
    }

    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }
}

/// The last lines a server wrote to stderr.
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: &str) {
        let mut lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == STDERR_TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line.chars().take(STDERR_LINE_CHARS).collect());
    }

    /// The kept lines joined with ` | `, or `None` when the server said nothing.
    pub(crate) fn summary(&self) -> Option<String> {
        let lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let kept: Vec<&str> = lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect();
        (!kept.is_empty()).then(|| kept.join(" | "))
    }
}

/// A connection that finished its handshake.
pub(crate) struct Connected {
    /// The running client.
    pub client: Client,
    /// The child's process id (stdio only).
    pub pid: Option<u32>,
    /// Kills the child's process group when dropped (stdio only).
    pub group: GroupGuard,
    /// Fires when the server says its tool list changed.
    pub tools_changed: mpsc::UnboundedReceiver<()>,
    /// `name version` of the server, when it said.
    pub server_info: Option<String>,
}

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("kun-tools", env!("CARGO_PKG_VERSION")),
    )
}

/// Starts the transport and runs the handshake, all within the start-up timeout.
///
/// # Errors
/// A message saying what failed (spawn, handshake, timeout), with the server's stderr tail.
pub(crate) async fn connect(
    config: &McpServerConfig,
    stderr: &StderrTail,
) -> Result<Connected, String> {
    let (tx, tools_changed) = mpsc::unbounded_channel();
    let handler = ClientEvents {
        tools_changed: tx,
        info: client_info(),
    };
    let timeout = config.startup_timeout;
    let attempt = async {
        match &config.transport {
            TransportConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut cmd = std::process::Command::new(command);
                cmd.args(args);
                let mut child_env = EnvAllowList::default().from_current_process();
                for (name, value) in env {
                    child_env.set(name, value);
                }
                child_env.apply_to(&mut cmd);
                if let Some(dir) = cwd.as_ref().or(config.default_cwd.as_ref()) {
                    cmd.current_dir(dir);
                }
                new_session(&mut cmd);
                let mut wrapped = CommandWrap::from(tokio::process::Command::from(cmd));
                wrapped.wrap(KillOnDrop);
                let (transport, child_stderr) = TokioChildProcess::builder(wrapped)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|err| format!("cannot start `{command}`: {err}"))?;
                let pid = transport.id();
                let group = GroupGuard::for_leader(pid);
                if let Some(child_stderr) = child_stderr {
                    spawn_stderr_reader(child_stderr, stderr.clone(), config.name.clone());
                }
                let client = handler
                    .serve(transport)
                    .await
                    .map_err(|err| format!("the MCP handshake failed: {err}"))?;
                Ok((client, pid, group))
            }
            TransportConfig::StreamableHttp { url, headers } => {
                let custom = parse_headers(headers)?;
                let transport = StreamableHttpClientTransport::from_config(
                    StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(custom),
                );
                let client = handler
                    .serve(transport)
                    .await
                    .map_err(|err| format!("the MCP handshake with {url} failed: {err}"))?;
                Ok((client, None, GroupGuard::default()))
            }
        }
    };
    let outcome = match tokio::time::timeout(timeout, attempt).await {
        Ok(outcome) => outcome,
        Err(_) => Err(format!(
            "the server did not finish starting within {}; raise its startup timeout if it is just slow",
            seconds(timeout)
        )),
    };
    match outcome {
        Ok((client, pid, group)) => {
            let server_info = client
                .peer_info()
                .and_then(|info| info.server_info.clone())
                .map(|i| format!("{} {}", i.name, i.version));
            Ok(Connected {
                client,
                pid,
                group,
                tools_changed,
                server_info,
            })
        }
        Err(message) => {
            // Give the stderr reader a moment to collect the child's last words.
            tokio::time::sleep(Duration::from_millis(50)).await;
            Err(with_stderr(message, stderr))
        }
    }
}

/// Appends the server's stderr tail to a failure message.
pub(crate) fn with_stderr(message: String, stderr: &StderrTail) -> String {
    match stderr.summary() {
        Some(said) => format!("{message} (server stderr: {said})"),
        None => message,
    }
}

/// `N s` or `N ms`.
pub(crate) fn seconds(duration: Duration) -> String {
    if duration.subsec_millis() == 0 && duration.as_secs() > 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

/// Lists every tool (following pagination) within `timeout`.
///
/// # Errors
/// A message when the request fails or times out.
pub(crate) async fn list_tools(
    client: &Client,
    timeout: Duration,
) -> Result<Vec<RemoteTool>, String> {
    match tokio::time::timeout(timeout, client.peer().list_all_tools()).await {
        Ok(Ok(tools)) => Ok(tools.into_iter().map(RemoteTool::from_rmcp).collect()),
        Ok(Err(err)) => Err(format!("tools/list failed: {err}")),
        Err(_) => Err(format!(
            "tools/list did not answer within {}",
            seconds(timeout)
        )),
    }
}

fn parse_headers(
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let key = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("`{name}` is not a valid HTTP header name"))?;
            let value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                format!("the value of header `{name}` is not a valid HTTP header value")
            })?;
            Ok((key, value))
        })
        .collect()
}

fn spawn_stderr_reader(stderr: tokio::process::ChildStderr, tail: StderrTail, server: String) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::debug!(server = %server, "stderr: {line}");
            tail.push(&line);
        }
    });
}
