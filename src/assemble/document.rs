//! A skill's documents: a parsed skill becomes its `skill` document and one
//! `skill_section` document per chunk, in the contract's shape.
//!
//! Ids are deterministic from (source, repo, path, kind, ordinal, part), so a file
//! that did not change keeps its ids across commits; they carry a readable
//! slug and a hash of the exact path, so `a_b` and `a-b` never collide. URLs
//! are pinned to the commit. Pure: no disk, no network.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use agentfinder_skills_reader::contract::{
    skill_key, Document, SkillSignals, SpecConformance, SpecFinding, KIND_SECTION, KIND_SKILL,
};

use crate::parse::ParsedSkill;
use crate::validate::diagnostics::Finding;
use crate::validate::risk::Risk;
use crate::validate::SPEC_CLASSES;

/// Characters left as they are in a URL path segment.
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// URL templates; `{repo}`, `{commit}`, `{branch}`, `{path}` and `{dir}`
/// are filled in. `None` where no link can be made (an unknown host, a plain
/// folder): the document's link is then empty, never a guess.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LinkTemplates {
    /// Web page of a file.
    pub blob: Option<String>,
    /// Raw bytes of a file.
    pub raw: Option<String>,
    /// Web page of a folder, used as a skill's stable catalog identifier.
    pub tree: Option<String>,
}

impl LinkTemplates {
    /// GitHub's templates (`{repo}` filled in per document).
    pub fn github() -> Self {
        Self {
            blob: Some("https://github.com/{repo}/blob/{commit}/{path}".into()),
            raw: Some("https://raw.githubusercontent.com/{repo}/{commit}/{path}".into()),
            tree: Some("https://github.com/{repo}/tree/{branch}/{dir}".into()),
        }
    }
}

/// What every document of one build shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildContext {
    /// Id of the source (unique in a store; part of ids and skill keys).
    pub source: String,
    /// `owner/name`.
    pub repo: String,
    /// Branch or ref.
    pub branch: String,
    /// Commit id.
    pub commit: String,
    /// Commit time, RFC 3339.
    pub updated_at: String,
    /// Marketplace version.
    pub version: Option<String>,
    /// URL templates.
    pub links: LinkTemplates,
    /// The operator's trust in the source (`official`), if stated.
    pub trust: Option<String>,
}

impl BuildContext {
    /// The scope of this build's document ids.
    pub fn ids(&self) -> IdScope<'_> {
        IdScope {
            source: &self.source,
            repo: &self.repo,
        }
    }

    /// Fills `template` for a file or folder at `path`; empty without a template.
    pub fn link(&self, template: &Option<String>, path: &str) -> String {
        let Some(template) = template else {
            return String::new();
        };
        let encoded = encode_path(path);
        let dir = encode_path(crate::walk::supporting_files::folder_of(path));
        template
            .replace("{repo}", &self.repo)
            .replace("{commit}", &self.commit)
            .replace("{branch}", &encode_path(&self.branch))
            .replace("{path}", &encoded)
            .replace("{dir}", &dir)
    }
}

/// One skill ready to become documents.
#[derive(Debug, Clone, Copy)]
pub struct SkillInput<'a> {
    /// Path of the SKILL.md.
    pub path: &'a str,
    /// Folder name.
    pub skill: &'a str,
    /// The parsed file.
    pub parsed: &'a ParsedSkill,
    /// Description from the marketplace file.
    pub marketplace_description: Option<&'a str>,
    /// When the file last changed in its source, RFC 3339.
    pub last_updated: Option<&'a str>,
    /// The change is at or before `last_updated`, not at it.
    pub last_updated_at_or_before: bool,
    /// What the skill ships and whether it follows the specification.
    pub signals: &'a SkillSignals,
    /// The files its `skill` document lists.
    pub supporting_files: &'a [String],
    /// What its SKILL.md body and shipped files make
    /// ([`crate::parse::content_key`]).
    pub content_key: &'a str,
    /// What its SKILL.md body alone makes ([`crate::parse::content_key::body_key`]).
    pub body_key: &'a str,
}

