//! `lsp`: definition, references, hover, document symbols and diagnostics from a real
//! language server over stdio, configured per language.
//!
//! Servers start on first use for a (workspace root, language) pair and stay up for the
//! tool's lifetime; they run in their own process group, confined through the
//! [`CommandConfinement`] port, and are killed with the tool.

mod client;
mod render;

pub use client::{LspClient, path_to_uri, uri_to_path};

use crate::{Failure, Outcome, finish, parse_args, schema_for};
use async_trait::async_trait;
use kun_ports::{
    CommandConfinement, ConfinementScope, PathAccess, SideEffect, Tool, ToolContext, ToolError,
    ToolKind, ToolPolicy, ToolResult, ToolSpec,
};
use rustc_hash::FxHashMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// One language server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LspServerConfig {
    /// The LSP language id (`python`, `rust`, `typescript`, `go`).
    pub language_id: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// File extensions it serves, without the dot.
    pub extensions: Vec<String>,
}

/// The `lsp` tool's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspConfig {
    /// Servers, first match by extension wins.
    pub servers: Vec<LspServerConfig>,
    /// How long a request may take (including server start).
    pub request_timeout: Duration,
    /// How long to wait for a first diagnostics publication.
    pub diagnostics_wait: Duration,
}

impl Default for LspConfig {
    fn default() -> Self {
        let server =
            |language: &str, command: &str, args: &[&str], extensions: &[&str]| LspServerConfig {
                language_id: language.to_owned(),
                command: command.to_owned(),
                args: args.iter().map(|a| (*a).to_owned()).collect(),
                extensions: extensions.iter().map(|e| (*e).to_owned()).collect(),
            };
        Self {
            servers: vec![
                server("python", "pylsp", &[], &["py", "pyi"]),
                server("rust", "rust-analyzer", &[], &["rs"]),
                server(
                    "typescript",
                    "typescript-language-server",
                    &["--stdio"],
                    &["ts", "tsx", "js", "jsx", "mjs", "cjs"],
                ),
                server("go", "gopls", &[], &["go"]),
            ],
            request_timeout: Duration::from_secs(60),
            diagnostics_wait: Duration::from_secs(10),
        }
    }
}

/// What to ask the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum LspAction {
    /// Where the symbol at the position is defined.
    Definition,
    /// Where the symbol at the position is used.
    References,
    /// Type and documentation of the symbol at the position.
    Hover,
    /// The symbols defined in the file.
    DocumentSymbols,
    /// Errors and warnings in the file.
    Diagnostics,
}

/// Arguments of `lsp`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LspArgs {
    /// What to ask.
    action: LspAction,
    /// The file, relative to the workspace root.
    path: String,
    /// 1-based line of the symbol (definition, references, hover).
    line: Option<u32>,
    /// 1-based column of the symbol (definition, references, hover).
    column: Option<u32>,
}

type ClientKey = (PathBuf, String);

/// The `lsp` tool.
pub struct LspTool {
    spec: ToolSpec,
    config: LspConfig,
    confinement: Arc<dyn CommandConfinement>,
    clients: Mutex<FxHashMap<ClientKey, Arc<LspClient>>>,
}

