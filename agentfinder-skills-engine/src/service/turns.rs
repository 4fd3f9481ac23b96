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
//!
//! The workers are plain threads, not a rayon pool. Work that itself uses
//! rayon (the model's matrix multiplies) then runs on rayon's global pool
//! while the worker waits, and a waiting worker never picks up another
//! queued search: with a rayon pool here, a worker holding a lock (the
//! model's) stole a second search that took the same lock, on the same
//! thread, and `serve` hung for good.
//!
//! The caller waits asynchronously, so its own timeout can fire while the
//! work is queued; work whose caller stopped waiting is dropped unrun, and
//! work that could not start by its deadline is refused
//! ([`TurnError::Late`]).

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Why queued work did not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TurnError {
    /// Its turn came after its deadline.
    #[error("busy: the search waited {waited_ms} ms for a turn ({ahead} searches were ahead of it) and could not start in time")]
    Late {
        /// How long it waited.
        waited_ms: u64,
        /// Work queued ahead of it when it was queued.
        ahead: usize,
    },
    /// It panicked (the worker goes on with the next).
    #[error("the search failed unexpectedly: {0}")]
    Panicked(String),
    /// No worker thread could be started.
    #[error("no search thread could be started")]
    NoWorkers,
}

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    stopping: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

/// A queue for CPU-bound work (see the module's documentation): worker
/// threads that take the work in the order it was queued.
pub struct Turns {
    shared: Arc<Shared>,
    at_once: usize,
    workers: usize,
}

impl std::fmt::Debug for Turns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turns")
            .field("at_once", &self.at_once)
            .field("workers", &self.workers)
            .finish()
    }
}

impl Turns {
    /// Turns for `at_once` searches at a time (at least one).
    pub fn new(at_once: usize) -> Self {
        let at_once = at_once.max(1);
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            ready: Condvar::new(),
        });
        let workers = {
            let shared = shared.clone();
            super::workers::start("search", at_once, move || work_loop(&shared))
        };
        Self {
            shared,
            at_once,
            workers,
        }
    }

    /// One search at a time per core of this machine.
    pub fn for_this_machine() -> Self {
        Self::new(super::workers::one_per_core())
    }

    /// How many run at once.
    pub fn at_once(&self) -> usize {
        self.at_once
    }

    /// Work queued and not yet started.
    pub fn waiting(&self) -> usize {
        self.shared.queue.lock().map_or(0, |q| q.jobs.len())
    }

    /// Queues `work` and waits (asynchronously) for its result. Work that
    /// has not started by `start_by` is not run ([`TurnError::Late`]);
    /// work whose caller stopped waiting (its future was dropped, e.g. by
    /// a timeout) is dropped when its turn comes.
    pub async fn run<T: Send + 'static>(
        &self,
        start_by: Option<Instant>,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, TurnError> {
        if self.workers == 0 {
            return Err(TurnError::NoWorkers);
        }
        let (answer, answered) = tokio::sync::oneshot::channel();
        let queued = Instant::now();
        {
            let Ok(mut queue) = self.shared.queue.lock() else {
                return Err(TurnError::NoWorkers);
            };
            let ahead = queue.jobs.len();
            queue.jobs.push_back(Box::new(move || {
                if answer.is_closed() {
                    return;
                }
                if start_by.is_some_and(|by| Instant::now() > by) {
                    let _ = answer.send(Err(TurnError::Late {
                        waited_ms: queued.elapsed().as_millis() as u64,
                        ahead,
                    }));
                    return;
                }
                let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                    .map_err(|panic| TurnError::Panicked(panic_text(&panic)));
                let _ = answer.send(done);
            }));
        }
        self.shared.ready.notify_one();
        answered.await.unwrap_or(Err(TurnError::NoWorkers))
    }
}

impl Drop for Turns {
    fn drop(&mut self) {
        if let Ok(mut queue) = self.shared.queue.lock() {
            queue.stopping = true;
        }
        self.shared.ready.notify_all();
    }
}

/// A worker: takes the oldest job, runs it, until the queue is stopped.
fn work_loop(shared: &Shared) {
    loop {
        let job = {
            let Ok(mut queue) = shared.queue.lock() else {
                return;
            };
            loop {
                if let Some(job) = queue.jobs.pop_front() {
                    break job;
                }
                if queue.stopping {
                    return;
                }
                queue = match shared.ready.wait(queue) {
                    Ok(queue) => queue,
                    Err(_) => return,
                };
            }
        };
        job();
    }
}

pub(crate) fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

