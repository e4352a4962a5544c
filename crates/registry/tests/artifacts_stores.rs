//! Both artifact stores: the contract, ids, traversal refusal and the directory layout.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use kun_ports::ArtifactStore;
use kun_ports::testkit::{FOREIGN_IDS, artifact_store_contract};
use kun_registry::artifacts::{DirArtifactStore, InMemoryArtifactStore, artifact_id};
use std::fs;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn in_memory_store_honours_the_contract() {
    artifact_store_contract(|| Box::new(InMemoryArtifactStore::new()) as Box<dyn ArtifactStore>);
}

#[test]
fn dir_store_honours_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let counter = AtomicUsize::new(0);
    artifact_store_contract(|| {
        let n = counter.fetch_add(1, Ordering::Relaxed);
        Box::new(DirArtifactStore::open(dir.path().join(format!("store{n}"))).unwrap())
            as Box<dyn ArtifactStore>
    });
}

#[test]
fn ids_are_content_hash_and_sanitised_hint() {
    let cases = [
        ("output.txt", "output.txt"),
        ("../../etc/passwd", "etc_passwd"),
        ("...hidden", "hidden"),
        ("with space/and:colon", "with_space_and_colon"),
        ("", "artifact"),
        ("/", "artifact"),
        ("é", "artifact"),
    ];
    for (hint, name) in cases {
        let id = artifact_id(hint, b"data");
        let (hash, rest) = id.split_once('-').unwrap();
        assert_eq!(hash, &blake3::hash(b"data").to_hex()[..32], "{hint:?}");
        assert_eq!(rest, name, "{hint:?}");
    }
    assert_eq!(artifact_id(&"x".repeat(500), b"").len(), 32 + 1 + 64);
    assert_eq!(artifact_id("a", b"1"), artifact_id("a", b"1"));
}

#[test]
fn dir_store_writes_only_inside_its_directory() {
    let root = tempfile::tempdir().unwrap();
    let store_dir = root.path().join("nested").join("artifacts");
    let store = DirArtifactStore::open(&store_dir).unwrap();
    assert_eq!(store.dir(), store_dir);
    let stored = store.put("../../escape.txt", b"payload").unwrap();
    let path = stored.path.clone().unwrap();
    assert_eq!(path.parent().unwrap(), store_dir);
    assert_eq!(fs::read(&path).unwrap(), b"payload");
    let entries: Vec<_> = fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["nested"], "nothing written next to the store");
    let inside: Vec<_> = fs::read_dir(&store_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(inside, [stored.id.as_str()], "no temporary files left");
}

#[test]
fn dir_store_refuses_foreign_ids_even_when_such_files_exist() {
    let root = tempfile::tempdir().unwrap();
    let store_dir = root.path().join("artifacts");
    let store = DirArtifactStore::open(&store_dir).unwrap();
    fs::write(root.path().join("x"), b"secret").unwrap();
    fs::write(store_dir.join("planted"), b"planted").unwrap();
    for id in FOREIGN_IDS
        .iter()
        .chain(&["planted", "../artifacts/planted"])
    {
        let err = store.get(id).unwrap_err();
        assert!(!err.message.is_empty(), "{id:?}");
    }
}

#[test]
fn dir_store_survives_reopening_and_detects_tampering() {
    let root = tempfile::tempdir().unwrap();
    let stored = DirArtifactStore::open(root.path())
        .unwrap()
        .put("log", b"line 1\n")
        .unwrap();
    let store = DirArtifactStore::open(root.path()).unwrap();
    assert_eq!(store.get(&stored.id).unwrap(), b"line 1\n");
    fs::write(stored.path.as_ref().unwrap(), b"changed").unwrap();
    let err = store.get(&stored.id).unwrap_err();
    assert!(
        err.message.contains("changed after it was stored"),
        "{}",
        err.message
    );
    store.put("log", b"line 1\n").unwrap();
    assert_eq!(
        store.get(&stored.id).unwrap(),
        b"line 1\n",
        "a new put heals the file"
    );
}

#[test]
fn unknown_ids_say_what_to_do() {
    let store = InMemoryArtifactStore::new();
    let id = artifact_id("never-stored", b"?");
    let err = store.get(&id).unwrap_err();
    assert!(
        err.message.contains("no artifact with id"),
        "{}",
        err.message
    );
    let err = store.get("../x").unwrap_err();
    assert!(
        err.message.contains("is not an artifact id"),
        "{}",
        err.message
    );
}

#[test]
fn dir_store_on_a_file_is_a_clear_error() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("file");
    fs::write(&file, b"").unwrap();
    let err = DirArtifactStore::open(&file).unwrap_err();
    assert!(
        err.message.contains(&file.display().to_string()),
        "{}",
        err.message
    );
}