/// The skill's documents: the `skill` document first, then its sections.
pub fn skill_documents(ctx: &BuildContext, input: SkillInput<'_>) -> Vec<Document> {
    let parsed = input.parsed;
    let skill_name = parsed.text_field("name").unwrap_or(input.skill).to_string();
    let description = parsed
        .text_field("description")
        .unwrap_or_default()
        .to_string();
    let marketplace_description = input
        .marketplace_description
        .map(str::to_string)
        .unwrap_or_else(|| description.clone());
    let skill_meta: Map<String, Value> = parsed
        .fields
        .iter()
        .filter(|(k, _)| k.as_str() != "name" && k.as_str() != "description")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let url = ctx.link(&ctx.links.blob, input.path);
    let raw_url = ctx.link(&ctx.links.raw, input.path);
    let last_line = parsed.chunks.iter().map(|c| c.line_end).max().unwrap_or(1);

    let base = Document {
        id: String::new(),
        repo: ctx.repo.clone(),
        source: ctx.source.clone(),
        skill: input.skill.to_string(),
        skill_key: skill_key(&ctx.source, &ctx.repo, input.path),
        skill_name: skill_name.clone(),
        skill_description: description.clone(),
        marketplace_description,
        skill_meta,
        path: input.path.to_string(),
        url: url.clone(),
        raw_url,
        kind: KIND_SKILL.to_string(),
        title: skill_name.clone(),
        heading_path: Vec::new(),
        content: String::new(),
        text: String::new(),
        ordinal: 0,
        part: 0,
        parts: 1,
        version: ctx.version.clone(),
        updated_at: ctx.updated_at.clone(),
        last_updated: input.last_updated.map(str::to_string),
        last_updated_at_or_before: input.last_updated_at_or_before,
        branch: ctx.branch.clone(),
        commit: ctx.commit.clone(),
        content_sha: parsed.content_sha.clone(),
        line_start: 1,
        line_end: last_line,
        signals: Some(input.signals.clone()),
        supporting_files: Vec::new(),
        content_key: input.content_key.to_string(),
        body_key: input.body_key.to_string(),
        trust: ctx.trust.clone(),
        vectors: None,
    };

    let mut documents = Vec::with_capacity(parsed.chunks.len() + 1);
    let content = if description.is_empty() {
        skill_name.clone()
    } else {
        description.clone()
    };
    documents.push(Document {
        id: document_id(&ctx.ids(), input.path, KIND_SKILL, 0, 0),
        text: join_nonempty(&[&skill_name, &description, input.path]),
        content,
        supporting_files: input.supporting_files.to_vec(),
        ..base.clone()
    });
    for chunk in &parsed.chunks {
        let title = chunk
            .heading
            .clone()
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| skill_name.clone());
        let heading_text = chunk.heading_path.join(" > ");
        documents.push(Document {
            id: document_id(
                &ctx.ids(),
                input.path,
                KIND_SECTION,
                chunk.ordinal,
                chunk.part,
            ),
            url: match &chunk.anchor {
                Some(anchor) if !anchor.is_empty() && !url.is_empty() => {
                    format!("{url}#{}", encode_path(anchor))
                }
                _ => url.clone(),
            },
            kind: KIND_SECTION.to_string(),
            text: join_nonempty(&[
                &skill_name,
                input.path,
                &heading_text,
                &title,
                &chunk.content,
            ]),
            title,
            heading_path: chunk.heading_path.clone(),
            content: chunk.content.clone(),
            ordinal: chunk.ordinal,
            part: chunk.part,
            parts: chunk.parts,
            line_start: chunk.line_start,
            line_end: chunk.line_end,
            ..base.clone()
        });
    }
    documents
}

/// What a document id is made from besides the file: the source and the
/// repository.
#[derive(Debug, Clone, Copy)]
pub struct IdScope<'a> {
    /// Source id.
    pub source: &'a str,
    /// `owner/name`.
    pub repo: &'a str,
}

