//! At most `max_parallel` children at once; the rest wait in FIFO order and can be
//! cancelled while they wait (tokio's semaphore is fair: first come, first served).

use kun_ports::AbortSignal;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The delegation slots.
#[derive(Debug, Clone)]
pub struct DelegationSlots {
    semaphore: Arc<Semaphore>,
    max: usize,
}

/// Waiting for a slot ended because the turn was aborted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedWhileQueued;

impl DelegationSlots {
    /// `max` slots (at least one).
    #[must_use]
    pub fn new(max: usize) -> Self {
        let max = max.max(1);
        Self {
            semaphore: Arc::new(Semaphore::new(max)),
            max,
        }
    }

    /// How many children may run at once.
    #[must_use]
    pub const fn max(&self) -> usize {
        self.max
    }

    /// Slots free now.
    #[must_use]
    pub fn available(&self) -> usize {
        self.semaphore.available_permits()
    }

    /// Waits for a slot in FIFO order; gives up when `abort` fires.
    ///
    /// # Errors
    /// [`AbortedWhileQueued`] when the turn was aborted first.
    pub async fn acquire(
        &self,
        abort: &AbortSignal,
    ) -> Result<OwnedSemaphorePermit, AbortedWhileQueued> {
        if abort.is_aborted() {
            return Err(AbortedWhileQueued);
        }
        tokio::select! {
            biased;
            () = abort.aborted() => Err(AbortedWhileQueued),
            permit = Arc::clone(&self.semaphore).acquire_owned() => permit.map_err(|_| AbortedWhileQueued),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn fifo_and_cancellable_while_queued() {
        let slots = DelegationSlots::new(1);
        let none = AbortSignal::new();
        let first = slots.acquire(&none).await.unwrap();
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for n in 0..3 {
            let slots = slots.clone();
            let order = Arc::clone(&order);
            waiters.push(tokio::spawn(async move {
                let _permit = slots.acquire(&AbortSignal::new()).await.unwrap();
                order.lock().unwrap().push(n);
            }));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let cancelled = AbortSignal::new();
        let queued = {
            let slots = slots.clone();
            let cancelled = cancelled.clone();
            tokio::spawn(async move { slots.acquire(&cancelled).await.map(|_| ()) })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancelled.abort();
        assert_eq!(queued.await.unwrap(), Err(AbortedWhileQueued));
        drop(first);
        for waiter in waiters {
            waiter.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2]);
        assert_eq!(slots.available(), 1);
    }
}
