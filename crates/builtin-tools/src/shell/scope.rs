//! What an `allow_for_session` grant of a command line covers ([`command_scope`]), and what a
//! command call asks of the gates ([`command_approval`]).
//!
//! A session grant is keyed by (program, subcommand) and covers a later command line only
//! when **every** simple command in it is plain and has a granted key:
//!
//! 1. the line parses with `tree-sitter-bash` into simple commands joined by `;`, `&&`,
//!    `||`, `|` (see the `syntax` module: no expansion, substitution, redirection to a file,
//!    here-document, subshell, assignment, glob, brace or tilde expansion, background `&`);
//! 2. each program is named plainly (ASCII letters, digits, `._+-`, or a relative path inside
//!    the workspace) and its row in the `programs` table allows grants: never shells,
//!    interpreters, `awk`/`sed`, wrappers that run another command (`env`, `sudo`, `xargs`,
//!    `timeout`, …), `git`, builtins that evaluate array subscripts (`printf -v`, `read`,
//!    `declare`, `test -v`, …) or change the shell (`eval`, `exec`, `trap`, `source`, …);
//! 3. no argument is a forbidden option of its program (`find -exec`, `curl -o`,
//!    `make --eval`, `cargo --config`, …), and a subcommand program names its subcommand
//!    first (`cargo test`, not `cargo --config x test`);
//! 4. no argument points outside the workspace: a `..` path component anywhere, an absolute
//!    path (alone, after `=`, `@`, `:` or `,`, or attached to a short option) outside every
//!    root, or a `file:` URL breaks the grant, and so does a relative path that exists and
//!    resolves (through symlinks) outside — checked when the call is classified, so a link
//!    swapped in later is the confinement's to stop;
//! 5. `cd DIR` into the workspace needs no key of its own.
//!
//! The keys of a grantable line are those of its commands, so a pipeline of two programs
//! (`cargo test 2>&1 | tail -n 5`) needs both keys granted, and granting it grants both.
//! Anything else is approved one call at a time, and the prompt says why. A command that asks
//! to run outside the sandbox is always approved one call at a time.
//!
//! ```
//! use kun_builtin_tools::shell::command_scope;
//! use kun_ports::{CommandKey, GrantScope};
//! let roots = [std::path::PathBuf::from("/ws")];
//! assert_eq!(
//!     command_scope("cargo test -p kun 2>&1 | tail -n 5", &roots).grant,
//!     GrantScope::Commands { keys: vec![CommandKey::parse("cargo test"), CommandKey::parse("tail")] },
//! );
//! assert!(matches!(command_scope("node -e 'x'", &roots).grant, GrantScope::OneCall { .. }));
//! ```

use super::programs::{Forbidden, Grantable, Key, Rule, rule_for};
use super::syntax::{SimpleCommand, simple_commands};
use kun_ports::{CommandApproval, CommandKey, CommandSafety, GrantScope, SandboxRequest};
use std::path::{Component, Path, PathBuf};

/// The one path outside the workspace any argument may name.
const DEV_NULL: &str = "/dev/null";

/// What a grant can say about a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandScope {
    /// What a session grant of it covers (its keys), or why it is one call only.
    pub grant: GrantScope,
    /// Whether every command in it only reads, with plain arguments inside the workspace.
    pub safety: CommandSafety,
}

/// The scope of `command` run in `roots[0]` (see the module docs).
#[must_use]
pub fn command_scope(command: &str, roots: &[PathBuf]) -> CommandScope {
    match keys(command, roots) {
        Ok((keys, reads_only)) => CommandScope {
            grant: GrantScope::commands(keys),
            safety: if reads_only {
                CommandSafety::KnownSafe
            } else {
                CommandSafety::NotKnownSafe
            },
        },
        Err(why) => CommandScope {
            grant: GrantScope::OneCall { why },
            safety: CommandSafety::NotKnownSafe,
        },
    }
}

/// What a command call asks of the gates: its scope, and whether it asks to run unconfined
/// (then it is approved one call at a time, with its justification).
#[must_use]
pub fn command_approval(
    command: &str,
    roots: &[PathBuf],
    sandbox: SandboxRequest,
    justification: Option<&str>,
) -> CommandApproval {
    match sandbox {
        SandboxRequest::Confined => {
            let scope = command_scope(command, roots);
            CommandApproval {
                grant: scope.grant,
                safety: scope.safety,
                sandbox,
                justification: None,
            }
        }
        SandboxRequest::Escalated => CommandApproval {
            grant: GrantScope::OneCall {
                why: "it asks to run outside the sandbox, and such runs are approved one at a \
                      time"
                    .to_owned(),
            },
            safety: CommandSafety::NotKnownSafe,
            sandbox,
            justification: justification.map(str::to_owned),
        },
    }
}

/// The keys of a grantable line and whether it only reads, or why it is not grantable.
fn keys(command: &str, roots: &[PathBuf]) -> Result<(Vec<CommandKey>, bool), String> {
    let commands = simple_commands(command).map_err(|why| why.to_string())?;
    let mut keys = Vec::new();
    let mut reads_only = true;
    for simple in &commands {
        let (key, reads) = command_key(simple, roots)?;
        keys.extend(key);
        reads_only &= reads;
    }
    Ok((keys, reads_only))
}

