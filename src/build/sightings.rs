//! After an artifact is complete: the store's record of when each copy of
//! a content was first met ([`agentfinder_skills_reader::seen`]).

use agentfinder_skills_reader::store::Store;

use crate::logging::Reporter;

/// Adds the places of the skills this build met to the store's record of
/// when a skill was first met at each ([`agentfinder_skills_reader::seen`]), after its artifact is
/// complete. The record only orders copies: failing to write it is a
/// warning, and the next build adds what this one could not.
pub(super) async fn record_first_sightings(
    store: &Store,
    met: &std::collections::BTreeMap<String, String>,
    reporter: &Reporter,
) {
    if met.is_empty() {
        return;
    }
    let now = crate::source::rfc3339(crate::time::unix_seconds());
    match agentfinder_skills_reader::seen::record(store, met, &now).await {
        Ok(0) => {}
        Ok(new) => reporter.info("build", format!("{new} contents seen for the first time")),
        Err(e) => reporter.warn(
            "build",
            format!(
                "could not update {}: {e}",
                agentfinder_skills_reader::seen::SEEN_FILE
            ),
        ),
    }
}
