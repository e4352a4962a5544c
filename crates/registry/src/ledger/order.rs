//! An insertion-ordered set of operation keys with O(1) push, removal and pop of the oldest.
//!
//! The ledger keeps one [`Order`] per record state so that evicting the oldest completed
//! record, or moving a record from one state to another, never rescans anything. It is a doubly
//! linked list threaded through a slab (`Vec`) of nodes; freed slots are reused, so the slab
//! never grows past the largest number of keys held at once.

use kun_ports::OperationKey;
use std::sync::Arc;

/// A position in an [`Order`], returned by [`Order::push_back`] and valid until that key is
/// removed or popped.
pub(crate) type Link = usize;

const NIL: usize = usize::MAX;

#[derive(Debug)]
struct Node {
    key: Option<Arc<OperationKey>>,
    prev: usize,
    next: usize,
}

/// Keys in the order they were pushed, oldest first.
///
/// Invariant: `len` equals the number of nodes reachable from `head`; every node on the free
/// list has `key == None`.
#[derive(Debug)]
pub(crate) struct Order {
    nodes: Vec<Node>,
    free: Vec<usize>,
    head: usize,
    tail: usize,
    len: usize,
}

impl Default for Order {
    fn default() -> Self {
        Self {
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl Order {
    /// How many keys are held.
    pub(crate) const fn len(&self) -> usize {
        self.len
    }

    /// Appends `key` as the newest entry.
    pub(crate) fn push_back(&mut self, key: Arc<OperationKey>) -> Link {
        let node = Node {
            key: Some(key),
            prev: self.tail,
            next: NIL,
        };
        let link = if let Some(slot) = self.free.pop() {
            self.nodes[slot] = node;
            slot
        } else {
            self.nodes.push(node);
            self.nodes.len() - 1
        };
        if self.tail == NIL {
            self.head = link;
        } else {
            self.nodes[self.tail].next = link;
        }
        self.tail = link;
        self.len += 1;
        link
    }

    /// Removes the entry at `link` (which must come from this order and still be live).
    pub(crate) fn remove(&mut self, link: Link) -> Option<Arc<OperationKey>> {
        let node = self.nodes.get_mut(link)?;
        let key = node.key.take()?;
        let (prev, next) = (node.prev, node.next);
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.nodes[next].prev = prev;
        }
        self.free.push(link);
        self.len -= 1;
        Some(key)
    }

    /// Removes and returns the oldest key.
    pub(crate) fn pop_front(&mut self) -> Option<Arc<OperationKey>> {
        if self.head == NIL {
            return None;
        }
        self.remove(self.head)
    }

    /// The keys, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<OperationKey>> {
        let mut at = self.head;
        std::iter::from_fn(move || {
            let node = self.nodes.get(at)?;
            at = node.next;
            node.key.as_ref()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(call: &str) -> Arc<OperationKey> {
        Arc::new(OperationKey {
            thread_id: "t".into(),
            turn_id: "u".into(),
            call_id: call.into(),
            tool_name: "noop".into(),
            args_hash: "h".into(),
        })
    }

    fn calls(order: &Order) -> Vec<String> {
        order.iter().map(|k| k.call_id.clone()).collect()
    }

    #[test]
    fn keeps_insertion_order_and_removes_from_the_middle() {
        let mut order = Order::default();
        let _a = order.push_back(key("a"));
        let b = order.push_back(key("b"));
        let _c = order.push_back(key("c"));
        assert_eq!(calls(&order), ["a", "b", "c"]);
        assert_eq!(order.remove(b).map(|k| k.call_id.clone()), Some("b".into()));
        assert_eq!(order.remove(b), None, "a removed link stays dead");
        assert_eq!(calls(&order), ["a", "c"]);
        assert_eq!(
            order.pop_front().map(|k| k.call_id.clone()),
            Some("a".into())
        );
        assert_eq!(calls(&order), ["c"]);
        assert_eq!(order.len(), 1);
    }

    #[test]
    fn reuses_freed_slots() {
        let mut order = Order::default();
        for i in 0..100 {
            order.push_back(key(&i.to_string()));
            if order.len() > 3 {
                order.pop_front();
            }
        }
        assert_eq!(calls(&order), ["97", "98", "99"]);
        assert!(order.nodes.len() <= 4, "slab grew to {}", order.nodes.len());
        while order.pop_front().is_some() {}
        assert_eq!(order.len(), 0);
        assert_eq!(order.iter().count(), 0);
    }
}
