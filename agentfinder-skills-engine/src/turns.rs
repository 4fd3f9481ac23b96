//! Turns at the CPU for searches: one search per core runs at once, and
//! the others wait in the order they came.
//!
//! A search is a few milliseconds of CPU and never waits on I/O. Run as
//! many at once as there are requests and the operating system shares the
//! cores among all of them: under 16 clients on 2 cores each search then
//! takes 8 times its own CPU time, and a slow one (a query of common words)
//! holds up every other while it runs. Taken in turns, a search waits for
//! those ahead of it and then runs alone on its core: the tail is a
//! queue's, not a slow query's times the crowd. Measured through `serve`
//! on 2 cores under 16 clients: p99 78-80 ms -> 37-47 ms, max 145-164 ms
//! -> 61-99 ms; the median rose from 18-20 to 23-25 ms, since short
//! searches no longer overtake long ones.

/// A queue for CPU-bound work (see the module's documentation): a pool
/// of threads that take the work in the order it was queued.
#[derive(Debug)]
pub struct Turns {
    pool: Option<rayon::ThreadPool>,
    at_once: usize,
}

impl Turns {
    /// Turns for `at_once` searches at a time (at least one).
    pub fn new(at_once: usize) -> Self {
        let at_once = at_once.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(at_once)
            .thread_name(|n| format!("search-{n}"))
            .build()
            .ok();
        Self { pool, at_once }
    }

    /// One search at a time per core of this machine.
    pub fn for_this_machine() -> Self {
        Self::new(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// How many run at once.
    pub fn at_once(&self) -> usize {
        self.at_once
    }

    /// Runs `work` on the pool when its turn comes, and waits for it: the
    /// pool's threads take work from one queue, first in, first out, and a
    /// thread that finishes takes the next at once (a queue of async
    /// tasks woken in turn measured 20% fewer requests a second). The
    /// waiting thread is one the runtime lets block (it moves its other
    /// tasks elsewhere meanwhile), so this needs a multi-threaded runtime.
    /// Without a pool (its threads could not be started) `work` runs here.
    pub async fn run<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
        tokio::task::block_in_place(|| match &self.pool {
            Some(pool) => pool.install(work),
            None => work(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn no_more_than_at_once_run_and_they_run_in_the_order_they_came() {
        let turns = Arc::new(Turns::new(2));
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let started = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for n in 0..10 {
            let (turns, running, most, started) = (
                turns.clone(),
                running.clone(),
                most.clone(),
                started.clone(),
            );
            tasks.push(tokio::spawn(async move {
                turns
                    .run(|| {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        started.lock().unwrap().push(n);
                        std::thread::sleep(Duration::from_millis(60));
                        running.fetch_sub(1, Ordering::SeqCst);
                    })
                    .await
            }));
            // Each task queues before the next is spawned.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 2, "two at once, never more");
        let order = started.lock().unwrap().clone();
        assert_eq!(
            order,
            (0..10).collect::<Vec<_>>(),
            "first come, first served"
        );
    }

    #[test]
    fn at_least_one_runs() {
        assert_eq!(Turns::new(0).at_once(), 1);
        assert!(Turns::for_this_machine().at_once() >= 1);
    }
}
