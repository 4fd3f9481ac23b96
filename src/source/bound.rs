//! Where a history walk stops: a pure function of the built commit.
//!
//! A walk that stops a fixed number of commits below the built one moves
//! its bound with every new commit, and one that stops where the last
//! build stopped depends on what was built before: either way, the same
//! commit id would build to different bytes on different days. The walk
//! stops instead at an *anchor*: a commit whose id, read as a number, is a
//! multiple of `spacing` (one commit in `history_depth / 16`, by its
//! hash, so about evenly spread and known from the commit alone). The
//! bound is the first anchor at least half of `history_depth` below the
//! built commit; it moves only when a new anchor passes that mark, about
//! once per `spacing` commits, and every build of a commit (cold, patched
//! from its parent, or walking down to an earlier build's) finds the same
//! one. With no anchor before `history_depth` commits (about one built
//! commit in 3,000), the walk stops there, as before. Only the commits
//! above the bound are needed, so a shallow clone `history_depth + 1` deep
//! holds them. The walk so covers between half of `history_depth` and all
//! of it (about 2,800 commits at the default 5,000).

/// Where the walk from a commit stops, given its first-parent history
/// newest first (the commit itself at 0, as many as the clone holds up to
/// `depth + 1`): the index of the bound commit (walk the commits above
/// it), or `None` when the history ends before one (the root, or a
/// shallow boundary the caller handles) or `depth` is 0 (no bound).
pub fn bound_index(history: &[gix::ObjectId], depth: usize) -> Option<usize> {
    if depth == 0 {
        return None;
    }
    let spacing = anchor_spacing(depth);
    let first = depth.div_ceil(2);
    (first..=depth)
        .take_while(|at| *at < history.len())
        .find(|at| is_anchor(&history[*at], spacing) || *at == depth)
}

/// One commit in this many is an anchor.
fn anchor_spacing(depth: usize) -> u64 {
    u64::try_from(depth / 16).unwrap_or(u64::MAX).max(1)
}

/// Whether `id`'s first eight bytes, as a big-endian number, are a multiple
/// of `spacing`.
fn is_anchor(id: &gix::ObjectId, spacing: u64) -> bool {
    let mut head = [0u8; 8];
    let bytes = id.as_bytes();
    let n = bytes.len().min(8);
    head[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(head).is_multiple_of(spacing)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` ids whose first eight bytes read `7 i + seed` (so one in
    /// `spacing` is an anchor, in turn).
    fn ids(n: usize, seed: u8) -> Vec<gix::ObjectId> {
        (0..n)
            .map(|i| {
                let mut bytes = [seed; 20];
                bytes[..8].copy_from_slice(&(i as u64 * 7 + seed as u64).to_be_bytes());
                gix::ObjectId::from_bytes_or_panic(&bytes)
            })
            .collect()
    }

    #[test]
    fn no_depth_is_no_bound_and_a_short_history_ends_first() {
        let history = ids(10, 1);
        assert_eq!(bound_index(&history, 0), None);
        // Depth 40: the bound is at least 20 commits down, the history 10.
        assert_eq!(bound_index(&history, 40), None);
    }

    #[test]
    fn the_bound_is_the_first_anchor_past_half_the_depth() {
        // Depth 32: spacing 2, so an id whose number is even is an anchor.
        let history = ids(40, 1);
        let at = bound_index(&history, 32).unwrap();
        assert!((16..=32).contains(&at), "{at}");
        assert!(is_anchor(&history[at], 2));
        assert!((16..at).all(|i| !is_anchor(&history[i], 2)));
    }

    #[test]
    fn a_new_commit_keeps_the_bound_until_a_new_anchor_passes_the_mark() {
        // The same history seen from each of its commits: the bound commit
        // changes far less often than the built one.
        let history = ids(400, 3);
        let depth = 64; // spacing 4
        let bounds: Vec<gix::ObjectId> = (0..200)
            .map(|top| history[top + bound_index(&history[top..], depth).unwrap()])
            .collect();
        let moves = bounds.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(moves < 200 / 2, "{moves} moves in 200 commits");
        // And each is a pure function of where the walk starts.
        for top in 0..200 {
            let again = history[top + bound_index(&history[top..], depth).unwrap()];
            assert_eq!(again, bounds[top]);
        }
    }

    #[test]
    fn with_no_anchor_the_walk_stops_at_its_depth() {
        // All odd: no anchor for spacing 2.
        let history: Vec<_> = (0..50u64)
            .map(|i| {
                let mut bytes = [0u8; 20];
                bytes[..8].copy_from_slice(&(2 * i + 1).to_be_bytes());
                gix::ObjectId::from_bytes_or_panic(&bytes)
            })
            .collect();
        assert_eq!(bound_index(&history, 32), Some(32));
        assert_eq!(bound_index(&history[..20], 32), None);
    }
}
