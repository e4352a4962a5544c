//! The maintained table of programs: which ones a session grant may cover, under which key,
//! and which of their options break the grant (they run code, write files or run another
//! program). Data, not code paths: add a row to teach the grant rules a program.
//!
//! A program is looked up by the last component of its name, lower-cased, and a versioned
//! name matches its row (`python3.12` and `python3` match `python`; `gcc-12` matches `gcc`).
//! A program that is in no row is grantable under its own name, with no forbidden option.
//!
//! | rule | programs (see [`TABLE`] for every row) |
//! |---|---|
//! | never: a shell | `sh bash zsh dash ksh fish busybox …` |
//! | never: runs code from an option or a file | `python node perl ruby php lua java osascript …`, `awk` (`system()`), `sed` (`e`, `w`, `-i`) |
//! | never: runs another command | `env sudo doas nohup timeout nice xargs watch strace gdb parallel script …` |
//! | never: runs packages it may download | `npx pnpx bunx uvx pipx nix` |
//! | never: runs anything as root | `docker podman nerdctl` |
//! | never: repository config runs programs | `git` (hooks, pager, `core.fsmonitor`, diff drivers; the newest codex asks for every git command) |
//! | never: evaluates array subscripts | `read mapfile readarray declare typeset local export readonly let unset test [ wait getopts` (`printf` only with `-v`) |
//! | never: changes the shell for later commands | `eval exec trap source . command builtin enable alias hash set shopt umask ulimit pushd popd …` |
//! | keyless | `cd` into the workspace: needs no key of its own |
//! | keyed by subcommand | `cargo npm pnpm yarn bun deno go make just gradle mvn dotnet kubectl helm terraform pip uv poetry rustup gh …` |
//! | forbidden options | `find -exec/-execdir/-ok/-okdir/-delete/-fprint*/-fls`, `rg --pre/-z`, `curl -o/-O/-K/-D/-c …`, `wget -O/-o/-e/…`, `tar --to-command/--checkpoint-action/-I …`, `zip -T/-TT`, `ssh/scp -o/-F`, `rsync -e`, `make --eval/-E/-f/-C/-I` and `VAR=value`, `cargo --config/-Z`, `npm --script-shell/--node-options/-c …`, `gcc -wrapper/-B/-fplugin`, `rustc -C/-Z`, `sort -o/--compress-program`, `go -toolexec/-exec/-ldflags`, `printf -v` |

/// How the grant rules treat one program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// No session grant ever covers it; the reason completes "`prog` …".
    Never(&'static str),
    /// Needs no key of its own (`cd` into the workspace), with at most one argument.
    Keyless,
    /// Covered by a grant of its key, unless an argument matches a forbidden option.
    Grantable(Grantable),
}

/// A grantable program's key and forbidden options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grantable {
    /// Whether its first argument is a subcommand that belongs in the key (`cargo test`).
    pub(crate) key: Key,
    /// Arguments that break the grant.
    pub(crate) forbidden: &'static [Forbidden],
    /// What a forbidden option does; completes "`prog` with `-x` …".
    pub(crate) why: &'static str,
    /// Whether it only reads (the `untrusted` policy runs it confined without asking).
    pub(crate) reads_only: bool,
}

/// What a grant of a program is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    /// The program alone (`ls`).
    Program,
    /// The program and its first argument, which must be a plain name (`cargo test`).
    Subcommand,
}

