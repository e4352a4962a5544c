//! The thread-state adapters: both run the contract; the file store survives a new process
//! (a new store over the same directory), keeps hostile ids inside its directory, and never
//! overwrites a file it cannot read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use kun_gui::{FileThreadState, MemoryThreadState};
use kun_ports::testkit::{HOSTILE_THREAD_IDS, thread_state_contract};
use kun_ports::{Goal, ThreadState, ThreadStateError, TodoItem, TodoStatus};
use std::sync::Arc;

#[test]
fn the_memory_store_honours_the_contract() {
    thread_state_contract(|| Arc::new(MemoryThreadState::default()));
}

#[test]
fn the_file_store_honours_the_contract() {
    let dirs = std::sync::Mutex::new(Vec::new());
    thread_state_contract(|| {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(FileThreadState::new(dir.path()));
        dirs.lock().unwrap().push(dir);
        store
    });
}

#[test]
fn another_store_over_the_same_directory_sees_the_records() {
    let dir = tempfile::tempdir().unwrap();
    let first = FileThreadState::new(dir.path().join("threads"));
    first
        .modify("thread-a", &mut |r| {
            r.goal = Some(Goal::new("ship"));
            r.todos = vec![TodoItem::new("test", TodoStatus::InProgress)];
            Ok(())
        })
        .unwrap();
    let second = FileThreadState::new(dir.path().join("threads"));
    let record = second.load("thread-a").unwrap();
    assert_eq!(record.goal, Some(Goal::new("ship")));
    assert_eq!(record.todos.len(), 1);
    assert_eq!(second.load("thread-b").unwrap().todos, vec![]);
}

#[test]
fn hostile_thread_ids_stay_plain_files_in_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let threads = dir.path().join("threads");
    let store = FileThreadState::new(&threads);
    for id in HOSTILE_THREAD_IDS {
        store
            .modify(id, &mut |r| {
                r.todos = vec![TodoItem::new("x", TodoStatus::Pending)];
                Ok(())
            })
            .unwrap();
    }
    let outside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        outside,
        ["threads"],
        "nothing was written beside the directory"
    );
    for entry in std::fs::read_dir(&threads).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let (stem, ext) = name.split_once('.').unwrap();
        assert!(
            stem.len() == 32 && stem.bytes().all(|b| b.is_ascii_hexdigit()),
            "{name}"
        );
        assert!(matches!(ext, "json" | "lock"), "{name}");
    }
}

#[test]
fn a_corrupt_file_is_reported_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileThreadState::new(dir.path());
    store.modify("t", &mut |_| Ok(())).unwrap();
    let file = store.file_of("t");
    std::fs::write(&file, "{not json").unwrap();
    let err = store.load("t").unwrap_err();
    let ThreadStateError::Store(message) = &err else {
        panic!("{err:?}")
    };
    assert!(message.contains("delete it"), "{message}");
    let refused = store.modify("t", &mut |r| {
        r.goal = Some(Goal::new("overwrite"));
        Ok(())
    });
    assert!(refused.is_err());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{not json");
}

#[test]
fn two_processes_writing_one_thread_lose_nothing() {
    // Two stores (as two processes would have) over one directory, racing.
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<Arc<dyn ThreadState>> = (0..2)
        .map(|_| Arc::new(FileThreadState::new(dir.path())) as Arc<dyn ThreadState>)
        .collect();
    let handles: Vec<_> = stores
        .into_iter()
        .enumerate()
        .map(|(n, store)| {
            std::thread::spawn(move || {
                for i in 0..20 {
                    store
                        .modify("shared", &mut |r| {
                            r.todos
                                .push(TodoItem::new(format!("{n}-{i}"), TodoStatus::Pending));
                            Ok(())
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let todos = FileThreadState::new(dir.path())
        .load("shared")
        .unwrap()
        .todos;
    assert_eq!(todos.len(), 40);
}
