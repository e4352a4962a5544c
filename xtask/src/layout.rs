//! `cargo xtask layout`: regenerates `crates/cli/layout/hot-text.ld`, the linker script that
//! gathers the code a `kun-tools serve` session runs into one place of the binary.
//!
//! Why: the kernel maps a program's code in 64 KiB windows around each page it first
//! executes (fault-around), so code that runs scattered over 21 MB of `.text` keeps about
//! 10 MiB resident although the functions that run add up to under 3 MiB. Gathered into one
//! output section (`.text.kun_hot`, placed before `.text`), the same session keeps about
//! 5 MiB resident (`cargo xtask bench serve`, issue 13).
//!
//! How: a release `kun-tools serve` runs under valgrind's callgrind through a scripted
//! session (initialize, `tools/list`, then `read`, `glob`, `grep`, `ls`, `write`, `edit` and
//! `bash` a few times). Every function of the binary that ran becomes one input-section
//! pattern, in the order of the current binary. A function with at most
//! [`MAX_INSTANCES_FOR_GLOB`] instances in the binary is matched whatever its hash (`17h*`),
//! so the script survives a dependency upgrade or a compiler change; a generic function
//! with more instances is matched by its exact name, so the hot section does not swallow
//! every instance. A pattern that matches nothing is ignored: a stale script only loses part
//! of the saving. Regenerate it after upgrading dependencies or the compiler.
//!
//! Needs `valgrind` and `nm` (binutils).

use crate::step::Failure;
use crate::workspace::{cargo_command, root};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// A function with this many instances or fewer is matched by its name without the hash.
const MAX_INSTANCES_FOR_GLOB: usize = 3;

/// The script, relative to the workspace root.
const SCRIPT: &str = "crates/cli/layout/hot-text.ld";

/// How many times the session's tool calls are repeated.
const ROUNDS: usize = 3;

pub fn run() -> Result<(), Failure> {
    for (program, probe) in [("valgrind", "--version"), ("nm", "--version")] {
        let found = Command::new(program)
            .arg(probe)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !found {
            return Err(Failure::new(format!(
                "`{program}` is needed to profile the binary; install it (Debian: apt-get \
                 install valgrind binutils) and run `cargo xtask layout` again"
            )));
        }
    }
    let built = cargo_command(["build", "--release", "-p", "kun-cli", "--bin", "kun-tools"])
        .status()
        .map_err(|err| Failure::new(format!("cannot run cargo: {err}")))?;
    if !built.success() {
        return Err(Failure::new(
            "the release build of kun-tools failed; fix it and run `cargo xtask layout` again",
        ));
    }
    let binary = root().join("target/release/kun-tools");
    let scratch = std::env::temp_dir().join(format!("kun-layout-{}", std::process::id()));
    let profile = scratch.join("callgrind.out");
    let outcome = profile_session(&binary, &scratch, &profile).and_then(|()| {
        let ran = functions_that_ran(&read(&profile)?);
        let symbols = code_symbols(&binary)?;
        let patterns = hot_patterns(&ran, &symbols);
        let path = root().join(SCRIPT);
        write_script(&path, &patterns)?;
        println!(
            "wrote {} ({} patterns for the {} functions of the binary that ran)",
            path.display(),
            patterns.len(),
            ran.iter()
                .filter(|name| symbols.contains_key(*name))
                .count()
        );
        Ok(())
    });
    // Best effort: the scratch directory lives under the system's temporary directory.
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|err| Failure::new(format!("cannot read {}: {err}", path.display())))
}

/// Runs the scripted session against `binary serve` under callgrind, writing `profile`.
fn profile_session(binary: &Path, scratch: &Path, profile: &Path) -> Result<(), Failure> {
    let workspace = scratch.join("ws");
    let io = |err: std::io::Error| Failure::new(format!("profiling session: {err}"));
    std::fs::create_dir_all(workspace.join("src")).map_err(io)?;
    let text: String = (1..=40).map(|n| format!("line {n} of a file\n")).collect();
    std::fs::write(workspace.join("notes.txt"), &text).map_err(io)?;
    for n in 0..5 {
        std::fs::write(
            workspace.join(format!("src/mod_{n}.rs")),
            format!("pub fn handle_{n}(input: &str) -> usize {{\n    input.len()\n}}\n"),
        )
        .map_err(io)?;
    }
    let mut child = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", profile.display()))
        .args(["--dump-instr=no", "--demangle=no", "--compress-strings=no"])
        .arg(binary)
        .arg("serve")
        .arg("--workspace")
        .arg(&workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(io)?;
    let (Some(mut input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(Failure::new("profiling session: no pipes to the server"));
    };
    let mut output = BufReader::new(output);
    let mut session = Session {
        input: &mut input,
        output: &mut output,
        next_id: 1,
    };
    session.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "xtask-layout", "version": "1"}}),
    )?;
    session.notify("notifications/initialized")?;
    session.request("tools/list", json!({}))?;
    for round in 0..ROUNDS {
        for (tool, arguments) in [
            ("read", json!({"path": "notes.txt"})),
            ("glob", json!({"pattern": "**/*.rs"})),
            ("grep", json!({"pattern": "fn [a-z]+_[0-9]"})),
            ("ls", json!({"path": "."})),
            (
                "write",
                json!({"path": format!("out_{round}.txt"), "content": "first\nsecond\n"}),
            ),
            (
                "edit",
                json!({"path": format!("out_{round}.txt"), "old_string": "second",
                       "new_string": "third"}),
            ),
            ("bash", json!({"command": "echo layout"})),
        ] {
            session.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        }
    }
    drop(input);
    let status = child.wait().map_err(io)?;
    if !status.success() {
        return Err(Failure::new(format!(
            "the profiled server exited with {status}; run `valgrind --tool=callgrind {} serve` \
             by hand to see why",
            binary.display()
        )));
    }
    Ok(())
}

