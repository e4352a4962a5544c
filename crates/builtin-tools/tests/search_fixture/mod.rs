//! A fixture tree exercising ripgrep's rules (ignore files, hidden entries, binary files,
//! non-ASCII names, symbolic links, CRLF, UTF-16), built in a fresh workspace, and helpers to
//! call the search tools and, when `rg` is installed, ripgrep itself on the same tree.

#![allow(dead_code, reason = "each test binary uses part of the fixture")]
#![allow(clippy::expect_used, reason = "test helpers fail loudly")]

use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{Tool, ToolResult};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Builds the fixture tree. The comments say what ripgrep does with each entry.
pub fn fixture() -> TestWorkspace {
    let ws = TestWorkspace::new();
    // Ignore files (hidden themselves, so never searched).
    ws.write(".gitignore", "*.log\n!keep.log\nbuild/\n/secret.txt\n");
    ws.write(".ignore", "ignored_by_dot_ignore.txt\n");
    ws.write(".rgignore", "ignored_by_rgignore.txt\n");
    // Hidden: skipped.
    ws.write(".env", "needle=1\n");
    ws.write(".hidden/inside.txt", "needle hidden\n");
    // Plain files.
    ws.write("README.md", "# Needle project\nThe needle is here.\n");
    ws.write("a/b.txt", "needle a/b\n");
    ws.write("a-c.txt", "needle a-c\n");
    ws.write("crlf.txt", "needle crlf\r\nother\r\n");
    ws.write("docs/secret.txt", "needle docs secret\n"); // `/secret.txt` is anchored: not ignored
    ws.write("données/café.txt", "needle café\nNEEDLE CAFÉ\n");
    ws.write("日本/名前.md", "needle 日本\n");
    ws.write(
        "src/main.rs",
        "fn main() {\n    let needle = 1;\n    println!(\"{}\", needle);\n}\n",
    );
    ws.write(
        "src/lib.rs",
        "pub fn find_needle(hay: &str) -> bool {\n    hay.contains(\"NEEDLE\")\n}\n",
    );
    ws.write("src/nested/mod.rs", "// needle nested\n");
    // UTF-16LE with a BOM: transcoded, then searched.
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend("needle utf16\n".encode_utf16().flat_map(u16::to_le_bytes));
    ws.write("utf16.txt", utf16);
    // Ignored.
    ws.write("app.log", "needle in log\n");
    ws.write("keep.log", "needle kept\n"); // re-included by `!keep.log`
    ws.write("build/out.txt", "needle build\n");
    ws.write("secret.txt", "needle secret\n");
    ws.write("ignored_by_dot_ignore.txt", "needle\n");
    ws.write("ignored_by_rgignore.txt", "needle\n");
    ws.write("src/nested/.gitignore", "generated.rs\n");
    ws.write("src/nested/generated.rs", "// needle generated\n");
    // Binary (a NUL byte): skipped.
    ws.write("bin/data.bin", b"needle\x00\x01\x02needle\n");
    ws.write(
        "bin/image.png",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR needle\n",
    );
    // Symbolic links: not followed, not searched.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("src/main.rs", ws.path("link.txt")).expect("file symlink");
        std::os::unix::fs::symlink("src", ws.path("linkdir")).expect("dir symlink");
    }
    ws
}

/// Calls a tool and returns its result.
pub async fn call(tool: &dyn Tool, ws: &TestWorkspace, arguments: Value) -> ToolResult {
    tool.execute(arguments, ws.tool_context("call-test"))
        .await
        .expect("tool runs")
}

/// `(path, line, text)` of every match in a grep result.
pub fn grep_lines(output: &Value) -> Vec<(String, u64, String)> {
    output["matches"]
        .as_array()
        .expect("matches array")
        .iter()
        .map(|m| {
            (
                m["path"].as_str().expect("path").to_owned(),
                m["line"].as_u64().expect("line"),
                m["text"].as_str().expect("text").to_owned(),
            )
        })
        .collect()
}

/// The `files` of a glob result.
pub fn glob_files(output: &Value) -> Vec<String> {
    output["files"]
        .as_array()
        .expect("files array")
        .iter()
        .map(|f| f.as_str().expect("path").to_owned())
        .collect()
}

/// Owned expected rows from a table.
pub fn rows(table: &[(&str, u64, &str)]) -> Vec<(String, u64, String)> {
    table
        .iter()
        .map(|(path, line, text)| ((*path).to_owned(), *line, (*text).to_owned()))
        .collect()
}

/// Owned paths from a table.
pub fn paths(table: &[&str]) -> Vec<String> {
    table.iter().map(|path| (*path).to_owned()).collect()
}

/// Whether `rg` is on PATH (live comparisons are skipped without it).
pub fn rg_available() -> bool {
    let found = Command::new("rg")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        // CI installs ripgrep (.ci/run): there a missing rg is a broken setup, not a skip.
        assert!(
            std::env::var_os("CI").is_none(),
            "rg is not on PATH under CI: .ci/run installs ripgrep"
        );
        eprintln!("rg is not on PATH: the live comparison with ripgrep is skipped");
    }
    found
}

fn rg(root: &Path, args: &[&str]) -> String {
    let out = Command::new("rg")
        .current_dir(root)
        .env_remove("RIPGREP_CONFIG_PATH")
        .args(["--no-config", "--no-require-git", "--color", "never"])
        .args(args)
        .output()
        .expect("run rg");
    // 0: matches, 1: none; 2 (errors) also prints what it found.
    String::from_utf8(out.stdout).expect("rg prints UTF-8 here")
}

/// `rg --line-number --no-heading --sort path <args>` as `(path, line, text)` rows.
pub fn rg_grep(root: &Path, args: &[&str]) -> Vec<(String, u64, String)> {
    let mut full = vec![
        "--line-number",
        "--no-heading",
        "--with-filename",
        "--null",
        "--sort",
        "path",
    ];
    full.extend_from_slice(args);
    rg(root, &full)
        .lines()
        .map(|row| {
            let (path, rest) = row.split_once('\0').expect("path NUL line:text");
            let (line, text) = rest.split_once(':').expect("line:text");
            (
                path.to_owned(),
                line.parse().expect("line number"),
                text.trim_end_matches('\r').to_owned(),
            )
        })
        .collect()
}

/// `rg --files --sort path <args>` as paths.
pub fn rg_files(root: &Path, args: &[&str]) -> Vec<String> {
    let mut full = vec!["--files", "--sort", "path"];
    full.extend_from_slice(args);
    rg(root, &full).lines().map(str::to_owned).collect()
}
