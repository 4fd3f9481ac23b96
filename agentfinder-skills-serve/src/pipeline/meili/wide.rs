//! Meilisearch's candidates, ranked here: one multi-search asks for each
//! word's best documents, the compounds' and the whole query's, the
//! nearest vectors (hybrid search), and how many documents hold each word
//! in each field; [`keywords::rank`] ranks the candidates by their words
//! and the ranking is fused with the vectors' by skill, as the embedded
//! engine fuses its two ([`fuse_by_skill`]).
//!
//! Measured on `fixtures/eval/queries.json` over anthropics/skills and
//! openai/skills in a real Meilisearch 1.50 (ratio 0.5): hybrid top-3
//! 0.955 -> 0.989, hard (paraphrases, body details, identifiers,
//! near-duplicates) 0.938 -> 0.985, against the embedded engine's 1.000;
//! keyword top-3 0.820 -> 0.955 (embedded 0.966) (docs/search.md).

use std::collections::{HashMap, HashSet};

use meilisearch_sdk::indexes::Index;
use meilisearch_sdk::search::SearchQuery;
use meilisearch_sdk::DefaultHttpClient;
use serde_json::Value;

use agentfinder_skills_engine::rank::fuse_by_skill;
use agentfinder_skills_reader::contract::skill_key_of;
use agentfinder_skills_reader::meili::{call, MeiliConfig, MeiliError};
use agentfinder_skills_reader::results::{Candidates, Hit};
use agentfinder_skills_reader::rules::fields::WEIGHTED_FIELDS;
use agentfinder_skills_reader::rules::query::{compounds, query_words, without_ruled_out};

use super::counts::{self, Holding, IndexFacts};
use super::keywords::{self, WordStats};
use super::MeiliQuery;

/// Documents asked for each word of the query and each compound.
pub const WORD_CANDIDATES: usize = 50;

/// Documents asked for the whole query, and nearest vectors.
pub const CANDIDATES: usize = 100;

/// The body fields counted together, as indexes in [`WEIGHTED_FIELDS`]: a
/// document holding a word in either of a pair counts for both (each
/// count is a search of its own, about 3 ms on a server holding 313,903
/// documents; a skill's two descriptions and its content and text mostly
/// hold the same words). Counting each field alone measured the same.
const COUNTED_TOGETHER: [&[usize]; 4] = [&[2], &[3, 4], &[5, 6], &[7]];

/// Most words of a query searched over Meilisearch (the first ones,
/// besides stop words; the embedded engine takes 32): each is five
/// searches, its candidates and its holders in four groups of fields,
/// unless counted in the last few minutes. Every query of the evaluation
/// sets has 12 words or fewer; when words past the 8th were counted in any
/// field instead, a paraphrase of 9 fell from the first three.
pub const WORDS_SEARCHED: usize = 12;

/// What one multi-search asks, in the order of its results.
struct Plan<'q> {
    words: Vec<String>,
    /// Each word as a phrase (`"word"`): matched as written (a prefix or a
    /// typo of it scores nothing here), and its total counts the documents
    /// holding it.
    quoted: Vec<String>,
    /// Each compound as a phrase.
    phrases: Vec<String>,
    text: &'q str,
    /// Documents asked for the whole query and nearest vectors: at least
    /// [`CANDIDATES`], and the page asked for, so a larger page (the risk
    /// filter's second ask) finds more.
    pool: usize,
    filter: Option<&'q str>,
    hybrid: Option<(&'q str, f32)>,
    /// The groups of body fields the index searches, counted together
    /// ([`COUNTED_TOGETHER`]), each as the fields' names.
    counted: Vec<(&'static [usize], Vec<&'static str>)>,
    searched: [bool; WEIGHTED_FIELDS.len()],
    /// Whether the index's size is asked (not already known).
    count_documents: bool,
    /// The words whose holders are counted (indexes in `words`: those not
    /// already known).
    words_counted: Vec<usize>,
}

