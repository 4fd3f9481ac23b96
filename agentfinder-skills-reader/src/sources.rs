//! Many sources in one store: where each source's artifacts live
//! (`sources/<id>/`, each with the usual `commits/` and `latest/`), and the
//! report every many-source build leaves in `runs/<timestamp>.json`.
//!
//! The report says, per source, whether this run built it (`ok`), could not
//! build it (`failed`: bad input, a broken store) or could not reach it
//! (`unavailable`: missing on this machine, rate limited, down, too slow).
//! A source that was not `ok` keeps its previous `latest/`.

use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};
use serde::{Deserialize, Serialize};

use crate::artifact::{read_manifest, read_manifest_retrying};
use crate::contract::{ArtifactLocation, Manifest, SuccessMarker};
use crate::read::ReadError;
use crate::store::{redact_text, Store};

/// Folder of the per-source stores.
pub const SOURCES_DIR: &str = "sources";
/// Folder of the run reports.
pub const RUNS_DIR: &str = "runs";
/// Unavailable sources from which a run warns: TopGun's threshold, the
/// same as for registries.
pub const UNAVAILABLE_WARNING_AT: usize = 3;

/// How a source went in a run, or a registry in a search (TopGun's
/// `status`): it answered, it answered with an error, or it could not be
/// reached (down, timed out, rate limited).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceStatus {
    /// It answered (was built).
    Ok,
    /// It answered with an error (could not be built).
    Failed,
    /// It could not be reached.
    Unavailable,
}
/// Version of the run report's shape.
pub const RUN_REPORT_VERSION: u32 = 1;

/// The store of source `id` inside `store`.
pub fn source_store(store: &Store, id: &str) -> Store {
    store.scoped(&format!("{SOURCES_DIR}/{id}"))
}

/// The ids of the sources `store` holds (folders under `sources/`), sorted.
pub async fn list_sources(store: &Store) -> Result<Vec<String>, object_store::Error> {
    let listing = store
        .inner
        .list_with_delimiter(Some(&Path::from(SOURCES_DIR)))
        .await;
    let listing = match listing {
        Ok(listing) => listing,
        Err(object_store::Error::NotFound { .. }) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut ids: Vec<String> = listing
        .common_prefixes
        .iter()
        .filter_map(|p| p.filename().map(str::to_string))
        .filter(|id| crate::contract::is_valid_source_id(id))
        .collect();
    ids.sort();
    Ok(ids)
}

/// What identifies an artifact's content for loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactIdentity {
    /// Contract version.
    pub schema_version: u32,
    /// Source commit.
    pub source_commit: String,
    /// sha256 of the NDJSON.
    pub documents_sha256: String,
    /// Documents the NDJSON holds.
    pub document_count: u64,
    /// sha256 of the index settings the load applies ([`settings_digest`]).
    pub settings_sha256: String,
}

impl ArtifactIdentity {
    /// The identity of a manifest's artifact.
    pub fn of(manifest: &Manifest) -> Self {
        Self {
            schema_version: manifest.schema_version,
            source_commit: manifest.source_commit.clone(),
            documents_sha256: manifest.documents_digest(),
            document_count: manifest.document_count,
            settings_sha256: settings_digest(manifest),
        }
    }
}

