//! A property of the command grant rules: a line built from plain words is grantable, and one
//! unquoted dangerous token anywhere in it makes it one call only — whatever surrounds it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use kun_builtin_tools::shell::command_scope;
use kun_ports::GrantScope;
use proptest::prelude::*;
use std::path::PathBuf;

/// Simple commands a grantable line may hold.
const COMMANDS: &[&str] = &[
    "cargo test",
    "ls",
    "grep -rn foo",
    "cat",
    "echo",
    "tail -n 5",
    "wc -l",
    "rg x",
    "make test",
];

/// Arguments that keep a line plain.
const ARGS: &[&str] = &[
    "'quoted $(id) text'",
    "\"double quoted\"",
    "src/lib.rs",
    "--verbose",
    "-p",
    "kun",
    "README.md",
    "a\\ b",
    "0x10",
    "'*.rs'",
    "\"~\"",
    "--x=y",
];

/// Redirections that keep a line plain, after a command's arguments.
const REDIRECTS: &[&str] = &["", "", " 2>&1", " 2>/dev/null", " >/dev/null 2>&1", " 2>&-"];

/// Arguments that must each break the grant, wherever they appear.
const DANGEROUS: &[&str] = &[
    "$(id)",
    "`id`",
    "$HOME",
    "${X}",
    "$((1+1))",
    "<(id)",
    ">(id)",
    "> out",
    ">> out",
    "< in",
    "&",
    "*",
    "?",
    "~",
    "{a,b}",
    "$'x'",
    "<<< x",
    "..",
    "/etc/passwd",
    "(id)",
    "\"$(id)\"",
    "\"`id`\"",
    "\"$HOME\"",
    "a=~",
    "x*y",
    "../x",
    "@/etc/x",
    "--f=/etc/x",
    "file:///x",
    "2> err",
    "&> out",
    "<<EOF\nx\nEOF",
];

/// The separators between simple commands.
const JOINERS: &[&str] = &[" && ", " || ", " | ", "; ", "\n"];

/// A line of `commands` (command, arguments, joiner, redirection), with `danger` (command,
/// token) appended to one command's arguments.
fn line(commands: &[(usize, Vec<usize>, usize, usize)], danger: Option<(usize, usize)>) -> String {
    let mut text = String::new();
    for (i, (command, args, joiner, redirect)) in commands.iter().enumerate() {
        if i > 0 {
            text.push_str(JOINERS[joiner % JOINERS.len()]);
        }
        text.push_str(COMMANDS[command % COMMANDS.len()]);
        for arg in args {
            text.push(' ');
            text.push_str(ARGS[arg % ARGS.len()]);
        }
        if let Some((at, token)) = danger
            && at % commands.len() == i
        {
            text.push(' ');
            text.push_str(DANGEROUS[token % DANGEROUS.len()]);
        }
        text.push_str(REDIRECTS[redirect % REDIRECTS.len()]);
    }
    text
}

fn commands() -> impl Strategy<Value = Vec<(usize, Vec<usize>, usize, usize)>> {
    prop::collection::vec(
        (
            0..64usize,
            prop::collection::vec(0..64usize, 0..4),
            0..64usize,
            0..64usize,
        ),
        1..5,
    )
}

fn roots() -> Vec<PathBuf> {
    vec![PathBuf::from("/nonexistent-kun-workspace")]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn plain_lines_are_grantable(commands in commands()) {
        let text = line(&commands, None);
        let scope = command_scope(&text, &roots());
        prop_assert!(matches!(scope.grant, GrantScope::Commands { .. }), "{text:?}: {:?}", scope.grant);
    }

    #[test]
    fn one_dangerous_argument_makes_it_one_call(
        commands in commands(),
        at in 0..64usize,
        token in 0..64usize,
    ) {
        let text = line(&commands, Some((at, token)));
        let scope = command_scope(&text, &roots());
        prop_assert!(matches!(scope.grant, GrantScope::OneCall { .. }), "{text:?}: {:?}", scope.grant);
    }

    #[test]
    fn arbitrary_input_never_panics(text in "\\PC{0,200}") {
        let _ = command_scope(&text, &roots());
    }
}
