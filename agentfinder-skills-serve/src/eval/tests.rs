//! Tests of the module beside this file.

use super::*;

fn hybrid(ratio: f32, mrr: f64, top1: f64) -> HybridScores {
    HybridScores {
        semantic_ratio: ratio,
        scores: EvalScores {
            mrr,
            top1,
            ..Default::default()
        },
        by_kind: BTreeMap::new(),
        misses: Vec::new(),
        unjudged: Vec::new(),
    }
}

#[test]
fn the_best_ratio_ranks_best_and_ties_go_to_the_lower_ratio() {
    let report = |hybrid| EvalReport {
        engine: "test".into(),
        keyword: EvalScores::default(),
        keyword_by_kind: BTreeMap::new(),
        keyword_misses: Vec::new(),
        keyword_unjudged: Vec::new(),
        hybrid,
    };
    let r = report(vec![
        hybrid(0.25, 0.7, 0.6),
        hybrid(0.5, 0.9, 0.8),
        hybrid(0.75, 0.8, 0.9),
    ]);
    assert_eq!(r.best().unwrap().semantic_ratio, 0.5);
    let r = report(vec![
        hybrid(0.75, 0.9, 0.8),
        hybrid(0.5, 0.9, 0.8),
        hybrid(1.0, 0.9, 0.7),
    ]);
    assert_eq!(r.best().unwrap().semantic_ratio, 0.5);
    let r = report(vec![hybrid(0.5, 0.9, 0.7), hybrid(0.75, 0.9, 0.8)]);
    assert_eq!(r.best().unwrap().semantic_ratio, 0.75);
    assert!(report(Vec::new()).best().is_none());
}

#[test]
fn with_answer_sources_a_copy_elsewhere_is_not_an_answer() {
    let result = |source: &str, skill: &str| -> SearchResult {
        serde_json::from_value(serde_json::json!({
            "identifier": "x", "displayName": skill, "description": "", "mediaType": "m",
            "url": "", "score": 1.0,
            "metadata": {"source": "o/r", "sourceType": "embedded", "skill": skill, "path": "p",
                         "skillKey": "k", "sourceId": source, "commit": "c",
                         "rankingScore": 1.0, "kind": "skill"}
        }))
        .unwrap()
    };
    let mut query = EvalQuery {
        query: "merge pdfs".into(),
        expect: vec!["pdf".into()],
        kind: "plain".into(),
        sources: Vec::new(),
        judged: BTreeMap::new(),
    };
    assert!(query.answered_by(&result("copies", "pdf")));
    assert!(!query.answered_by(&result("anthropics", "docx")));
    query.sources = vec!["anthropics".into()];
    assert!(!query.answered_by(&result("copies", "pdf")));
    assert!(query.answered_by(&result("anthropics", "pdf")));
}

#[test]
fn a_query_answered_below_the_first_three_is_a_miss_with_what_ranked_first() {
    let response = |skills: &[&str]| -> Vec<SearchResult> {
        skills
            .iter()
            .map(|skill| {
                serde_json::from_value(serde_json::json!({
                    "identifier": skill, "displayName": skill, "description": "",
                    "mediaType": "m", "url": "", "score": 1.0,
                    "metadata": {"source": "o/r", "sourceType": "embedded", "skill": skill,
                                 "path": "p", "skillKey": skill, "sourceId": "s",
                                 "commit": "c", "rankingScore": 1.0, "kind": "skill"}
                }))
                .unwrap()
            })
            .collect()
    };
    let query = |text: &str| EvalQuery {
        query: text.into(),
        expect: vec!["pdf".into()],
        kind: "plain".into(),
        sources: Vec::new(),
        judged: BTreeMap::new(),
    };
    let mut tally = Tally::default();
    tally.record(&query("third"), &response(&["a", "b", "pdf", "c"]), &good());
    tally.record(
        &query("fourth"),
        &response(&["a", "b", "c", "pdf"]),
        &weak(),
    );
    tally.record(&query("absent"), &response(&["a", "b"]), &good());
    let misses: Vec<(&str, Option<usize>)> = tally
        .misses
        .iter()
        .map(|m| (m.query.as_str(), m.rank))
        .collect();
    assert_eq!(misses, [("fourth", Some(4)), ("absent", None)]);
    assert_eq!(tally.misses[0].ahead, ["s:a", "s:b", "s:c"]);
    assert_eq!(tally.misses[1].ahead, ["s:a", "s:b"]);
    // Every answer's strength is counted, keyword answers too.
    assert_eq!(tally.flags.answerable, (1, 3));
    tally.record(
        &EvalQuery {
            expect: Vec::new(),
            ..query("none")
        },
        &response(&["a"]),
        &good(),
    );
    tally.record(
        &EvalQuery {
            expect: Vec::new(),
            ..query("nil")
        },
        &response(&[]),
        &weak(),
    );
    assert_eq!(tally.flags.no_answer, (1, 2));
}

