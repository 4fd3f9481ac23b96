//! The end of assembling: the findings that span files (duplicate names),
//! the buckets and their lists (only those that changed are encoded) and
//! the manifest.

use std::borrow::Cow;
use std::collections::BTreeMap;

use bytes::Bytes;

use agentfinder_skills_reader::contract::parts::{
    bucket_of, encode_bucket, encode_list, Bucket, BucketList, PartsIndex, BUCKET_COUNT,
    LAYOUT_PARTS, LIST_SIZE,
};
use agentfinder_skills_reader::contract::{
    BuilderInfo, ChunkingInfo, EmbedderInfo, FileDigest, Manifest, CATALOG_FILE, DOCUMENTS_FILE,
    FINDINGS_FILE, SCHEMA_VERSION,
};

use super::catalog::catalog_head;
use super::digest::build_digest;
use super::{meilisearch_config, AssembleError, Assembled, Assembler, NewParts};
use crate::reuse::BucketTree;
use crate::store::staging::StagedFile;
use crate::validate::diagnostics::{Finding, WarningClass};
use crate::validate::finding_lines::{finding_line, own_lines};
use crate::validate::findings::{duplicate_names, FindingsLog, FindingsSummary};

/// The buckets of a build's entries.
struct Indexed {
    /// What names them.
    index: PartsIndex,
    /// The buckets to write, staged.
    objects: Vec<StagedFile>,
    /// The lists to write, likewise.
    lists: Vec<(String, Bytes)>,
    /// Every bucket's and list's name, and the entries in each bucket.
    named: BucketTree,
}

