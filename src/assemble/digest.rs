//! What shapes a build's output, as one digest: the builder's own
//! [`OUTPUT_VERSION`], the configuration, the schema, whether there are
//! vectors, and the search settings. It keys the parse cache
//! ([`EntryKeys`](super::keys::EntryKeys)) and is recorded in the manifest,
//! where it tells which artifact of a commit a build owns
//! ([`crate::write::variant`]).

use agentfinder_skills_reader::contract::SCHEMA_VERSION;
use sha2::{Digest, Sha256};

use super::settings::meilisearch_config;
use crate::config::Config;

/// Version of what this builder writes for the same files and the same
/// configuration. **Bump it with any change of output**: of parsing,
/// chunking, validation, findings, documents, the catalog or the
/// manifest. It keys the parse cache ([`crate::reuse`]) and the build
/// digest, so after a bump a build parses every file again and a commit
/// built before gets an artifact of its own. (The crate's version, 0.1.0
/// since the first commit, said nothing of the code.)
///
/// 3: the Agent Skills specification's rules as findings at their lines
/// (name-missing, compatibility-too-long, metadata-invalid, field-unknown).
/// 4: risk findings, content keys and trust in the documents (schema 7);
/// entry keys follow the shipped files' bytes and modes.
/// 5: the history walk's bound is an anchor commit, a function of the
/// built commit alone (`source::bound`): dates past it differ from 4's.
pub const OUTPUT_VERSION: u32 = 5;

/// Environment variable that stands in for [`OUTPUT_VERSION`], so a test
/// can run the same binary as a builder whose output changed.
pub const OUTPUT_VERSION_ENV: &str = "AGENTFINDER_OUTPUT_VERSION";

/// [`OUTPUT_VERSION`], or the number in [`OUTPUT_VERSION_ENV`].
pub fn output_version() -> u32 {
    std::env::var(OUTPUT_VERSION_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(OUTPUT_VERSION)
}

/// sha256 of what shapes a build's documents: the builder's
/// [`output_version`], the configuration's digest
/// (repository, walk, parse, chunk, links, catalog, embedder settings), the
/// schema version, whether vectors were computed, and the search settings
/// the manifest declares (a builder that ranks differently, say with other
/// stop words, writes an artifact of its own, which a sync then loads).
pub fn build_digest(config: &Config, vectors: bool) -> String {
    let key = serde_json::json!({
        "output_version": output_version(),
        "config": config.digest(),
        "schema_version": SCHEMA_VERSION,
        "vectors": vectors,
        "search_settings": meilisearch_config("", None).settings,
    });
    hex::encode(Sha256::digest(key.to_string().as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_follows_vectors_configuration_and_nothing_else() {
        let config = Config::default();
        let base = build_digest(&config, false);
        assert_eq!(base, build_digest(&config.clone(), false));
        assert_ne!(base, build_digest(&config, true));
        let mut chunked = config.clone();
        chunked.chunk.max_chars = 4000;
        assert_ne!(base, build_digest(&chunked, false));
        let mut renamed = config.clone();
        renamed.source.repo = Some("o/r".into());
        assert_ne!(base, build_digest(&renamed, false));
        let mut moved = config;
        moved.output.store = "s3://elsewhere".into();
        assert_eq!(base, build_digest(&moved, false));
    }
}
