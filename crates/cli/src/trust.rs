//! `kun-tools trust DIR`: trust a workspace from now on.
//!
//! Adds DIR's canonical path (symlinks resolved) to `[trust] workspaces` in the user config
//! (`$XDG_CONFIG_HOME/kun/config.toml`, else `~/.config/kun/config.toml`), creating the file
//! when missing and keeping everything else in it as written (comments included; the edit
//! goes through `toml_edit`, and the file is replaced atomically). Then it prints what the
//! workspace's configuration changes now that it is trusted: every setting an untrusted
//! workspace could not apply, every hook that will run and every MCP server that will start.
//! No prompt: running the command is the decision. Exit 0 when trusted (or already), 2 when
//! DIR is not a directory or the user config cannot be edited.

use crate::Outcome;
use crate::cli::TrustArgs;
use kun_composition::config::trust::{WorkspaceTrust, canonical};
use kun_composition::config::{ConfigPaths, Ignored, Overrides, Rule, Settings};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Runs `trust`.
pub fn run(args: &TrustArgs) -> Outcome {
    match trust(&args.dir) {
        Ok(report) => {
            print!("{report}");
            Outcome::Done
        }
        Err(err) => {
            eprintln!("kun-tools: {err}");
            Outcome::Usage
        }
    }
}

fn trust(dir: &Path) -> Result<String, String> {
    if !dir.is_dir() {
        return Err(format!("trust {}: not a directory", dir.display()));
    }
    let workspace = canonical(dir);
    let paths = ConfigPaths::standard(&workspace, None);
    let Some(user) = paths.user.clone() else {
        return Err(
            "no user config directory: set XDG_CONFIG_HOME or HOME, then run this again".to_owned(),
        );
    };
    let before = Settings::load(&paths, &Overrides::default());
    if let Ok(settings) = &before
        && let WorkspaceTrust::Configured { entry, file } = &settings.trust.workspace
    {
        return Ok(format!(
            "{} is already trusted (by `{}` in [trust] workspaces of {}); nothing changed\n",
            workspace.display(),
            entry.display(),
            file.display()
        ));
    }
    add_workspace(&user, &workspace)?;
    let mut out = format!(
        "trusted {} (added to [trust] workspaces in {})\n",
        workspace.display(),
        user.display()
    );
    match before {
        Ok(settings) => out.push_str(&changes(&settings.ignored)),
        Err(err) => out.push_str(&format!(
            "its configuration does not load yet; fix it before using the workspace: {err}\n"
        )),
    }
    Ok(out)
}

/// What trusting changes: the ignored settings that now apply, and those that stay ignored.
fn changes(ignored: &[Ignored]) -> String {
    let (user_only, now): (Vec<&Ignored>, Vec<&Ignored>) =
        ignored.iter().partition(|i| i.rule == Rule::UserOnly);
    let mut out = String::new();
    if now.is_empty() {
        out.push_str(
            "its configuration changes nothing: it had no setting an untrusted workspace could not apply\n",
        );
    } else {
        out.push_str("from now on, its configuration applies:\n");
        for entry in now {
            let what = match entry.rule {
                Rule::HooksDropped => "  (this hook will run)",
                Rule::ServersRefused => "  (this MCP server will start)",
                _ => "",
            };
            out.push_str(&format!(
                "  {} = {}  ({}){what}\n",
                entry.key,
                entry.given,
                entry.file.display()
            ));
        }
    }
    if !user_only.is_empty() {
        out.push_str("still ignored (read from your user config only):\n");
        for entry in user_only {
            out.push_str(&format!(
                "  {} = {}  ({})\n",
                entry.key,
                entry.given,
                entry.file.display()
            ));
        }
    }
    out
}

/// Adds `workspace` to `[trust] workspaces` of `file`, keeping the rest as written.
fn add_workspace(file: &Path, workspace: &Path) -> Result<(), String> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(format!("{}: cannot read: {err}", file.display())),
    };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|err| {
        format!(
            "{} is not valid TOML, so it was left untouched; fix it first: {err}",
            file.display()
        )
    })?;
    let not_a_table = || {
        format!(
            "{}: `trust` is not a table; make it `[trust]` and run this again",
            file.display()
        )
    };
    let trust = doc
        .entry("trust")
        .or_insert(toml_edit::table())
        .as_table_like_mut()
        .ok_or_else(not_a_table)?;
    if trust.get("workspaces").is_none() {
        trust.insert("workspaces", toml_edit::value(toml_edit::Array::new()));
    }
    let list = trust
        .get_mut("workspaces")
        .and_then(toml_edit::Item::as_array_mut)
        .ok_or_else(|| {
            format!(
                "{}: `trust.workspaces` is not a list; make it `workspaces = [...]` and run this again",
                file.display()
            )
        })?;
    let entry = workspace.to_string_lossy().into_owned();
    if !list.iter().any(|v| v.as_str() == Some(entry.as_str())) {
        list.push(entry);
    }
    write_atomically(file, &doc.to_string())
}

/// Writes `text` to a temporary file beside `file` (same permissions), then renames it over.
fn write_atomically(file: &Path, text: &str) -> Result<(), String> {
    let fail = |err: std::io::Error| format!("{}: cannot write: {err}", file.display());
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let mut temp = PathBuf::from(file);
    temp.set_extension("toml.kun-trust-tmp");
    let _ = std::fs::remove_file(&temp);
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(file) {
        out.set_permissions(meta.permissions()).map_err(fail)?;
    }
    out.write_all(text.as_bytes())
        .and_then(|()| out.sync_all())
        .map_err(fail)?;
    std::fs::rename(&temp, file).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edit_keeps_comments_and_other_tables() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kun/config.toml");
        add_workspace(&file, Path::new("/w/one")).unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "[trust]\nworkspaces = [\"/w/one\"]\n"
        );
        std::fs::write(
            &file,
            "# mine\nsandbox = \"read-only\" # keep\n\n[trust]\nworkspaces = [\"/w/one\"] # old\n",
        )
        .unwrap();
        add_workspace(&file, Path::new("/w/two")).unwrap();
        add_workspace(&file, Path::new("/w/two")).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            text,
            "# mine\nsandbox = \"read-only\" # keep\n\n[trust]\nworkspaces = [\"/w/one\", \"/w/two\"] # old\n"
        );
        std::fs::write(&file, "trust = 3\n").unwrap();
        let err = add_workspace(&file, Path::new("/w")).unwrap_err();
        assert!(err.contains("not a table"), "{err}");
        std::fs::write(&file, "[trust\n").unwrap();
        let err = add_workspace(&file, Path::new("/w")).unwrap_err();
        assert!(err.contains("left untouched"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "[trust\n");
    }
}
