//! `lsp`: definition, references, hover, document symbols and diagnostics from a real
//! language server over stdio, configured per language.
//!
//! Servers start on first use for a (workspace root, language) pair and stay up for the
//! tool's lifetime; they are built by the [`CommandConfinement`] port (confined to the
//! workspace, in their own session and process group, with only the allow-listed environment:
//! see [`kun_ports::process`]), and their group is killed with the tool.
//!
//! A file with no configured server, or whose server is not installed, fails with
//! `lsp_unavailable` naming the server to install — in the host's preflight (step 10b),
//! before anyone is asked to approve starting it. The model reads one line per item
//! (see [`render`](self#renderings)).
//!
//! # Renderings
//!
//! | action | one line per item |
//! |---|---|
//! | definition, references | `path:line:col: text` |
//! | hover | the hover text |
//! | document_symbols | `line:col kind name`, indented two spaces per nesting level |
//! | diagnostics | `line:col severity: message (source)` |

mod client;
mod render;

pub use client::{LspClient, path_to_uri, uri_to_path};
pub use render::{Diagnostic, Location, Symbol};

use crate::Failure;
use crate::shell::find_on_path;
use async_trait::async_trait;
use kun_ports::process::EnvAllowList;
use kun_ports::{
    ChildPipe, ChildStdio, CommandConfinement, CommandSpec, ConfinementScope, ErrorCode,
    PathAccess, SideEffect, ToolContext, ToolHostContext, ToolKind, ToolPolicy, ToolSpec,
    TypedTool,
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
pub enum LspAction {
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
pub struct LspArgs {
    /// What to ask.
    action: LspAction,
    /// The file, relative to the workspace root.
    path: String,
    /// 1-based line of the symbol (definition, references, hover).
    line: Option<u32>,
    /// 1-based column of the symbol (definition, references, hover).
    column: Option<u32>,
}

/// What `lsp` returns: the file, the server asked, and its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LspOutput {
    /// The file asked about, relative to the workspace root.
    pub path: String,
    /// The server's command.
    pub server: String,
    /// The answer, by action.
    #[serde(flatten)]
    pub answer: LspAnswer,
}

/// A language server's answer, by action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum LspAnswer {
    /// Where the symbol is defined.
    Definition {
        /// Sorted by path, line, column.
        locations: Vec<Location>,
    },
    /// Where the symbol is used.
    References {
        /// Sorted by path, line, column.
        locations: Vec<Location>,
    },
    /// The symbol's type and documentation.
    Hover {
        /// Plain text (empty when the server had nothing).
        hover: String,
    },
    /// The file's symbols, depth first.
    DocumentSymbols {
        /// Symbols with their nesting depth.
        symbols: Vec<Symbol>,
    },
    /// The file's errors and warnings.
    Diagnostics {
        /// Sorted by position.
        diagnostics: Vec<Diagnostic>,
        /// Whether the server published diagnostics in time.
        published: bool,
    },
}

/// What to install for a server the default configuration names.
fn install_hint(command: &str) -> Option<&'static str> {
    match command {
        "pylsp" => Some("pip install python-lsp-server"),
        "rust-analyzer" => Some("rustup component add rust-analyzer"),
        "typescript-language-server" => {
            Some("npm install -g typescript-language-server typescript")
        }
        "gopls" => Some("go install golang.org/x/tools/gopls@latest"),
        _ => None,
    }
}

/// Whether `command` names an executable: a path that exists, or a name on `PATH`.
fn is_installed(command: &str) -> bool {
    if command.contains('/') {
        Path::new(command).is_file()
    } else {
        find_on_path(command).is_some()
    }
}

type ClientKey = (PathBuf, String);

