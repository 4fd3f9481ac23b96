//! Compiled pattern sets shared by every scan of a build, and released
//! when the build's scanning is done: each regex keeps one lazy-DFA cache
//! per thread that searched with it (tens of MB each), and a `static`
//! would keep them to the end of the process, through the write stage.

use std::sync::{Arc, Mutex, PoisonError};

/// A value built on first use, shared, and dropped on [`release`]
/// (the next use builds it again).
pub struct Shared<T> {
    slot: Mutex<Option<Arc<T>>>,
    make: fn() -> T,
}

impl<T> Shared<T> {
    /// A slot that builds its value with `make`.
    pub const fn new(make: fn() -> T) -> Self {
        Self {
            slot: Mutex::new(None),
            make,
        }
    }

    /// The value, built now if it is not.
    pub fn get(&self) -> Arc<T> {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        slot.get_or_insert_with(|| Arc::new((self.make)())).clone()
    }

    /// Drops the shared value: its memory goes once the scans still
    /// holding it finish.
    pub fn release(&self) {
        let taken = self
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(taken);
    }
}

#[cfg(test)]
mod tests {
    use super::Shared;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static BUILT: AtomicUsize = AtomicUsize::new(0);

    fn make() -> Vec<u8> {
        BUILT.fetch_add(1, Ordering::SeqCst);
        vec![0; 1024]
    }

    #[test]
    fn builds_once_until_released_then_again() {
        static SLOT: Shared<Vec<u8>> = Shared::new(make);
        let first = SLOT.get();
        let again = SLOT.get();
        assert!(std::sync::Arc::ptr_eq(&first, &again));
        assert_eq!(BUILT.load(Ordering::SeqCst), 1);
        SLOT.release();
        // A holder keeps its copy; the slot builds a new one.
        let rebuilt = SLOT.get();
        assert!(!std::sync::Arc::ptr_eq(&first, &rebuilt));
        assert_eq!(BUILT.load(Ordering::SeqCst), 2);
        // Released and no longer held: the old value is gone.
        let old = std::sync::Arc::downgrade(&first);
        drop((first, again));
        assert!(old.upgrade().is_none());
        assert_eq!(std::sync::Arc::strong_count(&rebuilt), 2);
    }
}
