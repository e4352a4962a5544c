//! Properties of the edit engine: an exact edit followed by its inverse restores the file,
//! and a fuzzy match never changes a byte outside the matched region.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::fs::edit::{Edit, MatchKind, apply_edits};
use proptest::prelude::*;

/// Lines of ASCII, smart quotes, dashes, special spaces and trailing whitespace.
fn line() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z ]{0,8}",
        Just("\u{201c}q\u{201d}".to_owned()),
        Just("\u{2018}s\u{2019}".to_owned()),
        Just("\u{2014}".to_owned()),
        Just("\u{a0}".to_owned()),
        Just("\t".to_owned()),
    ];
    (prop::collection::vec(piece, 0..5), "[ \t]{0,3}")
        .prop_map(|(pieces, trailing)| pieces.concat() + &trailing)
}

fn text(lines: usize) -> impl Strategy<Value = String> {
    (
        prop::collection::vec(line(), 0..lines),
        prop_oneof![Just("\n"), Just("\r\n")],
    )
        .prop_map(|(lines, ending)| lines.iter().map(|l| format!("{l}{ending}")).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn an_exact_edit_then_its_inverse_restores_the_file(
        before in text(6),
        after in text(6),
        old_core in "[a-z]{1,6}",
        new_core in "[a-z]{0,6}",
        bom in any::<bool>(),
    ) {
        // `#` and `@` occur nowhere else, so both texts are unique.
        let old_text = format!("#{old_core}#");
        let new_text = format!("@{new_core}@");
        let content = format!("{}{before}{old_text}{after}", if bom { "\u{feff}" } else { "" });
        let applied = apply_edits(&content, &[Edit { old_text: &old_text, new_text: &new_text }]).unwrap();
        prop_assert_eq!(applied.replacements[0].kind, MatchKind::Exact);
        let restored = apply_edits(&applied.content, &[Edit { old_text: &new_text, new_text: &old_text }]).unwrap();
        prop_assert_eq!(restored.content, content);
    }

    #[test]
    fn a_fuzzy_match_changes_nothing_outside_the_region(
        before in text(6),
        after in text(6),
        region in prop::collection::vec(line(), 1..4),
        crlf in any::<bool>(),
    ) {
        let ending = if crlf { "\r\n" } else { "\n" };
        // A unique token starts and ends the region, with loose characters around it.
        let region_text = format!("<{}\u{201c}x\u{201d}>", region.join(ending));
        let content = format!("{before}{region_text}   {ending}{after}");
        let old_text = kun_builtin_tools::fs::normalize_for_fuzzy_match(&region_text);
        prop_assume!(!content.contains(&old_text));
        let new_text = "REPLACED";
        let applied = apply_edits(&content, &[Edit { old_text: &old_text, new_text }]).unwrap();
        prop_assert_eq!(applied.replacements[0].kind, MatchKind::Fuzzy);
        let range = applied.replacements[0].range.clone();
        let out = &applied.content;
        prop_assert!(content[range.clone()].starts_with('<') && content[range.clone()].ends_with('>'));
        prop_assert_eq!(&out[..range.start], &content[..range.start]);
        prop_assert_eq!(&out[range.start + new_text.len()..], &content[range.end..]);
        prop_assert!(out.starts_with(&before));
        let tail = format!("   {ending}{after}");
        prop_assert!(out.ends_with(&tail));
    }
}
