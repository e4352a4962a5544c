//! The GUI, user-input and plan tools through `kun-tools catalog`, `call` and `doctor`, as a
//! script outside the project drives them: where each tool is listed, todos and goals per
//! `--thread` across processes, `user_input` without a terminal, `create_plan` writing its
//! reserved file under the protected `.kun/`, and a hostile workspace that cannot redirect it.
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
        Self { dir }
    }
    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }
    fn ws_arg(&self) -> String {
        self.ws().to_string_lossy().into_owned()
    }
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_kun-tools"))
            .args(args)
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env_remove("DISPLAY")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
    /// `call --workspace WS EXTRA… TOOL ARGS`, its JSON line.
    fn call(&self, extra: &[&str], tool: &str, arguments: &Value) -> Value {
        let ws = self.ws_arg();
        let arguments = arguments.to_string();
        let mut args = vec!["call", "--workspace", ws.as_str()];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[tool, arguments.as_str()]);
        let out = self.run(&args);
        assert!(
            out.status.success(),
            "call {tool} exited {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|err| {
            panic!("{err}: {}", String::from_utf8_lossy(&out.stdout));
        })
    }
    fn listed(&self, extra: &[&str]) -> Vec<String> {
        let ws = self.ws_arg();
        let mut args = vec!["catalog", "--workspace", ws.as_str(), "--json"];
        args.extend_from_slice(extra);
        let out = self.run(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let catalog: Value = serde_json::from_slice(&out.stdout).unwrap();
        catalog["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

#[test]
fn each_tool_is_listed_where_the_spec_says() {
    let env = Env::new();
    let cli = env.listed(&[]);
    for always in ["user_input", "request_user_input"] {
        assert!(
            cli.contains(&always.to_owned()),
            "{always} missing: {cli:?}"
        );
    }
    for hidden in ["todo_list", "get_goal", "create_plan", "computer_use"] {
        assert!(
            !cli.contains(&hidden.to_owned()),
            "{hidden} listed: {cli:?}"
        );
    }
    let gui = env.listed(&["--surface", "gui"]);
    for name in [
        "todo_list",
        "todo_write",
        "get_goal",
        "create_goal",
        "update_goal",
    ] {
        assert!(
            gui.contains(&name.to_owned()),
            "{name} missing for gui: {gui:?}"
        );
    }
    let plan = env.listed(&["--mode", "plan"]);
    assert!(plan.contains(&"create_plan".to_owned()), "{plan:?}");
    assert!(plan.contains(&"user_input".to_owned()), "{plan:?}");
}

#[test]
fn todos_and_goals_are_per_thread_and_outlive_the_process() {
    let env = Env::new();
    let gui = ["--surface", "gui", "--thread", "t1"];
    let todos = json!({"todos": [{"content": "parse", "status": "in_progress"}]});
    let written = env.call(&gui, "todo_write", &todos);
    assert_eq!(written["is_error"], false, "{written}");
    let goal = env.call(&gui, "create_goal", &json!({"objective": "ship v2"}));
    assert_eq!(goal["is_error"], false, "{goal}");

    let again = env.call(&gui, "todo_list", &json!({}));
    assert_eq!(again["output"]["todos"][0]["content"], "parse", "{again}");
    let goal = env.call(&gui, "get_goal", &json!({}));
    assert!(goal["output"].to_string().contains("ship v2"), "{goal}");

    let other = env.call(
        &["--surface", "gui", "--thread", "t2"],
        "todo_list",
        &json!({}),
    );
    assert_eq!(other["output"]["todos"], json!([]), "{other}");
}

#[test]
fn user_input_without_a_terminal_is_a_clear_error_result() {
    let env = Env::new();
    let result = env.call(&[], "user_input", &json!({"question": "Proceed?"}));
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(
        result["output"]["code"], "user_input_unavailable",
        "{result}"
    );
    assert!(
        result["output"]["error"]
            .as_str()
            .unwrap()
            .contains("structured user input is not available in this client context"),
        "{result}"
    );
}

#[test]
fn create_plan_writes_its_reserved_file_under_the_protected_kun_dir() {
    let env = Env::new();
    let plan = env.call(
        &["--mode", "plan", "--yes"],
        "create_plan",
        &json!({"title": "Ship v2", "content": "1. parse\n2. test\n"}),
    );
    assert_eq!(plan["is_error"], false, "{plan}");
    let file = env.ws().join(".kun/plans/ship-v2.md");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("1. parse"), "{text}");
    // The protected path stays protected for every other tool.
    let write = env.call(
        &["--yes"],
        "write",
        &json!({"path": ".kun/plans/other.md", "content": "x"}),
    );
    assert_eq!(write["is_error"], true, "{write}");
    assert_eq!(write["output"]["code"], "sandbox_protected_path", "{write}");
    assert!(!env.ws().join(".kun/plans/other.md").exists());
}

#[test]
fn a_hostile_workspace_cannot_redirect_the_plan_file() {
    let env = Env::new();
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(env.ws().join(".kun")).unwrap();
    // Its config tries to move the plan directory to where plans would be picked up as
    // sources; the key is the user's own, so it is dropped (an absolute or `..` path is a
    // configuration error anywhere).
    std::fs::write(env.ws().join(".kun/config.toml"), "[plan]\ndir = \"src\"\n").unwrap();
    let plan = env.call(
        &["--mode", "plan", "--yes"],
        "create_plan",
        &json!({"title": "Escape", "content": "x"}),
    );
    assert_eq!(plan["is_error"], false, "{plan}");
    assert!(env.ws().join(".kun/plans/escape.md").is_file());
    assert_eq!(std::fs::read_dir(env.ws().join("src")).unwrap().count(), 0);

    // A link planted where the plan directory should be is refused, and nothing lands
    // behind it.
    std::fs::remove_dir_all(env.ws().join(".kun/plans")).unwrap();
    std::os::unix::fs::symlink(&outside, env.ws().join(".kun/plans")).unwrap();
    let linked = env.call(
        &["--mode", "plan", "--yes"],
        "create_plan",
        &json!({"title": "Escape", "content": "x"}),
    );
    assert_eq!(linked["is_error"], true, "{linked}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

#[test]
fn doctor_explains_what_is_not_listed_and_what_is_unavailable() {
    let env = Env::new();
    std::fs::create_dir_all(env.dir.path().join("config/kun")).unwrap();
    std::fs::write(
        env.dir.path().join("config/kun/config.toml"),
        "[computer_use]\nmode = \"always\"\n",
    )
    .unwrap();
    let ws = env.ws_arg();
    let out = env.run(&["doctor", "--workspace", &ws]);
    let text = String::from_utf8_lossy(&out.stdout);
    for expected in [
        "goal and todo tools are listed for the GUI client surface only",
        "create_plan is listed in plan mode only",
        "DISPLAY is not set",
        "[media.image] is not configured",
        "[media.speech] is not configured",
        "[media.music] is not configured",
        "[media.video] is not configured",
    ] {
        assert!(
            text.contains(expected),
            "doctor does not say {expected:?}:\n{text}"
        );
    }
}
