//! `kun-mcp-fixture-server`: serves [`kun_mcp_fixture_server::FixtureServer`] on stdio.
//!
//! Flags: `--startup-delay-ms N` (sleep before serving), `--exit-immediately` (exit with
//! status 3 before the handshake), `--never-start` (never answer the handshake, like a server
//! that hangs), `--started-marker PATH` (append the process id and a newline to `PATH` as soon
//! as the process runs, so a test can tell whether and how often the server was launched).
//! Stdout is the protocol channel; messages go to stderr.

use kun_mcp_fixture_server::FixtureServer;
use rmcp::ServiceExt;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// What the command line asked for.
enum Launch {
    Serve { startup_delay: Duration },
    ExitImmediately,
    NeverStart,
}

/// The launch and the marker file, if any.
fn parse_args() -> Result<(Launch, Option<PathBuf>), String> {
    let mut args = std::env::args().skip(1);
    let mut startup_delay = Duration::ZERO;
    let mut launch = None;
    let mut marker = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--exit-immediately" => launch = Some(Launch::ExitImmediately),
            "--never-start" => launch = Some(Launch::NeverStart),
            "--started-marker" => {
                marker = Some(PathBuf::from(
                    args.next().ok_or("--started-marker needs a file path")?,
                ));
            }
            "--startup-delay-ms" => {
                let value = args
                    .next()
                    .ok_or("--startup-delay-ms needs a number of milliseconds")?;
                let millis: u64 = value
                    .parse()
                    .map_err(|_| format!("--startup-delay-ms: `{value}` is not a number"))?;
                startup_delay = Duration::from_millis(millis);
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok((launch.unwrap_or(Launch::Serve { startup_delay }), marker))
}

/// Appends this process's id to `marker`.
fn mark_started(marker: &std::path::Path) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(marker)?;
    writeln!(file, "{}", std::process::id())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let (launch, marker) = match parse_args() {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!(
                "kun-mcp-fixture-server: {message}\nusage: kun-mcp-fixture-server [--startup-delay-ms N] [--exit-immediately] [--never-start] [--started-marker PATH]"
            );
            return ExitCode::from(2);
        }
    };
    if let Some(marker) = marker
        && let Err(err) = mark_started(&marker)
    {
        eprintln!(
            "kun-mcp-fixture-server: cannot write the marker {}: {err}",
            marker.display()
        );
        return ExitCode::FAILURE;
    }
    let startup_delay = match launch {
        Launch::Serve { startup_delay } => startup_delay,
        Launch::ExitImmediately => {
            eprintln!("kun-mcp-fixture-server: exiting before the handshake, as asked");
            return ExitCode::from(3);
        }
        Launch::NeverStart => {
            eprintln!("kun-mcp-fixture-server: never answering the handshake, as asked");
            std::future::pending::<()>().await;
            return ExitCode::FAILURE;
        }
    };
    tokio::time::sleep(startup_delay).await;
    let service = match FixtureServer::new().serve(rmcp::transport::stdio()).await {
        Ok(service) => service,
        Err(err) => {
            eprintln!("kun-mcp-fixture-server: handshake failed: {err}");
            return ExitCode::FAILURE;
        }
    };
    match service.waiting().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("kun-mcp-fixture-server: service task failed: {err}");
            ExitCode::FAILURE
        }
    }
}
