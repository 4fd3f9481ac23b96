//! The one presenting step: what the pipeline ranked becomes
//! [`Presented`] results, every author-written field cleaned here once
//! ([`text`]), and every output shape is made from the same values:
//! Agent Finder's `SearchResult` ([`agentfinder`]), the MCP answer
//! ([`mcp`]) and TopGun's objects ([`topgun`]).

pub mod agentfinder;
pub mod mcp;
pub mod text;
pub mod topgun;

use serde_json::Value;

use agentfinder_skills_reader::contract::{skill_key_of, Severity, KIND_SECTION};
#[cfg(doc)]
use agentfinder_skills_reader::results::Hit;
use agentfinder_skills_reader::results::MatchStrength;

use crate::pipeline::fold::Folded;
use crate::pipeline::Ranked;

pub use text::{AgentJson, AgentText};

/// A section of a result, as an agent is pointed to it.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionRef {
    /// Its heading path, outermost first.
    pub heading_path: Vec<AgentText>,
    /// Its link (with the anchor of the author's heading).
    pub url: AgentText,
}

/// One result, ready for any output shape. Every text field a skill's
/// author wrote, or that is made from what they wrote (names,
/// descriptions, headings, metadata, paths, links, keys), is an
/// [`AgentText`] or [`AgentJson`]: cleaned; the rest are the pipeline's.
#[derive(Debug, Clone, PartialEq)]
pub struct Presented {
    /// The score results are ranked by ([`Hit::score`]).
    pub score: f64,
    /// The engine's own score ([`Hit::ranking_score`]: the fused score of
    /// its keyword and vector rankings; Meilisearch's `_rankingScore` for
    /// its own page).
    pub ranking_score: f64,
    /// The skill's key, unique across sources (`<source>:<repo>:<path>`).
    pub id: AgentText,
    /// The document's id (of the hit: the skill or a section of it).
    pub document_id: AgentText,
    /// The source it was built from (empty before schema 4).
    pub source_id: AgentText,
    /// `owner/name`.
    pub repo: AgentText,
    /// The SKILL.md's path in the repository.
    pub path: AgentText,
    /// The commit built.
    pub commit: AgentText,
    /// `skill` or `skill_section`: what matched.
    pub kind: AgentText,
    /// The link to the hit (a section's has its anchor).
    pub url: AgentText,
    /// The link to the SKILL.md.
    pub page_url: AgentText,
    /// The skill's frontmatter name, else its folder's.
    pub name: AgentText,
    /// The skill's folder name.
    pub folder: AgentText,
    /// The skill's description, cut at 1,024 characters.
    pub description: AgentText,
    /// The hit's title (a section's heading; a skill document's name).
    pub title: AgentText,
    /// The other frontmatter fields (an object).
    pub meta: AgentJson,
    /// What the skill ships and the rules it breaks (schema 6).
    pub signals: Option<AgentJson>,
    /// Its best-matching sections (when asked for; else the hit itself
    /// when it is a section).
    pub sections: Vec<SectionRef>,
    /// Where its copies are.
    pub also_at: Vec<AgentJson>,
    /// When its SKILL.md last changed.
    pub last_updated: Option<AgentText>,
    /// Whether `last_updated` is a bound, not the change itself.
    pub at_or_before: bool,
    /// sha256 of the SKILL.md bytes (64 hex digits, else none).
    pub content_sha: Option<String>,
}

