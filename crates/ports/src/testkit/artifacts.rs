//! Contract suite for [`ArtifactStore`]: byte-exact round trips and refusal of ids it did not
//! hand out (including path-traversal attempts).

use crate::ArtifactStore;

/// Ids a store must refuse: never handed out, or shaped to escape a directory.
pub const FOREIGN_IDS: &[&str] = &[
    "",
    "no-such-artifact",
    "../x",
    "../../etc/passwd",
    "/etc/passwd",
    "..",
    ".",
    "a/../../b",
    "nested/id",
    "..\\windows",
    "id\0nul",
];

/// Runs every rule of the artifact-store contract. `make` must build a new, empty store.
pub fn artifact_store_contract<F: Fn() -> Box<dyn ArtifactStore>>(make: F) {
    round_trips_binary_bytes(&*make());
    refuses_unknown_and_escaping_ids(&*make());
    hints_cannot_escape(&*make());
}

fn round_trips_binary_bytes(store: &dyn ArtifactStore) {
    let binary: Vec<u8> = (0..=255u8).chain([0, 0xff, 0xfe, b'\n', b'\r']).collect();
    let large = vec![0xa5u8; 300 * 1024];
    for (hint, bytes) in [
        ("binary.bin", binary.as_slice()),
        ("empty", &[][..]),
        ("large-output.txt", large.as_slice()),
        ("unicode name é ✓.txt", "héllo ✓".as_bytes()),
    ] {
        let stored = store
            .put(hint, bytes)
            .unwrap_or_else(|e| panic!("artifact contract: put({hint:?}) failed: {e}"));
        assert_eq!(
            stored.byte_size,
            bytes.len() as u64,
            "artifact contract: byte_size of {hint:?} is the stored length"
        );
        assert!(
            !stored.id.is_empty(),
            "artifact contract: ids are not empty"
        );
        let back = store
            .get(&stored.id)
            .unwrap_or_else(|e| panic!("artifact contract: get({:?}) failed: {e}", stored.id));
        assert!(
            back == bytes,
            "artifact contract: get returns the exact bytes of {hint:?}"
        );
    }
    let first = store.put("same", b"one").unwrap();
    let second = store.put("same", b"two").unwrap();
    assert_ne!(
        first.id, second.id,
        "artifact contract: different content, different ids"
    );
    assert_eq!(
        store.get(&first.id).unwrap(),
        b"one",
        "artifact contract: ids do not clash"
    );
    assert_eq!(
        store.get(&second.id).unwrap(),
        b"two",
        "artifact contract: ids do not clash"
    );
}

fn refuses_unknown_and_escaping_ids(store: &dyn ArtifactStore) {
    let stored = store.put("real", b"content").unwrap();
    for id in FOREIGN_IDS {
        assert!(
            store.get(id).is_err(),
            "artifact contract: get({id:?}) must fail: it was never handed out"
        );
    }
    let escaping = format!("../{}", stored.id);
    assert!(
        store.get(&escaping).is_err(),
        "artifact contract: get({escaping:?}) must fail even though it names a real artifact"
    );
    let suffixed = format!("{}/../{}", stored.id, stored.id);
    assert!(
        store.get(&suffixed).is_err(),
        "artifact contract: get({suffixed:?}) must fail"
    );
}

fn hints_cannot_escape(store: &dyn ArtifactStore) {
    for hint in ["../../escape.txt", "/etc/passwd", "..", "a/b/c", ""] {
        let stored = store
            .put(hint, b"payload")
            .unwrap_or_else(|e| panic!("artifact contract: put({hint:?}) failed: {e}"));
        assert!(
            !stored.id.contains('/')
                && !stored.id.contains('\\')
                && !matches!(stored.id.as_str(), "." | ".."),
            "artifact contract: the hint {hint:?} leaked into the id {:?}",
            stored.id
        );
        assert_eq!(
            store.get(&stored.id).unwrap(),
            b"payload",
            "artifact contract: {hint:?}"
        );
    }
}
