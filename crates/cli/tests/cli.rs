//! `kun-tools catalog` and `kun-tools call` as scripts outside the project drive them.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/src")).unwrap();
        std::fs::write(dir.path().join("ws/src/notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
        Self { dir }
    }
    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kun-tools"));
        cmd.args(args)
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        cmd
    }
    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
    fn ws_arg(&self) -> String {
        self.ws().to_string_lossy().into_owned()
    }
}

fn stdout_json(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|err| {
        panic!(
            "{err}: {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn names(catalog: &Value) -> Vec<String> {
    catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn catalog(env: &Env, extra: &[&str]) -> Value {
    let ws = env.ws_arg();
    let mut args = vec!["catalog", "--workspace", ws.as_str(), "--json"];
    args.extend_from_slice(extra);
    let out = env.run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout_json(&out)
}

#[test]
fn catalog_json_shape_is_sorted_and_fingerprinted() {
    let env = Env::new();
    let cat = catalog(&env, &[]);
    let list = names(&cat);
    let mut sorted = list.clone();
    sorted.sort();
    assert_eq!(list, sorted);
    assert_eq!(cat["fingerprint"].as_str().unwrap().len(), 64);
    let read = cat["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read")
        .unwrap();
    for key in [
        "name",
        "description",
        "input_schema",
        "kind",
        "policy",
        "side_effect",
        "provider_id",
        "provider_kind",
    ] {
        assert!(read.get(key).is_some(), "missing {key} in {read}");
    }
    assert_eq!(read["kind"], "tool_call");
    assert_eq!(read["policy"], "auto");
    assert_eq!(read["provider_kind"], "built-in");
    assert_eq!(cat["providers"][0]["id"], "builtin");
    // The probed confinement tier, as doctor shows it.
    let tier = cat["confinement"]["tier"].as_str().unwrap();
    assert!(["bubblewrap", "landlock", "none"].contains(&tier), "{tier}");
    assert!(cat["confinement"]["reason"].is_string());
    assert!(
        !list.contains(&"find".to_owned()),
        "find is an unadvertised alias"
    );
    // Same inputs, same fingerprint.
    assert_eq!(catalog(&env, &[])["fingerprint"], cat["fingerprint"]);
}

#[test]
fn catalog_under_each_sandbox_mode_and_plan_mode() {
    let env = Env::new();
    let ww = names(&catalog(&env, &["--sandbox", "workspace-write"]));
    for tool in [
        "read",
        "grep",
        "glob",
        "ls",
        "edit",
        "write",
        "bash",
        "repo_map",
        "git_inspect",
    ] {
        assert!(
            ww.contains(&tool.to_owned()),
            "{tool} missing under workspace-write: {ww:?}"
        );
    }
    let ro = names(&catalog(&env, &["--sandbox", "read-only"]));
    assert!(ro.contains(&"read".to_owned()));
    for hidden in [
        "edit",
        "write",
        "bash",
        "background_shell",
        "verify_changes",
        "lsp",
    ] {
        assert!(
            !ro.contains(&hidden.to_owned()),
            "{hidden} listed under read-only"
        );
    }
    let ext = names(&catalog(&env, &["--sandbox", "external-sandbox"]));
    assert!(!ext.contains(&"write".to_owned()) && !ext.contains(&"bash".to_owned()));
    let full = names(&catalog(&env, &["--sandbox", "danger-full-access"]));
    assert!(full.contains(&"bash".to_owned()) && full.contains(&"write".to_owned()));
    let plan = names(&catalog(&env, &["--mode", "plan"]));
    assert!(plan.contains(&"read".to_owned()) && plan.contains(&"grep".to_owned()));
    for hidden in ["edit", "write", "bash"] {
        assert!(
            !plan.contains(&hidden.to_owned()),
            "{hidden} listed in plan mode"
        );
    }
    let lists = names(&catalog(
        &env,
        &["--allow-tools", "read,grep,bash", "--deny-tools", "bash"],
    ));
    assert_eq!(lists, ["grep", "read"]);
}

#[test]
fn catalog_table_and_bad_flags() {
    let env = Env::new();
    let ws = env.ws_arg();
    let out = env.run(&["catalog", "--workspace", &ws]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("TOOL") && text.contains("fingerprint"),
        "{text}"
    );
    let bad = env.run(&["catalog", "--workspace", &ws, "--sandbox", "full"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("workspace-write"));
    let config = env.dir.path().join("bad.toml");
    std::fs::write(&config, "sandbox = \"read-only\"\nnope = 1\n").unwrap();
    let bad = env.run(&[
        "catalog",
        "--workspace",
        &ws,
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("bad.toml:2") && err.contains("nope"), "{err}");
}

fn call(env: &Env, extra: &[&str], tool: &str, args: Value) -> Output {
    let ws = env.ws_arg();
    let text = args.to_string();
    let mut argv = vec!["call", "--workspace", ws.as_str()];
    argv.extend_from_slice(extra);
    argv.push(tool);
    argv.push(&text);
    env.run(&argv)
}

#[test]
fn call_exit_codes() {
    let env = Env::new();
    let ok = call(&env, &[], "read", json!({"path": "src/notes.txt"}));
    assert_eq!(ok.status.code(), Some(0));
    let result = stdout_json(&ok);
    assert_eq!(result["is_error"], false);
    assert_eq!(result["output"]["content"], "alpha\nbeta\ngamma\n");

    // An error result still exits 0.
    let missing = call(&env, &[], "read", json!({"path": "src/none.txt"}));
    assert_eq!(missing.status.code(), Some(0));
    assert_eq!(stdout_json(&missing)["is_error"], true);

    // Approval is denied without a terminal, and the file is untouched.
    let denied = call(
        &env,
        &[],
        "write",
        json!({"path": "src/new.txt", "content": "x"}),
    );
    assert_eq!(denied.status.code(), Some(0));
    assert_eq!(stdout_json(&denied)["output"]["code"], "approval_denied");
    assert!(!env.ws().join("src/new.txt").exists());
    let no = call(
        &env,
        &["--no"],
        "write",
        json!({"path": "src/new.txt", "content": "x"}),
    );
    assert_eq!(stdout_json(&no)["output"]["code"], "approval_denied");
    let yes = call(
        &env,
        &["--yes"],
        "write",
        json!({"path": "src/new.txt", "content": "x"}),
    );
    assert_eq!(
        stdout_json(&yes)["is_error"],
        false,
        "{}",
        String::from_utf8_lossy(&yes.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(env.ws().join("src/new.txt")).unwrap(),
        "x"
    );

    // Unknown and unadvertised tools are refused: exit 1, message on stderr.
    let unknown = call(&env, &[], "teleport", json!({}));
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("teleport"));
    let denied_list = call(
        &env,
        &["--deny-tools", "read"],
        "read",
        json!({"path": "src/notes.txt"}),
    );
    assert_eq!(denied_list.status.code(), Some(1));

    // Usage errors: exit 2.
    let ws = env.ws_arg();
    assert_eq!(
        env.run(&["call", "--workspace", &ws, "read", "{not json"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        env.run(&["call", "--workspace", &ws]).status.code(),
        Some(2)
    );
    assert_eq!(
        env.run(&["call", "--workspace", "/nonexistent/ws", "read", "{}"])
            .status
            .code(),
        Some(2)
    );

    // Sandbox blocks are results, not refusals.
    let ro = call(
        &env,
        &["--sandbox", "read-only", "--yes"],
        "write",
        json!({"path": "a.txt", "content": "x"}),
    );
    assert_eq!(ro.status.code(), Some(0));
    assert_eq!(stdout_json(&ro)["output"]["code"], "sandbox_read_only");
}

fn script(env: &Env, extra: &[&str], lines: &[Value]) -> (Output, Vec<Value>) {
    let path = env.dir.path().join("script.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let ws = env.ws_arg();
    let mut argv = vec!["call", "--workspace", ws.as_str()];
    argv.extend_from_slice(extra);
    argv.extend_from_slice(&["--script", path.to_str().unwrap()]);
    let out = env.run(&argv);
    let results = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out, results)
}

#[test]
fn script_reads_then_edits() {
    let env = Env::new();
    let (out, results) = script(
        &env,
        &["--yes"],
        &[
            json!({"tool": "edit", "arguments": {"path": "src/notes.txt", "oldText": "beta", "newText": "BETA"}}),
            json!({"tool": "read", "arguments": {"path": "src/notes.txt"}}),
            json!({"tool": "edit", "arguments": {"path": "src/notes.txt", "oldText": "beta", "newText": "BETA"}}),
            json!({"tool": "edit", "arguments": {"path": "src/notes.txt", "oldText": "BETA", "newText": "b"}}),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(results.len(), 4);
    assert_eq!(results[0]["output"]["code"], "read_before_edit_required");
    assert_eq!(results[0]["output"]["next_action"]["tool"], "read");
    assert_eq!(results[1]["is_error"], false);
    assert_eq!(results[2]["is_error"], false, "{}", results[2]);
    // The second edit's oldText exists only in the text the first edit wrote: a chained edit
    // needs no re-read.
    assert_eq!(results[3]["is_error"], false, "{}", results[3]);
    assert_eq!(
        std::fs::read_to_string(env.ws().join("src/notes.txt")).unwrap(),
        "alpha\nb\ngamma\n"
    );
}

#[test]
fn call_text_prints_what_the_model_reads() {
    let env = Env::new();
    let read = call(&env, &["--text"], "read", json!({"path": "src/notes.txt"}));
    assert_eq!(read.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&read.stdout),
        "1│alpha\n2│beta\n3│gamma\n"
    );
    // An image: the line, then a placeholder for the image block.
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x02\0\0\0\x03\x08\x06\0\0\0";
    std::fs::write(env.ws().join("dot.png"), png).unwrap();
    let image = call(&env, &["--text"], "read", json!({"path": "dot.png"}));
    assert_eq!(
        String::from_utf8_lossy(&image.stdout),
        "image/png, 2×3, 29B\n[image image/png, 40 bytes base64]\n"
    );
    // An error reads as plain words, not JSON.
    let missing = call(&env, &["--text"], "read", json!({"path": "src/none.txt"}));
    let text = String::from_utf8_lossy(&missing.stdout);
    assert!(
        text.starts_with("src/none.txt does not exist") || text.contains("does not exist"),
        "{text}"
    );
    assert!(!text.contains("\"code\""), "{text}");
    // Without --text: the JSON line scripts rely on.
    let json_line = call(&env, &[], "read", json!({"path": "src/notes.txt"}));
    assert_eq!(
        stdout_json(&json_line)["output"]["content"],
        "alpha\nbeta\ngamma\n"
    );

    // A script: each call's text after a header.
    let path = env.dir.path().join("text.jsonl");
    std::fs::write(
        &path,
        format!(
            "{}\n{}\n",
            json!({"tool": "glob", "arguments": {"pattern": "*.txt"}}),
            json!({"tool": "bash", "arguments": {"command": "echo hi; exit 3"}}),
        ),
    )
    .unwrap();
    let ws = env.ws_arg();
    let out = env.run(&[
        "call",
        "--workspace",
        &ws,
        "--yes",
        "--text",
        "--script",
        path.to_str().unwrap(),
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "=== line 1: glob ===\nsrc/notes.txt\n=== line 2: bash (error) ===\nhi\nexit code 3\n"
    );
}

#[test]
fn script_reports_refusals_and_bad_lines() {
    let env = Env::new();
    let path = env.dir.path().join("s.jsonl");
    std::fs::write(&path, "{\"tool\": \"read\", \"arguments\": {\"path\": \"src/notes.txt\"}}\nnot json\n{\"tool\": \"nope\", \"arguments\": {}}\n").unwrap();
    let ws = env.ws_arg();
    let out = env.run(&[
        "call",
        "--workspace",
        &ws,
        "--script",
        path.to_str().unwrap(),
    ]);
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["is_error"], false);
    assert_eq!(lines[1]["line"], 2);
    assert!(lines[1]["invalid"].is_string());
    assert_eq!(lines[2]["line"], 3);
    assert!(lines[2]["refused"].as_str().unwrap().contains("nope"));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn script_from_stdin() {
    let env = Env::new();
    let ws = env.ws_arg();
    let mut child = env
        .cmd(&["call", "--workspace", &ws, "--script", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"tool\": \"ls\", \"arguments\": {\"path\": \"src\"}}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let result: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(result["is_error"], false, "{result}");
}

/// A `kun-tools call` killed with SIGKILL while its tool runs; the same call again answers
/// `tool_outcome_unknown` from the durable ledger instead of running twice.
#[test]
fn killed_mid_tool_then_same_call_is_outcome_unknown() {
    let env = Env::new();
    let ws = env.ws_arg();
    let ledger = env.dir.path().join("ledger.jsonl");
    let marker = env.ws().join("started");
    let args = json!({"command": "echo $$ > started; echo run >> runs.txt; sleep 5"}).to_string();
    let argv = [
        "call",
        "--workspace",
        ws.as_str(),
        "--yes",
        "--thread",
        "t1",
        "--turn",
        "u1",
        "--call-id",
        "c1",
        "--ledger",
        ledger.to_str().unwrap(),
        "bash",
        args.as_str(),
    ];
    let mut child = env
        .cmd(&argv)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !marker.exists()
        || std::fs::read_to_string(&marker)
            .unwrap_or_default()
            .trim()
            .is_empty()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the tool never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // The orphaned shell finishes its short sleep on its own. (Never shell out to `kill` with a
    // negative pid here: procps `kill -9 -PID` is read as `kill -9 -1` and ends every process.)

    let again = env.run(&argv);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let result = stdout_json(&again);
    assert_eq!(result["output"]["code"], "tool_outcome_unknown", "{result}");
    assert_eq!(
        std::fs::read_to_string(env.ws().join("runs.txt")).unwrap(),
        "run\n",
        "the command ran twice"
    );

    // Another call id is a new operation.
    let other: Vec<&str> = argv
        .iter()
        .map(|a| if *a == "c1" { "c2" } else { a })
        .collect();
    let args2 = json!({"command": "echo second"}).to_string();
    let mut other = other;
    let last = other.len() - 1;
    other[last] = args2.as_str();
    let fresh = env.run(&other);
    assert_eq!(stdout_json(&fresh)["is_error"], false);
}

#[test]
fn doctor_reports_sources_providers_and_confinement() {
    let env = Env::new();
    std::fs::create_dir_all(env.ws().join(".kun")).unwrap();
    std::fs::write(
        env.ws().join(".kun/config.toml"),
        "approval = \"untrusted\"\n[tools]\ndeny = [\"bash\"]\n",
    )
    .unwrap();
    let ws = env.ws_arg();
    let out = env.run(&[
        "doctor",
        "--workspace",
        &ws,
        "--sandbox",
        "read-only",
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = stdout_json(&out);
    assert_eq!(report["errors"], json!([]));
    let effective = report["effective"].as_array().unwrap();
    let entry = |key: &str| {
        effective
            .iter()
            .find(|v| v["key"] == key)
            .unwrap_or_else(|| panic!("{key} missing: {report}"))
            .clone()
    };
    assert_eq!(entry("sandbox")["value"], "read-only");
    assert_eq!(entry("sandbox")["source"]["layer"], "command_line");
    assert_eq!(entry("approval")["value"], "untrusted");
    assert_eq!(entry("approval")["source"]["layer"], "workspace");
    assert_eq!(entry("mode")["source"]["layer"], "default");
    assert_eq!(entry("tools.deny")["value"], json!(["bash"]));
    assert_eq!(report["providers"][0]["id"], "builtin");
    assert_eq!(report["providers"][0]["available"], true);
    assert!(report["confinement"]["tier"].is_string(), "{report}");
    assert!(report["confinement"]["reason"].is_string(), "{report}");
    assert_eq!(report["catalog"]["fingerprint"].as_str().unwrap().len(), 64);

    let text = env.run(&["doctor", "--workspace", &ws]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("configuration errors: none") && text.contains("command confinement:"),
        "{text}"
    );
    assert!(text.contains("workspace config"), "{text}");
}

#[test]
fn doctor_lists_every_configuration_error() {
    let env = Env::new();
    std::fs::create_dir_all(env.ws().join(".kun")).unwrap();
    std::fs::write(
        env.ws().join(".kun/config.toml"),
        "sandbox = \"wide-open\"\n",
    )
    .unwrap();
    std::fs::write(env.ws().join(".mcp.json"), "{\"mcpServers\": [}").unwrap();
    let flag = env.dir.path().join("flag.toml");
    std::fs::write(&flag, "[limits]\nmax_output_lines = 0\n").unwrap();
    let ws = env.ws_arg();
    let out = env.run(&[
        "doctor",
        "--workspace",
        &ws,
        "--config",
        flag.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let report = stdout_json(&out);
    let errors = report["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 3, "{report}");
    let texts: Vec<&str> = errors.iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert!(texts[0].contains(".mcp.json:1"), "{texts:?}");
    assert!(texts[1].contains("config.toml:1: `sandbox`"), "{texts:?}");
    assert!(
        texts[2].contains("flag.toml:2: `limits.max_output_lines`"),
        "{texts:?}"
    );
    assert_eq!(report["effective"], Value::Null);
    // Providers and confinement are still reported (those of the defaults).
    assert_eq!(report["providers"][0]["id"], "builtin");
    let text = env.run(&[
        "doctor",
        "--workspace",
        &ws,
        "--config",
        flag.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("configuration errors: 3"), "{text}");
    assert!(
        text.contains("unavailable until the errors above are fixed"),
        "{text}"
    );
}