/// An argument that breaks a grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Forbidden {
    /// `--name`, `--name=…`, and every abbreviation (`--na`), as GNU and git parsers accept.
    Long(&'static str),
    /// `-x`, alone, inside a cluster (`-sx`) or with a value attached (`-xVALUE`).
    Short(char),
    /// This exact word, or it followed by `=…` (single-dash long options: `-exec`).
    Word(&'static str),
    /// Any word starting with this (`-B/tmp/x`, `-fplugin=x.so`).
    Prefix(&'static str),
    /// This subcommand (the first argument) of a subcommand program.
    Subcommand(&'static str),
    /// A `NAME=value` word that is not an option (make's variable overrides set `SHELL`).
    Assignment,
}

impl Forbidden {
    /// Whether `arg` is this forbidden option (for `Subcommand`: whether it is that name).
    pub(crate) fn matches(self, arg: &str) -> bool {
        match self {
            Self::Long(name) => arg.strip_prefix("--").is_some_and(|given| {
                let given = given.split_once('=').map_or(given, |(n, _)| n);
                !given.is_empty() && name.trim_start_matches('-').starts_with(given)
            }),
            Self::Short(c) => {
                arg.len() >= 2
                    && arg.starts_with('-')
                    && !arg.starts_with("--")
                    && arg[1..].contains(c)
            }
            Self::Word(word) => {
                arg == word
                    || arg
                        .strip_prefix(word)
                        .is_some_and(|rest| rest.starts_with('='))
            }
            Self::Prefix(prefix) => arg.starts_with(prefix),
            Self::Subcommand(name) => arg == name,
            Self::Assignment => !arg.starts_with('-') && arg.contains('='),
        }
    }

    /// How the option is written, for the reason shown.
    pub(crate) fn spelled(self) -> String {
        match self {
            Self::Long(name) | Self::Word(name) | Self::Subcommand(name) => name.to_owned(),
            Self::Short(c) => format!("-{c}"),
            Self::Prefix(prefix) => format!("{prefix}…"),
            Self::Assignment => "NAME=value".to_owned(),
        }
    }
}

/// One row: the names it applies to and the rule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    /// Program names (lower case, no path).
    pub(crate) names: &'static [&'static str],
    /// Their rule.
    pub(crate) rule: Rule,
}

const fn never(names: &'static [&'static str], why: &'static str) -> Row {
    Row {
        names,
        rule: Rule::Never(why),
    }
}

const fn program(
    names: &'static [&'static str],
    forbidden: &'static [Forbidden],
    reads_only: bool,
) -> Row {
    Row {
        names,
        rule: Rule::Grantable(Grantable {
            key: Key::Program,
            forbidden,
            why: OPTION_RUNS_OR_WRITES,
            reads_only,
        }),
    }
}

const fn subcommands(names: &'static [&'static str], forbidden: &'static [Forbidden]) -> Row {
    Row {
        names,
        rule: Rule::Grantable(Grantable {
            key: Key::Subcommand,
            forbidden,
            why: OPTION_RUNS_OR_WRITES,
            reads_only: false,
        }),
    }
}

/// The reason of most forbidden options.
const OPTION_RUNS_OR_WRITES: &str = "runs another program, loads code or writes files";

/// A grantable program whose forbidden options do something else.
const fn program_because(
    names: &'static [&'static str],
    forbidden: &'static [Forbidden],
    why: &'static str,
    reads_only: bool,
) -> Row {
    Row {
        names,
        rule: Rule::Grantable(Grantable {
            key: Key::Program,
            forbidden,
            why,
            reads_only,
        }),
    }
}

use Forbidden::{Assignment, Long, Prefix, Short, Subcommand, Word};

const SUBSCRIPTS: &str = "evaluates array subscripts in its arguments (`printf -v 'a[$(cmd)]' x` \
                          runs cmd), though the line looks like plain words";
const SHELL_STATE: &str = "changes how the rest of the line runs (a shell builtin)";
const RUNS_COMMANDS: &str = "runs another command given as its arguments";
const RUNS_CODE: &str = "runs code from its arguments or from a file that can change between \
                         calls";

/// Options that make npm-style package managers run other programs or load other config.
const NPM_LIKE: &[Forbidden] = &[
    Long("--script-shell"),
    Long("--node-options"),
    Long("--userconfig"),
    Long("--globalconfig"),
    Long("--prefix"),
    Long("--shell"),
    Long("--call"),
    Short('c'),
    Subcommand("exec"),
    Subcommand("x"),
    Subcommand("dlx"),
    Subcommand("explore"),
    Subcommand("edit"),
    Subcommand("config"),
    Subcommand("node"),
];

/// Compiler options that run another program or load code into the compiler.
const COMPILER: &[Forbidden] = &[
    Word("-wrapper"),
    Prefix("-B"),
    Prefix("-fplugin"),
    Prefix("-specs"),
    Prefix("--specs"),
    Prefix("-Wl,-plugin"),
    Prefix("-fuse-ld="),
];

