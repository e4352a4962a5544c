//! A minimal Language Server Protocol client over stdio: Content-Length framing, requests
//! matched to responses by id, server requests answered with `null`, and published
//! diagnostics kept per document.

use kun_ports::process::GroupGuard;
use kun_ports::{ConfinedCommand, ConfinementLease};
use rustc_hash::FxHashMap;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{Mutex, Notify, oneshot};

/// The largest message accepted from a server.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

type Pending = Arc<std::sync::Mutex<FxHashMap<i64, oneshot::Sender<Result<Value, String>>>>>;
type Diagnostics = Arc<std::sync::Mutex<FxHashMap<String, Value>>>;

/// A running language server.
pub struct LspClient {
    child: Child,
    /// Kills the server's process group when the client is dropped.
    group: GroupGuard,
    /// The confinement's lease, held for the server's life; as a field it drops after
    /// [`Drop::drop`] killed the group.
    _lease: ConfinementLease,
    stdin: Arc<Mutex<ChildStdin>>,
    next_id: AtomicI64,
    pending: Pending,
    diagnostics: Diagnostics,
    diagnostics_changed: Arc<Notify>,
    open_documents: Mutex<FxHashMap<String, i64>>,
    timeout: Duration,
    reader: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for LspClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspClient")
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

impl LspClient {
    /// Starts the server (built by the confinement from a spec with stdin and stdout piped),
    /// initialises it for `root`, and returns a ready client.
    ///
    /// # Errors
    /// When the server cannot start or does not answer `initialize` in time.
    pub async fn start(
        confined: ConfinedCommand,
        root: &Path,
        timeout: Duration,
    ) -> Result<Self, String> {
        let ConfinedCommand { command, lease } = confined;
        let mut command = tokio::process::Command::from(command);
        command.kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|err| format!("cannot start the language server: {err}"))?;
        let group = GroupGuard::for_leader(child.id());
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("the language server's pipes could not be opened".to_owned());
        };
        let pending: Pending = Arc::default();
        let diagnostics: Diagnostics = Arc::default();
        let diagnostics_changed = Arc::new(Notify::new());
        let stdin = Arc::new(Mutex::new(stdin));
        let reader = tokio::spawn(read_loop(
            stdout,
            Arc::clone(&pending),
            Arc::clone(&diagnostics),
            Arc::clone(&diagnostics_changed),
            Arc::clone(&stdin),
        ));
        let client = Self {
            child,
            group,
            _lease: lease,
            stdin,
            next_id: AtomicI64::new(1),
            pending,
            diagnostics,
            diagnostics_changed,
            open_documents: Mutex::default(),
            timeout,
            reader,
        };
        let root_uri = path_to_uri(root);
        let params = json!({
            "processId": std::process::id(),
            "rootUri": root_uri,
            "rootPath": root,
            "workspaceFolders": [{"uri": root_uri, "name": "workspace"}],
            "capabilities": {
                "textDocument": {
                    "definition": {"linkSupport": false},
                    "references": {},
                    "hover": {"contentFormat": ["plaintext", "markdown"]},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                    "publishDiagnostics": {"relatedInformation": false},
                    "synchronization": {"didSave": false}
                },
                "workspace": {"workspaceFolders": true, "configuration": false}
            }
        });
        client.request("initialize", params).await?;
        client.notify("initialized", json!({})).await?;
        Ok(client)
    }

    /// Sends a request and waits for its result.
    ///
    /// # Errors
    /// On an error response, a dead server, or a timeout.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id, tx);
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(format!(
                "the language server stopped before answering {method}"
            )),
            Err(_) => {
                if let Ok(mut pending) = self.pending.lock() {
                    pending.remove(&id);
                }
                Err(format!(
                    "the language server did not answer {method} within {:?}",
                    self.timeout
                ))
            }
        }
    }

    /// Sends a notification.
    ///
    /// # Errors
    /// When the server's stdin is closed.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), String> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    /// Opens (or refreshes) a document with its current text.
    ///
    /// # Errors
    /// When the server's stdin is closed.
    pub async fn sync_document(
        &self,
        path: &Path,
        language_id: &str,
        text: &str,
    ) -> Result<(), String> {
        let uri = path_to_uri(path);
        let mut open = self.open_documents.lock().await;
        if let Some(version) = open.get_mut(&uri) {
            *version += 1;
            let version = *version;
            drop(open);
            return self
                .notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
                )
                .await;
        }
        open.insert(uri.clone(), 1);
        drop(open);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language_id, "version": 1, "text": text}}),
        )
        .await
    }

    /// The diagnostics the server published for `path`, waiting up to `wait` for a first
    /// publication.
    pub async fn diagnostics(&self, path: &Path, wait: Duration) -> Option<Value> {
        let uri = path_to_uri(path);
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.diagnostics_changed.notified();
            if let Some(found) = self
                .diagnostics
                .lock()
                .ok()
                .and_then(|d| d.get(&uri).cloned())
            {
                return Some(found);
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return None;
            }
        }
    }

    async fn send(&self, message: &Value) -> Result<(), String> {
        write_message(&self.stdin, message).await
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        self.reader.abort();
        self.group.kill();
    }
}

