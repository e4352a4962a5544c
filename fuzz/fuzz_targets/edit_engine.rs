//! The edit engine: any content and any edits either apply or fail with an `EditError`,
//! never a panic; an applied edit reports one replacement per edit, each inside the
//! original content's bounds, and each replacement's text is in the result.
#![no_main]

use kun_builtin_tools::fs::edit::{Edit, apply_edits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (String, Vec<(String, String)>)| {
    let (content, pairs) = input;
    let edits: Vec<Edit<'_>> = pairs
        .iter()
        .take(8)
        .map(|(old, new)| Edit {
            old_text: old,
            new_text: new,
        })
        .collect();
    if let Ok(applied) = apply_edits(&content, &edits) {
        assert_eq!(applied.replacements.len(), edits.len());
        for replacement in &applied.replacements {
            assert!(replacement.range.end <= content.len());
            assert!(applied.content.contains(&replacement.text));
        }
    }
});