impl Plan<'_> {
    /// The searches, in order: each word's candidates, each compound's,
    /// the whole query's, the nearest vectors (hybrid only), the number of
    /// documents (unless known), then for each word counted each group of
    /// counted fields' holders.
    fn searches<'a>(&'a self, index: &'a Index) -> Vec<SearchQuery<'a, DefaultHttpClient>> {
        let candidates = |q: &'a str, limit: usize| {
            let mut search = SearchQuery::new(index);
            search
                .with_query(q)
                .with_limit(limit)
                .with_show_ranking_score(true);
            if let Some(filter) = self.filter {
                search.with_filter(filter);
            }
            search
        };
        let count = |q: &'a str, fields: Option<&'a [&'a str]>| {
            let mut search = SearchQuery::new(index);
            search.with_query(q).with_limit(0);
            if let Some(fields) = fields {
                search.with_attributes_to_search_on(fields);
            }
            search
        };
        let mut searches: Vec<SearchQuery<'a, DefaultHttpClient>> = Vec::new();
        searches.extend(self.quoted.iter().map(|w| candidates(w, WORD_CANDIDATES)));
        searches.extend(self.phrases.iter().map(|p| candidates(p, WORD_CANDIDATES)));
        searches.push(candidates(self.text, self.pool));
        if let Some((embedder, _)) = self.hybrid {
            let mut nearest = candidates(self.text, self.pool);
            nearest
                .with_hybrid(embedder, 1.0)
                .with_show_ranking_score_details(true);
            searches.push(nearest);
        }
        if self.count_documents {
            searches.push(count("", None));
        }
        for quoted in self.words_counted.iter().map(|&w| &self.quoted[w]) {
            searches.extend(
                self.counted
                    .iter()
                    .map(|(_, names)| count(quoted, Some(names.as_slice()))),
            );
        }
        searches
    }
}

/// `query`'s candidates, ranked (see the module); `None` for a query with
/// no word to search. `share` weighs the keyword ranking by the share of
/// the query's words each candidate holds. A search refused for the
/// fields it counts in (the index changed since they were read) is asked
/// once more with its fields read again.
pub async fn ranked(
    config: &MeiliConfig,
    query: &MeiliQuery<'_>,
    share: bool,
) -> Result<Option<Candidates>, MeiliError> {
    match ranked_once(config, query, share).await {
        Err(MeiliError::Rejected { message, .. }) if is_about_fields(&message) => {
            counts::forget(&config.url, query.index);
            ranked_once(config, query, share).await
        }
        other => other,
    }
}

/// Whether Meilisearch refused a search for the fields it searched in.
fn is_about_fields(message: &str) -> bool {
    message.contains("attributesToSearchOn") || message.contains("not searchable")
}

