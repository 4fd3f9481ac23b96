//! How the model's work is spread over the cores: each forward pass on one
//! thread, as many passes side by side as there are threads.
//!
//! By default candle splits every operation of a pass across all cores,
//! and the threads meet at a spin barrier after each one. A sentence model
//! is many small operations (a query is 12 tokens, a section at most 256),
//! so the cores spend much of a pass waiting for each other. The embed
//! stage already runs batches side by side on rayon's pool and `serve`
//! embeds one query per search worker, so one thread a pass loses no
//! parallelism and saves the waits. Measured on these 2 cores (release):
//! the first embed of AgentWorkers' texts (`cargo bench --bench
//! embed_throughput`, batch 8, sorted by tokens) 17.8 -> 23.6 texts/s;
//! query vectors (`cargo bench --bench query_embed`) one at a time
//! 13.7 -> 12.6 ms a pass, two workers at once 143 queries/s.
//!
//! candle reads its thread count from `RAYON_NUM_THREADS` (and
//! `CANDLE_NUM_THREADS`) at each operation, with no other setting, so the
//! choice is made through the environment, once, before any thread
//! starts.

/// What [`one_thread_per_pass`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassThreads {
    /// Each forward pass runs on one thread; rayon's global pool, which
    /// runs the passes (and the other stages' parallel work), has
    /// `side_by_side` threads.
    OneThreadEach {
        /// Threads in rayon's global pool.
        side_by_side: usize,
    },
    /// `CANDLE_NUM_THREADS` was already set (by the user, who chose
    /// candle's threads, or by an earlier call): nothing was changed.
    CandleThreadsSet,
    /// rayon's global pool had already started, so its size could not be
    /// kept apart from candle's; nothing was changed (each pass uses every
    /// thread, as candle does by default).
    PoolAlreadyStarted,
}

/// Makes each forward pass of the model run on one thread while rayon's
/// global pool keeps `RAYON_NUM_THREADS` threads (else one per core); see
/// the module's documentation for why.
///
/// Call it first thing in `main`, before any other thread starts: it sets
/// environment variables, which another thread may be reading. The
/// binary does; a library user that does not keeps candle's default.
pub fn one_thread_per_pass() -> PassThreads {
    if std::env::var_os("CANDLE_NUM_THREADS").is_some() {
        return PassThreads::CandleThreadsSet;
    }
    let side_by_side = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let started = rayon::ThreadPoolBuilder::new()
        .num_threads(side_by_side)
        .build_global();
    if started.is_err() {
        return PassThreads::PoolAlreadyStarted;
    }
    std::env::set_var("RAYON_NUM_THREADS", "1");
    std::env::set_var("CANDLE_NUM_THREADS", "1");
    PassThreads::OneThreadEach { side_by_side }
}
