//! The config loader: any TOML text as the workspace config (`.kun/config.toml`) or the
//! user config loads or fails with a `ConfigError`, never a panic. Composition settings
//! are built from files, so the text goes through real files in a temporary workspace.
#![no_main]

use kun_composition::{ConfigPaths, Overrides, Settings};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

struct Fixture {
    _dir: tempfile::TempDir,
    workspace: std::path::PathBuf,
    user: std::path::PathBuf,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary directory");
        let workspace = dir.path().join("ws");
        std::fs::create_dir_all(workspace.join(".kun")).expect("workspace");
        let user = dir.path().join("user-config.toml");
        Fixture {
            _dir: dir,
            workspace,
            user,
        }
    })
}

fuzz_target!(|input: (bool, &str)| {
    let (as_user, text) = input;
    let fixture = fixture();
    let workspace_file = fixture.workspace.join(".kun/config.toml");
    let (target, other) = if as_user {
        (&fixture.user, &workspace_file)
    } else {
        (&workspace_file, &fixture.user)
    };
    let _ = std::fs::remove_file(other);
    std::fs::write(target, text).expect("write the config");
    let paths = ConfigPaths {
        workspace: fixture.workspace.clone(),
        user: Some(fixture.user.clone()),
        explicit: None,
    };
    let _ = Settings::load(&paths, &Overrides::default());
});
