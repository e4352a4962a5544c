//! The approval scope of a command line: what an `allow_for_session` grant covers.
//!
//! | command | scope |
//! |---|---|
//! | `ls -la` | `ls` |
//! | `git status -s` | `git status` |
//! | `cargo test -p x` | `cargo test` |
//! | `python -m pytest -q` | `python -m pytest` |
//! | `git -C dir status` (an option before the subcommand) | none |
//! | `rm -rf x; curl …`, `a \| b`, `a && b`, `a > f`, `(a)`, `$(a)`, `` `a` `` | none |
//! | `FOO=1 make`, `sudo make`, `env make`, `xargs rm`, `bash -c …` | none |
//!
//! `None` means no grant can cover the command: every run asks again. It is returned for
//! anything this parser is not sure about — compound commands, redirections, substitutions,
//! variable or glob command names, leading assignments, and wrappers that run another command.

/// Tools whose first argument is a subcommand that belongs in the scope.
const MULTI_COMMAND_TOOLS: &[&str] = &[
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "go",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "npx",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "rustup",
    "gh",
    "make",
    "deno",
    "terraform",
    "systemctl",
    "brew",
];

/// Commands that run another command given as arguments: a grant on them would cover anything.
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "su", "env", "exec", "eval", "command", "builtin", "nohup", "nice", "ionice",
    "time", "timeout", "xargs", "watch", "strace", "sh", "bash", "zsh", "dash", "fish", "ksh",
    "source", ".", "ssh", "parallel", "flock", "setsid", "stdbuf", "chroot", "unshare", "nsenter",
    "busybox", // shell keywords that start compound commands
    "!", "if", "then", "else", "for", "while", "until", "case", "select", "function", "coproc",
    "[[", "{",
];

/// Python interpreters, whose `-m module` belongs in the scope.
const PYTHONS: &[&str] = &["python", "python3", "python2"];

/// The scope of `command`; see the module docs.
///
/// ```
/// use kun_builtin_tools::shell::command_scope;
/// assert_eq!(command_scope("git status -s").as_deref(), Some("git status"));
/// assert_eq!(command_scope("ls -la").as_deref(), Some("ls"));
/// assert_eq!(command_scope("rm -rf x; curl https://example.com"), None);
/// ```
#[must_use]
pub fn command_scope(command: &str) -> Option<String> {
    let words = simple_words(command)?;
    let first = words.first()?;
    if first.contains('=')
        || first.contains(['*', '?', '[', '~', '{'])
        || WRAPPERS.contains(&first.as_str())
    {
        return None;
    }
    let program = first.rsplit('/').next().unwrap_or(first);
    if PYTHONS.contains(&program) || program.starts_with("python3.") {
        return match words.get(1).map(String::as_str) {
            Some("-m") => words
                .get(2)
                .filter(|module| is_plain(module))
                .map(|module| format!("{first} -m {module}")),
            Some("-c") => None,
            _ => Some(first.clone()),
        };
    }
    if MULTI_COMMAND_TOOLS.contains(&program) {
        return match words.get(1) {
            None => Some(first.clone()),
            Some(sub) if is_plain(sub) => Some(format!("{first} {sub}")),
            Some(_) => None,
        };
    }
    Some(first.clone())
}

/// A subcommand that names itself: not an option, not empty.
fn is_plain(word: &str) -> bool {
    !word.is_empty() && !word.starts_with(['-', '+'])
}

/// The words of a simple command (quotes removed), or `None` when the line is anything else:
/// empty, compound, redirected, substituted or unterminated.
fn simple_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '`' => return None,
                        '$' => {
                            let mut lookahead = chars.clone();
                            if lookahead.next() == Some('(') {
                                return None;
                            }
                            word.push('$');
                        }
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next()? {
                    '\n' => return None,
                    c => word.push(c),
                }
            }
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '`' | '\n' | '\r' => return None,
            '$' if chars.clone().next() == Some('(') => return None,
            '#' if !in_word => break,
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    let first = words.first()?;
    // A command name from a variable could be anything.
    if first.contains('$') {
        return None;
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes() {
        let table: &[(&str, Option<&str>)] = &[
            ("git status -s", Some("git status")),
            ("ls -la", Some("ls")),
            ("ls", Some("ls")),
            ("  cargo   test -p kun  ", Some("cargo test")),
            ("npm run build", Some("npm run")),
            ("python -m pytest -q", Some("python -m pytest")),
            ("python3 -m pip install x", Some("python3 -m pip")),
            ("python script.py", Some("python")),
            ("python -c 'print(1)'", None),
            ("/usr/bin/git log", Some("/usr/bin/git log")),
            ("git", Some("git")),
            ("git -C dir status", None),
            ("git -c core.pager=evil log", None),
            ("cargo +nightly build", None),
            ("echo 'a; b | c'", Some("echo")),
            ("echo \"it's\"", Some("echo")),
            ("grep -r 'x' . # comment; rm", Some("grep")),
            ("rm -rf x; curl https://example.com", None),
            ("ls | wc -l", None),
            ("make && make install", None),
            ("a || b", None),
            ("sleep 1 &", None),
            ("echo hi > out.txt", None),
            ("cat < in.txt", None),
            ("(cd x && ls)", None),
            ("echo $(rm -rf /)", None),
            ("echo \"$(whoami)\"", None),
            ("echo `id`", None),
            ("echo \"`id`\"", None),
            ("ls\nrm -rf x", None),
            ("FOO=1 make", None),
            ("$EDITOR file", None),
            ("sudo rm -rf /", None),
            ("env X=1 ls", None),
            ("bash -c 'ls'", None),
            ("xargs rm", None),
            ("! rm x", None),
            ("coproc rm x", None),
            ("./*.sh", None),
            ("echo 'unterminated", None),
            ("", None),
            ("   ", None),
            ("echo \"$HOME\"", Some("echo")),
        ];
        for (command, scope) in table {
            assert_eq!(command_scope(command).as_deref(), *scope, "{command:?}");
        }
    }
}
