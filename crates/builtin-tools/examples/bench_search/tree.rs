//! The generated benchmark tree: code-like text with rare needles for the queries, some of it
//! `.gitignore`d, some hidden, a few binary files; built once and cached.

use super::Res;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Bump when the generator changes, so a stale cached tree is rebuilt.
const TREE_VERSION: &str = "kun-bench-search-tree v2";
const MIN_FILES: usize = 20_000;
const MIN_BYTES: u64 = 100 * 1024 * 1024;

/// The generated tree, built on first use and reused while its version marker matches.
pub fn generated_tree() -> Res<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    std::fs::create_dir_all(&target)?;
    let root = target.canonicalize()?.join("bench-search-tree");
    let marker = root.join(".bench-complete");
    if std::fs::read_to_string(&marker).is_ok_and(|v| v == TREE_VERSION) {
        return Ok(root);
    }
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let start = Instant::now();
    let (files, bytes) = generate(&root)?;
    std::fs::write(&marker, TREE_VERSION)?;
    println!(
        "generated {files} files, {:.0} MB under {} in {:.1} s",
        bytes as f64 / 1_048_576.0,
        root.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(root)
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const WORDS: &[&str] = &[
    "let", "mut", "value", "result", "config", "buffer", "index", "count", "state", "handle",
    "request", "response", "token", "stream", "parse", "render", "update", "cache", "queue",
    "worker", "thread", "session", "context", "matches", "options", "builder", "registry",
    "provider", "catalog", "policy", "sandbox", "approval", "hook", "return", "match", "self",
    "Some", "None", "Ok", "Err", "impl", "pub", "struct", "enum", "trait", "where",
];

/// Text of about `size` bytes: code-like lines with rare needles for the queries.
fn file_text(rng: &mut Rng, size: usize) -> String {
    let mut text = String::with_capacity(size + 128);
    while text.len() < size {
        match rng.below(2000) {
            0..=2 => {
                let word = WORDS[rng.below(WORDS.len() as u64) as usize].to_ascii_lowercase();
                if rng.below(2) == 0 {
                    text.push_str(&format!(
                        "    fn {word}_handler_{}(ctx: &Context) -> Result<()> {{\n",
                        rng.below(1000)
                    ));
                } else {
                    text.push_str(&format!(
                        "    pub fn {word}_handler(ctx: &Context) -> Result<()> {{\n"
                    ));
                }
            }
            7..=13 => {
                // `\bzq[a-z]{3}x\b` matches one spelling in three; the others are near misses.
                let letters: String = (0..3)
                    .map(|_| char::from(b'a' + rng.below(26) as u8))
                    .collect();
                let token = match rng.below(3) {
                    0 => format!("zq{letters}x"),
                    1 => format!("zq{letters}yx"),
                    _ => format!("xzq{letters}x"),
                };
                text.push_str(&format!("    let {token} = queue.pop();\n"));
            }
            3..=5 => {
                let spelling = ["ERROR_CODE_", "error_code_", "Error_Code_"][rng.below(3) as usize];
                text.push_str(&format!(
                    "    // {spelling}{} raised when the queue is full\n",
                    rng.below(10)
                ));
            }
            6 if rng.below(10) == 0 => text.push_str("    let marker = \"kun_bench_needle\";\n"),
            _ => {
                let indent = rng.below(4) as usize * 4;
                text.push_str(&" ".repeat(indent));
                for i in 0..(4 + rng.below(10)) {
                    if i > 0 {
                        text.push(' ');
                    }
                    text.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
                }
                text.push_str(if rng.below(3) == 0 { ";\n" } else { "\n" });
            }
        }
    }
    text
}

/// Writes files and counts them.
#[derive(Default)]
struct TreeWriter {
    files: usize,
    bytes: u64,
}

impl TreeWriter {
    fn write(&mut self, path: &Path, content: &[u8]) -> Res<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, content)?;
        self.files += 1;
        self.bytes += content.len() as u64;
        Ok(())
    }
}

fn generate(root: &Path) -> Res<(usize, u64)> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut out = TreeWriter::default();
    std::fs::create_dir_all(root)?;
    std::fs::write(root.join(".gitignore"), "target/\n*.log\nnode_modules/\n")?;
    let extensions = ["rs", "rs", "rs", "py", "ts", "md", "txt", "toml"];
    let mut n = 0usize;
    while n < 17_600 {
        let (krate, module) = (n / 440, (n / 22) % 20);
        let ext = extensions[rng.below(extensions.len() as u64) as usize];
        let size = 1_024 + rng.below(8_192) as usize;
        let path = root.join(format!(
            "crate{krate:02}/src/mod{module:02}/file{n:05}.{ext}"
        ));
        out.write(&path, file_text(&mut rng, size).as_bytes())?;
        n += 1;
    }
    // Ignored: a build directory, logs and node_modules; hidden: a cache directory.
    for i in 0..1_800 {
        let size = 2_048 + rng.below(16_384) as usize;
        out.write(
            &root.join(format!("target/debug/build/out{i:04}.rs")),
            file_text(&mut rng, size).as_bytes(),
        )?;
    }
    for i in 0..600 {
        let size = 2_048 + rng.below(16_384) as usize;
        let text = file_text(&mut rng, size);
        out.write(
            &root.join(format!("crate{:02}/logs/run{i:03}.log", i % 50)),
            text.as_bytes(),
        )?;
        out.write(
            &root.join(format!("node_modules/pkg{:02}/index{i:03}.ts", i % 30)),
            text.as_bytes(),
        )?;
    }
    for i in 0..300 {
        let size = 2_048 + rng.below(16_384) as usize;
        out.write(
            &root.join(format!(".cache/entry{i:03}.rs")),
            file_text(&mut rng, size).as_bytes(),
        )?;
    }
    for i in 0..20 {
        let mut binary = file_text(&mut rng, 4_096).into_bytes();
        binary.extend_from_slice(b"\x00\x01\x02 kun_bench_needle fn binary_handler_1(\n");
        out.write(&root.join(format!("assets/blob{i:02}.bin")), &binary)?;
    }
    // Top up to the size targets with more visible files.
    while out.files < MIN_FILES || out.bytes < MIN_BYTES {
        let size = 1_024 + rng.below(8_192) as usize;
        let path = root.join(format!("extra/part{:03}/file{n:06}.rs", n / 200));
        out.write(&path, file_text(&mut rng, size).as_bytes())?;
        n += 1;
    }
    Ok((out.files, out.bytes))
}