/// Every row. A name must appear in one row only (a test checks).
pub(crate) const TABLE: &[Row] = &[
    never(
        &[
            "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "tcsh", "csh", "ash", "busybox",
            "toybox", "rbash",
        ],
        "is a shell: it runs any command it is given",
    ),
    never(
        &[
            "python",
            "pypy",
            "node",
            "nodejs",
            "nodemon",
            "ts-node",
            "tsx",
            "perl",
            "ruby",
            "irb",
            "php",
            "lua",
            "luajit",
            "tclsh",
            "wish",
            "r",
            "rscript",
            "julia",
            "java",
            "jshell",
            "groovy",
            "scala",
            "kotlin",
            "swift",
            "osascript",
            "pwsh",
            "powershell",
            "erl",
            "elixir",
            "iex",
            "ghci",
            "runghc",
            "guile",
            "racket",
            "sbcl",
            "expect",
        ],
        RUNS_CODE,
    ),
    never(
        &["awk", "gawk", "mawk", "nawk"],
        "runs commands from its program (`system()`, pipes) and writes files (`>`)",
    ),
    never(
        &["sed"],
        "runs commands (`e`, `s///e`) and writes files (`w`, `-i`) from its script",
    ),
    never(
        &[
            "vi", "vim", "nvim", "view", "emacs", "ed", "ex", "nano", "less", "more", "most", "man",
        ],
        "runs commands through its own escapes (`!cmd`, pagers, preprocessors)",
    ),
    never(
        &[
            "env",
            "sudo",
            "doas",
            "su",
            "runuser",
            "pkexec",
            "nohup",
            "timeout",
            "nice",
            "ionice",
            "time",
            "watch",
            "strace",
            "ltrace",
            "gdb",
            "lldb",
            "valgrind",
            "setsid",
            "stdbuf",
            "flock",
            "chroot",
            "unshare",
            "nsenter",
            "xargs",
            "parallel",
            "script",
            "systemd-run",
            "at",
            "batch",
            "crontab",
            "tmux",
            "screen",
            "direnv",
            "chrt",
            "taskset",
            "prlimit",
            "firejail",
            "bwrap",
            "xdg-open",
            "open",
        ],
        RUNS_COMMANDS,
    ),
    never(
        &["npx", "pnpx", "bunx", "uvx", "pipx", "nix", "nix-shell"],
        "runs packages it may download",
    ),
    never(
        &["docker", "podman", "nerdctl"],
        "can run anything as root on this machine",
    ),
    never(
        &["git"],
        "may run programs named by the repository's configuration (hooks, pager, \
         core.fsmonitor, diff drivers), so every git command is approved on its own",
    ),
    never(
        &[
            "read",
            "mapfile",
            "readarray",
            "declare",
            "typeset",
            "local",
            "export",
            "readonly",
            "let",
            "unset",
            "test",
            "[",
            "wait",
            "getopts",
        ],
        SUBSCRIPTS,
    ),
    never(
        &[
            "eval", "exec", "trap", "source", ".", "command", "builtin", "enable", "alias",
            "unalias", "hash", "set", "shopt", "umask", "ulimit", "pushd", "popd", "dirs", "jobs",
            "fg", "bg", "disown", "coproc", "fc", "history", "bind", "complete", "compgen",
            "compopt", "caller", "logout", "suspend", "exit", "return", "break", "continue",
            "shift", "times", "help",
        ],
        SHELL_STATE,
    ),
    Row {
        names: &["cd"],
        rule: Rule::Keyless,
    },
    program_because(&["printf"], &[Short('v')], SUBSCRIPTS, true),
    program(
        &[
            "cat",
            "echo",
            "pwd",
            "true",
            "false",
            "ls",
            "head",
            "tail",
            "wc",
            "cut",
            "paste",
            "nl",
            "rev",
            "tac",
            "seq",
            "stat",
            "file",
            "tr",
            "uniq",
            "uname",
            "id",
            "whoami",
            "which",
            "numfmt",
            "basename",
            "dirname",
            "realpath",
            "readlink",
            "du",
            "tree",
            "diff",
            "cmp",
            "grep",
            "egrep",
            "fgrep",
            "sha256sum",
            "sha1sum",
            "md5sum",
            "b2sum",
            "type",
        ],
        &[],
        true,
    ),
    program(
        &["find"],
        &[
            Word("-exec"),
            Word("-execdir"),
            Word("-ok"),
            Word("-okdir"),
            Word("-delete"),
            Word("-fprint"),
            Word("-fprint0"),
            Word("-fprintf"),
            Word("-fls"),
        ],
        true,
    ),
    program(
        &["rg"],
        &[
            Long("--pre"),
            Long("--hostname-bin"),
            Short('z'),
            Long("--search-zip"),
        ],
        true,
    ),
    program(
        &["sort"],
        &[Short('o'), Long("--output"), Long("--compress-program")],
        true,
    ),
    program(
        &["curl"],
        &[
            Short('o'),
            Long("--output"),
            Long("--output-dir"),
            Short('O'),
            Long("--remote-name"),
            Long("--remote-name-all"),
            Short('K'),
            Long("--config"),
            Short('D'),
            Long("--dump-header"),
            Short('c'),
            Long("--cookie-jar"),
            Long("--trace"),
            Long("--trace-ascii"),
            Long("--libcurl"),
            Long("--etag-save"),
            Long("--hsts"),
            Long("--alt-svc"),
            Long("--stderr"),
        ],
        false,
    ),
    program(
        &["wget"],
        &[
            Short('O'),
            Long("--output-document"),
            Short('o'),
            Long("--output-file"),
            Short('a'),
            Long("--append-output"),
            Short('P'),
            Long("--directory-prefix"),
            Short('e'),
            Long("--execute"),
            Long("--config"),
            Long("--use-askpass"),
            Short('i'),
            Long("--input-file"),
            Long("--post-file"),
            Long("--body-file"),
        ],
        false,
    ),
    program(
        &["tar", "gtar", "bsdtar"],
        &[
            Long("--to-command"),
            Long("--checkpoint-action"),
            Long("--use-compress-program"),
            Short('I'),
            Long("--rsh-command"),
            Long("--info-script"),
            Long("--new-volume-script"),
            Short('F'),
        ],
        false,
    ),
    program(
        &["zip"],
        &[Word("-TT"), Long("--unzip-command"), Short('T')],
        false,
    ),
    program(&["ssh"], &[Short('o'), Short('F')], false),
    program(
        &["scp", "sftp"],
        &[Short('o'), Short('F'), Short('S')],
        false,
    ),
    program(
        &["rsync"],
        &[
            Short('e'),
            Long("--rsh"),
            Long("--rsync-path"),
            Long("--remote-option"),
        ],
        false,
    ),
    program(
        &["gcc", "g++", "cc", "c++", "clang", "clang++"],
        COMPILER,
        false,
    ),
    program(
        &["rustc"],
        &[Prefix("-C"), Long("--codegen"), Prefix("-Z")],
        false,
    ),
    subcommands(&["cargo"], &[Long("--config"), Prefix("-Z")]),
    subcommands(&["npm", "pnpm", "yarn"], NPM_LIKE),
    subcommands(
        &["bun"],
        &[
            Short('e'),
            Short('p'),
            Long("--eval"),
            Long("--print"),
            Subcommand("x"),
            Subcommand("exec"),
            Subcommand("repl"),
        ],
    ),
    subcommands(
        &["deno"],
        &[Long("--eval"), Subcommand("eval"), Subcommand("repl")],
    ),
    subcommands(
        &["go"],
        &[
            Word("-toolexec"),
            Word("--toolexec"),
            Word("-exec"),
            Word("--exec"),
            Word("-ldflags"),
            Word("--ldflags"),
        ],
    ),
    subcommands(
        &["make", "gmake"],
        &[
            Long("--eval"),
            Short('E'),
            Short('f'),
            Long("--file"),
            Long("--makefile"),
            Short('C'),
            Long("--directory"),
            Short('I'),
            Long("--include-dir"),
            Assignment,
        ],
    ),
    subcommands(
        &["just"],
        &[
            Long("--shell"),
            Long("--justfile"),
            Short('f'),
            Long("--set"),
            Long("--working-directory"),
            Short('d'),
            Long("--command"),
            Short('c'),
        ],
    ),
    subcommands(&["rustup"], &[Subcommand("run")]),
    subcommands(&["uv"], &[Subcommand("run"), Subcommand("tool")]),
    subcommands(
        &["poetry", "pipenv", "pdm", "hatch", "conda"],
        &[Subcommand("run"), Subcommand("shell")],
    ),
    subcommands(&["bundle"], &[Subcommand("exec")]),
    subcommands(&["mise", "asdf"], &[Subcommand("exec"), Subcommand("x")]),
    subcommands(
        &["gh"],
        &[
            Subcommand("alias"),
            Subcommand("extension"),
            Subcommand("ext"),
        ],
    ),
    subcommands(
        &[
            "gradle",
            "gradlew",
            "mvn",
            "mvnw",
            "dotnet",
            "kubectl",
            "helm",
            "terraform",
            "pip",
            "pip3",
            "systemctl",
            "brew",
            "rake",
            "composer",
            "mix",
            "tox",
        ],
        &[],
    ),
];

