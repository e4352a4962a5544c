//! Blame, rendered from `git blame --porcelain`.
//!
//! Git's default blame output adds a file-name column whenever a line came from another path
//! (a rename, a move): from a workspace that is a subfolder of its repository that column can
//! name files outside it. The porcelain format is parsed instead and rendered the way
//! `git blame --date=short` prints, without file names:
//!
//! ```text
//! 1a2b3c4d (Ada Lovelace 2024-02-03 1) pub fn answer() -> u32 { 42 }
//! ^5e6f7a8 (Ada Lovelace 2024-01-01 2) second line
//! ```
//!
//! Authors are padded to one width and line numbers right-aligned, as git does; a boundary
//! commit gets `^`, uncommitted lines show as `00000000 (Not Committed Yet …)`.

use std::collections::HashMap;
use std::fmt::Write as _;

/// What porcelain says about one commit.
#[derive(Debug, Clone, Default)]
struct CommitInfo {
    author: String,
    time: i64,
    tz_offset_seconds: i64,
    boundary: bool,
}

/// One blamed line.
#[derive(Debug)]
struct Line {
    commit: String,
    number: u64,
    content: String,
}

/// Renders porcelain output (complete lines only; a cut-off tail is dropped).
#[must_use]
pub(super) fn render(porcelain: &str) -> String {
    let mut commits: HashMap<String, CommitInfo> = HashMap::new();
    let mut lines: Vec<Line> = Vec::new();
    let mut current: Option<(String, u64)> = None;
    for raw in porcelain.split_inclusive('\n') {
        let Some(text) = raw.strip_suffix('\n') else {
            break;
        };
        if let Some(content) = text.strip_prefix('\t') {
            if let Some((commit, number)) = current.take() {
                lines.push(Line {
                    commit,
                    number,
                    content: content.to_owned(),
                });
            }
            continue;
        }
        match current.as_ref() {
            None => {
                let mut fields = text.split(' ');
                let (Some(commit), Some(_original), Some(number)) =
                    (fields.next(), fields.next(), fields.next())
                else {
                    continue;
                };
                let Ok(number) = number.parse() else {
                    continue;
                };
                commits.entry(commit.to_owned()).or_default();
                current = Some((commit.to_owned(), number));
            }
            Some((commit, _)) => {
                let info = commits.entry(commit.clone()).or_default();
                let (key, value) = text.split_once(' ').unwrap_or((text, ""));
                match key {
                    "author" => value.clone_into(&mut info.author),
                    "author-time" => info.time = value.parse().unwrap_or(0),
                    "author-tz" => info.tz_offset_seconds = tz_offset_seconds(value),
                    "boundary" => info.boundary = true,
                    _ => {}
                }
            }
        }
    }
    let author_width = lines
        .iter()
        .filter_map(|l| commits.get(&l.commit))
        .map(|c| c.author.chars().count())
        .max()
        .unwrap_or(0);
    let number_width = lines
        .iter()
        .map(|l| l.number.to_string().len())
        .max()
        .unwrap_or(1);
    let mut out = String::new();
    for line in &lines {
        let info = commits.get(&line.commit).cloned().unwrap_or_default();
        let short: String = if info.boundary {
            format!("^{}", line.commit.chars().take(7).collect::<String>())
        } else {
            line.commit.chars().take(8).collect()
        };
        let _ = writeln!(
            out,
            "{short} ({author:<author_width$} {date} {number:>number_width$}) {content}",
            author = info.author,
            date = short_date(info.time + info.tz_offset_seconds),
            number = line.number,
            content = line.content,
        );
    }
    out
}

/// `+0200` → 7200 seconds; garbage → 0.
fn tz_offset_seconds(tz: &str) -> i64 {
    let (sign, digits) = match tz.as_bytes().first() {
        Some(b'-') => (-1, &tz[1..]),
        Some(b'+') => (1, &tz[1..]),
        _ => (1, tz),
    };
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    let hours: i64 = digits[..2].parse().unwrap_or(0);
    let minutes: i64 = digits[2..].parse().unwrap_or(0);
    sign * (hours * 3600 + minutes * 60)
}

/// `YYYY-MM-DD` of a Unix time (already shifted to the author's zone).
fn short_date(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_zones() {
        assert_eq!(short_date(0), "1970-01-01");
        assert_eq!(short_date(1_706_961_600), "2024-02-03");
        assert_eq!(short_date(951_782_400), "2000-02-29");
        assert_eq!(short_date(-86_400), "1969-12-31");
        assert_eq!(tz_offset_seconds("+0200"), 7200);
        assert_eq!(tz_offset_seconds("-0130"), -5400);
        assert_eq!(tz_offset_seconds("junk"), 0);
    }

    #[test]
    fn porcelain_renders_without_file_names() {
        let porcelain = "\
1111111111111111111111111111111111111111 1 1 2
author Ada Lovelace
author-time 1706961600
author-tz +0000
summary Fix
filename ../outside/secret-name.txt
\tfirst
1111111111111111111111111111111111111111 2 2
\tsecond
2222222222222222222222222222222222222222 5 10 1
author Bo
author-time 1704103200
author-tz -0100
boundary
filename x.txt
\ttenth
3333333333333333333333333333333333333333 1 11 1
author cut off";
        let text = render(porcelain);
        assert_eq!(
            text,
            "11111111 (Ada Lovelace 2024-02-03  1) first\n\
             11111111 (Ada Lovelace 2024-02-03  2) second\n\
             ^2222222 (Bo           2024-01-01 10) tenth\n"
        );
        assert!(!text.contains("secret-name"));
    }
}
