//! Contract suite for [`ThreadState`]: records per thread, atomic changes, refusals that
//! write nothing.
//!
//! | rule | what must hold |
//! |---|---|
//! | 1 | a thread never written reads as the default record |
//! | 2 | what `modify` wrote is what `load` reads, and `modify` returns it |
//! | 3 | threads are separate, whatever their ids hold (`../x` vs `x`, `/`, NUL, long ids) |
//! | 4 | a refused change (or one that fails) writes nothing |
//! | 5 | concurrent changes of one thread are serialised: none is lost |
//! | 6 | the todo list is replaced whole, in order |

use crate::{Goal, GoalStatus, ThreadRecord, ThreadState, ThreadStateError, TodoItem, TodoStatus};
use std::sync::Arc;

/// Thread ids every store must keep apart (and never turn into paths outside its backing).
pub const HOSTILE_THREAD_IDS: &[&str] = &[
    "x", "../x", "../../x", "/x", "x/..", ".", "..", "", "a\0b", "a\nb", "x.json", "X", "線程",
];

/// Runs every rule of the thread-state contract. `make` must build a new, empty store.
pub fn thread_state_contract<F: Fn() -> Arc<dyn ThreadState>>(make: F) {
    unknown_threads_are_empty(&*make());
    writes_read_back(&*make());
    threads_are_separate(&*make());
    refusals_write_nothing(&*make());
    concurrent_changes_are_serialised(make());
    todos_are_replaced_whole(&*make());
}

fn unknown_threads_are_empty(store: &dyn ThreadState) {
    let record = store
        .load("never-written")
        .unwrap_or_else(|e| panic!("thread-state contract rule 1: load failed: {e}"));
    assert_eq!(
        record,
        ThreadRecord::default(),
        "thread-state contract rule 1: a thread never written reads as the default record"
    );
}

fn writes_read_back(store: &dyn ThreadState) {
    let goal = Goal {
        objective: "ship the parser".to_owned(),
        status: GoalStatus::Paused,
        token_budget: Some(50_000),
    };
    let written = store
        .modify("t1", &mut |record| {
            record.goal = Some(goal.clone());
            record.todos = vec![TodoItem::new("write tests", TodoStatus::InProgress)];
            Ok(())
        })
        .unwrap_or_else(|e| panic!("thread-state contract rule 2: modify failed: {e}"));
    let read = store.load("t1").unwrap();
    assert_eq!(
        written, read,
        "thread-state contract rule 2: modify returns what load reads"
    );
    assert_eq!(
        read.goal.as_ref(),
        Some(&goal),
        "thread-state contract rule 2: the goal reads back as written"
    );
    assert_eq!(
        read.todos,
        vec![TodoItem::new("write tests", TodoStatus::InProgress)],
        "thread-state contract rule 2: the todos read back as written"
    );
}

fn threads_are_separate(store: &dyn ThreadState) {
    for (index, id) in HOSTILE_THREAD_IDS.iter().enumerate() {
        store
            .modify(id, &mut |record| {
                record.todos = vec![TodoItem::new(format!("item {index}"), TodoStatus::Pending)];
                Ok(())
            })
            .unwrap_or_else(|e| panic!("thread-state contract rule 3: modify({id:?}): {e}"));
    }
    for (index, id) in HOSTILE_THREAD_IDS.iter().enumerate() {
        let record = store.load(id).unwrap();
        assert_eq!(
            record.todos,
            vec![TodoItem::new(format!("item {index}"), TodoStatus::Pending)],
            "thread-state contract rule 3: thread {id:?} holds only its own record"
        );
    }
}

fn refusals_write_nothing(store: &dyn ThreadState) {
    store
        .modify("t2", &mut |record| {
            record.goal = Some(Goal::new("before"));
            Ok(())
        })
        .unwrap();
    let refused = store.modify("t2", &mut |record| {
        record.goal = Some(Goal::new("half-done change"));
        Err(ThreadStateError::Refused("no".to_owned()))
    });
    assert_eq!(
        refused,
        Err(ThreadStateError::Refused("no".to_owned())),
        "thread-state contract rule 4: the change's refusal comes back as it was"
    );
    assert_eq!(
        store.load("t2").unwrap().goal,
        Some(Goal::new("before")),
        "thread-state contract rule 4: a refused change writes nothing"
    );
}

fn concurrent_changes_are_serialised(store: Arc<dyn ThreadState>) {
    const WRITERS: usize = 8;
    const EACH: usize = 5;
    let handles: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                for n in 0..EACH {
                    store
                        .modify("shared", &mut |record| {
                            record
                                .todos
                                .push(TodoItem::new(format!("{writer}-{n}"), TodoStatus::Pending));
                            Ok(())
                        })
                        .unwrap_or_else(|e| {
                            panic!("thread-state contract rule 5: concurrent modify failed: {e}")
                        });
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let todos = store.load("shared").unwrap().todos;
    assert_eq!(
        todos.len(),
        WRITERS * EACH,
        "thread-state contract rule 5: every concurrent change is kept (none lost)"
    );
}

fn todos_are_replaced_whole(store: &dyn ThreadState) {
    let first = vec![
        TodoItem::new("a", TodoStatus::Completed),
        TodoItem::new("b", TodoStatus::InProgress),
        TodoItem::new("c", TodoStatus::Pending),
    ];
    store
        .modify("t3", &mut |record| {
            record.todos.clone_from(&first);
            Ok(())
        })
        .unwrap();
    let second = vec![TodoItem::new("c", TodoStatus::InProgress)];
    store
        .modify("t3", &mut |record| {
            record.todos.clone_from(&second);
            Ok(())
        })
        .unwrap();
    assert_eq!(
        store.load("t3").unwrap().todos,
        second,
        "thread-state contract rule 6: a write replaces the whole list"
    );
}
