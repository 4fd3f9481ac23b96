//! Turning the skill files of one version into the artifact's parts: each
//! file's entry (reused from an earlier build when its inputs are the same,
//! else made from its parse: documents validated, embedded and appended to
//! this build's pack, its catalog object and findings lines), then the
//! buckets and the manifest that name them.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use bytes::Bytes;
use sha2::{Digest, Sha256};

use agentfinder_skills_reader::contract::parts::{
    PartEntry, PartRef, BUCKET_COUNT, LIST_SIZE, PACKS_DIR,
};
use agentfinder_skills_reader::contract::{Document, Manifest, SkippedFile, KIND_SKILL};

use self::catalog::{catalog_entry, catalog_host, CatalogHost};
use self::document::{signals_of, skill_documents, BuildContext, SkillInput};
use self::keys::{build_context, entry_keys, EntryKeys};
use self::marketplace::Marketplace;
use self::spill::EntrySpill;
use crate::config::Config;
use crate::embed::{EmbedError, Embedder};
use crate::parse::read::Extracted;
use crate::reuse::BucketTree;
use crate::source::Change;
use crate::store::staging::{HashingFile, StagedFile};
use crate::validate::diagnostics::Finding;
use crate::validate::finding_lines::{finding_line, skip_line};
use crate::validate::findings::FindingsSummary;
use crate::validate::risk::Severity;
use crate::validate::{check_skill, DocumentChecker, DocumentError};
use crate::walk::skill_folder;

pub mod catalog;
pub mod digest;
pub mod document;
mod finish;
pub mod keys;
pub mod marketplace;
mod settings;
mod spill;

pub use settings::meilisearch_config;

/// Everything known about the version being built.
#[derive(Debug, Clone)]
pub struct VersionInfo {
    /// Commit (or folder) id.
    pub commit: String,
    /// Commit time, RFC 3339.
    pub commit_time: String,
    /// Branch or ref.
    pub branch: String,
    /// The commit that last changed each skill file, by path; a file
    /// missing from it is pinned to the built commit, with no `last_updated`.
    pub changes: std::sync::Arc<HashMap<String, Change>>,
    /// The files of each skill file's folder besides it, relative to the
    /// folder, in path order ([`crate::walk::supporting_files`]); a file missing
    /// from it ships nothing.
    pub folder_files: std::sync::Arc<HashMap<String, Vec<String>>>,
    /// The same files as entries of the tree, by skill file.
    pub shipped: std::sync::Arc<HashMap<String, Vec<crate::source::Entry>>>,
}