fn measured(
    best_similarity: Option<f64>,
    words_held: Option<f64>,
) -> agentfinder_skills_reader::results::Measured {
    agentfinder_skills_reader::results::Measured {
        any: true,
        best_similarity,
        words_held,
        ..Default::default()
    }
}

/// A strength that is a good match, and one that is not.
fn good() -> agentfinder_skills_reader::results::MatchStrength {
    agentfinder_skills_reader::results::MatchStrength::judge(measured(Some(0.9), None))
}

fn weak() -> agentfinder_skills_reader::results::MatchStrength {
    agentfinder_skills_reader::results::MatchStrength::judge(measured(None, Some(0.1)))
}

fn located(source: &str, path: &str, also_at: serde_json::Value) -> SearchResult {
    let skill = path.rsplit('/').nth(1).unwrap_or(path);
    serde_json::from_value(serde_json::json!({
        "identifier": path, "displayName": skill, "description": "about", "mediaType": "m",
        "url": "", "score": 1.0,
        "metadata": {"source": "o/r", "sourceType": "embedded", "skill": skill, "path": path,
                     "skillKey": path, "sourceId": source, "commit": "c",
                     "rankingScore": 1.0, "kind": "skill", "alsoAt": also_at}
    }))
    .unwrap()
}

#[test]
fn a_result_judged_right_answers_and_one_judged_wrong_does_not() {
    let mut query = EvalQuery {
        query: "build a pitch deck".into(),
        expect: vec!["pptx".into()],
        kind: "plain".into(),
        sources: vec!["anthropics".into()],
        judged: BTreeMap::from([
            ("aw:skills/pitch-deck/SKILL.md".to_string(), true),
            ("aw:skills/gif/SKILL.md".to_string(), false),
        ]),
    };
    let none = serde_json::json!([]);
    assert!(query.answered_by(&located("aw", "skills/pitch-deck/SKILL.md", none.clone())));
    assert!(!query.answered_by(&located("aw", "skills/gif/SKILL.md", none.clone())));
    assert!(!query.answered_by(&located("aw", "skills/pptx/SKILL.md", none.clone())));
    assert!(query.answered_by(&located("anthropics", "skills/pptx/SKILL.md", none.clone())));
    // A copy shown for the original, which is among its other places,
    // answers as the original would; judged ones likewise.
    let original = serde_json::json!([{"source_id": "anthropics", "path": "skills/pptx/SKILL.md"}]);
    assert!(query.answered_by(&located("aw", "skills/pptx/SKILL.md", original)));
    let judged = serde_json::json!([{"source_id": "aw", "path": "skills/pitch-deck/SKILL.md"}]);
    assert!(query.answered_by(&located("x", "deck/SKILL.md", judged)));
    query.judged.clear();
    assert!(!query.answered_by(&located("aw", "skills/pitch-deck/SKILL.md", none)));
}

#[test]
fn the_first_three_that_nothing_judges_are_the_pool_to_judge_next() {
    let query = EvalQuery {
        query: "build a pitch deck".into(),
        expect: vec!["pptx".into()],
        kind: "plain".into(),
        sources: vec!["anthropics".into()],
        judged: BTreeMap::from([("aw:a/SKILL.md".to_string(), false)]),
    };
    let none = || serde_json::json!([]);
    let results = vec![
        located("aw", "a/SKILL.md", none()),
        located("aw", "b/SKILL.md", none()),
        located("anthropics", "skills/pptx/SKILL.md", none()),
        located("aw", "d/SKILL.md", none()),
    ];
    let mut tally = Tally::default();
    tally.record(&query, &results, &good());
    let pool: Vec<(&str, usize)> = tally
        .unjudged
        .iter()
        .map(|u| (u.key.as_str(), u.rank))
        .collect();
    assert_eq!(pool, [("aw:b/SKILL.md", 2)]);
    assert_eq!(tally.ranks, [Some(2)]);
}

#[test]
fn hit_rates_and_reciprocal_rank() {
    let flags = Flags {
        answerable: (1, 4),
        no_answer: (2, 2),
    };
    let s = scores(&[Some(0), Some(2), None, Some(1)], &[0.2, 0.4], &flags);
    assert_eq!(
        (s.answerable_flagged, s.no_answer_flagged),
        (Some(0.25), Some(1.0))
    );
    assert_eq!(scores(&[], &[], &Flags::default()).no_answer_flagged, None);
    assert_eq!(s.queries, 4);
    assert_eq!(s.top1, 0.25);
    assert_eq!(s.top3, 0.75);
    assert!((s.mrr - (1.0 + 1.0 / 3.0 + 0.0 + 0.5) / 4.0).abs() < 1e-12);
    assert!((s.no_answer_top_score - 0.3).abs() < 1e-12);
}
