//! What an engine found for a query, before anything is made of it
//! (pure): the neutral types both engines answer with (Meilisearch's page
//! and the embedded engine's ranking), which the serving side's one
//! results pipeline ranks, folds and presents.

use serde_json::Value;

/// One skill an engine found: the document of it that matched best, with
/// its score, and, when asked, its best-matching sections.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The document (the artifact's contract), as the engine holds it.
    pub document: Value,
    /// The score the results are ranked by, higher is better: the
    /// engine's, then the results pipeline's (a rule that weighs a hit,
    /// or a name that puts it first, changes it).
    pub score: f64,
    /// The score the engine ranked it by, as it gave it (the fused score
    /// of its keyword and vector rankings; Meilisearch's `_rankingScore` for
    /// its own page: `--all-sections`, a query with no word to search).
    pub ranking_score: f64,
    /// The skill's best-matching section documents, best first, with
    /// their scores (empty unless asked for).
    pub sections: Vec<(Value, f64)>,
}

impl Hit {
    /// A hit with no sections named.
    pub fn new(document: Value, score: f64) -> Self {
        Self {
            document,
            score,
            ranking_score: score,
            sections: Vec::new(),
        }
    }

    /// A text field of the document (empty when absent).
    pub fn text(&self, key: &str) -> &str {
        self.document
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// An engine's answer: hits best first, one per skill.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates {
    /// The hits.
    pub hits: Vec<Hit>,
    /// The highest vector similarity between the query and a document
    /// ([`similarity_of_cosine`]'s scale), when vectors ranked the hits.
    pub similarity: Option<f64>,
    /// Why the answer is not the usual one (hybrid search fell back to
    /// keywords), when it is not.
    pub fallback: Option<String>,
}

/// Below this vector similarity (Meilisearch's scale: `(1 + cosine) / 2`,
/// so 0.64 is a cosine of 0.28) the best hit is no good match: the store
/// most likely holds no skill for the query. Between it and
/// [`GOOD_MATCH_FROM`] the best hit is a good match only when the first
/// result also holds [`WORDS_HELD_FOR_A_MATCH`] of the query's words:
/// an off-topic question ("deploy my Next.js site to Vercel", 0.658) finds
/// some skill about as close as a paraphrase does, but not its words.
/// Measured with all-MiniLM-L6-v2 over the 27 skills of
/// `fixtures/eval/queries.json` (113 queries, 24 with no answer; set on
/// them) and held out on `queries-holdout.json` (42, 16 with no answer):
/// similarity alone flagged 18/24 and 10/16 of the queries with no
/// answer and none of the answerable ones; with the words held, 23/24
/// and 16/16, and 1 of 89 and 0 of 26 answerable. Another model needs
/// its own thresholds.
pub const NO_GOOD_MATCH_BELOW: f64 = 0.64;

/// At or above this similarity the best hit is a good match whatever
/// words it holds.
pub const GOOD_MATCH_FROM: f64 = 0.70;

/// The share of the query's words the first result must hold to be a
/// good match between [`NO_GOOD_MATCH_BELOW`] and [`GOOD_MATCH_FROM`].
pub const WORDS_HELD_FOR_A_MATCH: f64 = 0.5;

/// When vectors did not rank the hits (keywords only), the first three
/// results' names and descriptions are embedded at query time, as a skill
/// document's vector is, and compared with the query: under this best
/// similarity the answer is no good match unless the first result holds
/// every word of the query (a file or command name is not much like any
/// description, but found as written). Between it and
/// [`CARD_GOOD_MATCH_FROM`], the first result must hold
/// [`WORDS_HELD_FOR_A_MATCH`] of the query's words. Set on the crawl-scale
/// set's tuning questions (`fixtures/eval/crawl/queries.json`, keywords
/// over anthropics, openai, tomevault-io and AgentWorkers: 100 answerable,
/// 16 with no answer): 2 of 100 answerable and 13 of 16 with no answer
/// flagged, where the words alone flagged 4 and 5.
pub const CARD_NO_GOOD_MATCH_BELOW: f64 = 0.62;

/// At or above this similarity of the first results' names and
/// descriptions the answer is a good match whatever words it holds.
pub const CARD_GOOD_MATCH_FROM: f64 = 0.70;

/// With no similarity at all (keywords only and no model), the share of
/// the query's words the first result must hold to be a good match.
/// Keywords find some skill for nearly any question, so a weak answer
/// shows as a first result that holds only a few of the words asked for.
/// Set on `fixtures/eval/queries.json` over its 27 skills, keywords only:
/// under half flags 17 of its 24 queries with no answer and 8 of its 89
/// answerable ones (under 0.6: 19/24 and 14/89). The weakest rule: a
/// paraphrase shares few words with the skill that answers it.
pub const KEYWORDS_WORDS_HELD_FOR_A_MATCH: f64 = 0.5;

/// Meilisearch's similarity of a cosine: `(1 + cosine) / 2`, in 0 to 1.
pub fn similarity_of_cosine(cosine: f32) -> f64 {
    ((1.0 + f64::from(cosine)) / 2.0).clamp(0.0, 1.0)
}

/// How well the answer matches the query, on an absolute scale (not
/// relative to the best hit, as result scores are): the same rule on
/// both engines, judged on what was measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MatchStrength {
    /// The highest vector similarity between the query and a document (0
    /// to 1), when vectors ranked the hits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_similarity: Option<f64>,
    /// The highest similarity between the query and the first results'
    /// names and descriptions, embedded at query time (0 to 1), when
    /// vectors did not rank the hits and the model is here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_similarity: Option<f64>,
    /// The share of the query's words the first result holds (0 to 1),
    /// when the query has words to count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words_held: Option<f64>,
    /// Whether the first results are a good match; false means: no good
    /// match (the store most likely holds no skill for the query).
    pub good: bool,
    /// The rule that decided `good`, in words, with the figures it
    /// compared.
    pub rule: String,
}

