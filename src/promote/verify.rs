//! The verify command: re-read an artifact and check it against its
//! `_SUCCESS` and the contract.

use agentfinder_skills_reader::artifact::{read_data_file, read_manifest};
use agentfinder_skills_reader::contract::{ArtifactLocation, CATALOG_FILE};
use agentfinder_skills_reader::documents::check_streamed;
use agentfinder_skills_reader::read::{DocumentStats, ReadError};
use agentfinder_skills_reader::store::Store;

/// What a successful verification found.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The commit the artifact was built from.
    pub commit: String,
    /// Documents and skills counted.
    pub stats: DocumentStats,
}

/// Checks digests, schema, manifest, every document and the catalog.
pub async fn verify(store: &Store, location: &ArtifactLocation) -> Result<Verified, ReadError> {
    let (success, manifest) = read_manifest(store, location).await?;
    let stats = check_streamed(store, location, &success, &manifest).await?;
    let catalog_bytes = read_data_file(store, location, &success, &manifest, CATALOG_FILE).await?;
    let catalog: serde_json::Value =
        serde_json::from_slice(&catalog_bytes).map_err(|e| ReadError::Invalid {
            location: location.to_string(),
            file: CATALOG_FILE.to_string(),
            line: Some(e.line()),
            message: e.to_string(),
        })?;
    let entries = catalog["entries"].as_array().map_or(0, Vec::len) as u64;
    if entries != stats.skills {
        return Err(ReadError::Invalid {
            location: location.to_string(),
            file: CATALOG_FILE.to_string(),
            line: None,
            message: format!("{entries} entries for {} skills", stats.skills),
        });
    }
    Ok(Verified {
        commit: manifest.source_commit,
        stats,
    })
}
