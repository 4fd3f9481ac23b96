//! The shared rules an engine cannot apply itself (pure). The embedded
//! engine weighs them inside its own ranking; over Meilisearch:
//!
//! - the share of the query's words a hit holds weighs the keyword
//!   ranking of its candidates, to the power
//!   [`SHARE_POWER`](agentfinder_skills_reader::rules::query::SHARE_POWER),
//!   as the embedded engine weighs its own (Meilisearch counts matched
//!   words first in a keyword search, but its hybrid blend lets a hit
//!   holding one word of the query outrank one holding all of them):
//!   applied where the candidates are ranked ([`super::meili::keywords`]);
//! - a query's compounds (`with_server.py`, `shadcn/ui`), identifiers that
//!   word by word are common words: hits holding them as written come
//!   first ([`apply`]).
//!
//! What a query rules out is cut from the query before either engine
//! sees it, and one typo is Meilisearch's own rule.

use std::collections::HashSet;

use agentfinder_skills_reader::results::Hit;
use agentfinder_skills_reader::rules::fields::{field_words, WEIGHTED_FIELDS};
use agentfinder_skills_reader::rules::query::{compounds, query_words, without_ruled_out};

/// Which rules to apply to a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rules {
    /// Weigh each keyword candidate by the share of the query's words it
    /// holds (Meilisearch's, where they are ranked).
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

/// `hits` re-ranked for `query` by `rules`: those holding more of its
/// compounds as written first (stable: ties keep the engine's order). The
/// share of the words is weighed where Meilisearch's candidates are ranked.
pub fn apply(query: &str, hits: Vec<Hit>, rules: Rules) -> Vec<Hit> {
    if !rules.compounds || hits.is_empty() {
        return hits;
    }
    let wanted = compounds(&without_ruled_out(query));
    if wanted.is_empty() {
        return hits;
    }
    let mut keyed: Vec<(usize, Hit)> = hits
        .into_iter()
        .map(|hit| {
            let tokens = hit_words(&hit);
            let held = wanted.iter().filter(|p| holds_phrase(&tokens, p)).count();
            (held, hit)
        })
        .collect();
    keyed.sort_by_key(|(held, _)| std::cmp::Reverse(*held));
    keyed.into_iter().map(|(_, hit)| hit).collect()
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
    for (field, _) in WEIGHTED_FIELDS {
        tokens.extend(field_words(&hit.document, field));
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
    fn without_compounds_or_the_rule_the_engine_order_stands() {
        let page = vec![
            hit("static-app", "deploy a static site", 0.9),
            hit("canvas", "a static visual artwork saved as pdf", 0.5),
        ];
        let query = "a static visual artwork saved as pdf";
        assert_eq!(
            names(&apply(query, page.clone(), Rules::MEILISEARCH)),
            ["static-app", "canvas"]
        );
        assert_eq!(
            names(&apply("static_visual", page, Rules::NONE)),
            ["static-app", "canvas"]
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
