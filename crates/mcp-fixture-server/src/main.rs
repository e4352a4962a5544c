//! `kun-mcp-fixture-server`: serves [`kun_mcp_fixture_server::FixtureServer`] on stdio.
//!
//! Flags: `--startup-delay-ms N` (sleep before serving), `--exit-immediately` (exit with
//! status 3 before the handshake). Stdout is the protocol channel; messages go to stderr.

use kun_mcp_fixture_server::FixtureServer;
use rmcp::ServiceExt;
use std::process::ExitCode;
use std::time::Duration;

/// What the command line asked for.
enum Launch {
    Serve { startup_delay: Duration },
    ExitImmediately,
}

fn parse_args() -> Result<Launch, String> {
    let mut args = std::env::args().skip(1);
    let mut startup_delay = Duration::ZERO;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--exit-immediately" => return Ok(Launch::ExitImmediately),
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
    Ok(Launch::Serve { startup_delay })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let startup_delay = match parse_args() {
        Ok(Launch::Serve { startup_delay }) => startup_delay,
        Ok(Launch::ExitImmediately) => {
            eprintln!("kun-mcp-fixture-server: exiting before the handshake, as asked");
            return ExitCode::from(3);
        }
        Err(message) => {
            eprintln!(
                "kun-mcp-fixture-server: {message}\nusage: kun-mcp-fixture-server [--startup-delay-ms N] [--exit-immediately]"
            );
            return ExitCode::from(2);
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