/// A line-delimited JSON-RPC session over the server's pipes.
struct Session<'a> {
    input: &'a mut dyn Write,
    output: &'a mut dyn BufRead,
    next_id: u64,
}

impl Session<'_> {
    fn send(&mut self, message: &Value) -> Result<(), Failure> {
        writeln!(self.input, "{message}")
            .and_then(|()| self.input.flush())
            .map_err(|err| Failure::new(format!("profiling session: cannot write: {err}")))
    }

    fn notify(&mut self, method: &str) -> Result<(), Failure> {
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
    }

    /// Sends a request and reads until its answer, skipping notifications.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, Failure> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let mut line = String::new();
            let read = self
                .output
                .read_line(&mut line)
                .map_err(|err| Failure::new(format!("profiling session: cannot read: {err}")))?;
            if read == 0 {
                return Err(Failure::new(format!(
                    "profiling session: the server closed its output before answering `{method}`"
                )));
            }
            let Ok(answer) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if answer.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(error) = answer.get("error") {
                    return Err(Failure::new(format!(
                        "profiling session: `{method}` failed: {error}"
                    )));
                }
                return Ok(answer);
            }
        }
    }
}

/// The names of the functions in a callgrind profile (written with `--compress-strings=no`
/// and `--demangle=no`): every `fn=` and `cfn=` line.
fn functions_that_ran(profile: &str) -> HashSet<String> {
    profile
        .lines()
        .filter_map(|line| {
            line.strip_prefix("fn=")
                .or_else(|| line.strip_prefix("cfn="))
        })
        .map(|name| {
            // Compressed form `(12) name`, in case the option is ignored.
            name.split_once(") ")
                .filter(|_| name.starts_with('('))
                .map_or(name, |(_, rest)| rest)
                .trim()
                .to_owned()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// A code symbol of the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Symbol {
    address: u64,
}

/// The binary's code symbols (`nm -S --defined-only`: types t, T, W), by name.
fn code_symbols(binary: &Path) -> Result<HashMap<String, Symbol>, Failure> {
    let output = Command::new("nm")
        .args(["--defined-only", "-S"])
        .arg(binary)
        .output()
        .map_err(|err| Failure::new(format!("cannot run nm: {err}")))?;
    if !output.status.success() {
        return Err(Failure::new(format!(
            "nm could not read {}",
            binary.display()
        )));
    }
    Ok(parse_nm(&String::from_utf8_lossy(&output.stdout)))
}

fn parse_nm(listing: &str) -> HashMap<String, Symbol> {
    listing
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let address = u64::from_str_radix(fields.next()?, 16).ok()?;
            let _size = fields.next()?;
            let kind = fields.next()?;
            let name = fields.next()?;
            matches!(kind, "t" | "T" | "W").then(|| (name.to_owned(), Symbol { address }))
        })
        .collect()
}

/// A symbol's name without its thin-LTO suffix (`.llvm.123`).
fn without_lto_suffix(name: &str) -> &str {
    match name.rsplit_once(".llvm.") {
        Some((stem, digits)) if digits.bytes().all(|b| b.is_ascii_digit()) => stem,
        _ => name,
    }
}

/// A legacy-mangled name with its hash (`17h` + 16 hex digits + `E`) replaced by `17h*`;
/// `None` for a name without one (C code, v0 mangling).
fn hashless(name: &str) -> Option<String> {
    let stem = without_lto_suffix(name);
    let body = stem.strip_suffix('E')?;
    let (head, hash) = body.split_at_checked(body.len().checked_sub(16)?)?;
    let head = head.strip_suffix("17h")?;
    hash.bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then(|| format!("{head}17h*"))
}