/// A deadline `within` from now (`None` past what an `Instant` holds).
pub fn deadline_in(within: Duration) -> Option<Instant> {
    Instant::now().checked_add(within)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn no_more_than_at_once_run_and_they_run_in_the_order_they_came() {
        let turns = Arc::new(Turns::new(2));
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let started = Arc::new(Mutex::new(Vec::new()));
        // Each job runs until the test lets it end, so a job starts only
        // when one ends: one at a time, in an order nothing races for.
        let mut gates = Vec::new();
        let mut tasks = Vec::new();
        for n in 0..10 {
            let (gate, wait) = std::sync::mpsc::channel::<()>();
            gates.push(gate);
            let (queue, running, most, log) = (
                turns.clone(),
                running.clone(),
                most.clone(),
                started.clone(),
            );
            tasks.push(tokio::spawn(async move {
                queue
                    .run(None, move || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        log.lock().unwrap().push(n);
                        let _ = wait.recv();
                        running.fetch_sub(1, Ordering::SeqCst);
                    })
                    .await
            }));
            // Each task is running (the first two, for which a worker is
            // free) or queued before the next is spawned: waited for by
            // what the jobs and the queue say.
            let queued = || if n < 2 { 0 } else { turns.waiting() };
            while started.lock().unwrap().len() + queued() <= n {
                tokio::task::yield_now().await;
            }
        }
        for (n, gate) in gates.into_iter().enumerate() {
            gate.send(()).unwrap();
            // Ending job n lets job n + 2 start: wait until it has.
            let expected = (n + 3).min(10);
            while started.lock().unwrap().len() < expected {
                tokio::task::yield_now().await;
            }
        }
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 2, "two at once, never more");
        let order = started.lock().unwrap().clone();
        assert_eq!(
            order,
            (0..10).collect::<Vec<_>>(),
            "first come, first served"
        );
    }

    /// The hang `serve` had: work on a worker that holds a lock while it
    /// waits on rayon work must not let that worker take another queued
    /// job that takes the same lock.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn work_that_holds_a_lock_across_rayon_work_cannot_deadlock() {
        let turns = Arc::new(Turns::new(2));
        let lock = Arc::new(Mutex::new(0u64));
        let mut tasks = Vec::new();
        for _ in 0..32 {
            let (turns, lock) = (turns.clone(), lock.clone());
            tasks.push(tokio::spawn(async move {
                turns
                    .run(None, move || {
                        let mut held = lock.lock().unwrap();
                        // A parallel loop while the lock is held, as the
                        // model's matrix multiply runs.
                        let sum: u64 = {
                            use rayon::prelude::*;
                            (0..20_000u64).into_par_iter().map(|x| x % 7).sum()
                        };
                        *held += sum;
                    })
                    .await
            }));
        }
        let all = futures_join(tasks);
        let done = tokio::time::timeout(Duration::from_secs(20), all).await;
        assert!(done.is_ok(), "the queued work deadlocked");
    }

    async fn futures_join(tasks: Vec<tokio::task::JoinHandle<Result<(), TurnError>>>) {
        for task in tasks {
            task.await.unwrap().unwrap();
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn work_that_cannot_start_in_time_is_refused_and_abandoned_work_never_runs() {
        let turns = Arc::new(Turns::new(1));
        let ran = Arc::new(AtomicUsize::new(0));
        // Hold the one worker for 400 ms, once it has it.
        let holding = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let blocker = {
            let (turns, holding) = (turns.clone(), holding.clone());
            tokio::spawn(async move {
                turns
                    .run(None, move || {
                        holding.store(true, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(400))
                    })
                    .await
            })
        };
        while !holding.load(Ordering::SeqCst) {
            tokio::task::yield_now().await;
        }
        // Must start within 50 ms: it cannot.
        let late = {
            let (ran, turns) = (ran.clone(), turns.clone());
            tokio::spawn(async move {
                turns
                    .run(deadline_in(Duration::from_millis(50)), move || {
                        ran.fetch_add(1, Ordering::SeqCst);
                    })
                    .await
            })
        };
        // Queued before the next (a spawned task runs when it runs).
        while turns.waiting() == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // A caller that gives up while queued (its timeout fires).
        let abandoned = {
            let (ran, turns) = (ran.clone(), turns.clone());
            tokio::time::timeout(Duration::from_millis(20), async move {
                turns
                    .run(None, move || {
                        ran.fetch_add(1, Ordering::SeqCst);
                    })
                    .await
            })
            .await
        };
        assert!(abandoned.is_err(), "the caller's timeout fired");
        let late = late.await.unwrap();
        assert!(
            matches!(late, Err(TurnError::Late { ahead: 0, waited_ms }) if waited_ms >= 50),
            "{late:?}"
        );
        blocker.await.unwrap().unwrap();
        // The worker is free; what comes next runs.
        assert_eq!(turns.run(None, || 7).await, Ok(7));
        assert_eq!(ran.load(Ordering::SeqCst), 0, "neither ran");
    }

    #[tokio::test]
    async fn a_panic_is_an_error_and_the_worker_goes_on() {
        let turns = Turns::new(1);
        let failed = turns.run(None, || -> u32 { panic!("boom") }).await;
        assert_eq!(failed, Err(TurnError::Panicked("boom".into())));
        assert_eq!(turns.run(None, || 3).await, Ok(3));
    }

    #[test]
    fn at_least_one_runs() {
        assert_eq!(Turns::new(0).at_once(), 1);
        assert!(Turns::for_this_machine().at_once() >= 1);
    }
}
