//! A repository cannot loosen its own guards (issue 9), the tool side: each row builds a
//! hostile repository in a temporary directory, runs the tool through its API with the real
//! sandbox (git_inspect in read-only mode, unconfined), and asserts that the repository's
//! program did not run (its marker is absent), that nothing anywhere changed, that nothing
//! from outside the workspace was printed, and the result's code. Where ordinary `git` falls
//! for the same repository, the row shows it on a fresh copy: the attack is real, and only
//! git_inspect's care stops it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod hostile_fixture;

use hostile_fixture::{Fixture, Layout, OTHER_COMMIT, SECRET, challenging_server};
use serde_json::{Value, json};
use std::os::unix::fs::symlink;

/// What the ordinary `git` does with the same repository.
enum Control {
    /// `git <args>` in the workspace runs the hostile program.
    Runs(&'static [&'static str]),
    /// `git <args>` on a terminal runs it (pagers start only on one).
    RunsOnTerminal(&'static str),
    /// `git <args>` prints this text from outside the workspace.
    Reveals(fn(&Fixture) -> Vec<String>, &'static str),
    /// Plain git does not fall for it either (the reason is the row's documentation).
    Immune(#[allow(dead_code, reason = "documentation")] &'static str),
}

/// How the call must end.
enum Expect {
    Ok,
    Code(&'static str),
}

struct Row {
    name: &'static str,
    layout: Layout,
    setup: fn(&Fixture),
    args: fn(&Fixture) -> Value,
    expect: Expect,
    control: Control,
}

// ---- setups ------------------------------------------------------------------------------

fn filter_attribute(fx: &Fixture) {
    fx.write(".gitattributes", "*.txt filter=evil\n");
    fx.commit_all("attributes");
    fx.stat_dirty("a.txt");
}

fn filter_clean_required(fx: &Fixture) {
    fx.config("filter.evil.clean", &fx.evil());
    fx.config("filter.evil.required", "true");
    filter_attribute(fx);
}

fn filter_clean(fx: &Fixture) {
    fx.config("filter.evil.clean", &fx.evil());
    filter_attribute(fx);
}

fn filter_clean_changed(fx: &Fixture) {
    filter_clean(fx);
    fx.write("a.txt", "alpha\nnew\n");
}

fn filter_process(fx: &Fixture) {
    fx.config("filter.evil.process", &fx.evil());
    filter_attribute(fx);
}

fn filter_in_info_attributes(fx: &Fixture) {
    fx.config("filter.evil.clean", &fx.evil());
    let info = fx.top.join(".git/info");
    std::fs::create_dir_all(&info).unwrap();
    std::fs::write(info.join("attributes"), "*.txt filter=evil\n").unwrap();
    fx.stat_dirty("a.txt");
}

fn filter_in_included_file(fx: &Fixture) {
    let file = fx.base.join("evil.cfg");
    std::fs::write(
        &file,
        format!("[filter \"evil\"]\n\tclean = {}\n", fx.evil()),
    )
    .unwrap();
    fx.config("include.path", &file.display().to_string());
    filter_attribute(fx);
}

fn fsmonitor_through_include_if(fx: &Fixture) {
    let file = fx.base.join("evil.cfg");
    std::fs::write(&file, format!("[core]\n\tfsmonitor = {}\n", fx.evil())).unwrap();
    fx.config("includeIf.gitdir:/.path", &file.display().to_string());
}

fn filter_named_with_equals(fx: &Fixture) {
    fx.config("filter.x=y.clean", &fx.evil());
    fx.write(".gitattributes", "*.txt filter=x=y\n");
    fx.commit_all("attributes");
    fx.stat_dirty("a.txt");
}

fn changed_with_attribute(fx: &Fixture, attribute: &str, commit: bool) {
    fx.write(".gitattributes", &format!("*.txt {attribute}\n"));
    fx.commit_all("attributes");
    fx.write("a.txt", "alpha\nchanged\n");
    if commit {
        fx.commit_all("change a.txt");
    }
}

fn textconv(fx: &Fixture) {
    fx.config("diff.conv.textconv", &fx.evil());
    changed_with_attribute(fx, "diff=conv", false);
}

fn textconv_committed(fx: &Fixture) {
    fx.config("diff.conv.textconv", &fx.evil());
    changed_with_attribute(fx, "diff=conv", true);
}

fn diff_driver_command(fx: &Fixture) {
    fx.config("diff.ext.command", &fx.evil());
    changed_with_attribute(fx, "diff=ext", false);
}

fn diff_driver_command_committed(fx: &Fixture) {
    fx.config("diff.ext.command", &fx.evil());
    changed_with_attribute(fx, "diff=ext", true);
}

fn diff_external(fx: &Fixture) {
    fx.config("diff.external", &fx.evil());
    fx.write("a.txt", "changed\n");
}

fn diff_external_committed(fx: &Fixture) {
    diff_external(fx);
    fx.commit_all("change");
}

fn fsmonitor(fx: &Fixture) {
    fx.config("core.fsmonitor", &fx.evil());
}

fn post_index_change_hook(fx: &Fixture) {
    fx.script(
        "repo/.git/hooks/post-index-change",
        &format!("exec {}", fx.evil()),
    );
    fx.stat_dirty("a.txt");
}

fn hooks_path_in_the_work_tree(fx: &Fixture) {
    fx.script(
        "repo/githooks/post-index-change",
        &format!("exec {}", fx.evil()),
    );
    fx.config("core.hooksPath", "githooks");
    fx.stat_dirty("a.txt");
}

fn gpg_signature(fx: &Fixture) {
    fx.signed_commit("PGP SIGNATURE");
    fx.config("gpg.program", &fx.evil());
    fx.config("log.showSignature", "true");
}

fn ssh_signature(fx: &Fixture) {
    fx.signed_commit("SSH SIGNATURE");
    fx.config("gpg.ssh.program", &fx.evil());
    let signers = fx.base.join("allowed_signers");
    std::fs::write(&signers, "").unwrap();
    fx.config("gpg.ssh.allowedSignersFile", &signers.display().to_string());
    fx.config("log.showSignature", "true");
}

fn x509_signature(fx: &Fixture) {
    fx.signed_commit("SIGNED MESSAGE");
    fx.config("gpg.x509.program", &fx.evil());
    fx.config("log.showSignature", "true");
}

fn pagers(fx: &Fixture) {
    fx.config("core.pager", &fx.evil());
    fx.config("pager.log", &fx.evil());
}

/// A partial clone whose `a.txt` blob is missing, so reading it would fetch from `url`.
fn partial_clone(fx: &Fixture, url: &str) {
    let blob = fx.git(&fx.top, &["rev-parse", "HEAD:a.txt"]);
    let object = fx
        .top
        .join(format!(".git/objects/{}/{}", &blob[..2], &blob[2..]));
    std::fs::remove_file(object).unwrap();
    fx.config("core.repositoryformatversion", "1");
    fx.config("extensions.partialClone", "origin");
    fx.config("remote.origin.promisor", "true");
    fx.config("remote.origin.url", url);
}

fn lazy_fetch_over_ssh(fx: &Fixture) {
    partial_clone(fx, "ssh://git@example.invalid/x.git");
    fx.config("core.sshCommand", &fx.evil_quiet());
}

fn lazy_fetch_through_ext(fx: &Fixture) {
    partial_clone(fx, &format!("ext::{} %S", fx.evil_quiet()));
    fx.config("protocol.ext.allow", "always");
}

fn lazy_fetch_asking_a_credential_helper(fx: &Fixture) {
    let port = challenging_server(8);
    partial_clone(fx, &format!("http://127.0.0.1:{port}/x.git"));
    fx.config("credential.helper", &fx.evil_quiet());
}

/// A nested repository committed as a gitlink, with its own filter and attributes.
fn nested_repository_with_filter(fx: &Fixture) {
    let nested = fx.ws.join("vendored");
    std::fs::create_dir_all(&nested).unwrap();
    fx.git(&nested, &["init", "-q", "-b", "main"]);
    std::fs::write(nested.join("f.txt"), "x\n").unwrap();
    std::fs::write(nested.join(".gitattributes"), "*.txt filter=evil\n").unwrap();
    fx.git(&nested, &["add", "-A"]);
    fx.git(&nested, &["commit", "-q", "-m", "nested"]);
    fx.git(&nested, &["config", "filter.evil.clean", &fx.evil()]);
    fx.git(&fx.top, &["add", "vendored"]);
    fx.git(&fx.top, &["commit", "-q", "-m", "add nested"]);
    fx.stat_dirty("vendored/f.txt");
}

fn alias_for_a_builtin(fx: &Fixture) {
    fx.config("alias.status", &format!("!{}", fx.evil()));
}

fn gitdir_file_to_another_repository(fx: &Fixture) {
    let other = fx.other_repo();
    std::fs::remove_dir_all(fx.top.join(".git")).unwrap();
    let redirect = format!("gitdir: {}\n", other.join(".git").display());
    std::fs::write(fx.top.join(".git"), redirect).unwrap();
}

fn git_symlink_to_another_repository(fx: &Fixture) {
    let other = fx.other_repo();
    std::fs::remove_dir_all(fx.top.join(".git")).unwrap();
    symlink(other.join(".git"), fx.top.join(".git")).unwrap();
}

fn commondir_to_another_repository(fx: &Fixture) {
    let other = fx.other_repo();
    let git = fx.top.join(".git");
    std::fs::remove_dir_all(&git).unwrap();
    std::fs::create_dir_all(&git).unwrap();
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let common = format!("{}\n", other.join(".git").display());
    std::fs::write(git.join("commondir"), common).unwrap();
}

fn alternates_to_another_repository(fx: &Fixture) {
    let other = fx.other_repo();
    let alternates = format!("{}\n", other.join(".git/objects").display());
    std::fs::write(fx.top.join(".git/objects/info/alternates"), alternates).unwrap();
}

fn pack_symlink_to_another_repository(fx: &Fixture) {
    let other = fx.other_repo();
    fx.git(&other, &["gc", "-q"]);
    let pack = fx.top.join(".git/objects/pack");
    std::fs::remove_dir_all(&pack).unwrap();
    symlink(other.join(".git/objects/pack"), &pack).unwrap();
}

fn worktree_outside(fx: &Fixture) {
    std::fs::write(fx.outside.join("outside-file.txt"), "x").unwrap();
    fx.config("core.worktree", &fx.outside.display().to_string());
}

fn change_outside(fx: &Fixture) {
    std::fs::write(fx.top.join("secret.txt"), "changed\n").unwrap();
}

fn commit_inside_and_outside(fx: &Fixture) {
    change_outside(fx);
    fx.write("a.txt", "changed\n");
    fx.commit_all("both");
}

fn commit_outside_only(fx: &Fixture) {
    change_outside(fx);
    fx.commit_all("outside-only commit");
}

fn move_in_from_outside(fx: &Fixture) {
    std::fs::write(fx.top.join("notes-outside.txt"), "a line written outside\n").unwrap();
    fx.commit_all("outside notes");
    fx.git(&fx.top, &["mv", "notes-outside.txt", "ws/moved.txt"]);
    fx.commit_all("move");
}

fn mailmap_outside(fx: &Fixture) {
    let mailmap = fx.outside.join("mailmap");
    std::fs::write(&mailmap, "Mallory Mapped <ada@example.com>\n").unwrap();
    fx.config("mailmap.file", &mailmap.display().to_string());
}

fn nothing(_: &Fixture) {}

// ---- arguments -----------------------------------------------------------------------------

fn status(_: &Fixture) -> Value {
    json!({"action": "status"})
}
fn diff(_: &Fixture) -> Value {
    json!({"action": "diff"})
}
fn log(_: &Fixture) -> Value {
    json!({"action": "log"})
}
fn show(_: &Fixture) -> Value {
    json!({"action": "show"})
}
fn blame_a(_: &Fixture) -> Value {
    json!({"action": "blame", "path": "a.txt"})
}
fn blame_moved(_: &Fixture) -> Value {
    json!({"action": "blame", "path": "moved.txt"})
}
fn blob(fx: &Fixture, path: &str) -> String {
    fx.git(&fx.top, &["rev-parse", &format!("HEAD:{path}")])
}
fn other_head(fx: &Fixture) -> String {
    fx.git(&fx.outside.join("other"), &["rev-parse", "HEAD"])
}
fn show_other_head(fx: &Fixture) -> Value {
    json!({"action": "show", "rev": other_head(fx)})
}
fn show_rev(rev: &str) -> Value {
    json!({"action": "show", "rev": rev})
}
fn blob_range(fx: &Fixture) -> String {
    format!("{}..{}", blob(fx, "ws/a.txt"), blob(fx, "secret.txt"))
}

fn words(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[rustfmt::skip]
fn rows() -> Vec<Row> {
    use Control::{Immune, Reveals, Runs, RunsOnTerminal};
    use Expect::{Code, Ok};
    use Layout::{Subfolder, Top};
    let row = |name, layout, setup, args, expect, control| Row { name, layout, setup, args, expect, control };
    vec![
        // programs named by the repository's configuration
        row("filter clean driver (required) on status", Top, filter_clean_required, status, Ok, Runs(&["status"])),
        row("filter clean driver on diff", Top, filter_clean, diff, Ok, Runs(&["diff"])),
        row("filter clean driver on blame of a changed file", Top, filter_clean_changed, blame_a, Ok, Runs(&["blame", "a.txt"])),
        row("filter process driver on status", Top, filter_process, status, Ok, Runs(&["status"])),
        row("filter named in .git/info/attributes", Top, filter_in_info_attributes, status, Ok, Runs(&["status"])),
        row("filter defined in an included file the agent could write", Top, filter_in_included_file, diff, Ok, Runs(&["diff"])),
        row("fsmonitor defined through includeIf", Top, fsmonitor_through_include_if, status, Ok, Runs(&["status"])),
        row("filter driver named with `=`, which -c cannot spell", Top, filter_named_with_equals, status, Code("sandbox_command_blocked"), Runs(&["status"])),
        row("textconv driver on diff", Top, textconv, diff, Ok, Runs(&["diff"])),
        row("textconv driver on show", Top, textconv_committed, show, Ok, Runs(&["show"])),
        row("textconv driver on blame", Top, textconv_committed, blame_a, Ok, Runs(&["blame", "a.txt"])),
        row("external diff driver (diff.<driver>.command) on diff", Top, diff_driver_command, diff, Ok, Runs(&["diff"])),
        // git's log family uses external diffs when asked: a user's alias may well ask
        row("external diff driver on show", Top, diff_driver_command_committed, show, Ok, Runs(&["show", "--ext-diff"])),
        row("diff.external on diff", Top, diff_external, diff, Ok, Runs(&["diff"])),
        row("diff.external on show", Top, diff_external_committed, show, Ok, Runs(&["show", "--ext-diff"])),
        row("core.fsmonitor hook on status", Top, fsmonitor, status, Ok, Runs(&["status"])),
        row("core.fsmonitor hook on diff", Top, fsmonitor, diff, Ok, Runs(&["diff"])),
        row("post-index-change hook when diff refreshes the index", Top, post_index_change_hook, diff, Ok, Runs(&["diff"])),
        row("core.hooksPath into the work tree", Top, hooks_path_in_the_work_tree, diff, Ok, Runs(&["diff"])),
        row("gpg.program with log.showSignature on log", Top, gpg_signature, log, Ok, Runs(&["log"])),
        row("gpg.program with log.showSignature on show", Top, gpg_signature, show, Ok, Runs(&["show"])),
        row("gpg.ssh.program on log", Top, ssh_signature, log, Ok, Runs(&["log"])),
        row("gpg.x509.program on show", Top, x509_signature, show, Ok, Runs(&["show"])),
        row("core.pager and pager.log", Top, pagers, log, Ok, RunsOnTerminal("log")),
        row("lazy fetch of a partial clone over ssh (core.sshCommand)", Top, lazy_fetch_over_ssh, show, Code("tool_execution_failed"), Runs(&["show"])),
        row("lazy fetch through an ext:: remote helper", Top, lazy_fetch_through_ext, show, Code("tool_execution_failed"), Runs(&["show"])),
        row("credential helper asked by a lazy fetch over http", Top, lazy_fetch_asking_a_credential_helper, show, Code("tool_execution_failed"), Runs(&["show"])),
        row("a nested repository's own filter on status", Top, nested_repository_with_filter, status, Ok, Runs(&["status"])),
        row("a nested repository's own filter on diff", Top, nested_repository_with_filter, diff, Ok, Runs(&["diff"])),
        row("an alias named like a built-in", Top, alias_for_a_builtin, status, Ok, Immune("git never lets an alias replace a built-in command")),
        // reading outside the workspace
        row("a .git file pointing at another repository", Top, gitdir_file_to_another_repository, log, Code("sandbox_read_blocked"), Reveals(|_| words(&["log"]), OTHER_COMMIT)),
        row("a .git symlink to another repository", Top, git_symlink_to_another_repository, log, Code("sandbox_read_blocked"), Reveals(|_| words(&["log"]), OTHER_COMMIT)),
        row("a commondir pointing at another repository", Top, commondir_to_another_repository, log, Code("sandbox_read_blocked"), Reveals(|_| words(&["log"]), OTHER_COMMIT)),
        row("alternates borrowing another repository's objects", Top, alternates_to_another_repository, show_other_head, Code("sandbox_read_blocked"), Reveals(|fx| vec!["show".into(), other_head(fx)], SECRET)),
        row("a symlink inside .git to another repository's packs", Top, pack_symlink_to_another_repository, show_other_head, Code("sandbox_read_blocked"), Reveals(|fx| vec!["show".into(), other_head(fx)], SECRET)),
        row("core.worktree pointing outside", Top, worktree_outside, status, Ok, Reveals(|_| words(&["status", "--short"]), "outside-file.txt")),
        row("show HEAD:../secret.txt from a subfolder workspace", Subfolder, nothing, |_| show_rev("HEAD:../secret.txt"), Code("sandbox_read_blocked"), Reveals(|_| words(&["show", "HEAD:../secret.txt"]), SECRET)),
        row("show HEAD:src/../../secret.txt from a subfolder workspace", Subfolder, nothing, |_| show_rev("HEAD:src/../../secret.txt"), Code("sandbox_read_blocked"), Reveals(|_| words(&["show", "HEAD:./src/../../secret.txt"]), SECRET)),
        row("show a blob id from outside the subfolder", Subfolder, nothing, |fx| show_rev(&blob(fx, "secret.txt")), Code("invalid_arguments"), Reveals(|fx| vec!["show".into(), blob(fx, "secret.txt")], SECRET)),
        row("show the root tree", Subfolder, nothing, |_| show_rev("HEAD^{tree}"), Code("invalid_arguments"), Reveals(|_| words(&["show", "HEAD^{tree}"]), "secret.txt")),
        row("diff between two blobs", Subfolder, nothing, |fx| json!({"action": "diff", "rev": blob_range(fx)}), Code("invalid_arguments"), Reveals(|fx| vec!["diff".into(), blob_range(fx)], SECRET)),
        row("status of a subfolder workspace", Subfolder, change_outside, status, Ok, Reveals(|_| words(&["status", "--short"]), "secret.txt")),
        row("diff of a subfolder workspace", Subfolder, change_outside, diff, Ok, Reveals(|_| words(&["diff"]), SECRET)),
        row("show of a commit touching the subfolder and outside", Subfolder, commit_inside_and_outside, show, Ok, Reveals(|_| words(&["show"]), SECRET)),
        row("log of a subfolder workspace", Subfolder, commit_outside_only, log, Ok, Reveals(|_| words(&["log"]), "outside-only commit")),
        row("blame of a file moved in from outside the subfolder", Subfolder, move_in_from_outside, blame_moved, Ok, Reveals(|_| words(&["blame", "moved.txt"]), "notes-outside.txt")),
        row("a path argument outside the workspace", Subfolder, nothing, |_| json!({"action": "log", "path": "../secret.txt"}), Code("sandbox_read_blocked"), Reveals(|_| words(&["log", "--", "../secret.txt"]), "initial")),
        row("a mailmap file outside rewriting names", Top, mailmap_outside, show, Ok, Reveals(|_| words(&["show"]), "Mallory Mapped")),
    ]
}

#[tokio::test]
async fn hostile_repositories_run_nothing_read_nothing_outside_and_change_nothing() {
    let rows = rows();
    let mut held = 0;
    let mut shown_real = 0;
    for row in &rows {
        let fx = Fixture::new(row.layout);
        (row.setup)(&fx);
        let args = (row.args)(&fx);
        fx.clear_mark();
        let before = fx.snapshot();
        let result = fx.inspect(args.clone()).await;
        let label = format!("{} ({args})", row.name);
        match row.expect {
            Expect::Ok => assert!(!result.is_error, "{label}: {}", result.output),
            Expect::Code(code) => {
                assert_eq!(
                    result.error_code(),
                    Some(code),
                    "{label}: {}",
                    result.output
                );
            }
        }
        assert!(!fx.marked(), "{label}: the repository's program ran");
        assert!(fx.snapshot() == before, "{label}: files changed");
        let seen = format!("{}\n{}", result.output, result.model_text());
        assert!(
            !seen.contains(SECRET),
            "{label}: printed the secret: {seen}"
        );
        if let Control::Reveals(_, text) = &row.control {
            assert!(!seen.contains(text), "{label}: printed `{text}`: {seen}");
        }
        held += 1;

        // The same repository, fresh, under ordinary git.
        let control = Fixture::new(row.layout);
        (row.setup)(&control);
        control.clear_mark();
        match &row.control {
            Control::Runs(git_args) => {
                let out = control.plain_git(git_args);
                assert!(
                    control.marked(),
                    "{label}: plain `git {git_args:?}` did not fall for it: {out}"
                );
                shown_real += 1;
            }
            Control::RunsOnTerminal(git_args) => {
                if control.plain_git_on_a_terminal(git_args).is_some() {
                    assert!(
                        control.marked(),
                        "{label}: `git {git_args}` on a terminal did not fall for it"
                    );
                    shown_real += 1;
                }
            }
            Control::Reveals(git_args, text) => {
                let git_args = git_args(&control);
                let git_args: Vec<&str> = git_args.iter().map(String::as_str).collect();
                let out = control.plain_git(&git_args);
                assert!(
                    out.contains(text),
                    "{label}: plain `git {git_args:?}` did not print `{text}`: {out}"
                );
                shown_real += 1;
            }
            Control::Immune(_) => {
                control.plain_git(&["status"]);
                assert!(!control.marked(), "{label}");
            }
        }
    }
    assert_eq!(held, rows.len());
    eprintln!(
        "hostile repositories: {held} of {} rows held, {shown_real} shown to fool plain git",
        rows.len()
    );
    assert!(shown_real + 2 >= rows.len(), "most rows are real attacks");
}

#[tokio::test]
async fn a_repository_owned_by_another_user_is_refused() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: only root can give a directory to another user");
        return;
    }
    let fx = Fixture::new(Layout::Subfolder);
    fx.config("core.fsmonitor", &fx.evil());
    let nobody = 65_534;
    rustix::fs::chown(
        fx.top.join(".git"),
        Some(rustix::fs::Uid::from_raw(nobody)),
        Some(rustix::fs::Gid::from_raw(nobody)),
    )
    .unwrap();
    let result = fx.inspect(json!({"action": "status"})).await;
    assert_eq!(
        result.error_code(),
        Some("sandbox_read_blocked"),
        "{}",
        result.output
    );
    assert!(
        result.model_text().contains("belongs to user 65534"),
        "{}",
        result.model_text()
    );
    assert!(!fx.marked());
}