/// One simple command's key (`None` for a keyless `cd`) and whether it only reads.
fn command_key(
    command: &SimpleCommand,
    roots: &[PathBuf],
) -> Result<(Option<CommandKey>, bool), String> {
    let Some((program, args)) = command.words.split_first() else {
        return Err("it runs no command".to_owned());
    };
    check_program_name(program, roots)?;
    match rule_for(program) {
        Rule::Never(why) => Err(format!("`{program}` {why}")),
        Rule::Keyless => {
            match args {
                [dir] if !dir.starts_with('-') => check_paths(dir, roots)?,
                _ => {
                    return Err(format!(
                        "`{program}` needs exactly one directory inside the workspace (without \
                         one it goes to $HOME)"
                    ));
                }
            }
            Ok((None, true))
        }
        Rule::Grantable(grantable) => {
            let key = grantable_key(program, args, grantable)?;
            for arg in args {
                check_options(program, arg, grantable.forbidden, grantable.why)?;
                check_paths(arg, roots)?;
            }
            Ok((Some(key), grantable.reads_only))
        }
    }
}

/// The key of a grantable program; a subcommand program must name its subcommand first.
fn grantable_key(
    program: &str,
    args: &[String],
    grantable: Grantable,
) -> Result<CommandKey, String> {
    match grantable.key {
        Key::Program => Ok(CommandKey::new(program, None)),
        Key::Subcommand => match args.first() {
            None => Ok(CommandKey::new(program, None)),
            Some(sub) if is_plain_name(sub) => {
                if let Some(banned) = grantable
                    .forbidden
                    .iter()
                    .find(|f| matches!(f, Forbidden::Subcommand(_)) && f.matches(sub))
                {
                    return Err(format!(
                        "`{program} {}` runs another command or package",
                        banned.spelled()
                    ));
                }
                Ok(CommandKey::new(program, Some(sub)))
            }
            Some(first) => Err(format!(
                "`{program}` is keyed by its subcommand, and `{first}` comes first (an option \
                 before the subcommand can change what runs)"
            )),
        },
    }
}

/// A forbidden option of `program` in `arg` breaks the grant.
fn check_options(
    program: &str,
    arg: &str,
    forbidden: &[Forbidden],
    why: &str,
) -> Result<(), String> {
    let hit = forbidden
        .iter()
        .filter(|f| !matches!(f, Forbidden::Subcommand(_)))
        .find(|f| f.matches(arg));
    match hit {
        Some(option) => Err(format!("`{program}` with `{}` {why}", option.spelled())),
        None => Ok(()),
    }
}

/// A program named plainly, or by a relative path inside the workspace.
fn check_program_name(program: &str, roots: &[PathBuf]) -> Result<(), String> {
    let plain = !program.is_empty()
        && program
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-' | '/'))
        && !program.starts_with('-');
    if !plain {
        return Err(format!(
            "its program name `{program}` is not plain (letters, digits, `._+-`)"
        ));
    }
    if program.contains('/') {
        check_paths(program, roots)?;
    }
    Ok(())
}

/// A subcommand that names itself: not an option, not a path, not empty.
fn is_plain_name(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_alphanumeric())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '+' | '-'))
}

/// No part of `arg` may point outside the workspace (see the module docs, rule 4).
fn check_paths(arg: &str, roots: &[PathBuf]) -> Result<(), String> {
    if arg == DEV_NULL {
        return Ok(());
    }
    if arg.to_ascii_lowercase().contains("file:/") {
        return Err(format!(
            "`{arg}` is a `file:` URL, which reads any local file"
        ));
    }
    if has_parent_component(arg) {
        return Err(format!("`..` in `{arg}` can leave the workspace"));
    }
    for candidate in absolute_parts(arg) {
        if candidate != DEV_NULL && !lexically_inside(Path::new(candidate), roots) {
            return Err(format!("`{candidate}` lies outside the workspace"));
        }
    }
    if let Some(root) = roots.first() {
        let path = root.join(arg);
        if !arg.is_empty() && std::fs::symlink_metadata(&path).is_ok() {
            let inside = std::fs::canonicalize(&path).is_ok_and(|real| {
                roots.iter().any(|root| {
                    std::fs::canonicalize(root).is_ok_and(|root| real.starts_with(root))
                })
            });
            if !inside {
                return Err(format!(
                    "`{arg}` leads outside the workspace (through a symbolic link)"
                ));
            }
        }
    }
    Ok(())
}

/// Whether any `/`-, `=`-, `:`-, `,`- or `@`-separated part of `arg` is `..`.
fn has_parent_component(arg: &str) -> bool {
    arg.split(['/', '=', ':', ',', '@'])
        .any(|part| part == "..")
}

/// The absolute paths in `arg`: the word itself, and what follows `=`, `@`, `:` or `,`, or a
/// short option's letter (`-I/usr/include`), when it starts with `/` — except a URL's `//`
/// after its scheme's `:`.
fn absolute_parts(arg: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for (index, c) in arg.char_indices() {
        if c != '/' {
            continue;
        }
        let before = arg[..index].chars().next_back();
        let url = before == Some(':') && arg[index..].starts_with("//");
        let starts = matches!(before, None | Some('=' | '@' | ':' | ','))
            || (index == 2 && arg.starts_with('-') && !arg.starts_with("--"));
        let starts = starts && !url;
        if starts {
            let rest = &arg[index..];
            let end = rest.find([':', ',', '=']).unwrap_or(rest.len());
            parts.push(&rest[..end]);
        }
    }
    parts
}

/// Whether the absolute `path` (no `..`) lies under a root, lexically.
fn lexically_inside(path: &Path, roots: &[PathBuf]) -> bool {
    let normal: PathBuf = path
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    roots.iter().any(|root| normal.starts_with(root))
}

#[cfg(test)]
mod tests;