/// The `lsp` tool.
pub struct LspTool {
    spec: ToolSpec,
    config: LspConfig,
    confinement: Arc<dyn CommandConfinement>,
    env: EnvAllowList,
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
            spec: ToolSpec::typed::<LspArgs, LspOutput>(
                "lsp",
                "Ask the project's language server: `definition`, `references` or `hover` of the symbol \
                 at a 1-based line and column, `document_symbols` of a file, or `diagnostics` (errors and \
                 warnings) of a file.",
            )
            .with_kind(ToolKind::CommandExecution)
            .with_policy(ToolPolicy::OnRequest)
            .with_side_effect(SideEffect::ReadOnly),
            config,
            confinement,
            env: EnvAllowList::default(),
            clients: Mutex::default(),
        }
    }

    /// Servers see the base environment plus these names (`[shell] env`), nothing else.
    #[must_use]
    pub fn with_env(mut self, env: EnvAllowList) -> Self {
        self.env = env;
        self
    }

    fn server_for(&self, path: &Path) -> Option<&LspServerConfig> {
        let ext = path.extension()?.to_str()?;
        self.config
            .servers
            .iter()
            .find(|s| s.extensions.iter().any(|e| e == ext))
    }

    /// The server for `path` when one is configured and installed, else `lsp_unavailable`
    /// naming what to install.
    fn usable_server(&self, path: &Path) -> Result<&LspServerConfig, Failure> {
        let shown = path.display();
        let Some(server) = self.server_for(path) else {
            return Err(Failure::coded(
                ErrorCode::LspUnavailable,
                format!(
                    "no language server is configured for {shown}; the lsp tool serves {}",
                    self.served_extensions()
                ),
            ));
        };
        if !is_installed(&server.command) {
            let mut message = format!(
                "the {} language server `{}` is not installed (it is not on PATH), so lsp cannot \
                 answer for {shown}",
                server.language_id, server.command
            );
            match install_hint(&server.command) {
                Some(hint) => message.push_str(&format!("; install it with `{hint}`")),
                None => message.push_str("; install it"),
            }
            message.push_str(", or use grep and read instead");
            return Err(Failure::coded(ErrorCode::LspUnavailable, message)
                .with("server", server.command.clone())
                .with("language", server.language_id.clone()));
        }
        Ok(server)
    }

    /// `.py, .pyi, .rs, …`
    fn served_extensions(&self) -> String {
        let all: Vec<String> = self
            .config
            .servers
            .iter()
            .flat_map(|s| s.extensions.iter().map(|e| format!(".{e}")))
            .collect();
        all.join(", ")
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
        let spec = CommandSpec::new(
            &server.command,
            root,
            self.env.from_current_process(),
            ConfinementScope::workspace(root),
        )
        .args(&server.args)
        .stdio(ChildStdio {
            stdin: ChildPipe::Piped,
            stdout: ChildPipe::Piped,
            stderr: ChildPipe::Null,
        });
        let confined = self
            .confinement
            .command(&spec)
            .map_err(|err| Failure::coded(ErrorCode::SandboxCommandBlocked, err.to_string()))?;
        let client = LspClient::start(confined, root, self.config.request_timeout).await.map_err(|err| {
            Failure::coded(ErrorCode::LspUnavailable, format!(
                "the {} language server (`{}`) is not usable: {err}; install it or configure another server for .{} files",
                server.language_id,
                server.command,
                server.extensions.first().map_or("", String::as_str)
            ))
            .with("server", server.command.clone())
        })?;
        let client = Arc::new(client);
        clients.insert(key, Arc::clone(&client));
        Ok(client)
    }

    async fn ask(&self, args: LspArgs, ctx: ToolContext<'_>) -> Result<LspOutput, Failure> {
        let resolved = ctx.resolve_path(&args.path, PathAccess::Read)?;
        let server = self.usable_server(Path::new(&resolved.relative))?;
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
                LspAnswer::Definition {
                    locations: render::locations(&found, &root),
                }
            }
            LspAction::References => {
                let params = json!({"textDocument": document, "position": position()?, "context": {"includeDeclaration": true}});
                let found = client
                    .request("textDocument/references", params)
                    .await
                    .map_err(Failure::new)?;
                LspAnswer::References {
                    locations: render::locations(&found, &root),
                }
            }
            LspAction::Hover => {
                let params = json!({"textDocument": document, "position": position()?});
                let found = client
                    .request("textDocument/hover", params)
                    .await
                    .map_err(Failure::new)?;
                LspAnswer::Hover {
                    hover: render::hover(&found),
                }
            }
            LspAction::DocumentSymbols => {
                let found = client
                    .request(
                        "textDocument/documentSymbol",
                        json!({"textDocument": document}),
                    )
                    .await
                    .map_err(Failure::new)?;
                LspAnswer::DocumentSymbols {
                    symbols: render::symbols(&found),
                }
            }
            LspAction::Diagnostics => {
                let found = client
                    .diagnostics(&resolved.lexical, self.config.diagnostics_wait)
                    .await;
                LspAnswer::Diagnostics {
                    diagnostics: render::diagnostics(found.as_ref()),
                    published: found.is_some(),
                }
            }
        };
        Ok(LspOutput {
            path: resolved.relative,
            server: server.command.clone(),
            answer,
        })
    }
}

