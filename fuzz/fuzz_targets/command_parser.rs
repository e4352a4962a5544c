//! The command parser behind session grants (tree-sitter-bash over an ASCII shadow): any
//! UTF-8 command line yields a scope without a crash, and the same scope twice.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    let roots = [PathBuf::from("/ws")];
    let once = kun_builtin_tools::shell::command_scope(line, &roots);
    let twice = kun_builtin_tools::shell::command_scope(line, &roots);
    assert_eq!(format!("{once:?}"), format!("{twice:?}"), "the scope is not stable");
});
