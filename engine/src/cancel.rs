//! A run's cancellation: set once (Ctrl+C, a cancelled MCP call) and seen
//! by the executor between stages and by template loops inside a render,
//! which an `await` cannot interrupt.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The cancel flag of one run; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<Flag>);

#[derive(Debug, Default)]
struct Flag {
    set: AtomicBool,
    notify: tokio::sync::Notify,
}

impl Cancel {
    /// A flag not set yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ask the run to stop: waiting stages end, template loops stop.
    pub fn cancel(&self) {
        self.0.set.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    /// Whether the run was asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.0.set.load(Ordering::SeqCst)
    }

    /// Resolves once the run is asked to stop.
    pub async fn cancelled(&self) {
        loop {
            // Registered before the check, so a cancel in between is not missed.
            let notified = self.0.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }

    /// Make this the flag that template loops on this thread check, until
    /// the guard drops (a render is synchronous: it stays on one thread).
    pub(crate) fn enter(&self) -> Entered {
        let previous = CURRENT.with(|c| c.replace(Some(self.clone())));
        Entered { previous }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Cancel>> = const { RefCell::new(None) };
}

/// Restores the flag entered before (renders nest: a list of templates).
pub(crate) struct Entered {
    previous: Option<Cancel>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        CURRENT.with(|c| *c.borrow_mut() = self.previous.take());
    }
}

/// Whether the run whose render is on this thread was asked to stop.
pub(crate) fn current_is_cancelled() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(Cancel::is_cancelled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entered_flags_nest_and_restore() {
        let outer = Cancel::new();
        let inner = Cancel::new();
        assert!(!current_is_cancelled());
        let entered = outer.enter();
        {
            let _inner = inner.enter();
            outer.cancel();
            assert!(!current_is_cancelled(), "the inner run's flag is the one checked");
        }
        assert!(current_is_cancelled());
        drop(entered);
        assert!(!current_is_cancelled());
    }

    #[tokio::test]
    async fn cancelled_resolves_for_a_cancel_from_another_task() {
        let cancel = Cancel::new();
        let other = cancel.clone();
        tokio::spawn(async move { other.cancel() });
        cancel.cancelled().await;
        assert!(cancel.is_cancelled());
    }
}
