//! Which artifact of a source commit a build owns.
//!
//! Commit artifacts are immutable, but one commit can be built more than
//! once in ways that change the documents: first without the model, then
//! with it; under another chunking; after the repository's name was fixed;
//! by a builder of a newer schema. Each such build gets an artifact of its
//! own. The first build of a commit owns `commits/<commit>/`; a build whose
//! [`build_digest`] differs from that one's owns
//! `commits/<commit>.<first 12 hex of its digest>/`. A build whose digest
//! matches an existing complete artifact is a no-op, as it always was.
//! Any of them can be promoted (same commit time, so never "older").

use agentfinder_skills_reader::artifact::{read_manifest, read_success};
use agentfinder_skills_reader::contract::{ArtifactLocation, Manifest, SCHEMA_VERSION};
use agentfinder_skills_reader::read::ReadError;
use agentfinder_skills_reader::store::Store;

use crate::assemble::digest::build_digest;
use crate::config::Config;

/// The id of the artifact of `commit` built with `digest` when
/// `commits/<commit>/` holds another build.
pub fn variant_id(commit: &str, digest: &str) -> String {
    format!("{commit}.{}", &digest[..12.min(digest.len())])
}

/// Where a build of one commit goes.
#[derive(Debug, Clone)]
pub enum Target {
    /// A complete artifact with this digest exists: nothing to build.
    Complete {
        /// Its location.
        location: ArtifactLocation,
        /// Its manifest.
        manifest: Box<Manifest>,
    },
    /// Build into `location`.
    Build {
        /// The artifact to write.
        location: ArtifactLocation,
        /// Why `commits/<commit>/` was not reused, when it exists.
        rebuild: Option<String>,
    },
}

/// Finds the artifact of `commit` a build with `digest` owns (see the
/// module documentation); `config` and `vectors` explain a rebuild.
pub async fn target(
    store: &Store,
    commit: &str,
    config: &Config,
    vectors: bool,
) -> Result<Target, ReadError> {
    let digest = build_digest(config, vectors);
    let primary = ArtifactLocation::Commit(commit.to_string());
    if read_success(store, &primary).await?.is_none() {
        return Ok(Target::Build {
            location: primary,
            rebuild: None,
        });
    }
    let (_, existing) = read_manifest(store, &primary).await?;
    if existing.build_digest.as_deref() == Some(digest.as_str()) {
        return Ok(Target::Complete {
            location: primary,
            manifest: Box::new(existing),
        });
    }
    let rebuild = Some(why_rebuilt(&existing, config, vectors));
    let variant = ArtifactLocation::Commit(variant_id(commit, &digest));
    if read_success(store, &variant).await?.is_some() {
        let (_, manifest) = read_manifest(store, &variant).await?;
        return Ok(Target::Complete {
            location: variant,
            manifest: Box::new(manifest),
        });
    }
    Ok(Target::Build {
        location: variant,
        rebuild,
    })
}

/// What differs between an existing artifact of the commit and this build.
pub fn why_rebuilt(existing: &Manifest, config: &Config, vectors: bool) -> String {
    let mut reasons = Vec::new();
    if existing.schema_version != SCHEMA_VERSION {
        reasons.push(format!(
            "schema {} -> {SCHEMA_VERSION}",
            existing.schema_version
        ));
    }
    match (existing.embedder.is_some(), vectors) {
        (false, true) => reasons.push("vectors are now available".to_string()),
        (true, false) => reasons.push("this build has no vectors".to_string()),
        _ => {}
    }
    if existing.source_repo != config.repo() {
        reasons.push(format!(
            "repository {} -> {}",
            existing.source_repo,
            config.repo()
        ));
    }
    let chunking = (config.chunk.max_chars, config.chunk.overlap_chars);
    if (existing.chunking.max_chars, existing.chunking.overlap_chars) != chunking {
        reasons.push(format!(
            "chunking {}/{} -> {}/{}",
            existing.chunking.max_chars, existing.chunking.overlap_chars, chunking.0, chunking.1
        ));
    }
    if reasons.is_empty() {
        reasons.push("configuration changed".to_string());
    }
    format!(
        "commits/{}/ was built differently ({})",
        existing.source_commit,
        reasons.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_is_named_by_the_first_12_hex_of_its_digest() {
        let digest = build_digest(&Config::default(), false);
        assert_eq!(variant_id("abc", &digest), format!("abc.{}", &digest[..12]));
    }
}
