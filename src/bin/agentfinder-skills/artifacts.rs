//! The commands over artifacts already built: `verify`, `materialize`
//! and `promote`.

use agentfinder_skills::promote::verify::verify;
use agentfinder_skills::promote::{promote, PromotePolicy, Promotion};
use agentfinder_skills_reader::contract::ArtifactLocation;

use crate::args::{MaterializeArgs, PromoteArgs, VerifyArgs};
use crate::{exit, setup, Access, Failure};

pub async fn run_verify(
    args: VerifyArgs,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    let (_, store, reporter) = setup(&args.common, config_path, Access::Read)?;
    let location = ArtifactLocation::parse(&args.commit);
    let verified = verify(&store, &location)
        .await
        .map_err(|e| Failure::new(exit::VERIFY_FAILED, e))?;
    let text = format!(
        "verified: {location} commit={} documents={} skills={} store={}",
        verified.commit, verified.stats.documents, verified.stats.skills, store.display
    );
    let fields = serde_json::json!({
        "event": "verify", "location": location.to_string(), "commit": verified.commit,
        "documents": verified.stats.documents, "skills": verified.stats.skills, "store": store.display,
    });
    reporter.summary(&text, fields);
    Ok(())
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
        | PromoteError::Shrunk { .. }
        | PromoteError::OtherRepository { .. } => exit::PROMOTION_REFUSED,
        PromoteError::Read(_)
        | PromoteError::Write(_)
        | PromoteError::Lock(_)
        | PromoteError::Stage { .. } => exit::STORAGE,
    }
}
