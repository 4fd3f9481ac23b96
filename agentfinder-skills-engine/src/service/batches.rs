//! Work done in batches: items queued one at a time by many callers, taken
//! all together by one of a few threads, and answered each to its own
//! caller.
//!
//! A query's vector is one forward pass of the model, and a pass over 16
//! short queries costs far less than 16 passes over one (measured with
//! all-MiniLM-L6-v2 on 2 cores: 16.9 ms a query one by one, 3.5 ms a query
//! in batches of 16). So while one batch runs, the queries that arrive
//! wait, and then go together: with one client a batch is one query and
//! nothing waits; with many, each waits for at most the batch before its
//! own, and the machine answers five times as many.
//!
//! With a pass of the model on one core (`embed::one_thread_per_pass`),
//! one worker per core runs a batch each, side by side: measured on 2
//! cores, 252 queries/s in batches of 16 against 158/s for one batch at a
//! time split across both cores (`cargo bench --bench query_embed`).
//!
//! Items whose caller stopped waiting are dropped before the batch runs,
//! and items not taken by their deadline are refused
//! ([`BatchError::Late`]).

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// Why a queued item got no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BatchError {
    /// Its batch could not start by its deadline.
    #[error("busy: waited {waited_ms} ms for a batch and could not start in time")]
    Late {
        /// How long it waited.
        waited_ms: u64,
    },
    /// The batch's work failed (every item of the batch gets the reason).
    #[error("{0}")]
    Failed(String),
    /// The work panicked, or the worker thread is gone.
    #[error("the batch stopped unexpectedly: {0}")]
    Stopped(String),
}

/// The work: answers for a batch of items, one per item and in order.
pub type BatchWork<I, O> = dyn Fn(Vec<I>) -> Result<Vec<O>, String> + Send + Sync;

struct Pending<I, O> {
    item: I,
    start_by: Option<Instant>,
    queued: Instant,
    answer: tokio::sync::oneshot::Sender<Result<O, BatchError>>,
}

struct Queue<I, O> {
    items: VecDeque<Pending<I, O>>,
    stopping: bool,
}

struct Shared<I, O> {
    queue: Mutex<Queue<I, O>>,
    ready: Condvar,
}

/// A batching queue (see the module's documentation).
pub struct Batches<I, O> {
    shared: Arc<Shared<I, O>>,
    running: bool,
}

impl<I, O> std::fmt::Debug for Batches<I, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batches")
            .field("running", &self.running)
            .finish()
    }
}

impl<I: Send + 'static, O: Send + 'static> Batches<I, O> {
    /// A queue whose `workers` threads (at least one, named `name-N`)
    /// each run `work` on at most `max_batch` items at a time: a worker
    /// takes what is queued when it is free, so batches run side by side
    /// only when items queue faster than one worker takes them.
    pub fn new(name: &str, workers: usize, max_batch: usize, work: Box<BatchWork<I, O>>) -> Self {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                items: VecDeque::new(),
                stopping: false,
            }),
            ready: Condvar::new(),
        });
        let work: Arc<BatchWork<I, O>> = Arc::from(work);
        let max_batch = max_batch.max(1);
        let started = {
            let shared = shared.clone();
            super::workers::start(name, workers, move || {
                batch_loop(&shared, max_batch, &*work)
            })
        };
        Self {
            shared,
            running: started > 0,
        }
    }

    /// Items queued and not yet taken.
    pub fn waiting(&self) -> usize {
        self.shared.queue.lock().map_or(0, |q| q.items.len())
    }

    /// Queues `item` and waits (asynchronously) for its answer. An item
    /// not taken by `start_by` is refused ([`BatchError::Late`]); one whose
    /// caller stopped waiting is dropped when its batch is gathered.
    pub async fn run(&self, start_by: Option<Instant>, item: I) -> Result<O, BatchError> {
        let stopped = || BatchError::Stopped("no batch thread".into());
        if !self.running {
            return Err(stopped());
        }
        let (answer, answered) = tokio::sync::oneshot::channel();
        {
            let Ok(mut queue) = self.shared.queue.lock() else {
                return Err(stopped());
            };
            queue.items.push_back(Pending {
                item,
                start_by,
                queued: Instant::now(),
                answer,
            });
        }
        self.shared.ready.notify_one();
        answered.await.unwrap_or_else(|_| Err(stopped()))
    }
}

impl<I, O> Drop for Batches<I, O> {
    fn drop(&mut self) {
        if let Ok(mut queue) = self.shared.queue.lock() {
            queue.stopping = true;
        }
        self.shared.ready.notify_all();
    }
}

