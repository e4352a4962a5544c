//! What the model reads when an edit cannot be applied: the argument forms, and each
//! [`EditError`] as a clear message with a tool-level `code` and details.
//!
//! | error | `code` | details |
//! |---|---|---|
//! | empty oldText | `invalid_arguments` (`reason: edit_empty_old_text`) | `edit_index` |
//! | not found | `edit_not_found` | `edit_index`, `closest_line`, `divergent_line`, `closest_region` |
//! | ambiguous | `edit_ambiguous` | `edit_index`, `occurrences` |
//!
//! `edit_index` is given for the `edits: [...]` form only (the single form has one edit).
//! | overlapping edits | `edit_overlap` | `edits` (both indices) |
//! | no change | `edit_no_change` | — |

use super::closest::{ClosestRegion, Divergence};
use super::engine::EditError;
use crate::Failure;
use kun_ports::ErrorCode;
use std::fmt::Write as _;

/// Which argument form the call used; messages name edits accordingly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EditShape {
    /// `oldText` / `newText`.
    Single,
    /// `edits: [...]`.
    Multi,
}

impl EditShape {
    fn name(self, index: usize) -> String {
        match self {
            Self::Single => "oldText".to_owned(),
            Self::Multi => format!("edits[{index}].oldText"),
        }
    }
}

/// The (oldText, newText) pairs of a call, and its form.
pub(super) fn edits_of(
    old_text: Option<String>,
    new_text: Option<String>,
    edits: Option<Vec<super::EditItem>>,
) -> Result<(EditShape, Vec<(String, String)>), Failure> {
    match (old_text, new_text, edits) {
        (None, None, Some(edits)) if !edits.is_empty() => Ok((
            EditShape::Multi,
            edits
                .into_iter()
                .map(|e| (e.old_text, e.new_text))
                .collect(),
        )),
        (None, None, Some(_)) => Err(Failure::invalid(
            "edits is empty: give at least one {oldText, newText} pair",
        )),
        (Some(old), Some(new), None) => Ok((EditShape::Single, vec![(old, new)])),
        (_, _, Some(_)) => Err(Failure::invalid(
            "give either oldText and newText, or edits, not both; put every replacement into edits",
        )),
        (Some(_), None, None) => Err(Failure::invalid(
            "newText is missing: give the replacement (empty to delete)",
        )),
        (None, Some(_), None) => Err(Failure::invalid(
            "oldText is missing: give the exact text to replace",
        )),
        (None, None, None) => Err(Failure::invalid(
            "nothing to edit: give oldText and newText, or edits with {oldText, newText} pairs",
        )),
    }
}

/// The failure the model sees for an engine error on `path`.
pub(crate) fn failure(err: EditError, shape: EditShape, path: &str) -> Failure {
    let mut failure = engine_failure(err, shape, path);
    if shape == EditShape::Single {
        failure.details.remove("edit_index");
    }
    failure
}

fn engine_failure(err: EditError, shape: EditShape, path: &str) -> Failure {
    match err {
        EditError::EmptyOldText { index } => Failure::invalid(format!(
            "{} is empty in the edit of {path}: give the exact text to replace (to write a whole file, use write)",
            shape.name(index)
        ))
        .with("reason", "edit_empty_old_text")
        .with("edit_index", index),
        EditError::NotFound { index, closest } => not_found(index, closest, shape, path),
        EditError::Ambiguous { index, occurrences } => Failure::coded(ErrorCode::EditAmbiguous, format!(
            "{} occurs {occurrences} times in {path}, but must occur exactly once; include more surrounding \
             lines so it matches only the place you mean",
            shape.name(index)
        ))
        .with("edit_index", index)
        .with("occurrences", occurrences),
        EditError::Overlap { first, second } => Failure::invalid(format!(
            "edits[{first}] and edits[{second}] overlap in {path}; merge them into one edit, or make each \
             target a separate region"
        ))
        .with("reason", "edit_overlap")
        .with("edits", vec![first, second]),
        EditError::NoChange => Failure::invalid(format!(
            "the edit leaves {path} unchanged: every newText equals the text it replaces. Check that newText \
             holds the change you meant"
        ))
        .with("reason", "edit_no_change"),
    }
}

fn not_found(
    index: usize,
    closest: Option<ClosestRegion>,
    shape: EditShape,
    path: &str,
) -> Failure {
    let name = shape.name(index);
    let mut message = format!(
        "{name} was not found in {path}, neither exactly nor after loosening quotes, dashes, special spaces and \
         trailing whitespace."
    );
    let Some(region) = closest else {
        message.push_str(" No line of it appears in the file: read the file again and check it is the right one.");
        return Failure::coded(ErrorCode::EditNotFound, message).with("edit_index", index);
    };
    let _ = write!(
        message,
        " The closest region starts at line {} ({} of its {} lines match)",
        region.start_line, region.matching_lines, region.total_lines
    );
    match (region.divergence, &region.file_line, &region.expected_line) {
        (Some((line, Divergence::EndOfFile)), _, _) => {
            let _ = write!(
                message,
                "; the file ends before line {line}, where {name} continues."
            );
        }
        (Some((line, kind)), Some(file), Some(expected)) => {
            let what = if kind == Divergence::Whitespace {
                "differs in whitespace (indentation?)"
            } else {
                "differs"
            };
            let _ = write!(
                message,
                "; line {line} {what}:\n  file:     {file}\n  expected: {expected}"
            );
        }
        _ => message.push('.'),
    }
    let _ = write!(
        message,
        "\nThe region reads:\n{}\nRead the file again and copy {name} from it exactly.",
        region.region
    );
    let mut failure = Failure::coded(ErrorCode::EditNotFound, message)
        .with("edit_index", index)
        .with("closest_line", region.start_line)
        .with("closest_region", region.region);
    if let Some((line, _)) = region.divergence {
        failure = failure.with("divergent_line", line);
    }
    failure
}
