//! The file's schema: a version in `PRAGMA user_version` and forward migrations.
//!
//! | version | what it adds |
//! |---------|--------------|
//! | 0       | an empty file |
//! | 1       | `memories` (id, scope, scope key, content, tags as JSON, times) the FTS5 table `memory_index` (`body`, `tags`, `chars`, `place`; see [`crate::segment`]) and its vocabulary `memory_vocab` |
//!
//! Opening a file migrates it forward inside one `BEGIN IMMEDIATE` transaction, so two
//! processes opening a new file at once migrate it once. A file whose version is newer than
//! [`SCHEMA_VERSION`] was written by a newer build: it is refused, never touched.

use rusqlite::{Connection, TransactionBehavior};

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = 1;

/// Each migration, in order: `MIGRATIONS[i]` takes version `i` to `i + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [r"
CREATE TABLE memories (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope       TEXT    NOT NULL CHECK (scope IN ('user', 'workspace', 'project')),
    scope_key   TEXT    NOT NULL,
    content     TEXT    NOT NULL,
    tags        TEXT    NOT NULL DEFAULT '[]',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX memories_by_place ON memories (scope, scope_key, updated_at DESC);
CREATE VIRTUAL TABLE memory_index USING fts5 (
    body, tags, chars, place,
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3'
);
CREATE VIRTUAL TABLE memory_vocab USING fts5vocab (memory_index, 'row');
"];

/// Why a file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The file is newer than this build.
    #[error(
        "it has schema version {found}, newer than this build understands ({SCHEMA_VERSION}): \
         it was written by a newer kun-tools; upgrade, or set [memory] path to another file"
    )]
    Newer {
        /// The file's version.
        found: u32,
    },
    /// SQLite refused (not a database, corrupt, locked, FTS5 missing).
    #[error("{0}")]
    Sqlite(String),
}

impl From<rusqlite::Error> for SchemaError {
    fn from(err: rusqlite::Error) -> Self {
        Self::Sqlite(err.to_string())
    }
}

/// The file's schema version.
///
/// # Errors
/// When the file cannot be read as a database.
pub fn version(conn: &Connection) -> Result<u32, SchemaError> {
    Ok(conn.query_row("PRAGMA user_version", [], |row| row.get(0))?)
}

/// Migrates the file to [`SCHEMA_VERSION`]; returns the version it had.
///
/// # Errors
/// [`SchemaError::Newer`] for a newer file; SQLite errors otherwise (nothing is changed).
pub fn migrate(conn: &mut Connection) -> Result<u32, SchemaError> {
    let before = version(conn)?;
    if before > SCHEMA_VERSION {
        return Err(SchemaError::Newer { found: before });
    }
    if before == SCHEMA_VERSION {
        return Ok(before);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Read again under the write lock: another process may have migrated meanwhile.
    let current = version(&tx)?;
    if current > SCHEMA_VERSION {
        return Err(SchemaError::Newer { found: current });
    }
    for (from, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        tx.execute_batch(sql).map_err(|err| {
            SchemaError::Sqlite(format!("migration {from} → {}: {err}", from + 1))
        })?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(before)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    #[test]
    fn migrates_once_and_refuses_newer_files() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), 0);
        assert_eq!(version(&conn).unwrap(), SCHEMA_VERSION);
        assert_eq!(migrate(&mut conn).unwrap(), SCHEMA_VERSION);
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let err = migrate(&mut conn).unwrap_err();
        assert_eq!(
            err,
            SchemaError::Newer {
                found: SCHEMA_VERSION + 1
            }
        );
        assert!(err.to_string().contains("newer"), "{err}");
    }

    #[test]
    fn the_bundled_sqlite_has_fts5() {
        let conn = Connection::open_in_memory().unwrap();
        let enabled: i64 = conn
            .query_row("SELECT sqlite_compileoption_used('ENABLE_FTS5')", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(enabled, 1);
    }
}