impl Assembler<'_> {
    /// Settles the findings that span files (duplicate names), names the
    /// pack, and returns the manifest with the new parts.
    pub fn finish(mut self, generated_at: &str) -> Result<(Assembled, NewParts), AssembleError> {
        let pack = match self.pack.take() {
            Some(pack) => Some(pack.finish()?),
            None => None,
        };
        let pack = pack.filter(|p| p.digest.size > 0);
        for entry in &mut self.entries {
            if let (Some(part), Some(pack)) = (entry.documents.as_mut(), pack.as_ref()) {
                if part.pack.is_empty() {
                    part.pack = pack.digest.sha256.clone();
                }
            }
        }
        let (findings, findings_head) = self.settle_findings()?;
        let Indexed {
            index,
            objects: buckets,
            lists,
            named: named_buckets,
        } = self.index(findings_head)?;
        let (mut embedder_info, mut embedded, mut cached, mut embed_seconds) = (None, 0, 0, 0.0);
        if let Some(shared) = &self.embedder {
            let mut embedder = shared
                .lock()
                .map_err(|_| std::io::Error::other("embedder lock poisoned"))?;
            embedder.flush()?;
            embedder_info = Some(embedder.info());
            embedded = embedder.embedded - self.embedded_before.0;
            cached = embedder.cached - self.embedded_before.1;
            embed_seconds = embedder.model_seconds - self.embedded_before.2;
        }
        let manifest = self.manifest(generated_at, &findings, embedder_info, index);
        let parsed = self.entries.len() as u64 - self.reused;
        let assembled = Assembled {
            manifest,
            findings,
            embedded,
            cached,
            embed_seconds,
            reused: self.reused,
            parsed,
            met: std::mem::take(&mut self.met),
            risky: std::mem::take(&mut self.risky),
        };
        let parts = NewParts {
            pack,
            buckets,
            lists,
            // Without what was set aside, they are no base for another build.
            entries: self.spill.is_none().then_some(self.entries),
            named_buckets,
            fingerprint: self.keys.fingerprint(),
        };
        Ok((assembled, parts))
    }

    /// Every entry's findings lines: its own, then a `duplicate-name`
    /// warning when another file uses its name; counted for the manifest.
    /// An entry whose lines change is fresh (its bucket is written again).
    fn settle_findings(&mut self) -> Result<(FindingsSummary, String), AssembleError> {
        let named: Vec<(&str, Option<&str>)> = self
            .entries
            .iter()
            .map(|e| (e.path.as_str(), e.name.as_deref()))
            .collect();
        // The other file of each duplicate (a real collection has 4,000).
        let others: Vec<Option<String>> = duplicate_names(&named)
            .into_iter()
            .map(|other| other.map(str::to_string))
            .collect();
        drop(named);
        let mut log = FindingsLog::new(Vec::new());
        for (path, finding) in &self.marketplace_findings {
            log.warn(path, finding)?;
        }
        let head = String::from_utf8_lossy(&log.take_output()).into_owned();
        let mut reader = match self.spill.as_mut() {
            Some(spill) => Some(spill.reader()?),
            None => None,
        };
        let mut now_in_memory = Vec::new();
        let entries = self.entries.iter_mut().zip(self.fresh.iter_mut());
        for (number, ((entry, fresh), other)) in entries.zip(others).enumerate() {
            let aside = match reader.as_mut() {
                Some(reader) => reader.findings(number)?,
                None => None,
            };
            let lines = aside.as_deref().unwrap_or(&entry.findings);
            log.count_own(lines);
            let settled = match (other, entry.name.as_deref()) {
                (Some(other), Some(name)) => {
                    let duplicate = Finding::file(
                        WarningClass::DuplicateName,
                        format!("name `{name}` is also used by {other}; both are kept"),
                    );
                    log.count(&entry.path, &duplicate);
                    let line = finding_line(&entry.path, &duplicate);
                    // Unchanged, as it mostly is: its own lines, then this one.
                    let unchanged = lines
                        .strip_suffix(line.as_str())
                        .is_some_and(|own| matches!(own_lines(own), Cow::Borrowed(_)));
                    (!unchanged).then(|| own_lines(lines).into_owned() + &line)
                }
                // No duplicate: a warning left from an earlier one goes.
                _ => match own_lines(lines) {
                    Cow::Owned(own) => Some(own),
                    Cow::Borrowed(_) => None,
                },
            };
            if let Some(settled) = settled {
                entry.findings = settled;
                *fresh = true;
                if aside.is_some() {
                    now_in_memory.push(number);
                }
            }
        }
        drop(reader);
        if let Some(spill) = self.spill.as_mut() {
            for number in now_in_memory {
                spill.findings_in_memory(number);
            }
        }
        let (summary, _) = log.finish();
        Ok((summary, head))
    }

    /// The index that names the buckets of the entries (through their
    /// lists), the buckets and lists to write, and every name.
    fn index(&mut self, findings_head: String) -> Result<Indexed, AssembleError> {
        let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); BUCKET_COUNT as usize];
        let mut changed = vec![false; BUCKET_COUNT as usize];
        for (number, (entry, fresh)) in self.entries.iter().zip(&self.fresh).enumerate() {
            let bucket = bucket_of(&entry.path, BUCKET_COUNT);
            buckets[bucket].push(number);
            changed[bucket] |= fresh;
        }
        let mut reader = match self.spill.as_mut() {
            Some(spill) => Some(spill.reader()?),
            None => None,
        };
        let base = self.base_buckets.as_ref();
        let mut named = Vec::with_capacity(buckets.len());
        let mut objects = Vec::new();
        for (number, entries) in buckets.into_iter().enumerate() {
            let count = entries.len();
            if entries.is_empty() {
                named.push((String::new(), 0));
                continue;
            }
            // Only reused, unchanged entries and as many as before: the
            // very entries of the base's bucket, so its object stands.
            let unchanged = base
                .map(|b| &b.buckets[number])
                .filter(|(digest, held)| !changed[number] && *held == count && !digest.is_empty());
            if let Some((digest, _)) = unchanged {
                named.push((digest.clone(), count));
                continue;
            }
            let entries = entries
                .into_iter()
                .map(|at| match reader.as_mut() {
                    Some(reader) => reader.complete(at, &self.entries[at]),
                    None => Ok(self.entries[at].clone()),
                })
                .collect::<std::io::Result<_>>()?;
            let (sha, bytes) = encode_bucket(&Bucket { entries });
            named.push((sha.clone(), count));
            objects.push(stage_bucket(&self.staging, number, sha, &bytes)?);
        }
        let mut list_names = Vec::with_capacity((BUCKET_COUNT / LIST_SIZE) as usize);
        let mut lists = Vec::new();
        for (number, chunk) in named.chunks(LIST_SIZE as usize).enumerate() {
            if chunk.iter().all(|(digest, _)| digest.is_empty()) {
                list_names.push(String::new());
                continue;
            }
            // A list whose buckets all kept their names is the base's.
            let start = number * LIST_SIZE as usize;
            let kept = base.filter(|b| {
                !b.lists[number].is_empty()
                    && chunk
                        .iter()
                        .zip(&b.buckets[start..start + chunk.len()])
                        .all(|((now, _), (before, _))| now == before)
            });
            if let Some(base) = kept {
                list_names.push(base.lists[number].clone());
                continue;
            }
            let buckets = chunk.iter().map(|(digest, _)| digest.clone()).collect();
            let (sha, bytes) = encode_list(&BucketList { buckets });
            list_names.push(sha.clone());
            lists.push((sha, bytes));
        }
        let index = PartsIndex {
            bucket_count: BUCKET_COUNT,
            buckets: Vec::new(),
            list_size: LIST_SIZE,
            lists: list_names.clone(),
            catalog_head: catalog_head(&self.ctx, &self.host),
            findings_head,
        };
        Ok(Indexed {
            index,
            objects,
            lists,
            named: BucketTree {
                buckets: named,
                lists: list_names,
            },
        })
    }

    fn manifest(
        &self,
        generated_at: &str,
        findings: &FindingsSummary,
        embedder: Option<EmbedderInfo>,
        parts: PartsIndex,
    ) -> Manifest {
        let config = self.config;
        Manifest {
            schema_version: SCHEMA_VERSION,
            source_repo: config.repo().to_string(),
            source_url: config.source_url(),
            source_branch: self.version.branch.clone(),
            source_commit: self.version.commit.clone(),
            generated_at: generated_at.to_string(),
            document_count: self.entries.iter().map(|e| e.document_count).sum(),
            index: config.output.index.clone(),
            artifact: DOCUMENTS_FILE.to_string(),
            artifacts: BTreeMap::from([
                ("documents".to_string(), DOCUMENTS_FILE.to_string()),
                ("catalog".to_string(), CATALOG_FILE.to_string()),
                ("findings".to_string(), FINDINGS_FILE.to_string()),
            ]),
            skill_count: self.entries.iter().map(|e| e.skill_count).sum(),
            source_commit_time: self.version.commit_time.clone(),
            files: BTreeMap::new(),
            builder: BuilderInfo {
                name: env!("CARGO_PKG_NAME").to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
            },
            chunking: ChunkingInfo {
                max_chars: config.chunk.max_chars,
                overlap_chars: config.chunk.overlap_chars,
            },
            config_digest: config.digest(),
            build_digest: Some(build_digest(config, embedder.is_some())),
            artifact_id: None,
            meilisearch: meilisearch_config(&config.output.index, embedder.as_ref()),
            embedder,
            skipped: findings.skipped.clone(),
            warnings: findings.warnings.clone(),
            skipped_counts: findings.skipped_counts.clone(),
            warning_counts: findings.warning_counts.clone(),
            layout: Some(LAYOUT_PARTS.to_string()),
            parts: Some(parts),
        }
    }
}

/// Writes bucket `number`'s object into `staging`, beside the pack.
fn stage_bucket(
    staging: &std::path::Path,
    number: usize,
    sha256: String,
    bytes: &[u8],
) -> Result<StagedFile, AssembleError> {
    let path = staging.join(format!("bucket-{number}.json"));
    std::fs::write(&path, bytes)?;
    let size = bytes.len() as u64;
    Ok(StagedFile {
        path,
        digest: FileDigest { sha256, size },
    })
}