impl Presented {
    /// Its risk level (`signals.risk.level`; `none` without findings) and
    /// the classes of its findings at that level.
    pub fn risk(&self) -> (Severity, Vec<String>) {
        let level = self
            .signals
            .as_deref()
            .and_then(crate::pipeline::signals_risk)
            .unwrap_or_default();
        let risk = self.signals.as_ref().and_then(|s| s.get("risk"));
        let mut classes: Vec<String> = risk
            .and_then(|r| r.get("findings"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|f| f.get("severity").and_then(Value::as_str) == Some(level.as_str()))
            .filter_map(|f| f.get("class").and_then(Value::as_str).map(str::to_string))
            .collect();
        classes.sort_unstable();
        classes.dedup();
        (level, classes)
    }
}

/// The results of one search, presented.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The engine that answered.
    pub engine: &'static str,
    /// Why the answer is not the usual one, when it is not (it can quote
    /// an engine's error, so it is cleaned too).
    pub notice: Option<AgentText>,
    /// How well the answer matches the query.
    pub strength: MatchStrength,
    /// The results, best first.
    pub results: Vec<Presented>,
}

/// `ranked` presented; `notice`, when given, is said instead of the
/// pipeline's own fallback.
pub fn present(ranked: Ranked, notice: Option<String>) -> Answer {
    Answer {
        engine: ranked.engine,
        notice: notice.or(ranked.fallback).map(|n| AgentText::field(&n)),
        strength: ranked.strength,
        results: ranked.results.iter().map(presented).collect(),
    }
}

/// One result, presented.
pub fn presented(result: &Folded) -> Presented {
    let hit = &result.hit;
    let doc = &hit.document;
    let field = |key: &str| AgentText::field(hit.text(key));
    let kind = field("kind");
    let url = hit.text("url");
    let page_url = url.split('#').next().unwrap_or_default();
    let folder = field("skill");
    let name = match hit.text("skill_name") {
        "" => folder.clone(),
        name => AgentText::field(name),
    };
    let mut sections: Vec<SectionRef> = hit
        .sections
        .iter()
        .map(|(doc, _)| section_ref(doc))
        .collect();
    if sections.is_empty() && kind == KIND_SECTION {
        sections.push(section_ref(doc));
    }
    let optional = |key: &str| {
        doc.get(key)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(AgentText::field)
    };
    Presented {
        score: hit.score,
        ranking_score: hit.ranking_score,
        id: AgentText::field(&skill_key_of(doc)),
        document_id: field("id"),
        source_id: field("source"),
        repo: field("repo"),
        path: field("path"),
        commit: field("commit"),
        title: field("title"),
        kind,
        url: AgentText::url(url),
        page_url: AgentText::url(page_url),
        name,
        folder,
        description: AgentText::description(hit.text("skill_description")),
        meta: doc
            .get("skill_meta")
            .and_then(Value::as_object)
            .cloned()
            .map(text::clean_map)
            .unwrap_or_else(AgentJson::empty_object),
        signals: doc.get("signals").cloned().map(AgentJson::clean),
        sections,
        also_at: result
            .also_at
            .iter()
            .cloned()
            .map(AgentJson::clean)
            .collect(),
        last_updated: optional("last_updated"),
        at_or_before: doc
            .get("last_updated_at_or_before")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        content_sha: doc
            .get("content_sha")
            .and_then(Value::as_str)
            .filter(|sha| sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(str::to_string),
    }
}

/// A section document as a pointer to it.
pub fn section_ref(doc: &Value) -> SectionRef {
    SectionRef {
        heading_path: heading_path(doc),
        url: AgentText::url(doc.get("url").and_then(Value::as_str).unwrap_or_default()),
    }
}

/// A document's heading path, cleaned. Nested headings are read one
/// after another (`["END OF", "UNTRUSTED CONTENT"]`): when together they
/// spell an envelope marker that none of them does alone, the path is
/// one heading, the whole path cleaned.
pub fn heading_path(doc: &Value) -> Vec<AgentText> {
    let raw: Vec<&str> = doc
        .get("heading_path")
        .and_then(Value::as_array)
        .map(|path| path.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let path: Vec<AgentText> = raw.iter().map(|h| AgentText::field(h)).collect();
    let joined = path
        .iter()
        .map(|h| h.as_str())
        .collect::<Vec<_>>()
        .join(" > ");
    if path.len() > 1 && text::neutralise_markers(&joined) != joined {
        return vec![AgentText::field(&raw.join(" > "))];
    }
    path
}
