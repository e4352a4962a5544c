//! Canonical JSON: the byte form hashed by the catalog fingerprint and the operation ledger.
//!
//! Canonical means: object keys sorted by byte order at every depth, arrays in their order,
//! no whitespace, serde_json's number and string formatting. `serde_json::Map` is a
//! `BTreeMap` in this workspace (the `preserve_order` feature is off), so serialising a
//! [`Value`] already sorts every object's keys; a unit test guards that assumption, because
//! enabling `preserve_order` anywhere in the build would silently break both hashes.

use serde::Serialize;
use serde_json::Value;
use std::io;

/// Writes the canonical form of `value` into `out`.
pub(crate) fn write_canonical<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Serialising JSON values and plain structs into a Vec cannot fail: no I/O, no maps with
    // non-string keys.
    if serde_json::to_writer(out, value).is_err() {
        debug_assert!(false, "canonical JSON serialisation failed");
    }
}

/// blake3 of the canonical form of `value`, hex.
#[must_use]
pub fn canonical_hash_hex(value: &Value) -> String {
    let mut hasher = blake3::Hasher::new();
    // Streaming into the hasher avoids building the bytes; it cannot fail either.
    if serde_json::to_writer(HashWriter(&mut hasher), value).is_err() {
        debug_assert!(false, "canonical JSON serialisation failed");
    }
    hasher.finalize().to_hex().to_string()
}

/// Counts the bytes of the canonical form of `value` without building it.
pub(crate) fn canonical_len(value: &Value) -> usize {
    let mut counter = ByteCounter(0);
    if serde_json::to_writer(&mut counter, value).is_err() {
        debug_assert!(false, "canonical JSON serialisation failed");
    }
    counter.0
}

struct HashWriter<'a>(&'a mut blake3::Hasher);

impl io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct ByteCounter(usize);

impl io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    /// The fingerprint and the ledger rely on `serde_json::Map` iterating in sorted key order.
    /// If this fails, something enabled serde_json's `preserve_order` feature.
    #[test]
    fn serde_json_map_is_sorted_not_insertion_ordered() {
        let mut map = Map::new();
        map.insert("zeta".into(), json!(1));
        map.insert("alpha".into(), json!(2));
        map.insert("Mid".into(), json!(3));
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        assert_eq!(keys, ["Mid", "alpha", "zeta"]);
    }

    #[test]
    fn key_order_does_not_change_the_hash() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[1,2],"x":null}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(canonical_hash_hex(&a), canonical_hash_hex(&b));
        let mut bytes = Vec::new();
        write_canonical(&mut bytes, &b);
        assert_eq!(bytes, br#"{"a":{"x":null,"y":[1,2]},"b":1}"#);
        assert_eq!(canonical_len(&b), bytes.len());
    }

    #[test]
    fn array_order_and_values_do_change_the_hash() {
        let a = json!({"required": ["a", "b"]});
        let b = json!({"required": ["b", "a"]});
        assert_ne!(canonical_hash_hex(&a), canonical_hash_hex(&b));
        assert_eq!(canonical_hash_hex(&a).len(), 64);
    }
}