async fn write_message(stdin: &Mutex<ChildStdin>, message: &Value) -> Result<(), String> {
    let body = message.to_string();
    let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
    let mut stdin = stdin.lock().await;
    stdin
        .write_all(frame.as_bytes())
        .await
        .map_err(|err| format!("the language server is gone: {err}"))?;
    stdin
        .flush()
        .await
        .map_err(|err| format!("the language server is gone: {err}"))
}

async fn read_loop(
    stdout: ChildStdout,
    pending: Pending,
    diagnostics: Diagnostics,
    changed: Arc<Notify>,
    stdin: Arc<Mutex<ChildStdin>>,
) {
    let mut reader = BufReader::new(stdout);
    while let Some(message) = read_message(&mut reader).await {
        let id = message.get("id").and_then(Value::as_i64);
        match (message.get("method").and_then(Value::as_str), id) {
            (Some("textDocument/publishDiagnostics"), None) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                if let Some(uri) = params.get("uri").and_then(Value::as_str) {
                    if let Ok(mut map) = diagnostics.lock() {
                        map.insert(
                            uri.to_owned(),
                            params.get("diagnostics").cloned().unwrap_or(json!([])),
                        );
                    }
                    changed.notify_waiters();
                }
            }
            // Server requests (configuration, progress, registrations): answer `null` so the
            // server never waits on us.
            (Some(_), Some(id)) => {
                let _ = write_message(&stdin, &json!({"jsonrpc": "2.0", "id": id, "result": null}))
                    .await;
            }
            (Some(_), None) => {}
            (None, Some(id)) => {
                let sender = pending.lock().ok().and_then(|mut p| p.remove(&id));
                if let Some(sender) = sender {
                    let outcome = match message.get("error") {
                        Some(error) => Err(format!(
                            "the language server answered with an error: {}",
                            error
                                .get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("unknown error")
                        )),
                        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                    };
                    let _ = sender.send(outcome);
                }
            }
            (None, None) => {}
        }
    }
    // The server closed its output: fail every waiter instead of leaving it hanging.
    if let Ok(mut p) = pending.lock() {
        p.clear();
    }
}

async fn read_message(reader: &mut BufReader<ChildStdout>) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length:") {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let length = length.filter(|len| *len <= MAX_MESSAGE_BYTES)?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.ok()?;
    serde_json::from_slice(&body).ok()
}

/// `file://` URI of an absolute path, percent-encoding what URIs require.
#[must_use]
pub fn path_to_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-_.~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The path of a `file://` URI.
#[must_use]
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let encoded = uri.strip_prefix("file://")?;
    let bytes = encoded.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    Some(PathBuf::from(String::from_utf8(decoded).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip() {
        for path in ["/tmp/a b/ü.py", "/w/src/lib.rs", "/x/%y"] {
            let uri = path_to_uri(Path::new(path));
            assert!(uri.starts_with("file:///"), "{uri}");
            assert_eq!(uri_to_path(&uri).unwrap(), PathBuf::from(path));
        }
    }
}
