//! `kun-tools serve`: the gated, filtered tool surface as an MCP server.
//!
//! * transport: stdio by default, on the event loop when it is a pipe or a socket
//!   ([`mod@stdio`]); `--http ADDR` for streamable HTTP ([`http`]);
//! * sessions: one MCP session is one thread, each `tools/call` one turn ([`session`]);
//! * approvals: MCP elicitation, or `approval_fallback` for clients without it ([`elicit`]);
//! * `user_input` / `request_user_input`: MCP elicitation forms ([`ask`]); long calls report
//!   MCP progress ([`progress`]);
//! * goals and todos: a file per thread under the user state directory, keyed by `--thread`
//!   or a stable id per workspace, so a restarted `serve` sees the same todos;
//! * skills: in the `instructions` and as MCP prompts ([`prompts`]);
//! * reloading: configuration files are polled every second, `SIGHUP` forces a reload, and
//!   `notifications/tools/list_changed` follows every catalog fingerprint change ([`live`]);
//! * MCP servers: started in the background, never waited for; each one's tools join the
//!   catalog when it is up, a failing one is reported once on stderr ([`servers`]);
//! * logs: stderr only (`RUST_LOG`); stdout belongs to the protocol.

pub mod ask;
pub mod convert;
pub mod elicit;
pub mod http;
pub mod live;
pub mod options;
pub mod progress;
pub mod prompts;
pub mod servers;
pub mod session;
pub mod stdio;

use crate::Outcome;
use crate::cli::ServeArgs;
use crate::setup;
use http::Access;
use kun_composition::{AssembleOptions, LedgerChoice};
use kun_registry::ledger::LedgerBounds;
use live::{Live, Trigger};
use rmcp::ServiceExt as _;
use session::Session;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The operation ledger's window. Every `tools/call` is a new turn with a fresh call id, so
/// no completed output is ever replayed: none is kept (a grep page held for replay is tens
/// of KiB). The ledger still catches a call re-entering itself (`tool_invocation_in_progress`)
/// and remembers unknown outcomes.
const LEDGER_BOUNDS: LedgerBounds = LedgerBounds {
    max_completed: 0,
    max_unknown: 256,
};

/// Runs `serve` until the client disconnects (stdio) or a signal stops it (HTTP).
pub async fn run(args: ServeArgs) -> Outcome {
    let http = match args.http {
        Some(addr) => match Access::decide(addr, std::env::var(http::TOKEN_VAR).ok()) {
            Ok(access) => Some((addr, access)),
            Err(err) => {
                eprintln!("kun-tools: {err}");
                return Outcome::Usage;
            }
        },
        None => None,
    };
    let loaded = match setup::load(&args.common, args.approval_fallback) {
        Ok(loaded) => loaded,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            return Outcome::Usage;
        }
    };
    let options = AssembleOptions {
        ledger: LedgerChoice::Bounded(LEDGER_BOUNDS),
        thread_state: setup::thread_state(Some(
            args.thread
                .clone()
                .unwrap_or_else(|| setup::workspace_thread(&loaded.settings.workspace)),
        )),
        ..AssembleOptions::default()
    };
    let assembly = match kun_composition::assemble(loaded.settings, options) {
        Ok(assembly) => assembly,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            return Outcome::Usage;
        }
    };
    // The servers connect in the background: `initialize` and the built-in tools never wait
    // for them; their tools arrive with `notifications/tools/list_changed`.
    let mcp = match kun_composition::start_mcp(&assembly, kun_composition::McpLaunch::Background) {
        Ok(mcp) => mcp,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            return Outcome::Usage;
        }
    };
    let live = Arc::new(Live::new(loaded.paths, loaded.overrides, assembly).with_mcp(mcp));
    let stop = CancellationToken::new();
    tokio::spawn(Arc::clone(&live).watch(stop.clone()));
    follow_signals(Arc::clone(&live), stop.clone());
    let served = match http {
        Some((addr, access)) => http::serve(Arc::clone(&live), addr, access, stop.clone()).await,
        None => stdio(Arc::clone(&live), stop.clone()).await,
    };
    stop.cancel();
    live.shutdown_mcp().await;
    match served {
        Ok(()) => Outcome::Done,
        Err(err) => {
            eprintln!("kun-tools: {err}");
            Outcome::Refused
        }
    }
}

/// One session over stdin/stdout, until the client closes stdin or `stop` fires.
async fn stdio(live: Arc<Live>, stop: CancellationToken) -> Result<(), String> {
    let running = Session::new(live)
        .serve(stdio::transport())
        .await
        .map_err(|err| format!("the MCP handshake on stdio failed: {err}"))?;
    let session = running.cancellation_token();
    tokio::spawn(async move {
        stop.cancelled().await;
        session.cancel();
    });
    match running.waiting().await {
        Ok(reason) => {
            tracing::info!("session ended: {reason:?}");
            Ok(())
        }
        Err(err) => Err(format!("the MCP session failed: {err}")),
    }
}

/// `SIGHUP` reloads the configuration; `SIGINT` and `SIGTERM` stop serving.
fn follow_signals(live: Arc<Live>, stop: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut hangup), Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::hangup()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        tracing::warn!("cannot install signal handlers; SIGHUP will not reload");
        return;
    };
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = interrupt.recv() => break,
                _ = terminate.recv() => break,
                _ = hangup.recv() => {
                    let live = Arc::clone(&live);
                    let reload = tokio::task::spawn_blocking(move || live.refresh(Trigger::Signal)).await;
                    tracing::info!("SIGHUP: {reload:?}");
                }
            }
        }
        stop.cancel();
    });
}