/// What was measured of an answer, for [`MatchStrength::judge`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    /// Whether there is any result at all.
    pub any: bool,
    /// The best vector similarity, when vectors ranked the hits.
    pub best_similarity: Option<f64>,
    /// The best similarity of the first results' names and descriptions,
    /// embedded at query time.
    pub card_similarity: Option<f64>,
    /// The share of the query's words the first result holds (`None`: the
    /// query has no word to count).
    pub words_held: Option<f64>,
    /// Why the first results' cards were not compared with the query
    /// (no model, the model busy or failing), when they were to be.
    pub cards_not_compared: Option<String>,
}

impl MatchStrength {
    /// Judges an answer on the best of what was measured: the vectors'
    /// similarity, else the first results' cards, else the words held.
    pub fn judge(measured: Measured) -> Self {
        let pct = |share: f64| format!("{:.0}%", share * 100.0);
        let held = |share: f64, bar: f64| {
            format!(
                "the first result holds {} of the query's words ({} {})",
                pct(share),
                if share >= bar { "at least" } else { "under" },
                pct(bar)
            )
        };
        let words = measured.words_held;
        let (good, rule) = if !measured.any {
            (false, "nothing was found".to_string())
        } else if let Some(sim) = measured.best_similarity {
            let said = format!("the best vector similarity is {sim:.3}");
            match words {
                _ if sim < NO_GOOD_MATCH_BELOW => (false, format!("{said}, under {NO_GOOD_MATCH_BELOW}")),
                _ if sim >= GOOD_MATCH_FROM => (true, format!("{said}, at least {GOOD_MATCH_FROM}")),
                Some(share) => (
                    share >= WORDS_HELD_FOR_A_MATCH,
                    format!("{said}, between {NO_GOOD_MATCH_BELOW} and {GOOD_MATCH_FROM}, and {}", held(share, WORDS_HELD_FOR_A_MATCH)),
                ),
                None => (true, format!("{said}, at least {NO_GOOD_MATCH_BELOW}, and the query has no word to count")),
            }
        } else if let Some(sim) = measured.card_similarity {
            let said = format!("keywords only: the first results' names and descriptions are at best {sim:.3} like the query");
            let share = words.unwrap_or(0.0);
            if words.is_none() {
                (
                    sim >= CARD_NO_GOOD_MATCH_BELOW,
                    format!(
                        "{said}, {} {CARD_NO_GOOD_MATCH_BELOW}, and the query has no word to count",
                        if sim >= CARD_NO_GOOD_MATCH_BELOW {
                            "at least"
                        } else {
                            "under"
                        }
                    ),
                )
            } else if sim >= CARD_GOOD_MATCH_FROM {
                (true, format!("{said}, at least {CARD_GOOD_MATCH_FROM}"))
            } else if sim >= CARD_NO_GOOD_MATCH_BELOW {
                (
                    share >= WORDS_HELD_FOR_A_MATCH,
                    format!("{said}, between {CARD_NO_GOOD_MATCH_BELOW} and {CARD_GOOD_MATCH_FROM}, and {}", held(share, WORDS_HELD_FOR_A_MATCH)),
                )
            } else {
                (
                    share >= 1.0,
                    format!(
                        "{said}, under {CARD_NO_GOOD_MATCH_BELOW}, and {}",
                        held(share, 1.0)
                    ),
                )
            }
        } else {
            let why = measured.cards_not_compared.as_deref().unwrap_or("no model");
            match words {
                Some(share) => (
                    share >= KEYWORDS_WORDS_HELD_FOR_A_MATCH,
                    format!(
                        "keywords only, cards not compared ({why}): {}",
                        held(share, KEYWORDS_WORDS_HELD_FOR_A_MATCH)
                    ),
                ),
                None => (
                    true,
                    format!("not measured: keywords only, cards not compared ({why}), and the query has no word to count"),
                ),
            }
        };
        Self {
            best_similarity: measured.best_similarity,
            card_similarity: measured.card_similarity,
            words_held: words,
            good,
            rule,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(
        best_similarity: Option<f64>,
        card_similarity: Option<f64>,
        words_held: Option<f64>,
    ) -> MatchStrength {
        MatchStrength::judge(Measured {
            any: true,
            best_similarity,
            card_similarity,
            words_held,
            cards_not_compared: None,
        })
    }

    #[test]
    fn a_weak_best_similarity_is_no_good_match() {
        assert!((similarity_of_cosine(0.28) - 0.64).abs() < 1e-6);
        assert_eq!(similarity_of_cosine(1.0), 1.0);
        assert_eq!(similarity_of_cosine(-1.0), 0.0);
        let good = |sim: Option<f64>, words: Option<f64>| judged(sim, None, words).good;
        assert!(!good(Some(0.60), None));
        assert!(good(Some(0.70), None));
        // Between the two, the words held decide.
        assert!(good(Some(0.66), None));
        assert!(!good(Some(0.66), Some(0.4)));
        assert!(good(Some(0.66), Some(0.5)));
        assert!(good(Some(0.70), Some(0.0)));
        assert!(!good(Some(0.63), Some(1.0)));
        // The vectors' similarity decides before the cards'.
        assert!(!judged(Some(0.60), Some(0.9), Some(1.0)).good);
        // Nothing found is no good match, whatever else is known.
        let nothing = MatchStrength::judge(Measured {
            best_similarity: Some(0.9),
            words_held: Some(1.0),
            ..Measured::default()
        });
        assert!(!nothing.good);
        assert_eq!(nothing.rule, "nothing was found");
    }

    #[test]
    fn keywords_only_the_cards_decide_else_the_words() {
        let good = |card: f64, words: f64| judged(None, Some(card), Some(words)).good;
        assert!(good(0.70, 0.0));
        assert!(good(0.65, 0.5));
        assert!(!good(0.65, 0.4));
        // Far from every card: only a query found word for word is answered
        // (a file or command name is not much like a description).
        assert!(!good(0.55, 0.9));
        assert!(good(0.55, 1.0));
        // No model: the words alone.
        assert!(!judged(None, None, Some(0.4)).good);
        assert!(judged(None, None, Some(0.5)).good);
    }

    #[test]
    fn the_rule_states_what_decided_with_its_figures() {
        let rule = |best, card, words| judged(best, card, words).rule;
        assert_eq!(
            rule(Some(0.612), None, Some(0.9)),
            "the best vector similarity is 0.612, under 0.64"
        );
        // The case a new user met: 0.665 is not "under 0.64"; the words decided.
        let between = rule(Some(0.665), None, Some(0.25));
        assert!(between.contains("0.665, between 0.64 and 0.7"), "{between}");
        assert!(
            between.contains("holds 25% of the query's words (under 50%)"),
            "{between}"
        );
        assert_eq!(
            rule(None, Some(0.587), Some(0.8)),
            "keywords only: the first results' names and descriptions are at best 0.587 like the query, under 0.62, and the first result holds 80% of the query's words (under 100%)"
        );
        assert_eq!(
            rule(None, None, Some(0.25)),
            "keywords only, cards not compared (no model): the first result holds 25% of the query's words (under 50%)"
        );
        let busy = MatchStrength::judge(Measured {
            any: true,
            words_held: Some(0.25),
            cards_not_compared: Some("the model was busy".into()),
            ..Measured::default()
        });
        assert!(
            busy.rule
                .starts_with("keywords only, cards not compared (the model was busy): "),
            "{}",
            busy.rule
        );
        // No word to count: the cards alone, never a made-up share.
        let wordless = rule(None, Some(0.55), None);
        assert!(
            wordless.ends_with("under 0.62, and the query has no word to count"),
            "{wordless}"
        );
    }
}
