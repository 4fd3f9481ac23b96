//! The commands over artifacts already built: `verify`, `materialize`
//! and `promote`.

use agentfinder_skills::promote::verify::{verify, Verified};
use agentfinder_skills::promote::{promote, PromotePolicy, Promotion};
use agentfinder_skills_reader::contract::{is_valid_source_id, ArtifactLocation};
use agentfinder_skills_reader::read::ReadError;
use agentfinder_skills_reader::sources::{list_sources, source_store};
use agentfinder_skills_reader::store::{Store, StoreError};

use crate::args::{MaterializeArgs, PromoteArgs, VerifyArgs};
use crate::{exit, setup, Access, Failure};

pub async fn run_verify(
    args: VerifyArgs,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    let (_, store, reporter) = setup(&args.common, config_path, Access::Read).map_err(|f| {
        // A store nothing was built into holds nothing that verifies.
        let empty = matches!(f.error.downcast_ref(), Some(StoreError::Empty { .. }));
        match empty {
            true => Failure::new(exit::VERIFY_FAILED, f.error),
            false => f,
        }
    })?;
    let location = ArtifactLocation::parse(&args.commit);
    let failed = |e| Failure::new(exit::VERIFY_FAILED, e);
    if let Some(id) = &args.source {
        if !is_valid_source_id(id) {
            return Err(Failure::new(
                exit::FAILURE,
                anyhow::anyhow!(
                    "--source {id}: not a source id (lowercase letters, digits, '-' and '_')"
                ),
            ));
        }
        let verified = verify(&source_store(&store, id), &location)
            .await
            .map_err(|e| failed(anyhow::Error::new(e).context(format!("source {id}"))))?;
        report_verified(&reporter, &store, Some(id), &location, &verified);
        return Ok(());
    }
    let empty = match verify(&store, &location).await {
        Ok(verified) => {
            report_verified(&reporter, &store, None, &location, &verified);
            return Ok(());
        }
        Err(e @ ReadError::Empty { .. }) => e,
        Err(e) => return Err(failed(e.into())),
    };
    // A store of many sources ([[sources]]) holds each in sources/<id>/
    // (a store that cannot be listed holds none verify can read).
    let sources = list_sources(&store).await.unwrap_or_default();
    if sources.is_empty() {
        return Err(failed(empty.into()));
    }
    let mut verified_any = false;
    for id in &sources {
        match verify(&source_store(&store, id), &location).await {
            Ok(verified) => {
                report_verified(&reporter, &store, Some(id), &location, &verified);
                verified_any = true;
            }
            // A commit is one source's: the others do not hold it.
            Err(ReadError::Empty { .. }) if location != ArtifactLocation::Latest => {}
            Err(e) => {
                let context = format!("source {id} (sources/{id}/ of {})", store.display);
                return Err(failed(anyhow::Error::new(e).context(context)));
            }
        }
    }
    if !verified_any {
        return Err(failed(anyhow::anyhow!(
            "no source of {} holds {location} (sources: {})",
            store.display,
            sources.join(", ")
        )));
    }
    Ok(())
}

/// The summary line of one verified artifact (of source `id`, if any).
fn report_verified(
    reporter: &agentfinder_skills::logging::Reporter,
    store: &Store,
    id: Option<&str>,
    location: &ArtifactLocation,
    verified: &Verified,
) {
    let source = id.map_or(String::new(), |id| format!(" source={id}"));
    let text = format!(
        "verified: {location}{source} commit={} documents={} skills={} store={}",
        verified.commit, verified.stats.documents, verified.stats.skills, store.display
    );
    let fields = serde_json::json!({
        "event": "verify", "location": location.to_string(), "source": id, "commit": verified.commit,
        "documents": verified.stats.documents, "skills": verified.stats.skills, "store": store.display,
    });
    reporter.summary(&text, fields);
}

pub async fn run_materialize(
    args: MaterializeArgs,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    use agentfinder_skills::promote::materialize::{materialize, MaterializeError};
    let (_, store, reporter) = setup(&args.common, config_path, Access::Read)?;
    let location = ArtifactLocation::parse(&args.commit);
    let done = materialize(&store, &location, &args.out)
        .await
        .map_err(|e| {
            let code = match &e {
                MaterializeError::Read(_) => exit::VERIFY_FAILED,
                MaterializeError::Io { .. } => exit::STORAGE,
            };
            Failure::new(code, e)
        })?;
    let text = format!(
        "materialized: {location} commit={} documents={} into {}",
        done.manifest.source_commit,
        done.manifest.document_count,
        args.out.display()
    );
    let fields = serde_json::json!({
        "event": "materialize", "location": location.to_string(),
        "commit": done.manifest.source_commit, "documents": done.manifest.document_count,
        "out": args.out.display().to_string(),
    });
    reporter.summary(&text, fields);
    Ok(())
}

pub async fn run_promote(
    args: PromoteArgs,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    let (config, store, reporter) = setup(&args.common, config_path, Access::Write)?;
    let policy = PromotePolicy {
        force: args.force,
        max_shrink_ratio: config.promote.max_shrink_ratio,
    };
    let outcome = promote(&store, &args.commit, policy)
        .await
        .map_err(|e| Failure::new(promote_code(&e), e))?;
    let what = match outcome {
        Promotion::AlreadyLatest => "already-latest",
        Promotion::Promoted { .. } => "promoted",
    };
    let text = format!(
        "promote: commit={} latest={what} store={}",
        args.commit, store.display
    );
    let fields = serde_json::json!({"event": "promote", "commit": args.commit, "latest": what, "store": store.display});
    reporter.summary(&text, fields);
    Ok(())
}

pub fn promote_code(error: &agentfinder_skills::promote::PromoteError) -> u8 {
    use agentfinder_skills::promote::PromoteError;
    match error {
        PromoteError::Older { .. }
        | PromoteError::Behind { .. }
        | PromoteError::Shrunk { .. }
        | PromoteError::OtherRepository { .. } => exit::PROMOTION_REFUSED,
        PromoteError::Read(_)
        | PromoteError::Write(_)
        | PromoteError::Lock(_)
        | PromoteError::Stage { .. } => exit::STORAGE,
    }
}