/// sha256 of the Meilisearch settings `manifest` declares: a new builder
/// may rank the same documents differently (other stop words, say), and
/// the live index must then be loaded again under them.
pub fn settings_digest(manifest: &Manifest) -> String {
    use sha2::Digest;
    let text = serde_json::to_string(&manifest.meilisearch.settings).unwrap_or_default();
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

/// One artifact of what a load reads.
#[derive(Debug, Clone)]
pub struct ArtifactPart {
    /// The source id, for a source's `latest/`; `None` for the store's own.
    pub source: Option<String>,
    /// The store it lives in (a source's own store for a source).
    pub store: Store,
    /// Where in that store.
    pub location: ArtifactLocation,
    /// Its `_SUCCESS`.
    pub success: SuccessMarker,
    /// Its manifest.
    pub manifest: Manifest,
}

/// What one index is loaded from: a single artifact, or the union of the
/// store's own `latest/` (if any) and every source's `latest/`.
#[derive(Debug, Clone)]
pub struct ArtifactSet {
    /// The artifacts, the store's own first, then sources by id.
    pub parts: Vec<ArtifactPart>,
    /// Sources whose `latest/` could not be read, and why; the rest load.
    pub left_out: Vec<(String, String)>,
}

impl ArtifactSet {
    /// Reads the manifests of what a load of `location` takes from `store`:
    /// `commits/<id>/` alone, or for `latest/`, the union described on
    /// [`ArtifactSet`]. Each read retries a promotion in progress
    /// (`attempts`, doubling pauses from `pause`). Fails only when nothing
    /// can be read.
    pub async fn read(
        store: &Store,
        location: &ArtifactLocation,
        attempts: u32,
        pause: std::time::Duration,
    ) -> Result<Self, ReadError> {
        let sources = match location {
            ArtifactLocation::Latest => list_sources(store)
                .await
                .map_err(|e| ReadError::store(&SOURCES_DIR, &e))?,
            ArtifactLocation::Commit(_) => Vec::new(),
        };
        if sources.is_empty() {
            let (success, manifest) =
                read_manifest_retrying(store, location, attempts, pause).await?;
            return Ok(Self {
                parts: vec![ArtifactPart {
                    source: None,
                    store: store.clone(),
                    location: location.clone(),
                    success,
                    manifest,
                }],
                left_out: Vec::new(),
            });
        }
        let mut set = Self {
            parts: Vec::new(),
            left_out: Vec::new(),
        };
        // The store's own latest/ joins when there is one. Beside sources
        // its absence (nothing there at all) is normal and is not waited
        // for; a promotion under way (some files there) is.
        let own = match read_manifest(store, location).await {
            Err(ReadError::Empty { .. }) => None,
            Err(e) if e.is_transient() => read_manifest_retrying(store, location, attempts, pause)
                .await
                .ok(),
            other => other.ok(),
        };
        if let Some((success, manifest)) = own {
            set.parts.push(ArtifactPart {
                source: None,
                store: store.clone(),
                location: location.clone(),
                success,
                manifest,
            });
        }
        let mut last_error = None;
        for id in sources {
            let scoped = source_store(store, &id);
            match read_manifest_retrying(&scoped, location, attempts, pause).await {
                Ok((success, manifest)) => set.parts.push(ArtifactPart {
                    source: Some(id),
                    store: scoped,
                    location: location.clone(),
                    success,
                    manifest,
                }),
                Err(e) => {
                    set.left_out.push((id, reason_text(&e.to_string())));
                    last_error = Some(e);
                }
            }
        }
        match (set.parts.is_empty(), last_error) {
            (true, Some(e)) => Err(e),
            _ => Ok(set),
        }
    }

    /// What identifies the set's content for loading: a single artifact's
    /// own identity (so an index loaded before sources existed stays up to
    /// date), else one made of every part's id, commit and digest.
    pub fn identity(&self) -> ArtifactIdentity {
        if let [part] = self.parts.as_slice() {
            if part.source.is_none() {
                return ArtifactIdentity::of(&part.manifest);
            }
        }
        let mut digest = <sha2::Sha256 as sha2::Digest>::new();
        let mut commits = Vec::new();
        for part in &self.parts {
            let name = part.source.as_deref().unwrap_or(".");
            let sha = part.manifest.documents_digest();
            sha2::Digest::update(&mut digest, format!("{name}\0{sha}\n").as_bytes());
            commits.push(format!("{name}@{}", part.manifest.source_commit));
        }
        ArtifactIdentity {
            schema_version: self
                .parts
                .iter()
                .map(|p| p.manifest.schema_version)
                .min()
                .unwrap_or_default(),
            source_commit: commits.join(","),
            documents_sha256: hex::encode(sha2::Digest::finalize(digest)),
            document_count: self.document_count(),
            settings_sha256: self
                .leading_manifest()
                .map(settings_digest)
                .unwrap_or_default(),
        }
    }

    /// Documents of every part.
    pub fn document_count(&self) -> u64 {
        self.parts.iter().map(|p| p.manifest.document_count).sum()
    }

    /// The manifest whose index name and settings the load applies: the
    /// first with vectors (its embedder must be declared for their
    /// `_vectors`), else the first.
    pub fn leading_manifest(&self) -> Option<&Manifest> {
        self.parts
            .iter()
            .find(|p| p.manifest.embedder.is_some())
            .or_else(|| self.parts.first())
            .map(|p| &p.manifest)
    }
}

/// How one source went in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceOutcome {
    /// The source id.
    pub source: String,
    /// `ok`, `failed` or `unavailable`.
    pub status: SourceStatus,
    /// Why it was not `ok`; `null` when it was.
    pub reason: Option<String>,
    /// Wall time of the source, milliseconds (retries included).
    pub latency_ms: u64,
    /// Documents its artifact holds (0 when not `ok`).
    pub result_count: u64,
    /// The version built (a commit, or `folder-<digest>`), when `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// `runs/<timestamp>.json`: one many-source build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// [`RUN_REPORT_VERSION`].
    pub report_version: u32,
    /// When the run started, RFC 3339 UTC.
    pub started_at: String,
    /// Its wall time, milliseconds.
    pub elapsed_ms: u64,
    /// Every source the run was asked to build, in configuration order.
    pub sources: Vec<SourceOutcome>,
    /// Sources `ok`.
    pub ok_count: usize,
    /// Sources `failed`.
    pub failed_count: usize,
    /// Sources `unavailable`.
    pub unavailable_count: usize,
    /// Whether [`UNAVAILABLE_WARNING_AT`] or more were unavailable.
    pub unavailable_warning: bool,
}