/// The rule for a program as named on a command line (see the module docs).
pub(crate) fn rule_for(program: &str) -> Rule {
    let base = program
        .rsplit('/')
        .next()
        .unwrap_or(program)
        .to_ascii_lowercase();
    TABLE
        .iter()
        .find(|row| row.names.iter().any(|name| names_match(name, &base)))
        .map_or(
            Rule::Grantable(Grantable {
                key: Key::Program,
                forbidden: &[],
                why: OPTION_RUNS_OR_WRITES,
                reads_only: false,
            }),
            |row| row.rule,
        )
}

/// `name` itself, or `name` followed by a version (`python3`, `python3.12`, `gcc-12`).
fn names_match(name: &str, base: &str) -> bool {
    base.strip_prefix(name).is_some_and(|rest| {
        let version = rest.strip_prefix(['-', '.']).unwrap_or(rest);
        rest.is_empty()
            || (version.starts_with(|c: char| c.is_ascii_digit())
                && version.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_in_one_row_and_lower_case() {
        let mut seen = std::collections::BTreeSet::new();
        for row in TABLE {
            assert!(!row.names.is_empty());
            for name in row.names {
                assert_eq!(*name, name.to_ascii_lowercase(), "{name}");
                assert!(seen.insert(*name), "{name} is in two rows");
            }
        }
        assert!(seen.len() > 200, "{} names", seen.len());
    }

    #[test]
    fn versioned_and_pathed_names_find_their_row() {
        let table = [
            ("python3", true),
            ("python3.12", true),
            ("/usr/bin/python2.7", true),
            ("Python3", true),
            ("node18", true),
            ("gcc-12", false),
            ("perl5.36", true),
            ("perltidy", false),
            ("rubocop", false),
            ("nodemon", true),
            ("./bash", true),
            ("bash-completion", false),
        ];
        for (program, never) in table {
            assert_eq!(
                matches!(rule_for(program), Rule::Never(_)),
                never,
                "{program}: {:?}",
                rule_for(program)
            );
        }
        assert!(matches!(rule_for("gcc-12"), Rule::Grantable(g) if g.forbidden == COMPILER));
        assert_eq!(
            rule_for("unknown-tool"),
            Rule::Grantable(Grantable {
                key: Key::Program,
                forbidden: &[],
                why: OPTION_RUNS_OR_WRITES,
                reads_only: false
            })
        );
    }

    #[test]
    fn forbidden_options_match_every_spelling() {
        let table: &[(Forbidden, &str, bool)] = &[
            (Long("--output"), "--output", true),
            (Long("--output"), "--output=/x", true),
            (Long("--output"), "--outp", true),
            (Long("--output"), "--o=/x", true),
            (Long("--output"), "--", false),
            (Long("--output"), "--outputs", false),
            (Long("--output"), "-o", false),
            (Long("--pre"), "--pretty", false),
            (Long("--pre"), "--pre-glob=*.gz", false),
            (Short('o'), "-o", true),
            (Short('o'), "-sSLo", true),
            (Short('o'), "-ofile", true),
            (Short('o'), "--output", false),
            (Short('o'), "-", false),
            (Short('o'), "file.o", false),
            (Word("-exec"), "-exec", true),
            (Word("-exec"), "-exec=x", true),
            (Word("-exec"), "-execdir", false),
            (Prefix("-B"), "-B/tmp/x", true),
            (Subcommand("run"), "run", true),
            (Subcommand("run"), "runner", false),
            (Assignment, "SHELL=/tmp/x", true),
            (Assignment, "--jobs=4", false),
            (Assignment, "test", false),
        ];
        for (forbidden, arg, expected) in table {
            assert_eq!(
                forbidden.matches(arg),
                *expected,
                "{forbidden:?} vs {arg:?}"
            );
        }
    }
}
