//! [`SqliteMemoryStore`]: the [`MemoryStore`] on one SQLite file (WAL, FTS5).
//!
//! * One connection per store, used from blocking threads (`spawn_blocking`), never from the
//!   async executor.
//! * Writes run in `BEGIN IMMEDIATE` transactions with a busy timeout, and are retried when
//!   another process holds the lock longer: several processes can write the same file at once
//!   and nothing is lost.
//! * The FTS5 table is kept in step with `memories` inside the same transaction.

use crate::schema::{self, SCHEMA_VERSION, SchemaError};
use crate::segment::{QueryPiece, expression, index_form, place_token, query_pieces};
use async_trait::async_trait;
use kun_ports::{
    Memory, MemoryChange, MemoryError, MemoryErrorKind, MemoryListing, MemoryPlace, MemoryQuery,
    MemoryScope, MemoryStore, NewMemory, normalise_tags, validate_content,
};
use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension, Row, TransactionBehavior, named_params,
    params,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long one statement waits for another process's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How many times a write is tried when the file stays locked.
const WRITE_ATTEMPTS: u32 = 6;
/// The most results one search or listing returns.
pub const MAX_RESULTS: usize = 200;

/// What `doctor` shows about the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreStatus {
    /// The file.
    pub path: PathBuf,
    /// Its schema version.
    pub schema_version: u32,
    /// How many memories it holds (every scope and place).
    pub memories: u64,
}

/// The memory store on one SQLite file.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use kun_memory::SqliteMemoryStore;
/// use kun_ports::{MemoryPlace, MemoryQuery, MemoryScope, MemoryStore, NewMemory};
///
/// let dir = tempfile::tempdir().unwrap();
/// let store = SqliteMemoryStore::open(&dir.path().join("memory.sqlite")).unwrap();
/// let here = MemoryPlace::new("/work/app", "github.com/acme/app");
/// store
///     .create(&here, NewMemory {
///         scope: MemoryScope::Project,
///         content: "部署前先跑集成测试".into(),
///         tags: vec![],
///     })
///     .await
///     .unwrap();
/// let query = MemoryQuery { text: "集成测试".into(), scopes: vec![], limit: 8 };
/// assert_eq!(store.search(&here, &query).await.unwrap().len(), 1);
/// # });
/// ```
#[derive(Clone)]
pub struct SqliteMemoryStore {
    path: PathBuf,
    conn: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for SqliteMemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteMemoryStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SqliteMemoryStore {
    /// Opens (creating it and its directory if needed) and migrates the file at `path`.
    ///
    /// # Errors
    /// [`MemoryErrorKind::Unavailable`] naming the file when it is not a database, is
    /// corrupt, has a newer schema, or cannot be created.
    pub fn open(path: &Path) -> Result<Self, MemoryError> {
        let unavailable = |why: String| {
            MemoryError::new(
                MemoryErrorKind::Unavailable,
                format!("the memory file {} cannot be used: {why}", path.display()),
            )
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|err| unavailable(format!("its directory cannot be created: {err}")))?;
        }
        let mut conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|err| unavailable(err.to_string()))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|err| unavailable(err.to_string()))?;
        // Read before writing anything: a newer or foreign file is left as it is.
        let found = schema::version(&conn).map_err(|err| unavailable(err.to_string()))?;
        if found > SCHEMA_VERSION {
            return Err(unavailable(SchemaError::Newer { found }.to_string()));
        }
        with_retry(|| {
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
        })
        .map_err(|err| unavailable(err.to_string()))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|err| unavailable(err.to_string()))?;
        let mut attempt = 0;
        loop {
            match schema::migrate(&mut conn) {
                Ok(_) => break,
                Err(SchemaError::Sqlite(message))
                    if attempt + 1 < WRITE_ATTEMPTS && message.contains("locked") =>
                {
                    attempt += 1;
                    std::thread::sleep(backoff(attempt));
                }
                Err(err) => return Err(unavailable(err.to_string())),
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// The file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file, its schema version and how many memories it holds.
    ///
    /// # Errors
    /// When the file cannot be read.
    pub fn status(&self) -> Result<StoreStatus, MemoryError> {
        let conn = self.lock()?;
        let schema_version =
            schema::version(&conn).map_err(|e| MemoryError::storage(e.to_string()))?;
        let memories: i64 = conn
            .query_row("SELECT count(*) FROM memories", [], |row| row.get(0))
            .map_err(|e| self.storage(&e))?;
        Ok(StoreStatus {
            path: self.path.clone(),
            schema_version,
            memories: u64::try_from(memories).unwrap_or(0),
        })
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Connection>, MemoryError> {
        self.conn.lock().map_err(|_| {
            MemoryError::storage("the memory store's connection was poisoned by a crash; restart")
        })
    }

    fn storage(&self, err: &rusqlite::Error) -> MemoryError {
        let busy = is_busy(err);
        MemoryError::storage(if busy {
            format!(
                "the memory file {} stayed locked by another process; try again in a moment",
                self.path.display()
            )
        } else {
            format!("the memory file {}: {err}", self.path.display())
        })
    }

    /// Runs `op` on the connection in a blocking thread.
    async fn run<T, F>(&self, op: F) -> Result<T, MemoryError>
    where
        T: Send + 'static,
        F: FnOnce(&Self, &mut Connection) -> Result<T, MemoryError> + Send + 'static,
    {
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = this.lock()?;
            op(&this, &mut conn)
        })
        .await
        .map_err(|err| {
            MemoryError::storage(format!("the memory operation did not finish: {err}"))
        })?
    }

    /// Runs a write transaction, retrying while another process holds the lock.
    fn write<T>(
        &self,
        conn: &mut Connection,
        mut op: impl FnMut(&rusqlite::Transaction<'_>) -> Result<T, WriteError>,
    ) -> Result<T, MemoryError> {
        let mut attempt = 0;
        loop {
            let result = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(WriteError::Sqlite)
                .and_then(|tx| {
                    let value = op(&tx)?;
                    tx.commit().map_err(WriteError::Sqlite)?;
                    Ok(value)
                });
            match result {
                Ok(value) => return Ok(value),
                Err(WriteError::Sqlite(err)) if is_busy(&err) && attempt + 1 < WRITE_ATTEMPTS => {
                    attempt += 1;
                    std::thread::sleep(backoff(attempt));
                }
                Err(WriteError::Sqlite(err)) => return Err(self.storage(&err)),
                Err(WriteError::Memory(err)) => return Err(err),
            }
        }
    }
}

/// A failure inside a write transaction.
enum WriteError {
    Sqlite(rusqlite::Error),
    Memory(MemoryError),
}

impl From<rusqlite::Error> for WriteError {
    fn from(err: rusqlite::Error) -> Self {
        Self::Sqlite(err)
    }
}

fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(25 * u64::from(attempt))
}

