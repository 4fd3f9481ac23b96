//! Whether `latest/` may move to a new build: the same repository, not
//! backwards, not shrunk past the configured ratio.
//!
//! Backwards is decided by the source's history where it can say
//! ([`Lineage`]): a commit that descends from the one `latest/` holds moves
//! it forward whatever the two commits' dates (a contributor's clock set to
//! 2099 must not freeze `latest/`), and an ancestor of it moves it
//! backwards. Only where history cannot order them (no history at hand, as
//! for `promote --commit` or a plain folder; a shallow clone that stops
//! short; a rewritten branch) are their dates compared.

use agentfinder_skills_reader::contract::Manifest;

use super::PromoteError;
use crate::source::Lineage;

/// The age and shrink checks of `new` against `current`, with no history
/// to order them: dates decide.
pub fn check(
    new: &Manifest,
    current: &Manifest,
    max_shrink_ratio: f64,
) -> Result<(), PromoteError> {
    let unknown = Lineage::Unknown("no history at hand".into());
    check_ordered(new, current, max_shrink_ratio, &unknown)
}

/// The repository, age and shrink checks of `new` against `current`,
/// where `lineage` says how `new`'s commit stands to `current`'s.
pub fn check_ordered(
    new: &Manifest,
    current: &Manifest,
    max_shrink_ratio: f64,
    lineage: &Lineage,
) -> Result<(), PromoteError> {
    if new.source_repo != current.source_repo {
        return Err(PromoteError::OtherRepository {
            commit: new.source_commit.clone(),
            repo: new.source_repo.clone(),
            latest: current.source_commit.clone(),
            latest_repo: current.source_repo.clone(),
        });
    }
    if new.source_commit == current.source_commit {
        return Ok(());
    }
    match lineage {
        Lineage::Descends => {}
        Lineage::Behind => {
            return Err(PromoteError::Behind {
                commit: new.source_commit.clone(),
                latest: current.source_commit.clone(),
            })
        }
        Lineage::Diverged | Lineage::Unknown(_) => older_by_date(new, current, lineage)?,
    }
    let floor = current.document_count as f64 * (1.0 - max_shrink_ratio);
    if (new.document_count as f64) < floor {
        return Err(PromoteError::Shrunk {
            commit: new.source_commit.clone(),
            documents: new.document_count,
            latest: current.source_commit.clone(),
            latest_documents: current.document_count,
            ratio: max_shrink_ratio,
        });
    }
    Ok(())
}

