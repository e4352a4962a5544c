//! A store on a file that is created only when first written or read: listing the catalog,
//! `doctor` and tests never create the user's memory file as a side effect, while an
//! existing file that cannot be used is still reported up front.

use crate::SqliteMemoryStore;
use async_trait::async_trait;
use kun_ports::{
    Memory, MemoryChange, MemoryError, MemoryListing, MemoryPlace, MemoryQuery, MemoryStore,
    NewMemory,
};
use std::path::{Path, PathBuf};
use tokio::sync::OnceCell;

/// The default file: `$XDG_DATA_HOME/kun/memory.sqlite`, else
/// `~/.local/share/kun/memory.sqlite`; `None` when neither variable is set.
#[must_use]
pub fn default_memory_path() -> Option<PathBuf> {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| PathBuf::from(home).join(".local").join("share"))
        })
        .map(|dir| dir.join("kun").join("memory.sqlite"))
}

/// A [`SqliteMemoryStore`] opened on first use.
#[derive(Debug)]
pub struct LazySqliteStore {
    path: PathBuf,
    store: OnceCell<SqliteMemoryStore>,
}

impl LazySqliteStore {
    /// A store for `path`: an existing file is opened (and checked) now; a missing one is
    /// created by the first call.
    ///
    /// # Errors
    /// When an existing file cannot be used (see [`SqliteMemoryStore::open`]).
    pub fn new(path: &Path) -> Result<Self, MemoryError> {
        let store = OnceCell::new();
        if path.exists() {
            let opened = SqliteMemoryStore::open(path)?;
            let _ = store.set(opened);
        }
        Ok(Self {
            path: path.to_path_buf(),
            store,
        })
    }

    /// The file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The store, opened now if it was not yet.
    ///
    /// # Errors
    /// When the file cannot be created or used.
    pub async fn get(&self) -> Result<&SqliteMemoryStore, MemoryError> {
        self.store
            .get_or_try_init(|| async {
                let path = self.path.clone();
                tokio::task::spawn_blocking(move || SqliteMemoryStore::open(&path))
                    .await
                    .map_err(|err| {
                        MemoryError::storage(format!("opening the memory file: {err}"))
                    })?
            })
            .await
    }
}

#[async_trait]
impl MemoryStore for LazySqliteStore {
    async fn create(&self, place: &MemoryPlace, memory: NewMemory) -> Result<Memory, MemoryError> {
        self.get().await?.create(place, memory).await
    }

    async fn update(
        &self,
        place: &MemoryPlace,
        id: &str,
        change: MemoryChange,
    ) -> Result<Memory, MemoryError> {
        self.get().await?.update(place, id, change).await
    }

    async fn delete(&self, place: &MemoryPlace, id: &str) -> Result<bool, MemoryError> {
        self.get().await?.delete(place, id).await
    }

    async fn search(
        &self,
        place: &MemoryPlace,
        query: &MemoryQuery,
    ) -> Result<Vec<Memory>, MemoryError> {
        self.get().await?.search(place, query).await
    }

    async fn list(
        &self,
        place: &MemoryPlace,
        listing: &MemoryListing,
    ) -> Result<Vec<Memory>, MemoryError> {
        self.get().await?.list(place, listing).await
    }
}
