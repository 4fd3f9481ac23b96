//! `I/N`: one job's share of work split between N jobs run at once, by a
//! hash of each item: `backfill --shard` builds the commits it owns, `build
//! --embed-shard` embeds the texts it owns.

/// `--shard I/N`: this job builds the commits whose id hashes to I of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard number.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

impl Shard {
    /// Parses `I/N` with 1 <= I <= N.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (index, count) = text
            .split_once('/')
            .ok_or_else(|| format!("--shard `{text}`: expected I/N, e.g. 2/4"))?;
        let index: u64 = index
            .trim()
            .parse()
            .map_err(|_| format!("--shard `{text}`: I is not a number"))?;
        let count: u64 = count
            .trim()
            .parse()
            .map_err(|_| format!("--shard `{text}`: N is not a number"))?;
        if count == 0 || index == 0 || index > count {
            return Err(format!("--shard `{text}`: need 1 <= I <= N"));
        }
        Ok(Self { index, count })
    }

    /// Whether this shard embeds a text of sha256 `digest` (`build
    /// --embed-shard`): its first 8 bytes, modulo N.
    pub fn owns_digest(&self, digest: &[u8; 32]) -> bool {
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_le_bytes(first) % self.count == self.index - 1
    }

    /// Whether this shard builds `commit`: the first 15 hex digits of the id,
    /// modulo N, so the split does not depend on which commits are listed.
    pub fn owns(&self, commit: &str) -> bool {
        let prefix = &commit[..commit.len().min(15)];
        let value = u64::from_str_radix(prefix, 16).unwrap_or(0);
        value % self.count == self.index - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_commits_disjointly_and_completely() {
        // Commit ids are uniformly distributed hex, like these digests.
        let commits: Vec<String> = (0..1000u32)
            .map(|i| hex::encode(&<sha2::Sha256 as sha2::Digest>::digest(i.to_le_bytes())[..20]))
            .collect();
        let shards: Vec<Shard> = (1..=4)
            .map(|i| Shard::parse(&format!("{i}/4")).unwrap())
            .collect();
        for commit in &commits {
            assert_eq!(
                shards.iter().filter(|s| s.owns(commit)).count(),
                1,
                "{commit}"
            );
        }
        for shard in &shards {
            let owned = commits.iter().filter(|c| shard.owns(c)).count();
            assert!((150..350).contains(&owned), "{shard:?} owns {owned}");
        }
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        for bad in ["0/4", "5/4", "1/0", "x/2", "3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
