//! The shared rules an engine cannot apply itself, applied to its page
//! (pure). The embedded engine weighs them inside its own ranking; over
//! Meilisearch they re-rank its first page:
//!
//! - the share of the query's words a hit holds: its score is weighed by
//!   the share to the power
//!   [`SHARE_POWER`](agentfinder_skills_reader::rules::query::SHARE_POWER),
//!   as the embedded engine weighs
//!   its keyword candidates (Meilisearch counts matched words first in a
//!   keyword search, but its hybrid blend lets a hit holding one word of
//!   the query outrank one holding all of them);
//! - a query's compounds (`with_server.py`, `shadcn/ui`), identifiers that
//!   word by word are common words: hits holding them as written come
//!   first.
//!
//! What a query rules out is cut from the query before either engine
//! sees it, and one typo is Meilisearch's own rule.

use std::collections::HashSet;

use agentfinder_skills_reader::results::Hit;
use agentfinder_skills_reader::rules::query::{
    compounds, query_words, weighed_by_share, without_ruled_out, words,
};

/// The document fields a hit's words are read from (Meilisearch's
/// `searchableAttributes`).
pub const SEARCHED_FIELDS: [&str; 8] = [
    "skill_name",
    "title",
    "heading_path",
    "skill_description",
    "marketplace_description",
    "content",
    "text",
    "path",
];

/// Which rules to apply to a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Weigh each hit by the share of the query's words it holds.
    pub share_of_words: bool,
    /// Put hits holding the query's compounds first.
    pub compounds: bool,
}

impl Rules {
    /// What Meilisearch does not do itself.
    pub const MEILISEARCH: Self = Self {
        share_of_words: true,
        compounds: true,
    };
    /// Nothing: the engine applied them (the embedded engine).
    pub const NONE: Self = Self {
        share_of_words: false,
        compounds: false,
    };
}

/// `hits` re-ranked for `query` by `rules` (stable: ties keep the
/// engine's order). A query of one word is not weighed.
pub fn apply(query: &str, hits: Vec<Hit>, rules: Rules) -> Vec<Hit> {
    if rules == Rules::NONE || hits.is_empty() {
        return hits;
    }
    let wanted = without_ruled_out(query);
    let words_wanted = query_words(&wanted);
    let compounds_wanted = if rules.compounds {
        compounds(&wanted)
    } else {
        Vec::new()
    };
    let weigh_words = rules.share_of_words && words_wanted.len() > 1;
    if !weigh_words && compounds_wanted.is_empty() {
        return hits;
    }
    let mut keyed: Vec<(usize, f64, usize, Hit)> = hits
        .into_iter()
        .enumerate()
        .map(|(at, mut hit)| {
            let tokens = hit_words(&hit);
            if weigh_words {
                let held: HashSet<&str> = tokens.iter().map(String::as_str).collect();
                let count = words_wanted
                    .iter()
                    .filter(|w| held.contains(w.as_str()))
                    .count();
                hit.score = weighed_by_share(hit.score, count, words_wanted.len());
            }
            let compounds_held = compounds_wanted
                .iter()
                .filter(|phrase| holds_phrase(&tokens, phrase))
                .count();
            (at, hit.score, compounds_held, hit)
        })
        .collect();
    keyed.sort_by(|a, b| b.2.cmp(&a.2).then(b.1.total_cmp(&a.1)).then(a.0.cmp(&b.0)));
    keyed.into_iter().map(|(_, _, _, hit)| hit).collect()
}

/// The share of `query`'s words (without what it rules out) that `hit`
/// holds in its searched fields, 0 to 1 (`None` for a query of no word).
pub fn share_of_words(query: &str, hit: &Hit) -> Option<f64> {
    let wanted = query_words(&without_ruled_out(query));
    if wanted.is_empty() {
        return None;
    }
    let tokens = hit_words(hit);
    let held: HashSet<&str> = tokens.iter().map(String::as_str).collect();
    let count = wanted.iter().filter(|w| held.contains(w.as_str())).count();
    Some(count as f64 / wanted.len() as f64)
}

/// The words of a hit's searched fields, in order.
fn hit_words(hit: &Hit) -> Vec<String> {
    let mut tokens = Vec::new();
    for field in SEARCHED_FIELDS {
        match hit.document.get(field) {
            Some(serde_json::Value::String(text)) => tokens.extend(words(text)),
            Some(serde_json::Value::Array(items)) => {
                for item in items.iter().filter_map(|i| i.as_str()) {
                    tokens.extend(words(item));
                }
            }
            _ => {}
        }
        // Fields are not one text: a phrase never spans two.
        tokens.push(String::new());
    }
    tokens
}

/// Whether `tokens` hold `phrase`'s words next to each other, in order.
fn holds_phrase(tokens: &[String], phrase: &[String]) -> bool {
    !phrase.is_empty() && tokens.windows(phrase.len()).any(|w| w == phrase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hit(name: &str, content: &str, score: f64) -> Hit {
        Hit::new(json!({"skill_name": name, "content": content}), score)
    }

    fn names(hits: &[Hit]) -> Vec<&str> {
        hits.iter().map(|h| h.text("skill_name")).collect()
    }

    #[test]
    fn a_hit_holding_more_of_the_words_outranks_a_better_scored_one_word_match() {
        let page = vec![
            hit("static-app", "deploy a static site", 0.9),
            hit("canvas", "a static visual artwork saved as pdf", 0.5),
            hit("other", "nothing", 0.4),
        ];
        let ranked = apply(
            "a static visual artwork saved as pdf",
            page.clone(),
            Rules::MEILISEARCH,
        );
        assert_eq!(names(&ranked), ["canvas", "static-app", "other"]);
        // Weighed: 0.5 for all five words; 0.9 x (1/5)^2 for one.
        assert!((ranked[0].score - 0.5).abs() < 1e-9);
        assert!((ranked[1].score - 0.9 / 25.0).abs() < 1e-9);
        // No rules, or one word: the engine's order.
        assert_eq!(
            names(&apply("static visual", page.clone(), Rules::NONE)),
            ["static-app", "canvas", "other"]
        );
        assert_eq!(
            names(&apply("static", page, Rules::MEILISEARCH)),
            ["static-app", "canvas", "other"]
        );
    }

    #[test]
    fn a_compound_as_written_comes_first() {
        let page = vec![
            hit("web", "start the server with python", 0.9),
            hit(
                "webapp-testing",
                "python scripts/with_server.py --help",
                0.3,
            ),
        ];
        let ranked = apply("run with_server.py", page, Rules::MEILISEARCH);
        assert_eq!(names(&ranked), ["webapp-testing", "web"]);
        // Not across two fields.
        let split = vec![Hit::new(
            json!({"skill_name": "with", "title": "server py"}),
            1.0,
        )];
        assert_eq!(
            apply("with_server.py", split, Rules::MEILISEARCH)[0].score,
            1.0
        );
        assert!(!holds_phrase(
            &hit_words(&hit("with", "", 1.0)),
            &["with".into(), "server".into()]
        ));
    }
}
