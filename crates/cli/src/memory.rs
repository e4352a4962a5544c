//! `kun-tools memory list|search|rm`: the memories a workspace sees, for people.
//!
//! The file is the configured one (`[memory] path`, else `$XDG_DATA_HOME/kun/memory.sqlite`);
//! the place is the workspace's (its real path and git remote), so a person sees exactly what
//! the model sees there: the user's memories, this workspace's and this project's. Output is
//! a plain table (id, scope, last change in UTC, tags, first line) or, with `--json`, the
//! memories as JSON. Exit codes: 0 done, 1 `rm` of an id not visible here, 2 usage or
//! configuration errors (an unusable memory file included).

use crate::Outcome;
use crate::cli::{Common, MemoryArgs, MemoryCommand};
use crate::setup;
use kun_memory::{SqliteMemoryStore, place_for};
use kun_ports::{Memory, MemoryListing, MemoryPlace, MemoryQuery, MemoryStore};
use serde_json::json;
use std::fmt::Write as _;

/// Runs `memory`.
pub async fn run(args: MemoryArgs) -> Outcome {
    match execute(args).await {
        Ok(outcome) => outcome,
        Err(message) => {
            eprintln!("kun-tools memory: {message}");
            Outcome::Usage
        }
    }
}

async fn execute(args: MemoryArgs) -> Result<Outcome, String> {
    let common = Common {
        workspace: args.workspace.clone(),
        config: args.config.clone(),
        sandbox: None,
        approval: None,
        mode: None,
        allow_tools: None,
        deny_tools: None,
        trust_workspace: false,
        surface: None,
    };
    let loaded = setup::load(&common, None)?;
    let path = loaded.settings.memory.file().ok_or(
        "no data directory: set XDG_DATA_HOME or HOME, or [memory] path in your user config",
    )?;
    let place = place_for(&loaded.settings.workspace);
    if !path.exists() {
        return Ok(match args.command {
            MemoryCommand::Rm { id } => {
                eprintln!(
                    "kun-tools memory: no memory `{id}` here ({} does not exist yet)",
                    path.display()
                );
                Outcome::Refused
            }
            _ => {
                if args.json {
                    println!("[]");
                } else {
                    println!("no memories yet ({} does not exist)", path.display());
                }
                Outcome::Done
            }
        });
    }
    let store = SqliteMemoryStore::open(&path).map_err(|err| err.message)?;
    match args.command {
        MemoryCommand::List {
            scope,
            limit,
            offset,
        } => {
            let listing = MemoryListing {
                scopes: scope.into_iter().collect(),
                limit,
                offset,
            };
            let memories = store.list(&place, &listing).await.map_err(|e| e.message)?;
            print_memories(&memories, args.json, &place);
            Ok(Outcome::Done)
        }
        MemoryCommand::Search {
            query,
            scope,
            limit,
        } => {
            let query = MemoryQuery {
                text: query,
                scopes: scope.into_iter().collect(),
                limit,
            };
            let memories = store.search(&place, &query).await.map_err(|e| e.message)?;
            print_memories(&memories, args.json, &place);
            Ok(Outcome::Done)
        }
        MemoryCommand::Rm { id } => {
            let deleted = store.delete(&place, &id).await.map_err(|e| e.message)?;
            if args.json {
                println!("{}", json!({"id": id, "deleted": deleted}));
            } else if deleted {
                println!("deleted {id}");
            } else {
                eprintln!(
                    "kun-tools memory: no memory `{id}` here: it does not exist, or it belongs to \
                     another workspace or project"
                );
            }
            Ok(if deleted {
                Outcome::Done
            } else {
                Outcome::Refused
            })
        }
    }
}

fn print_memories(memories: &[Memory], as_json: bool, place: &MemoryPlace) {
    if as_json {
        println!("{}", json!(memories));
    } else {
        print!("{}", table(memories, place));
    }
}

/// The memories as a table, one per line.
fn table(memories: &[Memory], place: &MemoryPlace) -> String {
    if memories.is_empty() {
        return format!("no memories for {}\n", place.workspace);
    }
    let id_width = memories
        .iter()
        .map(|m| m.id.len())
        .max()
        .unwrap_or(2)
        .max(2);
    let mut out = format!(
        "{:<id_width$}  {:<9}  {:<16}  {:<16}  CONTENT\n",
        "ID", "SCOPE", "UPDATED (UTC)", "TAGS"
    );
    for memory in memories {
        let first = memory.content.lines().next().unwrap_or_default();
        let mut content: String = first.chars().take(72).collect();
        if content.len() < memory.content.trim_end().len() {
            content.push('…');
        }
        let _ = writeln!(
            out,
            "{:<id_width$}  {:<9}  {:<16}  {:<16}  {content}",
            memory.id,
            memory.scope.as_str(),
            utc(memory.updated_at_ms),
            memory.tags.join(","),
        );
    }
    out
}

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM` (UTC).
fn utc(ms: i64) -> String {
    let seconds = ms.div_euclid(1000);
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        rest / 3600,
        (rest % 3600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00");
        assert_eq!(utc(1_796_122_800_000), "2026-12-01 11:00");
    }
}
