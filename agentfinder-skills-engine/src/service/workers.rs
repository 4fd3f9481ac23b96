//! The threads behind the engine's queues ([`super::turns`] and
//! [`super::batches`]): a few named threads, one per core by default.

/// One thread per core of this machine (1 when that is unknown).
pub fn one_per_core() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Starts `count` threads (at least one) named `name-N`, each running
/// `body`; returns how many started (one the system refuses is left out).
pub(crate) fn start(name: &str, count: usize, body: impl Fn() + Clone + Send + 'static) -> usize {
    (0..count.max(1))
        .map(|n| {
            let body = body.clone();
            std::thread::Builder::new()
                .name(format!("{name}-{n}"))
                .spawn(body)
                .is_ok()
        })
        .filter(|&started| started)
        .count()
}