impl std::fmt::Debug for LspTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspTool")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl LspTool {
    /// The tool with these servers; commands run through `confinement`.
    #[must_use]
    pub fn new(config: LspConfig, confinement: Arc<dyn CommandConfinement>) -> Self {
        Self {
            spec: ToolSpec::new(
                "lsp",
                "Ask the project's language server: `definition`, `references` or `hover` of the symbol \
                 at a 1-based line and column, `document_symbols` of a file, or `diagnostics` (errors and \
                 warnings) of a file.",
                schema_for::<LspArgs>(),
            )
            .with_kind(ToolKind::CommandExecution)
            .with_command_runner(kun_ports::CommandRunner::Confinement)
            .with_policy(ToolPolicy::OnRequest)
            .with_side_effect(SideEffect::ReadOnly),
            config,
            confinement,
            clients: Mutex::default(),
        }
    }

    fn server_for(&self, path: &Path) -> Option<&LspServerConfig> {
        let ext = path.extension()?.to_str()?;
        self.config
            .servers
            .iter()
            .find(|s| s.extensions.iter().any(|e| e == ext))
    }

    async fn client(
        &self,
        root: &Path,
        server: &LspServerConfig,
    ) -> Result<Arc<LspClient>, Failure> {
        let key = (root.to_path_buf(), server.language_id.clone());
        let mut clients = self.clients.lock().await;
        if let Some(client) = clients.get(&key) {
            return Ok(Arc::clone(client));
        }
        let mut command = std::process::Command::new(&server.command);
        command.args(&server.args).current_dir(root);
        self.confinement
            .confine(&mut command, &ConfinementScope::workspace(root))
            .map_err(|err| Failure::new(err.to_string()))?;
        let client = LspClient::start(command, root, self.config.request_timeout).await.map_err(|err| {
            Failure::new(format!(
                "the {} language server (`{}`) is not usable: {err}; install it or configure another server for .{} files",
                server.language_id,
                server.command,
                server.extensions.first().map_or("", String::as_str)
            ))
        })?;
        let client = Arc::new(client);
        clients.insert(key, Arc::clone(&client));
        Ok(client)
    }

    async fn run(&self, arguments: Value, ctx: ToolContext<'_>) -> Outcome {
        let args: LspArgs = parse_args("lsp", arguments)?;
        let resolved = ctx.resolve_path(&args.path, PathAccess::Read)?;
        let server = self.server_for(&resolved.lexical).ok_or_else(|| {
            Failure::invalid(format!(
                "no language server is configured for {}",
                resolved.relative
            ))
        })?;
        let text = tokio::fs::read_to_string(&resolved.lexical)
            .await
            .map_err(|err| Failure::new(format!("cannot read {}: {err}", resolved.relative)))?;
        let root = ctx.turn.primary_root().to_path_buf();
        let client = self.client(&root, server).await?;
        client
            .sync_document(&resolved.lexical, &server.language_id, &text)
            .await
            .map_err(Failure::new)?;
        let document = json!({"uri": path_to_uri(&resolved.lexical)});
        let position = || -> Result<Value, Failure> {
            let (Some(line), Some(column)) = (args.line, args.column) else {
                return Err(Failure::invalid(
                    "line and column (1-based) are required for this action",
                ));
            };
            if line == 0 || column == 0 {
                return Err(Failure::invalid("line and column are 1-based"));
            }
            Ok(json!({"line": line - 1, "character": column - 1}))
        };
        let answer = match args.action {
            LspAction::Definition => {
                let params = json!({"textDocument": document, "position": position()?});
                let found = client
                    .request("textDocument/definition", params)
                    .await
                    .map_err(Failure::new)?;
                json!({"locations": render::locations(&found, &root)})
            }
            LspAction::References => {
                let params = json!({"textDocument": document, "position": position()?, "context": {"includeDeclaration": true}});
                let found = client
                    .request("textDocument/references", params)
                    .await
                    .map_err(Failure::new)?;
                json!({"locations": render::locations(&found, &root)})
            }
            LspAction::Hover => {
                let params = json!({"textDocument": document, "position": position()?});
                let found = client
                    .request("textDocument/hover", params)
                    .await
                    .map_err(Failure::new)?;
                json!({"hover": render::hover(&found)})
            }
            LspAction::DocumentSymbols => {
                let found = client
                    .request(
                        "textDocument/documentSymbol",
                        json!({"textDocument": document}),
                    )
                    .await
                    .map_err(Failure::new)?;
                json!({"symbols": render::symbols(&found)})
            }
            LspAction::Diagnostics => {
                let found = client
                    .diagnostics(&resolved.lexical, self.config.diagnostics_wait)
                    .await;
                json!({"diagnostics": render::diagnostics(found.as_ref()), "published": found.is_some()})
            }
        };
        let mut output = json!({"path": resolved.relative, "server": server.command});
        if let (Value::Object(out), Value::Object(extra)) = (&mut output, answer) {
            out.extend(extra);
        }
        Ok(output)
    }
}

#[async_trait]
impl Tool for LspTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        Ok(finish(self.run(arguments, ctx).await))
    }
}