/// The worker: waits for items, takes up to `max_batch` of those still
/// wanted and in time, runs them together, answers each.
fn batch_loop<I, O>(shared: &Shared<I, O>, max_batch: usize, work: &BatchWork<I, O>) {
    loop {
        let mut batch = Vec::new();
        {
            let Ok(mut queue) = shared.queue.lock() else {
                return;
            };
            while queue.items.is_empty() {
                if queue.stopping {
                    return;
                }
                queue = match shared.ready.wait(queue) {
                    Ok(queue) => queue,
                    Err(_) => return,
                };
            }
            let now = Instant::now();
            while batch.len() < max_batch {
                let Some(pending) = queue.items.pop_front() else {
                    break;
                };
                if pending.answer.is_closed() {
                    continue;
                }
                if pending.start_by.is_some_and(|by| now > by) {
                    let waited_ms = pending.queued.elapsed().as_millis() as u64;
                    let _ = pending.answer.send(Err(BatchError::Late { waited_ms }));
                    continue;
                }
                batch.push(pending);
            }
        }
        if batch.is_empty() {
            continue;
        }
        let (items, answers): (Vec<I>, Vec<_>) =
            batch.into_iter().map(|p| (p.item, p.answer)).unzip();
        let count = items.len();
        let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(items)));
        match done {
            Ok(Ok(outputs)) if outputs.len() == count => {
                for (answer, output) in answers.into_iter().zip(outputs) {
                    let _ = answer.send(Ok(output));
                }
            }
            Ok(Ok(outputs)) => {
                let why = format!("{} answers for {count} items", outputs.len());
                for answer in answers {
                    let _ = answer.send(Err(BatchError::Stopped(why.clone())));
                }
            }
            Ok(Err(why)) => {
                for answer in answers {
                    let _ = answer.send(Err(BatchError::Failed(why.clone())));
                }
            }
            Err(panic) => {
                let why = super::turns::panic_text(&panic);
                for answer in answers {
                    let _ = answer.send(Err(BatchError::Stopped(why.clone())));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Doubles each item; records each batch's size; counts batches
    /// started in `release`'s upper part and waits until it is released
    /// (its value made odd), so that others queue behind the first.
    fn doubling(
        sizes: Arc<Mutex<Vec<usize>>>,
        release: Arc<AtomicUsize>,
    ) -> Box<BatchWork<u32, u32>> {
        Box::new(move |items: Vec<u32>| {
            release.fetch_add(2, Ordering::SeqCst);
            while release.load(Ordering::SeqCst).is_multiple_of(2) {
                std::thread::sleep(Duration::from_millis(2));
            }
            sizes.lock().unwrap().push(items.len());
            if items.contains(&13) {
                return Err("thirteen".into());
            }
            Ok(items.into_iter().map(|i| i * 2).collect())
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn items_queued_while_a_batch_runs_go_together_and_each_gets_its_own_answer() {
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let release = Arc::new(AtomicUsize::new(0));
        let batches = Arc::new(Batches::new(
            "test",
            1,
            8,
            doubling(sizes.clone(), release.clone()),
        ));
        let first = {
            let batches = batches.clone();
            tokio::spawn(async move { batches.run(None, 1).await })
        };
        while release.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // The first batch (of one) holds the thread; ten more queue.
        let rest: Vec<_> = (2..12)
            .map(|i| {
                let batches = batches.clone();
                tokio::spawn(async move { batches.run(None, i).await })
            })
            .collect();
        while batches.waiting() < 10 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        release.fetch_add(1, Ordering::SeqCst);
        assert_eq!(first.await.unwrap(), Ok(2));
        for (i, answer) in (2..12).zip(rest) {
            assert_eq!(answer.await.unwrap(), Ok(i * 2));
        }
        assert_eq!(*sizes.lock().unwrap(), vec![1, 8, 2]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn with_two_workers_an_item_queued_while_a_batch_runs_starts_beside_it() {
        // Each batch waits (up to 10 s) until two batches are running.
        let running = Arc::new((Mutex::new(0usize), Condvar::new()));
        let met = Arc::new(AtomicUsize::new(0));
        let work: Box<BatchWork<u32, u32>> = {
            let (running, met) = (running.clone(), met.clone());
            Box::new(move |items: Vec<u32>| {
                let (count, changed) = &*running;
                let mut count = count.lock().unwrap();
                *count += 1;
                changed.notify_all();
                let (count, _) = changed
                    .wait_timeout_while(count, Duration::from_secs(10), |c| *c < 2)
                    .unwrap();
                if *count >= 2 {
                    met.fetch_add(1, Ordering::SeqCst);
                }
                Ok(items)
            })
        };
        let batches = Arc::new(Batches::new("test", 2, 8, work));
        let first = {
            let batches = batches.clone();
            tokio::spawn(async move { batches.run(None, 1).await })
        };
        while *running.0.lock().unwrap() == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let second = batches.run(None, 2).await;
        assert_eq!(first.await.unwrap(), Ok(1));
        assert_eq!(second, Ok(2));
        // With one worker the second batch would have waited for the first.
        assert_eq!(met.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn late_items_are_refused_and_a_failed_batch_fails_each_of_its_items() {
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let release = Arc::new(AtomicUsize::new(0));
        let batches = Arc::new(Batches::new(
            "test",
            1,
            8,
            doubling(sizes.clone(), release.clone()),
        ));
        let first = {
            let batches = batches.clone();
            tokio::spawn(async move { batches.run(None, 1).await })
        };
        while release.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let late = {
            let batches = batches.clone();
            let by = Instant::now() + Duration::from_millis(10);
            tokio::spawn(async move { batches.run(Some(by), 5).await })
        };
        let unlucky = {
            let batches = batches.clone();
            tokio::spawn(async move { batches.run(None, 13).await })
        };
        let beside = {
            let batches = batches.clone();
            tokio::spawn(async move { batches.run(None, 7).await })
        };
        while batches.waiting() < 3 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
        release.fetch_add(1, Ordering::SeqCst);
        assert_eq!(first.await.unwrap(), Ok(2));
        assert!(matches!(late.await.unwrap(), Err(BatchError::Late { .. })));
        let failed = Err(BatchError::Failed("thirteen".into()));
        assert_eq!(unlucky.await.unwrap(), failed);
        assert_eq!(beside.await.unwrap(), failed);
        assert_eq!(*sizes.lock().unwrap(), vec![1, 2]);
    }
}