impl RunReport {
    /// The report of `sources`, counted.
    pub fn new(started_at: String, elapsed_ms: u64, sources: Vec<SourceOutcome>) -> Self {
        let count = |status| sources.iter().filter(|s| s.status == status).count();
        let unavailable_count = count(SourceStatus::Unavailable);
        Self {
            report_version: RUN_REPORT_VERSION,
            started_at,
            elapsed_ms,
            ok_count: count(SourceStatus::Ok),
            failed_count: count(SourceStatus::Failed),
            unavailable_count,
            unavailable_warning: unavailable_count >= UNAVAILABLE_WARNING_AT,
            sources,
        }
    }

    /// Its path in the store: `runs/<started_at without punctuation>.json`
    /// (`runs/20261201T101500Z.json`), so names sort by time.
    pub fn path(&self) -> String {
        let stamp: String = self
            .started_at
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        format!("{RUNS_DIR}/{stamp}.json")
    }

    /// The unavailable sources and their reasons, `id (reason), ...`.
    pub fn unavailable_list(&self) -> String {
        self.reasons(|status| status == SourceStatus::Unavailable)
    }

    /// The sources whose status `keep` accepts, with their reasons,
    /// `id (reason), ...`.
    pub fn reasons(&self, keep: impl Fn(SourceStatus) -> bool) -> String {
        self.sources
            .iter()
            .filter(|s| keep(s.status))
            .map(|s| format!("{} ({})", s.source, s.reason.as_deref().unwrap_or("?")))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Writes it to `store` (reports are never overwritten: a second run in
    /// the same second gets a suffix). Returns the path.
    pub async fn write(&self, store: &Store) -> Result<String, object_store::Error> {
        let mut bytes =
            serde_json::to_vec_pretty(self).map_err(|e| object_store::Error::Generic {
                store: "run report",
                source: Box::new(e),
            })?;
        bytes.push(b'\n');
        let base = self.path();
        for n in 0..100 {
            let path = match n {
                0 => base.clone(),
                n => base.replace(".json", &format!("-{n}.json")),
            };
            let put = store
                .inner
                .put_opts(
                    &Path::from(path.as_str()),
                    PutPayload::from(bytes.clone()),
                    object_store::PutMode::Create.into(),
                )
                .await;
            match put {
                Ok(_) => return Ok(path),
                Err(object_store::Error::AlreadyExists { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(object_store::Error::Generic {
            store: "run report",
            source: format!("100 reports named {base} already exist").into(),
        })
    }
}

/// Run reports a many-source build keeps (the newest ones).
pub const RUNS_KEPT: usize = 30;

/// The run reports of `store`, oldest first.
async fn run_paths(store: &Store) -> Result<Vec<Path>, object_store::Error> {
    let prefix = Path::from(RUNS_DIR);
    let mut names: Vec<Path> = store
        .inner
        .list(Some(&prefix))
        .map_ok(|meta| meta.location)
        .try_collect()
        .await?;
    names.retain(|p| p.as_ref().ends_with(".json"));
    names.sort_by_key(|p| run_order(p.as_ref()));
    Ok(names)
}

/// Removes all but the newest `keep` run reports; returns how many went.
pub async fn prune_runs(store: &Store, keep: usize) -> Result<usize, object_store::Error> {
    let names = run_paths(store).await?;
    let old = names.len().saturating_sub(keep.max(1));
    for path in &names[..old] {
        match store.inner.delete(path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(old)
}

/// The newest run report of `store`, if any can be read.
pub async fn latest_run(store: &Store) -> Option<RunReport> {
    let newest = run_paths(store).await.ok()?.pop()?;
    let bytes = store.inner.get(&newest).await.ok()?.bytes().await.ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Sort key of a report path: its stamp, then its suffix as a number.
fn run_order(path: &str) -> (String, u32) {
    let name = path
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .trim_end_matches(".json");
    match name.split_once('-') {
        Some((stamp, n)) => (stamp.to_string(), n.parse().unwrap_or(0)),
        None => (name.to_string(), 0),
    }
}

/// A reason as it goes into a report: one line, secrets removed, at most
/// 300 characters.
pub fn reason_text(text: &str) -> String {
    let one_line = redact_text(text).replace('\n', " ");
    if one_line.chars().count() <= 300 {
        one_line
    } else {
        let cut: String = one_line.chars().take(299).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(source: &str, status: SourceStatus) -> SourceOutcome {
        SourceOutcome {
            source: source.into(),
            status,
            reason: (status != SourceStatus::Ok).then(|| "why".to_string()),
            latency_ms: 1,
            result_count: 0,
            version: None,
        }
    }

    #[test]
    fn three_unavailable_sources_raise_the_warning() {
        use SourceStatus::*;
        let two = RunReport::new(
            "2026-12-01T10:15:00Z".into(),
            5,
            vec![
                outcome("a", Ok),
                outcome("b", Unavailable),
                outcome("c", Unavailable),
            ],
        );
        assert!(!two.unavailable_warning);
        assert_eq!((two.ok_count, two.unavailable_count), (1, 2));
        assert_eq!(two.path(), "runs/20261201T101500Z.json");
        let mut sources = two.sources.clone();
        sources.push(outcome("d", Unavailable));
        sources.push(outcome("e", Failed));
        let three = RunReport::new(two.started_at.clone(), 5, sources);
        assert!(three.unavailable_warning);
        assert_eq!(three.failed_count, 1);
        assert_eq!(three.unavailable_list(), "b (why), c (why), d (why)");
    }

    #[test]
    fn reports_sort_by_stamp_then_suffix() {
        let mut paths = [
            "runs/20261201T101500Z-10.json",
            "runs/20261201T101500Z-2.json",
            "runs/20261130T000000Z.json",
        ];
        paths.sort_by_key(|p| run_order(p));
        assert_eq!(paths[2], "runs/20261201T101500Z-10.json");
        assert_eq!(paths[0], "runs/20261130T000000Z.json");
    }
}
