//! Benchmark (not a test): start-up with a slow MCP server configured. `serve` must answer
//! `initialize` and list the built-in tools at once (target ≤ 50 ms) whatever servers are
//! configured, and `call` of a built-in tool must start no MCP server.
//!
//! `cargo xtask bench startup` (or `cargo run --release -p kun-cli --example bench_startup --
//! [--runs N] [--delay-ms MS] [--kun-tools PATH]`). The MCP server is the fixture server
//! (`kun-mcp-fixture-server --startup-delay-ms 8000`), built with the profile of this example;
//! `--kun-tools PATH` measures another build (e.g. one from before the change).
//!
//! Each figure is the median of N runs (fresh processes each time), without and with the
//! slow server configured:
//!
//! * `serve`: spawn → `initialize` answered → `tools/list` answered (rmcp client, stdio);
//! * `call read`: the whole `kun-tools call --yes read '{"path": "small.txt"}'` process;
//! * once: how long after spawn the slow server's tools are listed by `serve`.

#[path = "support/binary.rs"]
mod binary;

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

type Fallible<T> = Result<T, Box<dyn Error>>;

/// The target for `serve` to answer, whatever servers are configured.
const TARGET: Duration = Duration::from_millis(50);

struct Options {
    runs: usize,
    delay_ms: u64,
    kun_tools: Option<PathBuf>,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Fallible<()> {
    let options = options()?;
    let kun = match &options.kun_tools {
        Some(path) => path.clone(),
        None => binary::build("kun-cli", "kun-tools")?,
    };
    let fixture = binary::build("kun-mcp-fixture-server", "kun-mcp-fixture-server")?;
    let scratch = tempfile::tempdir()?;
    let setup = Setup::new(scratch.path(), &fixture, options.delay_ms)?;
    println!(
        "start-up: {} with an MCP server that takes {} ms to start (median of {} runs)",
        kun.display(),
        options.delay_ms,
        options.runs
    );
    let mut rows = Vec::new();
    for (what, with_server) in [("no MCP server", false), ("slow MCP server", true)] {
        let serve = median(options.runs, || setup.serve(&kun, with_server)).await?;
        let call = median(options.runs, || setup.call_read(&kun, with_server)).await?;
        rows.push((what, serve, call));
    }
    println!("| configured | serve: initialize + tools/list | call read |");
    println!("|---|---|---|");
    for (what, serve, call) in &rows {
        println!("| {what} | {} | {} |", ms(*serve), ms(*call));
    }
    let with_server = rows[1].1;
    println!(
        "serve with the slow server: {} against the {} target ({:.2}× the target)",
        ms(with_server),
        ms(TARGET),
        with_server.as_secs_f64() / TARGET.as_secs_f64()
    );
    match setup.tools_arrive(&kun).await? {
        Some(after) => println!(
            "the slow server's tools listed by serve after {}",
            ms(after)
        ),
        None => println!("the slow server's tools were not listed within 60 s"),
    }
    Ok(())
}

fn options() -> Fallible<Options> {
    let mut options = Options {
        runs: 5,
        delay_ms: 8_000,
        kun_tools: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--runs" => options.runs = value()?.parse::<usize>()?.max(1),
            "--delay-ms" => options.delay_ms = value()?.parse()?,
            "--kun-tools" => options.kun_tools = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    Ok(options)
}

/// The scratch workspace, its configuration directories and the server's config file.
struct Setup {
    root: PathBuf,
    ws: PathBuf,
    servers: PathBuf,
    empty: PathBuf,
}

impl Setup {
    fn new(root: &Path, fixture: &Path, delay_ms: u64) -> Fallible<Self> {
        let ws = root.join("ws");
        std::fs::create_dir_all(&ws)?;
        std::fs::create_dir_all(root.join("config"))?;
        std::fs::write(ws.join("small.txt"), "alpha\nbeta\ngamma\n")?;
        let servers = root.join("servers.toml");
        std::fs::write(
            &servers,
            format!(
                "[mcp_servers.slow]\ncommand = {:?}\nargs = [\"--startup-delay-ms\", \"{delay_ms}\"]\nstartup_timeout_seconds = 600\n",
                fixture.to_string_lossy()
            ),
        )?;
        let empty = root.join("empty.toml");
        std::fs::write(&empty, "")?;
        Ok(Self {
            root: root.to_path_buf(),
            ws,
            servers,
            empty,
        })
    }

    fn args(&self, command: &str, with_server: bool) -> Vec<std::ffi::OsString> {
        let config = if with_server {
            &self.servers
        } else {
            &self.empty
        };
        vec![
            command.into(),
            "--workspace".into(),
            self.ws.clone().into(),
            "--config".into(),
            config.clone().into(),
        ]
    }

    fn envs(&self, cmd: &mut tokio::process::Command) {
        cmd.env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            .env("XDG_DATA_HOME", self.root.join("data"))
            .env_remove("RUST_LOG")
            .stderr(Stdio::null());
    }

    /// Spawn → initialize → tools/list.
    async fn serve(&self, kun: &Path, with_server: bool) -> Fallible<Duration> {
        let mut cmd = tokio::process::Command::new(kun);
        cmd.args(self.args("serve", with_server));
        self.envs(&mut cmd);
        let start = Instant::now();
        let client = ().serve(TokioChildProcess::new(cmd)?).await?;
        let tools = client.list_all_tools().await?;
        let took = start.elapsed();
        if !tools.iter().any(|t| t.name == "read") {
            return Err("serve did not list `read`".into());
        }
        client.cancel().await?;
        Ok(took)
    }

    /// The whole `call read` process.
    async fn call_read(&self, kun: &Path, with_server: bool) -> Fallible<Duration> {
        let mut cmd = tokio::process::Command::new(kun);
        cmd.args(self.args("call", with_server))
            .args(["--yes", "read", r#"{"path": "small.txt"}"#])
            .stdin(Stdio::null());
        self.envs(&mut cmd);
        let start = Instant::now();
        let out = cmd.output().await?;
        let took = start.elapsed();
        if !out.status.success() || !String::from_utf8_lossy(&out.stdout).contains("beta") {
            return Err(format!("call read failed: {out:?}").into());
        }
        Ok(took)
    }

    /// Spawn → the slow server's tools listed (polled every 20 ms, up to 60 s).
    async fn tools_arrive(&self, kun: &Path) -> Fallible<Option<Duration>> {
        let mut cmd = tokio::process::Command::new(kun);
        cmd.args(self.args("serve", true));
        self.envs(&mut cmd);
        let start = Instant::now();
        let client = ().serve(TokioChildProcess::new(cmd)?).await?;
        let mut arrived = None;
        while start.elapsed() < Duration::from_secs(60) {
            let tools = client.list_all_tools().await?;
            if tools.iter().any(|t| t.name.starts_with("mcp_slow_")) {
                arrived = Some(start.elapsed());
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        client.cancel().await?;
        Ok(arrived)
    }
}

async fn median<F, Fut>(runs: usize, mut measure: F) -> Fallible<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Fallible<Duration>>,
{
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        times.push(measure().await?);
    }
    times.sort();
    Ok(times[times.len() / 2])
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1_000.0)
}