/// Assembling failed.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    /// A document broke the contract (a bug, or an id collision).
    #[error(transparent)]
    Document(#[from] DocumentError),
    /// A sink could not be written.
    #[error("writing the artifact: {0}")]
    Io(#[from] std::io::Error),
    /// The embed stage failed.
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

/// What the build found and made, besides the parts.
#[derive(Debug, Clone)]
pub struct Assembled {
    /// The manifest, without the artifact id yet.
    pub manifest: Manifest,
    /// Counts and examples of the warnings and skips (all are in the findings file).
    pub findings: FindingsSummary,
    /// Vectors computed by the model.
    pub embedded: u64,
    /// Vectors found in the cache.
    pub cached: u64,
    /// Seconds the model spent computing `embedded` vectors.
    pub embed_seconds: f64,
    /// Skill files whose entry an earlier build made.
    pub reused: u64,
    /// Skill files parsed by this build.
    pub parsed: u64,
    /// Every skill's path, with its content key where this build parsed
    /// it (empty for a reused entry), for the store's record of where
    /// skills were first met (a place missing from it, its write having
    /// failed, is added by the next build).
    pub met: BTreeMap<String, String>,
    /// Skills parsed by this build at `high` risk or worse: path, level and
    /// classes.
    pub risky: Vec<String>,
}

/// The objects a commit adds to the store.
#[derive(Debug)]
pub struct NewParts {
    /// This build's pack of new documents, when it made any.
    pub pack: Option<StagedFile>,
    /// The buckets that changed, staged on disk (some may be stored
    /// already, by another commit that had them): a cold build's buckets
    /// hold every entry again, too much to keep in memory beside them.
    pub buckets: Vec<StagedFile>,
    /// The bucket lists that changed, likewise; written after the buckets.
    pub lists: Vec<(String, Bytes)>,
    /// Every entry, in path order (the next build's base); `None` when
    /// their catalogs and findings were set aside
    /// ([`Assembler::with_entries_set_aside`]).
    pub entries: Option<Vec<PartEntry>>,
    /// The names of every bucket and list (the next build's base).
    pub named_buckets: BucketTree,
    /// The build part of every entry key ([`EntryKeys::fingerprint`]).
    pub fingerprint: [u8; 32],
}

/// One skill file, in path order: an entry an earlier build made from the
/// same inputs, or this build's parse of it.
pub enum Item {
    /// Reused as it is.
    Reused(PartEntry),
    /// Parsed now; `key` is `None` for a file that is never reused.
    Parsed {
        /// The parse.
        extracted: Extracted,
        /// Its entry key.
        key: Option<String>,
        /// Its git blob id.
        blob: Option<String>,
    },
}

/// Turns skill files, in path order, into entries; only new documents are
/// written (to this build's pack), so the work follows what changed.
pub struct Assembler<'a> {
    config: &'a Config,
    version: VersionInfo,
    ctx: BuildContext,
    host: CatalogHost,
    repo_name: String,
    marketplace: &'a Marketplace,
    marketplace_findings: Vec<(String, Finding)>,
    keys: EntryKeys,
    /// Where the pack and the buckets are staged.
    staging: std::path::PathBuf,
    /// `None` once finished.
    pack: Option<HashingFile>,
    pack_bytes: u64,
    entries: Vec<PartEntry>,
    /// Where the entries' catalogs and findings are, when set aside.
    spill: Option<EntrySpill>,
    /// Per entry: made by this build, or its findings changed, so its
    /// bucket must be written again.
    fresh: Vec<bool>,
    /// The buckets and lists of the base, named again where nothing in
    /// them changed.
    base_buckets: Option<BucketTree>,
    checker: DocumentChecker,
    embedder: Option<SharedEmbedder>,
    embedded_before: (u64, u64, f64),
    reused: u64,
    /// [`Assembled::met`] so far.
    met: BTreeMap<String, String>,
    /// [`Assembled::risky`] so far.
    risky: Vec<String>,
}

/// An embedder shared by the commits of a run.
pub type SharedEmbedder = std::sync::Arc<std::sync::Mutex<Embedder>>;

/// A file's own documents, before embedding, and what else its entry holds.
struct Prepared {
    path: String,
    key: Option<String>,
    blob: Option<String>,
    change: Option<Change>,
    documents: Vec<Document>,
    findings: String,
    name: Option<String>,
    /// Its content key (empty for an unusable file).
    content_key: String,
    /// Its risk, where it is `high` or worse: the findings' classes.
    risky: Option<(Severity, Vec<String>)>,
}

impl<'a> Assembler<'a> {
    /// Starts an artifact staged in `staging`: its pack of new documents,
    /// then the buckets that changed.
    pub fn new(
        config: &'a Config,
        version: VersionInfo,
        marketplace: &'a Marketplace,
        marketplace_findings: Vec<(String, Finding)>,
        staging: &std::path::Path,
        vectors: bool,
    ) -> std::io::Result<Self> {
        let pack_name = PACKS_DIR.rsplit('/').next().unwrap_or("pack");
        let pack = HashingFile::create(staging, pack_name)?;
        let ctx = BuildContext {
            commit: version.commit.clone(),
            updated_at: version.commit_time.clone(),
            ..build_context(config, &version.branch, marketplace)
        };
        // The same key maker a patched plan checks its base against.
        let keys = entry_keys(config, &version.branch, marketplace, vectors);
        Ok(Self {
            config,
            repo_name: config
                .repo()
                .rsplit('/')
                .next()
                .unwrap_or("skills")
                .to_string(),
            host: catalog_host(config),
            version,
            ctx,
            marketplace,
            marketplace_findings,
            keys,
            staging: staging.to_path_buf(),
            pack: Some(pack),
            pack_bytes: 0,
            entries: Vec::new(),
            spill: None,
            fresh: Vec::new(),
            met: BTreeMap::new(),
            risky: Vec::new(),
            base_buckets: None,
            checker: DocumentChecker::default(),
            embedder: None,
            embedded_before: (0, 0, 0.0),
            reused: 0,
        })
    }

    /// Lets unchanged buckets and lists of the base be named instead of
    /// written again (a base of another shape, an older schema's, is not).
    pub fn with_base_buckets(mut self, buckets: Option<BucketTree>) -> Self {
        self.base_buckets = buckets.filter(|b| {
            b.buckets.len() == BUCKET_COUNT as usize
                && b.lists.len() == (BUCKET_COUNT / LIST_SIZE) as usize
        });
        self
    }

    /// Sets each entry's catalog object and findings aside in a staged
    /// file until the buckets are encoded ([`spill`]): for a build whose
    /// entries no later commit of its run reuses, as they are then not
    /// returned.
    pub fn with_entries_set_aside(mut self, aside: bool) -> std::io::Result<Self> {
        // Entries are numbered in the spill as they are added.
        debug_assert!(self.entries.is_empty(), "set aside before any entry");
        self.spill = match aside {
            true => Some(EntrySpill::create(&self.staging)?),
            false => None,
        };
        Ok(self)
    }

    /// Gives every new document a vector from `embedder`.
    pub fn with_embedder(mut self, embedder: Option<SharedEmbedder>) -> Self {
        if let Some(shared) = &embedder {
            if let Ok(e) = shared.lock() {
                self.embedded_before = (e.embedded, e.cached, e.model_seconds);
            }
        }
        self.embedder = embedder;
        self
    }

    fn marketplace_description(&self, folder: &str) -> Option<&str> {
        self.marketplace
            .descriptions
            .get(folder)
            .map(String::as_str)
    }

    /// Adds skill files, in path order. The documents of all the parsed
    /// ones are embedded together, so the model's batches fill all cores.
    pub fn add_all(&mut self, items: Vec<Item>) -> Result<(), AssembleError> {
        let mut prepared = Vec::with_capacity(items.len());
        let mut order = Vec::with_capacity(items.len());
        for item in items {
            match item {
                Item::Reused(entry) => order.push(Some(entry)),
                Item::Parsed {
                    extracted,
                    key,
                    blob,
                } => {
                    prepared.push(self.prepare(&extracted, key, blob));
                    order.push(None);
                }
            }
        }
        if let Some(shared) = &self.embedder {
            let mut embedder = shared
                .lock()
                .map_err(|_| std::io::Error::other("embedder lock poisoned"))?;
            let counts: Vec<usize> = prepared.iter().map(|p| p.documents.len()).collect();
            let mut all: Vec<Document> = prepared
                .iter_mut()
                .flat_map(|p| std::mem::take(&mut p.documents))
                .collect();
            embedder.embed_documents(&mut all)?;
            let mut all = all.into_iter();
            for (item, count) in prepared.iter_mut().zip(counts) {
                item.documents.extend(all.by_ref().take(count));
            }
        }
        let mut prepared = prepared.into_iter();
        for slot in order {
            let (mut entry, fresh) = match slot {
                Some(entry) => {
                    self.reused += 1;
                    if entry.skill_count > 0 {
                        self.met.entry(entry.path.clone()).or_default();
                    }
                    (entry, false)
                }
                None => match prepared.next() {
                    Some(item) => (self.entry(item)?, true),
                    None => continue,
                },
            };
            if let Some(spill) = self.spill.as_mut() {
                spill.set_aside(&mut entry)?;
            }
            self.entries.push(entry);
            self.fresh.push(fresh);
        }
        Ok(())
    }

    /// A file's documents, findings lines and name.
    fn prepare(&self, item: &Extracted, key: Option<String>, blob: Option<String>) -> Prepared {
        let path = &item.path;
        let change = self.version.changes.get(path).cloned();
        let mut findings = String::new();
        let parsed = match item.result.as_ref() {
            Ok(parsed) => parsed,
            Err(unusable) => {
                findings.push_str(&skip_line(&SkippedFile {
                    path: path.clone(),
                    class: unusable.class().to_string(),
                    reason: unusable.to_string(),
                }));
                return Prepared {
                    path: path.clone(),
                    key,
                    blob,
                    change,
                    documents: Vec::new(),
                    findings,
                    name: None,
                    content_key: String::new(),
                    risky: None,
                };
            }
        };
        let folder = skill_folder(path, &self.repo_name).to_string();
        for finding in &parsed.findings {
            findings.push_str(&finding_line(path, finding));
        }
        let checks = check_skill(&folder, &parsed.fields, &parsed.field_lines);
        for finding in &checks {
            findings.push_str(&finding_line(path, finding));
        }
        let scanned = item.scanned.clone().unwrap_or_default();
        for finding in &scanned.findings {
            findings.push_str(&finding_line(path, finding));
        }
        let files = self.version.folder_files.get(path.as_str());
        let files = files.map_or(&[][..], Vec::as_slice);
        let risky = (scanned.risk.level >= Severity::High).then(|| {
            let mut classes: Vec<String> = scanned
                .risk
                .findings
                .iter()
                .filter(|f| f.severity >= Severity::High)
                .map(|f| f.class.clone())
                .collect();
            classes.sort_unstable();
            classes.dedup();
            (scanned.risk.level, classes)
        });
        let signals = signals_of(files, parsed.findings.iter().chain(&checks), scanned.risk);
        let name = parsed.text_field("name").unwrap_or(&folder).to_string();
        let last_updated = change.as_ref().map(|c| crate::source::rfc3339(c.time));
        let ctx = self.pinned(change.as_ref());
        let input = SkillInput {
            path,
            last_updated: last_updated.as_deref(),
            last_updated_at_or_before: change.as_ref().is_some_and(|c| c.at_or_before),
            skill: &folder,
            parsed,
            marketplace_description: self.marketplace_description(&folder),
            signals: &signals,
            supporting_files: &crate::walk::supporting_files::listed(files),
            content_key: &scanned.content_key,
            body_key: &scanned.body_key,
        };
        let documents = skill_documents(&ctx, input);
        Prepared {
            path: path.clone(),
            key,
            blob,
            change,
            documents,
            findings,
            name: Some(name),
            content_key: scanned.content_key,
            risky,
        }
    }

    /// The build's context with the documents pinned to the commit that
    /// last changed the file (the built one when that is not known).
    fn pinned(&self, change: Option<&Change>) -> BuildContext {
        match change {
            Some(change) => BuildContext {
                commit: change.commit.clone(),
                updated_at: crate::source::rfc3339(change.time),
                ..self.ctx.clone()
            },
            None => self.ctx.clone(),
        }
    }

    /// Checks a file's documents and appends them to the pack.
    fn entry(&mut self, item: Prepared) -> Result<PartEntry, AssembleError> {
        if !item.content_key.is_empty() {
            self.met.insert(item.path.clone(), item.content_key.clone());
        }
        if let Some((level, classes)) = &item.risky {
            self.risky
                .push(format!("{}: {level} ({})", item.path, classes.join(", ")));
        }
        let mut bytes = Vec::new();
        let mut catalog = None;
        let mut skill_count = 0;
        let ctx = self.pinned(item.change.as_ref());
        for doc in &item.documents {
            self.checker.check(doc)?;
            if doc.kind == KIND_SKILL {
                skill_count += 1;
                let entry = catalog_entry(&ctx, &self.host, doc);
                catalog = Some(serde_json::to_string(&entry).map_err(std::io::Error::other)?);
            }
            serde_json::to_writer(&mut bytes, doc).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
        }
        let documents = (!item.documents.is_empty()).then(|| PartRef {
            pack: String::new(), // named once the pack is complete
            offset: self.pack_bytes,
            length: bytes.len() as u64,
            sha256: hex::encode(Sha256::digest(&bytes)),
        });
        if let Some(pack) = self.pack.as_mut() {
            pack.write_all(&bytes)?;
        }
        self.pack_bytes += bytes.len() as u64;
        Ok(PartEntry {
            path: item.path,
            key: item.key.unwrap_or_default(),
            blob: item.blob,
            commit: item
                .change
                .as_ref()
                .map_or_else(|| self.version.commit.clone(), |c| c.commit.clone()),
            changed_at: item.change.as_ref().map(|c| c.time),
            changed_at_or_before: item.change.is_some_and(|c| c.at_or_before),
            documents,
            document_count: item.documents.len() as u64,
            skill_count,
            name: item.name,
            catalog,
            findings: item.findings,
        })
    }
}