/// The id of a document: a readable slug of repo and path, the ordinal and
/// part, and 12 hex digits of a sha256 over the exact (source, repo, path,
/// kind, ordinal, part), so two sources holding one repository never share
/// an id. At most about 240 bytes, `[a-z0-9-]` only.
pub fn document_id(scope: &IdScope<'_>, path: &str, kind: &str, ordinal: u32, part: u32) -> String {
    let repo = scope.repo;
    let mut hasher = Sha256::new();
    for piece in [
        scope.source,
        repo,
        path,
        kind,
        &ordinal.to_string(),
        &part.to_string(),
    ] {
        hasher.update(piece.as_bytes());
        hasher.update([0]);
    }
    let hash = hex::encode(&hasher.finalize()[..6]);
    let mut slug = String::with_capacity(200);
    let mut dash = false;
    for c in format!("{repo}-{path}")
        .chars()
        .flat_map(char::to_lowercase)
    {
        if slug.len() >= 200 {
            break;
        }
        if c.is_ascii_alphanumeric() {
            slug.push(c);
            dash = false;
        } else if !dash && !slug.is_empty() {
            slug.push('-');
            dash = true;
        }
    }
    let slug = slug.trim_end_matches('-');
    if kind == KIND_SKILL {
        format!("{slug}-skill-{hash}")
    } else {
        format!("{slug}-{ordinal:03}-{part:03}-{hash}")
    }
}