async fn ranked_once(
    config: &MeiliConfig,
    query: &MeiliQuery<'_>,
    share: bool,
) -> Result<Option<Candidates>, MeiliError> {
    let text = without_ruled_out(query.text);
    let mut words = query_words(&text);
    words.truncate(WORDS_SEARCHED);
    if words.is_empty() {
        return Ok(None);
    }
    let client = config.client()?;
    let index = client.index(query.index);
    let (facts, known) = match counts::recall(&config.url, query.index, &words) {
        Some((facts, known)) => (Some(facts), known),
        None => (None, vec![None; words.len()]),
    };
    let searched = match facts {
        Some(facts) => facts.searched,
        None => match call(config, "settings", || index.get_searchable_attributes()).await {
            Ok(searchable) => {
                let mut searched = [false; WEIGHTED_FIELDS.len()];
                for (at, (field, _)) in WEIGHTED_FIELDS.iter().enumerate() {
                    searched[at] = searchable.iter().any(|a| a == "*" || a == field);
                }
                searched
            }
            // A key that may search but not read settings: the fields an
            // artifact's index searches.
            Err(MeiliError::Rejected { message, .. }) if message.contains("invalid_api_key") => {
                [true; WEIGHTED_FIELDS.len()]
            }
            Err(other) => return Err(other),
        },
    };
    let plan = Plan {
        quoted: words.iter().map(|w| format!("\"{w}\"")).collect(),
        phrases: compounds(&text)
            .iter()
            .map(|c| format!("\"{}\"", c.join(" ")))
            .collect(),
        words_counted: (0..words.len()).filter(|&w| known[w].is_none()).collect(),
        words,
        text: &text,
        pool: CANDIDATES.max(query.limit),
        filter: query.filter.as_deref(),
        // A ratio of 0 weighs the vectors at nothing: not asked for.
        hybrid: query.hybrid.filter(|(_, ratio)| *ratio > 0.0),
        counted: COUNTED_TOGETHER
            .iter()
            .map(|group| {
                let names = group
                    .iter()
                    .filter(|&&f| searched[f])
                    .map(|&f| WEIGHTED_FIELDS[f].0)
                    .collect();
                (*group, names)
            })
            .filter(|(_, names): &(_, Vec<&str>)| !names.is_empty())
            .collect(),
        searched,
        count_documents: facts.is_none(),
    };
    let sent = plan.searches(&index).len();
    let results = call(config, "search", || {
        let searches = plan.searches(&index);
        let client = &client;
        async move {
            let mut multi = client.multi_search();
            for search in searches {
                multi.with_search_query(search);
            }
            multi.execute::<Value>().await
        }
    })
    .await?
    .results;
    if results.len() != sent {
        return Err(MeiliError::Rejected {
            what: "search".to_string(),
            message: format!("{} answers to {sent} searches", results.len()),
        });
    }
    let mut results = results.into_iter();
    let mut page = Page::default();
    for _ in 0..plan.words.len() + plan.phrases.len() {
        for hit in results.next().map(|r| r.hits).unwrap_or_default() {
            page.add(hit.result);
        }
    }
    // Meilisearch's own order for the whole query: what it matched that
    // the words as written do not (a typo, a prefix, a script it splits
    // into words otherwise) ranks after what they do.
    let own: Vec<u32> = results
        .next()
        .map(|r| r.hits)
        .unwrap_or_default()
        .into_iter()
        .map(|hit| page.add(hit.result))
        .collect();
    let mut vector: Vec<u32> = Vec::new();
    let mut similarity: Option<f64> = None;
    if plan.hybrid.is_some() {
        for hit in results.next().map(|r| r.hits).unwrap_or_default() {
            let found = hit
                .ranking_score_details
                .as_ref()
                .and_then(|d| d.get("vectorSort")?.get("similarity")?.as_f64());
            similarity = match (similarity, found) {
                (Some(best), Some(found)) => Some(best.max(found)),
                (best, found) => best.or(found),
            };
            vector.push(page.add(hit.result));
        }
    }
    let count = |r: Option<meilisearch_sdk::search::SearchResults<Value>>| {
        r.and_then(|r| r.estimated_total_hits).unwrap_or(0) as u64
    };
    let facts = match facts {
        Some(facts) => facts,
        None => IndexFacts {
            searched: plan.searched,
            documents: count(results.next()),
        },
    };
    let mut holding: Vec<Holding> = known
        .iter()
        .map(|known| known.unwrap_or_default())
        .collect();
    let mut counted: Vec<(String, Holding)> = Vec::new();
    for &w in &plan.words_counted {
        let held = &mut holding[w];
        for (group, _) in &plan.counted {
            let n = count(results.next());
            for &field in group.iter() {
                held[field] = n;
            }
        }
        counted.push((plan.words[w].clone(), *held));
    }
    counts::remember(
        &config.url,
        query.index,
        plan.count_documents.then_some(facts),
        counted,
    );
    let stats = WordStats {
        documents: facts.documents,
        searched: plan.searched,
        holding,
    };
    let mut keyword: Vec<u32> = keywords::rank(&plan.words, &page.documents, &stats, share)
        .into_iter()
        .map(|(row, _)| row as u32)
        .collect();
    let ranked: HashSet<u32> = keyword.iter().copied().collect();
    keyword.extend(own.into_iter().filter(|row| !ranked.contains(row)));
    let ratio = match plan.hybrid {
        Some((_, ratio)) if !vector.is_empty() => f64::from(ratio.clamp(0.0, 1.0)),
        _ => 0.0,
    };
    let fused = fuse_by_skill(&[(&keyword, 1.0 - ratio), (&vector, ratio)], |row| {
        page.skills.get(row as usize).copied()
    });
    let mut shown: HashSet<u64> = HashSet::new();
    let hits = fused
        .into_iter()
        .filter(|(row, _)| shown.insert(page.skills[*row as usize]))
        .take(query.limit)
        .map(|(row, score)| Hit::new(page.documents[row as usize].clone(), score))
        .collect();
    Ok(Some(Candidates {
        hits,
        similarity,
        fallback: None,
    }))
}

/// The candidates the searches found, each once.
#[derive(Default)]
struct Page {
    documents: Vec<Value>,
    /// Each document's skill, numbered in the order first met.
    skills: Vec<u64>,
    rows: HashMap<String, u32>,
    skill_numbers: HashMap<String, u64>,
}

impl Page {
    /// `document`'s row, added if new (by `id`).
    fn add(&mut self, document: Value) -> u32 {
        let id = document
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(row) = id.as_ref().and_then(|id| self.rows.get(id)) {
            return *row;
        }
        let row = self.documents.len() as u32;
        let next = self.skill_numbers.len() as u64;
        let skill = *self
            .skill_numbers
            .entry(skill_key_of(&document))
            .or_insert(next);
        self.skills.push(skill);
        self.documents.push(document);
        if let Some(id) = id {
            self.rows.insert(id, row);
        }
        row
    }
}