#[async_trait]
impl TypedTool for LspTool {
    type Args = LspArgs;
    type Output = LspOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &LspOutput) -> String {
        match &output.answer {
            LspAnswer::Definition { locations } | LspAnswer::References { locations } => {
                render::render_locations(locations)
            }
            LspAnswer::Hover { hover } if hover.is_empty() => "no hover information".to_owned(),
            LspAnswer::Hover { hover } => hover.clone(),
            LspAnswer::DocumentSymbols { symbols } => render::render_symbols(symbols),
            LspAnswer::Diagnostics {
                diagnostics,
                published,
            } => render::render_diagnostics(diagnostics, *published),
        }
    }

    /// No configured or installed server for the file: `lsp_unavailable`, before anyone is
    /// asked to approve starting one.
    fn preflight(&self, args: &LspArgs, _ctx: &ToolHostContext) -> Result<(), Failure> {
        self.usable_server(Path::new(&args.path)).map(drop)
    }

    async fn run(&self, args: LspArgs, ctx: ToolContext<'_>) -> Result<LspOutput, Failure> {
        self.ask(args, ctx).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use render::{Diagnostic, Location, Symbol};

    #[test]
    fn a_default_server_that_is_missing_names_what_to_install() {
        let config = LspConfig {
            servers: vec![LspServerConfig {
                language_id: "python".into(),
                command: "kun-test-no-such-server".into(),
                args: vec![],
                extensions: vec!["py".into()],
            }],
            ..LspConfig::default()
        };
        let tool = LspTool::new(config, Arc::new(NoSpawn));
        let failure = tool.usable_server(Path::new("a.py")).unwrap_err();
        assert_eq!(failure.code, ErrorCode::LspUnavailable);
        assert!(
            failure
                .message
                .contains("`kun-test-no-such-server` is not installed")
        );
        let other = tool.usable_server(Path::new("a.zig")).unwrap_err();
        assert_eq!(other.code, ErrorCode::LspUnavailable);
        assert!(other.message.contains(".py"), "{}", other.message);
        assert_eq!(install_hint("pylsp"), Some("pip install python-lsp-server"));
        assert_eq!(
            install_hint("gopls"),
            Some("go install golang.org/x/tools/gopls@latest")
        );
    }

    /// A confinement never asked (no server starts in these tests).
    struct NoSpawn;

    impl CommandConfinement for NoSpawn {
        fn tier(&self) -> kun_ports::ConfinementTier {
            kun_ports::ConfinementTier::None
        }
        fn command(
            &self,
            _spec: &CommandSpec,
        ) -> Result<kun_ports::ConfinedCommand, kun_ports::ConfinementError> {
            Err(kun_ports::ConfinementError {
                message: "no server starts in these tests".to_owned(),
            })
        }
    }

    #[test]
    fn renderings() {
        let at = |path: &str, line, text: Option<&str>| Location {
            path: path.into(),
            line,
            column: 5,
            text: text.map(str::to_owned),
        };
        assert_eq!(
            render::render_locations(&[at("a.py", 1, Some("def f():")), at("b.py", 9, None)]),
            "a.py:1:5: def f():\nb.py:9:5"
        );
        assert_eq!(render::render_locations(&[]), "no locations found");
        let symbol = |name: &str, depth| Symbol {
            name: name.into(),
            kind: "class".into(),
            line: 5,
            column: 7,
            depth,
        };
        assert_eq!(
            render::render_symbols(&[symbol("Square", 0), symbol("side", 1)]),
            "5:7 class Square\n  5:7 class side"
        );
        let diagnostic = Diagnostic {
            line: 3,
            column: 7,
            severity: "error".into(),
            message: "invalid syntax".into(),
            source: Some("pyflakes".into()),
        };
        assert_eq!(
            render::render_diagnostics(&[diagnostic], true),
            "3:7 error: invalid syntax (pyflakes)"
        );
        assert_eq!(render::render_diagnostics(&[], true), "no diagnostics");
    }
}