/// One section pattern per function that ran, in the binary's current order.
fn hot_patterns(ran: &HashSet<String>, symbols: &HashMap<String, Symbol>) -> Vec<String> {
    let mut instances: HashMap<String, usize> = HashMap::new();
    for name in symbols.keys() {
        if let Some(key) = hashless(name) {
            *instances.entry(key).or_default() += 1;
        }
    }
    let by_address: BTreeMap<(u64, &str), ()> = ran
        .iter()
        .filter_map(|name| Some(((symbols.get(name)?.address, name.as_str()), ())))
        .collect();
    let mut seen = HashSet::new();
    by_address
        .keys()
        .map(|&(_, name)| match hashless(name) {
            Some(key)
                if instances
                    .get(&key)
                    .is_some_and(|n| *n <= MAX_INSTANCES_FOR_GLOB) =>
            {
                key
            }
            // The exact instance, with or without a thin-LTO suffix.
            Some(_) => format!("{}*", without_lto_suffix(name)),
            // C code: its section is named after it.
            None => name.to_owned(),
        })
        .filter(|pattern| seen.insert(pattern.clone()))
        .collect()
}

fn write_script(path: &Path, patterns: &[String]) -> Result<(), Failure> {
    let mut text = String::from(
        "/* The code a `kun-tools serve` session runs, gathered before .text so that it stays\n   \
         resident in few pages (issue 13). Generated by `cargo xtask layout`; passed to\n   \
         release links by crates/cli/build.rs. A stale line matches nothing and costs\n   \
         nothing. Regenerate after upgrading dependencies or the compiler. */\n\
         SECTIONS\n{\n  .text.kun_hot :\n  {\n",
    );
    for pattern in patterns {
        text.push_str("    *(.text.");
        text.push_str(pattern);
        text.push_str(")\n");
    }
    text.push_str("  }\n}\nINSERT BEFORE .text;\n");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|err| Failure::new(format!("cannot create {}: {err}", dir.display())))?;
    }
    std::fs::write(path, text)
        .map_err(|err| Failure::new(format!("cannot write {}: {err}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_names_are_read_plain_and_compressed() {
        let profile = "fn=_ZN3foo3bar17h0123456789abcdefE\ncfn=(7) _ZN3baz17h0123456789abcdefE\n\
                       calls=1 0\nfn=(7)\nob=/bin/x\n";
        let ran = functions_that_ran(profile);
        assert!(ran.contains("_ZN3foo3bar17h0123456789abcdefE"));
        assert!(ran.contains("_ZN3baz17h0123456789abcdefE"));
        assert_eq!(ran.len(), 3, "{ran:?}");
    }

    #[test]
    fn hashes_and_lto_suffixes_are_stripped_only_when_well_formed() {
        assert_eq!(
            hashless("_ZN3foo3bar17h0123456789abcdefE.llvm.12345").as_deref(),
            Some("_ZN3foo3bar17h*")
        );
        assert_eq!(hashless("blake3_compress_in_place"), None);
        assert_eq!(hashless("_ZN3foo3bar17hnothexnothexnothE"), None);
        assert_eq!(without_lto_suffix("a.llvm.x1"), "a.llvm.x1");
    }

    #[test]
    fn rare_functions_match_any_hash_and_generic_ones_their_exact_name() {
        let nm = "\
0000000000001000 0000000000000010 t _ZN3foo3one17h0000000000000001E
0000000000002000 0000000000000010 t _ZN4core3ptr13drop_in_place17h0000000000000001E
0000000000003000 0000000000000010 t _ZN4core3ptr13drop_in_place17h0000000000000002E
0000000000004000 0000000000000010 t _ZN4core3ptr13drop_in_place17h0000000000000003E
0000000000005000 0000000000000010 t _ZN4core3ptr13drop_in_place17h0000000000000004E.llvm.9
0000000000006000 0000000000000010 r _ZN3foo5TABLE17h0000000000000001E
0000000000000500 0000000000000010 T memcpy_fast
";
        let symbols = parse_nm(nm);
        assert_eq!(symbols.len(), 6, "read-only data is not code");
        let ran: HashSet<String> = [
            "_ZN4core3ptr13drop_in_place17h0000000000000004E.llvm.9",
            "_ZN3foo3one17h0000000000000001E",
            "memcpy_fast",
            "_ZN3foo5TABLE17h0000000000000001E",
            "not_in_the_binary",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        assert_eq!(
            hot_patterns(&ran, &symbols),
            [
                "memcpy_fast",
                "_ZN3foo3one17h*",
                "_ZN4core3ptr13drop_in_place17h0000000000000004E*",
            ]
        );
    }
}