fn encode_path(path: &str) -> String {
    path.split('/')
        .map(|segment| utf8_percent_encode(segment, PATH_SEGMENT).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

fn join_nonempty(values: &[&str]) -> String {
    values
        .iter()
        .filter(|v| !v.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("\n")
}

/// A skill's signals: what its folder's `files` are, and the `findings` of
/// its SKILL.md that break a rule of the specification.
pub(super) fn signals_of<'f>(
    files: &[String],
    findings: impl Iterator<Item = &'f Finding>,
    risk: Risk,
) -> SkillSignals {
    let broken: Vec<SpecFinding> = findings
        .filter(|f| SPEC_CLASSES.contains(&f.class))
        .map(|f| SpecFinding {
            class: f.class.to_string(),
            line: f.line.and_then(|l| u32::try_from(l).ok()),
        })
        .collect();
    SkillSignals {
        ships: crate::walk::supporting_files::ships(files),
        spec: SpecConformance {
            conforms: broken.is_empty(),
            findings: broken,
        },
        risk,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_skill, ParseOptions};
    use agentfinder_skills_reader::contract::is_valid_document_id;

    fn context() -> BuildContext {
        BuildContext {
            source: "hf".into(),
            repo: "huggingface/skills".into(),
            branch: "main".into(),
            commit: "a".repeat(40),
            updated_at: "2026-11-30T08:00:00Z".into(),
            version: Some("1.0.0".into()),
            links: LinkTemplates::github(),
            trust: None,
        }
    }

    #[test]
    fn ids_are_safe_deterministic_and_collision_free() {
        let scope = IdScope {
            source: "s",
            repo: "o/r",
        };
        let a = document_id(&scope, "skills/a_b/SKILL.md", KIND_SECTION, 1, 0);
        let b = document_id(&scope, "skills/a-b/SKILL.md", KIND_SECTION, 1, 0);
        assert_ne!(a, b);
        assert_eq!(
            a,
            document_id(&scope, "skills/a_b/SKILL.md", KIND_SECTION, 1, 0)
        );
        assert!(a.starts_with("o-r-skills-a-b-skill-md-001-000-"), "{a}");
        // The same repository in two sources: two ids.
        let other = IdScope {
            source: "mirror",
            ..scope
        };
        assert_ne!(
            a,
            document_id(&other, "skills/a_b/SKILL.md", KIND_SECTION, 1, 0)
        );
        let long = document_id(
            &scope,
            &format!("{}/SKILL.md", "ü/".repeat(500)),
            KIND_SKILL,
            0,
            0,
        );
        assert!(is_valid_document_id(&long) && long.len() < 260, "{long}");
        assert_ne!(
            document_id(&scope, "p", KIND_SKILL, 0, 0),
            document_id(&scope, "p", KIND_SECTION, 0, 0)
        );
    }

    #[test]
    fn documents_follow_the_contract() {
        let parsed = parse_skill(
            b"---\nname: pdf\ndescription: Reads PDFs\nlicense: MIT\n---\nIntro\n\n# Usage Notes\n\nRun it.\n",
            &ParseOptions::default(),
        )
        .unwrap();
        let files = ["scripts/merge.py".to_string()];
        let signals = SkillSignals {
            ships: crate::walk::supporting_files::ships(&files),
            spec: Default::default(),
            risk: Default::default(),
        };
        let docs = skill_documents(
            &context(),
            SkillInput {
                path: "skills/my pdf/SKILL.md",
                skill: "my pdf",
                parsed: &parsed,
                marketplace_description: Some("PDF plugin"),
                last_updated: Some("2026-01-02T03:04:05Z"),
                last_updated_at_or_before: false,
                signals: &signals,
                supporting_files: &files,
                content_key: "k1",
                body_key: "b1",
            },
        );
        assert_eq!(docs.len(), 3);
        assert!(docs
            .iter()
            .all(|d| d.content_key == "k1" && d.body_key == "b1"));
        let skill = &docs[0];
        assert_eq!(skill.kind, "skill");
        assert_eq!(skill.content, "Reads PDFs");
        assert_eq!(skill.marketplace_description, "PDF plugin");
        assert_eq!(skill.skill_meta["license"], "MIT");
        assert_eq!(skill.version.as_deref(), Some("1.0.0"));
        let commit = "a".repeat(40);
        assert_eq!(
            skill.url,
            format!("https://github.com/huggingface/skills/blob/{commit}/skills/my%20pdf/SKILL.md")
        );
        assert_eq!(
            skill.raw_url,
            format!("https://raw.githubusercontent.com/huggingface/skills/{commit}/skills/my%20pdf/SKILL.md")
        );
        let intro = &docs[1];
        assert_eq!((intro.title.as_str(), intro.ordinal), ("pdf", 0));
        assert!(intro.heading_path.is_empty());
        let usage = &docs[2];
        assert_eq!(usage.title, "Usage Notes");
        assert_eq!(usage.heading_path, ["Usage Notes"]);
        assert!(
            usage.url.ends_with("/SKILL.md#usage-notes"),
            "{}",
            usage.url
        );
        // `text`: name, path, heading path, title and content, as the contract says.
        let rule = [
            usage.skill_name.as_str(),
            usage.path.as_str(),
            &usage.heading_path.join(" > "),
            usage.title.as_str(),
            usage.content.as_str(),
        ]
        .join("\n");
        assert_eq!(usage.text, rule);
        assert_eq!(usage.content, "# Usage Notes\n\nRun it.");
        assert_eq!(skill.text, "pdf\nReads PDFs\nskills/my pdf/SKILL.md");
        assert_eq!(
            skill.skill_key,
            "hf:huggingface/skills:skills/my pdf/SKILL.md"
        );
        assert!(
            docs.iter()
                .all(|d| d.source == "hf"
                    && d.last_updated.as_deref() == Some("2026-01-02T03:04:05Z"))
        );
        assert_eq!((usage.line_start, usage.line_end), (8, 10));
        assert!(docs
            .iter()
            .all(|d| d.content_sha == parsed.content_sha && d.commit == commit));
        // Signals on every document; the file list on the skill's alone.
        assert!(docs.iter().all(|d| d.signals.as_ref() == Some(&signals)));
        assert_eq!(skill.supporting_files, files);
        assert!(docs[1..].iter().all(|d| d.supporting_files.is_empty()));
    }
}
