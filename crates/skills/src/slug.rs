//! Skill ids: a slug of the name, and the forms a person may type an id in.

use unicode_normalization::UnicodeNormalization as _;

/// The id form of a name: NFKC, lowercase, runs of anything but letters, digits, `_` and `-`
/// become one `-`, no `-` at either end; empty → `skill`. Letters of every script stay
/// (a Chinese name keeps its characters).
///
/// ```
/// assert_eq!(kun_skills::skill_slug("  PDF Tools!  "), "pdf-tools");
/// assert_eq!(kun_skills::skill_slug("代码审查"), "代码审查");
/// assert_eq!(kun_skills::skill_slug("???"), "skill");
/// ```
#[must_use]
pub fn skill_slug(name: &str) -> String {
    let mut slug = String::with_capacity(name.len());
    let mut gap = false;
    for ch in name.trim().nfkc().flat_map(char::to_lowercase) {
        if ch.is_alphanumeric() || ch == '_' || ch == '-' {
            if gap && !slug.is_empty() {
                slug.push('-');
            }
            gap = false;
            slug.push(ch);
        } else {
            gap = true;
        }
    }
    let trimmed = slug.trim_matches('-');
    if trimmed.is_empty() {
        "skill".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// An id as a person or model typed it: one leading `$`, `@` or `/` dropped, a `skill:`
/// prefix dropped (any case), then slugged.
///
/// ```
/// assert_eq!(kun_skills::normalize_skill_id("$Skill:PDF-Tools"), "pdf-tools");
/// ```
#[must_use]
pub fn normalize_skill_id(given: &str) -> String {
    let given = given.trim();
    let given = given
        .strip_prefix(['$', '@', '/'])
        .unwrap_or(given)
        .trim_start();
    let given = match given.get(..6) {
        Some(prefix) if prefix.eq_ignore_ascii_case("skill:") => &given[6..],
        _ => given,
    };
    skill_slug(given)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(skill_slug("Code  Review"), "code-review");
        assert_eq!(skill_slug("a_b-c"), "a_b-c");
        assert_eq!(skill_slug("ＦＵＬＬ"), "full");
        assert_eq!(normalize_skill_id("@review"), "review");
        assert_eq!(normalize_skill_id("skill"), "skill");
    }
}
