//! The schema sanitiser: any JSON value sanitises without a panic, and sanitising twice
//! changes nothing more (the result is a fixed point).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let once = kun_ports::sanitize_schema(schema);
    let twice = kun_ports::sanitize_schema(once.clone());
    assert_eq!(once, twice, "sanitize_schema is not idempotent");
});