/// Refuses `new` when it was committed before `current`.
fn older_by_date(
    new: &Manifest,
    current: &Manifest,
    lineage: &Lineage,
) -> Result<(), PromoteError> {
    let time = |m: &Manifest| humantime::parse_rfc3339(&m.source_commit_time).ok();
    let (Some(new_time), Some(current_time)) = (time(new), time(current)) else {
        return Ok(());
    };
    if new_time >= current_time {
        return Ok(());
    }
    let order = match lineage {
        Lineage::Diverged => "neither commit descends from the other (was the branch rewritten?), so their dates decide".to_string(),
        Lineage::Unknown(why) if why == "no history at hand" => "no history at hand to order them, so their dates decide".to_string(),
        Lineage::Unknown(why) => format!("{why}, so their dates decide"),
        Lineage::Descends | Lineage::Behind => String::new(),
    };
    Err(PromoteError::Older {
        commit: new.source_commit.clone(),
        time: new.source_commit_time.clone(),
        latest: current.source_commit.clone(),
        latest_time: current.source_commit_time.clone(),
        order,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::meilisearch_config;
    use agentfinder_skills_reader::contract::{BuilderInfo, ChunkingInfo};
    use std::collections::BTreeMap;

    fn manifest(commit: &str, time: &str, documents: u64) -> Manifest {
        Manifest {
            schema_version: 1,
            source_repo: "o/r".into(),
            source_url: "https://github.com/o/r.git".into(),
            source_branch: "main".into(),
            source_commit: commit.into(),
            generated_at: time.into(),
            document_count: documents,
            index: "hf_skills".into(),
            artifact: "hf-skills.ndjson".into(),
            artifacts: BTreeMap::new(),
            skill_count: 1,
            source_commit_time: time.into(),
            files: BTreeMap::new(),
            builder: BuilderInfo {
                name: "t".into(),
                version: "0".into(),
            },
            chunking: ChunkingInfo {
                max_chars: 12000,
                overlap_chars: 800,
            },
            config_digest: String::new(),
            meilisearch: meilisearch_config("hf_skills", None),
            embedder: None,
            skipped: Vec::new(),
            warnings: Vec::new(),
            skipped_counts: BTreeMap::new(),
            warning_counts: BTreeMap::new(),
            artifact_id: None,
            build_digest: None,
            layout: None,
            parts: None,
        }
    }

    #[test]
    fn another_repositorys_build_is_refused_even_when_newer() {
        let current = manifest("b", "2026-01-02T00:00:00Z", 100);
        let mut other = manifest("c", "2026-01-03T00:00:00Z", 100);
        other.source_repo = "anthropics/skills".into();
        let err = check(&other, &current, 0.5).unwrap_err();
        assert!(matches!(err, PromoteError::OtherRepository { .. }), "{err}");
        assert!(err.to_string().contains("anthropics/skills"), "{err}");
    }

    #[test]
    fn newer_or_equal_commits_pass_older_ones_do_not() {
        let current = manifest("b", "2026-01-02T00:00:00Z", 100);
        assert!(check(&manifest("c", "2026-01-03T00:00:00Z", 100), &current, 0.5).is_ok());
        assert!(check(&manifest("c", "2026-01-02T00:00:00Z", 100), &current, 0.5).is_ok());
        let err = check(&manifest("a", "2026-01-01T00:00:00Z", 100), &current, 0.5).unwrap_err();
        assert!(matches!(err, PromoteError::Older { .. }), "{err}");
    }

    #[test]
    fn history_orders_commits_whatever_their_dates() {
        let current = manifest("b", "2099-01-01T00:00:00Z", 100);
        let today = manifest("c", "2026-01-03T00:00:00Z", 100);
        // A descendant moves latest/ on, though its date is older.
        assert!(check_ordered(&today, &current, 0.5, &Lineage::Descends).is_ok());
        // An ancestor never does, though its date is newer.
        let err = check_ordered(&current, &today, 0.5, &Lineage::Behind).unwrap_err();
        assert!(matches!(err, PromoteError::Behind { .. }), "{err}");
        // Where history cannot say, dates decide, and the message says why.
        for lineage in [Lineage::Diverged, Lineage::Unknown("shallow".into())] {
            let err = check_ordered(&today, &current, 0.5, &lineage).unwrap_err();
            assert!(matches!(err, PromoteError::Older { .. }), "{err}");
        }
        let err = check_ordered(&today, &current, 0.5, &Lineage::Diverged).unwrap_err();
        assert!(err.to_string().contains("neither commit descends"), "{err}");
        // The shrink check still holds for a descendant.
        let shrunk = manifest("c", "2026-01-03T00:00:00Z", 10);
        let err = check_ordered(&shrunk, &current, 0.5, &Lineage::Descends).unwrap_err();
        assert!(matches!(err, PromoteError::Shrunk { .. }), "{err}");
    }

    #[test]
    fn shrinking_past_the_ratio_is_refused() {
        let current = manifest("b", "2026-01-02T00:00:00Z", 100);
        let newer = |docs| manifest("c", "2026-01-03T00:00:00Z", docs);
        assert!(check(&newer(50), &current, 0.5).is_ok());
        assert!(matches!(
            check(&newer(49), &current, 0.5),
            Err(PromoteError::Shrunk { .. })
        ));
        assert!(check(&newer(0), &current, 1.0).is_ok());
        // The same commit again is never refused.
        assert!(check(&manifest("b", "2026-01-02T00:00:00Z", 1), &current, 0.5).is_ok());
    }
}
