//! The wall clock, in the units the artifact and the locks use.

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn unix_seconds() -> i64 {
    (unix_millis() / 1000) as i64
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
