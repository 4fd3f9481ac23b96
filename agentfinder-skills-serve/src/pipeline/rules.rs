//! The shared rules an engine cannot apply itself, applied to its page
//! (pure). The embedded engine weighs them inside its own ranking; over
//! Meilisearch they re-rank its first page:
//!
//! - the share of the query's words a hit found by its words holds (a hit
//!   found by its vector is left be): its score is weighed by
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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

    /// The rules named: `all`, `none`, or a comma-separated list of
    /// `words` and `compounds`.
    pub fn named(names: &str) -> Result<Self, String> {
        match names {
            "all" => return Ok(Self::MEILISEARCH),
            "none" => return Ok(Self::NONE),
            _ => {}
        }
        let mut rules = Self::NONE;
        for name in names.split(',').map(str::trim) {
            match name {
                "words" => rules.share_of_words = true,
                "compounds" => rules.compounds = true,
                other => {
                    return Err(format!(
                    "`{other}`: the rules are all, none, or words and compounds, comma-separated"
                ))
                }
            }
        }
        Ok(rules)
    }
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
    let tokens: Vec<Vec<String>> = hits.iter().map(hit_words).collect();
    let mut keyed: Vec<(usize, Hit)> = if rules.share_of_words && words_wanted.len() > 1 {
        reorder_word_hits(hits, &tokens, &words_wanted)
    } else {
        hits.into_iter().enumerate().collect()
    };
    if !compounds_wanted.is_empty() {
        // Hits holding more of the compounds as written first; stable.
        keyed.sort_by_key(|(at, _)| {
            let held = compounds_wanted
                .iter()
                .filter(|phrase| holds_phrase(&tokens[*at], phrase))
                .count();
            std::cmp::Reverse(held)
        });
    }
    keyed.into_iter().map(|(_, hit)| hit).collect()
}

/// The hits found by their words, reordered among the places they hold
/// by their score weighed by the share of `wanted` they hold (as the
/// embedded engine weighs its keyword candidates before it fuses them with
/// its vector ones); a hit found by its vector keeps its place, and each
/// place keeps its score (a paraphrase's answer, which holds few of the
/// query's words, is not sunk). `tokens` are the hits' words, in order;
/// each hit comes back with its place in `hits`.
fn reorder_word_hits(
    hits: Vec<Hit>,
    tokens: &[Vec<String>],
    wanted: &[String],
) -> Vec<(usize, Hit)> {
    let places: Vec<usize> = (0..hits.len()).filter(|&at| !hits[at].by_vector).collect();
    let place_scores: Vec<f64> = places.iter().map(|&at| hits[at].score).collect();
    let mut slots: Vec<Option<(usize, Hit)>> = hits.into_iter().enumerate().map(Some).collect();
    let mut word_hits: Vec<(usize, f64, Hit)> = places
        .iter()
        .filter_map(|&at| {
            let (_, hit) = slots[at].take()?;
            let held: HashSet<&str> = tokens[at].iter().map(String::as_str).collect();
            let count = wanted.iter().filter(|w| held.contains(w.as_str())).count();
            Some((at, weighed_by_share(hit.score, count, wanted.len()), hit))
        })
        .collect();
    word_hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for ((&place, score), (at, _, mut hit)) in places.iter().zip(place_scores).zip(word_hits) {
        hit.score = score;
        slots[place] = Some((at, hit));
    }
    slots.into_iter().flatten().collect()
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
        // Weighed: 0.5 for all five words beats 0.9 x (1/5)^2 for one;
        // each place keeps its score, so scores still fall down the list.
        assert_eq!(names(&ranked), ["canvas", "static-app", "other"]);
        let scores: Vec<f64> = ranked.iter().map(|h| h.score).collect();
        assert_eq!(scores, [0.9, 0.5, 0.4]);
        assert_eq!(ranked[0].ranking_score, 0.5, "the engine's own score");
        // A hit found by its vector keeps its place: a paraphrase's answer
        // holds few of the words.
        let mut by_vector = page.clone();
        by_vector[0].by_vector = true;
        let kept = apply(
            "a static visual artwork saved as pdf",
            by_vector,
            Rules::MEILISEARCH,
        );
        assert_eq!(names(&kept), ["static-app", "canvas", "other"]);
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
