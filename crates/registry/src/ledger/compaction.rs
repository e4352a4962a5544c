//! Compaction: rewriting the journal with only the records a replay needs.

use super::LedgerBounds;
use super::journal::Durability;
use super::journal_file::{JournalFile, LockKind};
use super::record::RecordRef;
use super::replay::replay;
use super::state::Record;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Replaces the journal at `path` with one line per live record: started operations (as
/// `begin`), unknown ones, and the newest `bounds.max_completed` completed ones, oldest first.
///
/// The whole rewrite holds the exclusive lock, reads the file afresh (so records other
/// processes appended are kept) and swaps the new file in with `rename` after syncing it, so
/// a crash at any point leaves either the old journal or the new one. Returns the new length.
pub(crate) fn compact(
    file: &mut JournalFile,
    path: &Path,
    bounds: LedgerBounds,
    durability: Durability,
) -> io::Result<u64> {
    let size = file.with_lock(LockKind::Exclusive, |handle, _len| {
        let bytes = read_all(handle)?;
        let replayed = replay(&bytes, bounds, path);
        let mut buf = Vec::with_capacity(bytes.len().min(1 << 20));
        for (key, record) in replayed.state.records() {
            let line = match record {
                Record::Started { pid } => RecordRef::Begin { key, pid: *pid },
                Record::Completed(result) => RecordRef::Complete { key, result },
                Record::Unknown(reason) => RecordRef::Unknown { key, reason },
            };
            line.encode_into(&mut buf).map_err(io::Error::other)?;
        }
        let temp = temp_path(path);
        if let Err(error) = write_synced(&temp, &buf).and_then(|()| fs::rename(&temp, path)) {
            let _ = fs::remove_file(&temp);
            return Err(error);
        }
        if durability == Durability::Synced {
            sync_parent(path)?;
        }
        Ok(buf.len() as u64)
    })?;
    file.reopen()?;
    Ok(size)
}

/// Reads the whole file from its start.
pub(crate) fn read_all(mut file: &File) -> io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(0))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "journal".into(), |n| n.to_string_lossy());
    path.with_file_name(format!(".{name}.compact-{}", std::process::id()))
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_data()
}

fn sync_parent(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => File::open(dir)?.sync_all(),
        _ => File::open(".")?.sync_all(),
    }
}
