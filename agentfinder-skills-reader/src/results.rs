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

/// With no vector similarity (keywords only: the store has no vectors,
/// or the query none), the share of the query's words the first result
/// must hold to be a good match. Keywords find some skill for nearly any
/// question, so a weak answer shows as a first result that holds only a
/// few of the words asked for. Set on `fixtures/eval/queries.json` over
/// its 27 skills, keywords only: under half flags 17 of its 24 queries
/// with no answer and 8 of its 89 answerable ones (under 0.6: 19/24 and
/// 14/89). A weaker rule than the vectors' (23/24 and 1/89): paraphrases
/// share few words with the skill that answers them.
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

impl MatchStrength {
    /// Judges an answer: the best vector similarity (`None`: vectors did
    /// not rank it), the share of the query's words the first result
    /// holds (`None`: the query has no word to count), and whether there
    /// is any result at all.
    pub fn judge(best_similarity: Option<f64>, words_held: Option<f64>, any: bool) -> Self {
        let pct = |share: f64| format!("{:.0}%", share * 100.0);
        let (good, rule) = match (any, best_similarity, words_held) {
            (false, _, _) => (false, "nothing was found".to_string()),
            (true, Some(sim), _) if sim < NO_GOOD_MATCH_BELOW => (
                false,
                format!("the best vector similarity is {sim:.3}, under {NO_GOOD_MATCH_BELOW}"),
            ),
            (true, Some(sim), _) if sim >= GOOD_MATCH_FROM => (
                true,
                format!("the best vector similarity is {sim:.3}, at least {GOOD_MATCH_FROM}"),
            ),
            (true, Some(sim), Some(share)) => (
                share >= WORDS_HELD_FOR_A_MATCH,
                format!(
                    "the best vector similarity is {sim:.3}, between {NO_GOOD_MATCH_BELOW} and {GOOD_MATCH_FROM}, and the first result holds {} of the query's words ({} {})",
                    pct(share),
                    if share >= WORDS_HELD_FOR_A_MATCH { "at least" } else { "under" },
                    pct(WORDS_HELD_FOR_A_MATCH)
                ),
            ),
            (true, Some(sim), None) => (
                true,
                format!("the best vector similarity is {sim:.3}, at least {NO_GOOD_MATCH_BELOW}, and the query has no word to count"),
            ),
            (true, None, Some(share)) => (
                share >= KEYWORDS_WORDS_HELD_FOR_A_MATCH,
                format!(
                    "keywords only: the first result holds {} of the query's words ({} {})",
                    pct(share),
                    if share >= KEYWORDS_WORDS_HELD_FOR_A_MATCH { "at least" } else { "under" },
                    pct(KEYWORDS_WORDS_HELD_FOR_A_MATCH)
                ),
            ),
            (true, None, None) => (
                true,
                "not measured: keywords only, and the query has no word to count".to_string(),
            ),
        };
        Self {
            best_similarity,
            words_held,
            good,
            rule,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_weak_best_similarity_is_no_good_match() {
        assert!((similarity_of_cosine(0.28) - 0.64).abs() < 1e-6);
        assert_eq!(similarity_of_cosine(1.0), 1.0);
        assert_eq!(similarity_of_cosine(-1.0), 0.0);
        let good =
            |sim: Option<f64>, words: Option<f64>| MatchStrength::judge(sim, words, true).good;
        assert!(!good(Some(0.60), None));
        assert!(good(Some(0.70), None));
        // Between the two, the words held decide.
        assert!(good(Some(0.66), None));
        assert!(!good(Some(0.66), Some(0.4)));
        assert!(good(Some(0.66), Some(0.5)));
        assert!(good(Some(0.70), Some(0.0)));
        assert!(!good(Some(0.63), Some(1.0)));
        // Keywords only: the words held alone.
        assert!(!good(None, Some(0.4)));
        assert!(good(None, Some(0.5)));
        // Nothing found is no good match, whatever else is known.
        assert!(!MatchStrength::judge(Some(0.9), Some(1.0), false).good);
    }

    #[test]
    fn the_rule_states_what_decided_with_its_figures() {
        let rule = |sim, words| MatchStrength::judge(sim, words, true).rule;
        assert_eq!(
            rule(Some(0.612), Some(0.9)),
            "the best vector similarity is 0.612, under 0.64"
        );
        // The case a new user met: 0.665 is not "under 0.64"; the words decided.
        let between = rule(Some(0.665), Some(0.25));
        assert!(between.contains("0.665, between 0.64 and 0.7"), "{between}");
        assert!(
            between.contains("holds 25% of the query's words (under 50%)"),
            "{between}"
        );
        assert_eq!(
            rule(None, Some(0.25)),
            "keywords only: the first result holds 25% of the query's words (under 50%)"
        );
        assert_eq!(
            MatchStrength::judge(None, None, false).rule,
            "nothing was found"
        );
    }
}
