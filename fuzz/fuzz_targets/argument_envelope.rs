//! The argument envelope: whatever the model sends (JSON or not, wrapped in `{"__raw": …}`
//! or not), normalising it and decoding it into a tool's arguments never panics, and
//! normalising is idempotent.
#![no_main]

use kun_builtin_tools::fs::edit::EditArgs;
use kun_registry::normalize_raw_envelope;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut arguments = match serde_json::from_str::<Value>(&text) {
        Ok(value) => value,
        Err(_) => json!({ "__raw": text }),
    };
    normalize_raw_envelope(&mut arguments);
    let mut again = arguments.clone();
    normalize_raw_envelope(&mut again);
    assert_eq!(arguments, again, "normalising twice changed the arguments");
    let _ = kun_ports::parse_args::<EditArgs>("edit", arguments.clone());
    let _ = kun_ports::parse_args::<Value>("any", arguments);
});