fn with_retry<T>(mut op: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let mut attempt = 0;
    loop {
        match op() {
            Err(err) if is_busy(&err) && attempt + 1 < WRITE_ATTEMPTS => {
                attempt += 1;
                std::thread::sleep(backoff(attempt));
            }
            other => return other,
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// `m42` → 42; anything else names no memory.
fn parse_id(id: &str) -> Option<i64> {
    id.strip_prefix('m')?.parse().ok().filter(|n: &i64| *n > 0)
}

/// The columns every query selects, in [`memory_from_row`]'s order.
const COLUMNS: &str = "m.id, m.scope, m.content, m.tags, m.created_at, m.updated_at";

/// Visibility from a place (see `kun_ports::memory`), with one switch per scope: the keys
/// `:workspace` and `:project`, and whether user, workspace and project memories are wanted.
const VISIBLE: &str = "((m.scope = 'user' AND :user_on) \
     OR (m.scope = 'workspace' AND m.scope_key = :workspace AND :workspace_on) \
     OR (m.scope = 'project' AND m.scope_key = :project AND :project_on))";

fn memory_from_row(row: &Row<'_>) -> rusqlite::Result<Memory> {
    let id: i64 = row.get(0)?;
    let scope: String = row.get(1)?;
    let tags: String = row.get(3)?;
    Ok(Memory {
        id: format!("m{id}"),
        scope: scope.parse().unwrap_or(MemoryScope::User),
        content: row.get(2)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        created_at_ms: row.get(4)?,
        updated_at_ms: row.get(5)?,
    })
}

/// Which scopes a filter wants (every one when empty).
fn wanted(scopes: &[MemoryScope]) -> [bool; 3] {
    MemoryScope::ALL.map(|scope| scopes.is_empty() || scopes.contains(&scope))
}

/// The most pieces a query (a whole prompt) is searched by: its most selective ones.
const MAX_QUERY_PIECES: usize = 8;

/// The index row for a memory's content and tags.
fn index_row(content: &str, tags: &[String]) -> (String, String, String) {
    let content = index_form(content);
    let tags = index_form(&tags.join(" "));
    let chars = [content.chars, tags.chars]
        .into_iter()
        .filter(|c| !c.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    (content.body, tags.body, chars)
}

fn tags_json(tags: &[String]) -> String {
    serde_json::to_string(tags).unwrap_or_else(|_| "[]".to_owned())
}

/// A visible memory by id, inside a transaction.
fn visible_memory(
    tx: &rusqlite::Transaction<'_>,
    place: &MemoryPlace,
    id: i64,
) -> rusqlite::Result<Option<Memory>> {
    tx.query_row(
        &format!("SELECT {COLUMNS} FROM memories AS m WHERE m.id = :id AND {VISIBLE}"),
        named_params! {
            ":id": id, ":workspace": place.workspace, ":project": place.project,
            ":user_on": true, ":workspace_on": true, ":project_on": true,
        },
        memory_from_row,
    )
    .optional()
}

/// How many indexed memories contain a piece, from the FTS5 vocabulary; `None` when it
/// cannot be told (a non-ASCII word, which the tokenizer may fold differently).
fn document_frequency(conn: &Connection, piece: &QueryPiece) -> rusqlite::Result<Option<u64>> {
    let exact = |term: &str| -> rusqlite::Result<u64> {
        conn.prepare_cached("SELECT coalesce(sum(doc), 0) FROM memory_vocab WHERE term = ?1")?
            .query_row([term], |row| row.get::<_, i64>(0))
            .map(|n| u64::try_from(n).unwrap_or(0))
    };
    Ok(match piece {
        QueryPiece::Word(word) if word.is_ascii() => {
            let upper = format!("{word}\u{10FFFF}");
            let n: i64 = conn
                .prepare_cached(
                    "SELECT coalesce(sum(doc), 0) FROM memory_vocab WHERE term >= ?1 AND term < ?2",
                )?
                .query_row([word.as_str(), upper.as_str()], |row| row.get(0))?;
            Some(u64::try_from(n).unwrap_or(0))
        }
        QueryPiece::Word(_) => None,
        QueryPiece::Phrase(grams) => {
            let mut rarest = u64::MAX;
            for gram in grams {
                rarest = rarest.min(exact(gram)?);
            }
            Some(rarest)
        }
        QueryPiece::Char(c) => Some(exact(c)?),
    })
}

/// The pieces worth searching by: a piece in no memory is dropped (it cannot match), and of
/// the rest the rarest [`MAX_QUERY_PIECES`] are kept — a whole prompt as a query is searched
/// by its most selective words, since common words match nearly everything, cost the most to
/// score and rank nothing.
fn most_selective(conn: &Connection, pieces: Vec<QueryPiece>) -> rusqlite::Result<Vec<QueryPiece>> {
    let mut rated = Vec::with_capacity(pieces.len());
    for (order, piece) in pieces.into_iter().enumerate() {
        match document_frequency(conn, &piece)? {
            Some(0) => {}
            frequency => rated.push((frequency.unwrap_or(1), order, piece)),
        }
    }
    rated.sort_by_key(|(frequency, order, _)| (*frequency, *order));
    rated.truncate(MAX_QUERY_PIECES);
    rated.sort_by_key(|(_, order, _)| *order);
    Ok(rated.into_iter().map(|(_, _, piece)| piece).collect())
}

#[async_trait]
impl MemoryStore for SqliteMemoryStore {
    async fn create(&self, place: &MemoryPlace, memory: NewMemory) -> Result<Memory, MemoryError> {
        validate_content(&memory.content)?;
        let tags = normalise_tags(memory.tags)?;
        let key = place.key(memory.scope).to_owned();
        let (scope, content) = (memory.scope, memory.content);
        self.run(move |this, conn| {
            let now = now_ms();
            let id = this.write(conn, |tx| {
                tx.execute(
                    "INSERT INTO memories (scope, scope_key, content, tags, created_at, updated_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                    params![scope.as_str(), key, content, tags_json(&tags), now],
                )?;
                let id = tx.last_insert_rowid();
                let (body, tag_text, chars) = index_row(&content, &tags);
                tx.execute(
                    "INSERT INTO memory_index (rowid, body, tags, chars, place) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![id, body, tag_text, chars, place_token(scope, &key)],
                )?;
                Ok(id)
            })?;
            Ok(Memory {
                id: format!("m{id}"),
                scope,
                content,
                tags,
                created_at_ms: now,
                updated_at_ms: now,
            })
        })
        .await
    }

    async fn update(
        &self,
        place: &MemoryPlace,
        id: &str,
        change: MemoryChange,
    ) -> Result<Memory, MemoryError> {
        if change.is_empty() {
            return Err(MemoryError::invalid(
                "nothing to change: give new content, new tags, or both",
            ));
        }
        if let Some(content) = &change.content {
            validate_content(content)?;
        }
        let new_tags = change.tags.map(normalise_tags).transpose()?;
        let Some(row_id) = parse_id(id) else {
            return Err(MemoryError::not_found(id));
        };
        let (place, id, new_content) = (place.clone(), id.to_owned(), change.content);
        self.run(move |this, conn| {
            this.write(conn, |tx| {
                let Some(old) = visible_memory(tx, &place, row_id)? else {
                    return Err(WriteError::Memory(MemoryError::not_found(&id)));
                };
                let updated = Memory {
                    content: new_content.clone().unwrap_or(old.content),
                    tags: new_tags.clone().unwrap_or(old.tags),
                    updated_at_ms: now_ms().max(old.updated_at_ms + 1),
                    ..old
                };
                tx.execute(
                    "UPDATE memories SET content = ?2, tags = ?3, updated_at = ?4 WHERE id = ?1",
                    params![
                        row_id,
                        updated.content,
                        tags_json(&updated.tags),
                        updated.updated_at_ms
                    ],
                )?;
                let (body, tag_text, chars) = index_row(&updated.content, &updated.tags);
                tx.execute(
                    "UPDATE memory_index SET body = ?2, tags = ?3, chars = ?4 WHERE rowid = ?1",
                    params![row_id, body, tag_text, chars],
                )?;
                Ok(updated)
            })
        })
        .await
    }

    async fn delete(&self, place: &MemoryPlace, id: &str) -> Result<bool, MemoryError> {
        let Some(row_id) = parse_id(id) else {
            return Ok(false);
        };
        let place = place.clone();
        self.run(move |this, conn| {
            this.write(conn, |tx| {
                let gone = tx.execute(
                    &format!("DELETE FROM memories AS m WHERE m.id = :id AND {VISIBLE}"),
                    named_params! {
                        ":id": row_id, ":workspace": place.workspace, ":project": place.project,
                        ":user_on": true, ":workspace_on": true, ":project_on": true,
                    },
                )?;
                if gone > 0 {
                    tx.execute("DELETE FROM memory_index WHERE rowid = ?1", params![row_id])?;
                }
                Ok(gone > 0)
            })
        })
        .await
    }

    async fn search(
        &self,
        place: &MemoryPlace,
        query: &MemoryQuery,
    ) -> Result<Vec<Memory>, MemoryError> {
        let pieces = query_pieces(&query.text);
        if pieces.is_empty() {
            return Err(MemoryError::invalid(
                "the query has no words to search for: give a few keywords",
            ));
        }
        let wanted = wanted(&query.scopes);
        let places: Vec<String> = MemoryScope::ALL
            .into_iter()
            .zip(wanted)
            .filter(|(_, on)| *on)
            .map(|(scope, _)| format!("\"{}\"", place_token(scope, place.key(scope))))
            .collect();
        let [user, workspace, project] = wanted;
        let limit = i64::try_from(query.limit.clamp(1, MAX_RESULTS)).unwrap_or(1);
        let place = place.clone();
        self.run(move |this, conn| {
            let pieces = most_selective(conn, pieces).map_err(|e| this.storage(&e))?;
            let Some(words) = expression(&pieces) else {
                return Ok(Vec::new());
            };
            let matching = format!("({words}) AND place : ({})", places.join(" OR "));
            let sql = format!(
                "SELECT {COLUMNS} FROM memory_index JOIN memories AS m ON m.id = memory_index.rowid \
                 WHERE memory_index MATCH :query AND {VISIBLE} \
                 ORDER BY round(bm25(memory_index, 1.0, 1.0, 0.5, 0.0), 6), m.updated_at DESC, \
                 m.id DESC LIMIT :limit"
            );
            let mut statement = conn.prepare_cached(&sql).map_err(|e| this.storage(&e))?;
            let rows = statement
                .query_map(
                    named_params! {
                        ":query": matching, ":workspace": place.workspace,
                        ":project": place.project, ":user_on": user,
                        ":workspace_on": workspace, ":project_on": project, ":limit": limit,
                    },
                    memory_from_row,
                )
                .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
                .map_err(|e| this.storage(&e))?;
            Ok(rows)
        })
        .await
    }

    async fn list(
        &self,
        place: &MemoryPlace,
        listing: &MemoryListing,
    ) -> Result<Vec<Memory>, MemoryError> {
        let [user, workspace, project] = wanted(&listing.scopes);
        let limit = i64::try_from(listing.limit.clamp(1, MAX_RESULTS)).unwrap_or(1);
        let offset = i64::try_from(listing.offset).unwrap_or(i64::MAX);
        let place = place.clone();
        self.run(move |this, conn| {
            let sql = format!(
                "SELECT {COLUMNS} FROM memories AS m WHERE {VISIBLE} \
                 ORDER BY m.updated_at DESC, m.id DESC LIMIT :limit OFFSET :offset"
            );
            let mut statement = conn.prepare_cached(&sql).map_err(|e| this.storage(&e))?;
            let rows = statement
                .query_map(
                    named_params! {
                        ":workspace": place.workspace, ":project": place.project,
                        ":user_on": user, ":workspace_on": workspace, ":project_on": project,
                        ":limit": limit, ":offset": offset,
                    },
                    memory_from_row,
                )
                .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
                .map_err(|e| this.storage(&e))?;
            Ok(rows)
        })
        .await
    }
}
