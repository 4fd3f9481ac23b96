//! `eval` over the embedded engine, with a collection as distractors: the
//! query set's own skills as the answers (`--answer-sources`), judged
//! pools (`--judgments`), and a keyword ranking that weighs how many of
//! the query's words a skill holds.

mod common;

use std::path::Path;

use common::*;
use serde_json::{json, Value};

/// A store in `work` built from two sources: `own`, whose skills the
/// queries name, and `others`, a collection searched alongside it.
fn two_sources(work: &Path) -> (GitRepo, GitRepo) {
    let own = repo_of(
        "https://github.com/o/own.git",
        &[
            (
                "canvas",
                "Visual design as a file",
                "# Making it\n\nA static visual artwork, saved as a PDF of museum quality.\n",
            ),
            (
                "gif",
                "Make a looping animated GIF",
                "# Frames\n\nStitch frames into an animation.\n",
            ),
        ],
    );
    let others = repo_of(
        "https://github.com/o/others.git",
        &[
            (
                "static",
                "Static hosting: static sites on a static host",
                "# Static\n\nStatic files, static pages, static everything.\n",
            ),
            (
                "merge-pdfs",
                "Merge PDF files into one",
                "# Merge\n\nJoin the pages of several PDF files.\n",
            ),
        ],
    );
    let config: String = [("own", &own), ("others", &others)]
        .iter()
        .map(|(id, repo)| {
            format!(
                "[[sources]]\nid = \"{id}\"\nlocation = \"{}\"\n",
                repo.path().display()
            )
        })
        .collect();
    std::fs::write(work.join("pipeline.toml"), config).unwrap();
    let out = run(work, &["build", "--no-embed"]);
    assert!(out.status.success(), "{}", stderr(&out));
    (own, others)
}

/// `eval --json` in `work` with `args`, which must succeed.
fn eval(work: &Path, cache: &Path, args: &[&str]) -> Value {
    let out = embedded_engine(work, cache)
        .args(["eval", "--json", "--semantic-ratio", "0.5"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn the_skill_a_query_wants_outranks_one_named_by_its_other_words() {
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    two_sources(work.path());
    let cases = [
        // `static` is the other skill's name, its title and most of its
        // words; the answer holds every word of the query once, in its body.
        "static visual artwork museum quality",
        // Searched whole, "static ... hosting sites" is the other skill's
        // name, title and body; what the query wants is the artwork.
        "a static visual artwork rather than static hosting for sites",
    ];
    for query in cases {
        let (first, hits) = first_skill(work.path(), cache.path(), query);
        assert_eq!(first.as_deref(), Some("canvas"), "{query}: {hits:#}");
    }
}

#[test]
fn an_identifier_is_found_as_written() {
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let repo = repo_of(
        "https://github.com/o/tools.git",
        &[
            (
                "webapp-testing",
                "Test a web app in a browser",
                "# Start\n\nRun `python scripts/with_server.py` first, then the tests.\n",
            ),
            (
                "helpers",
                "Small helpers",
                "# Helpers\n\nA server for files in py.\n",
            ),
            (
                "runner",
                "Run jobs on a schedule",
                "# Runner\n\nThe server runs jobs in py.\n",
            ),
        ],
    );
    let config = format!(
        "[[sources]]\nid = \"tools\"\nlocation = \"{}\"\n",
        repo.path().display()
    );
    std::fs::write(work.path().join("pipeline.toml"), config).unwrap();
    let out = run(work.path(), &["build", "--no-embed"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Word by word, `with_server.py` is "server" and "py" (and the stop
    // word "with"), which the other skills hold too, in shorter text.
    let (first, hits) = first_skill(work.path(), cache.path(), "with_server.py");
    assert_eq!(first.as_deref(), Some("webapp-testing"), "{hits:#}");
}

/// The skill `search --json` in `work` ranks first for `query`, and the hits.
fn first_skill(work: &Path, cache: &Path, query: &str) -> (Option<String>, Value) {
    let out = embedded_engine(work, cache)
        .args(["search", query, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let hits: Value = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["results"].clone();
    let first = hits
        .as_array()
        .and_then(|hits| hits.first())
        .and_then(|hit| hit["metadata"]["skill"].as_str())
        .map(str::to_string);
    (first, hits)
}

#[test]
fn judged_answers_count_and_what_is_left_to_judge_is_listed() {
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    two_sources(work.path());
    let queries = work.path().join("queries.json");
    std::fs::write(
        &queries,
        json!({"queries": [
            {"query": "merge pdf files", "expect": ["pdf"], "kind": "plain"},
            {"query": "looping animated gif", "expect": ["gif"], "kind": "plain"}
        ]})
        .to_string(),
    )
    .unwrap();
    let queries = queries.to_str().unwrap();
    let merge = "others:skills/merge-pdfs/SKILL.md";

    // The own source has no pdf skill: the other's is no answer yet, and
    // it heads what is left to judge.
    let report = eval(
        work.path(),
        cache.path(),
        &["--queries", queries, "--answer-sources", "own"],
    );
    assert_eq!(report["keyword"]["top3"], 0.5, "{report:#}");
    let unjudged = report["keyword_unjudged"].as_array().unwrap();
    assert_eq!(
        (unjudged[0]["query"].as_str(), unjudged[0]["key"].as_str()),
        (Some("merge pdf files"), Some(merge)),
        "{report:#}"
    );
    assert_eq!(unjudged[0]["rank"], 1);

    // Judged a right answer, it is one, and no longer to judge.
    let judgments = work.path().join("judgments.json");
    let judged = |relevant: bool, query: &str| {
        json!({"corpus": "test", "judgments": [
            {"query": query, "key": merge, "relevant": relevant, "why": "merges PDFs"}
        ]})
        .to_string()
    };
    std::fs::write(&judgments, judged(true, "merge pdf files")).unwrap();
    let with = [
        "--queries",
        queries,
        "--answer-sources",
        "own",
        "--judgments",
    ];
    let args = [&with[..], &[judgments.to_str().unwrap()]].concat();
    let report = eval(work.path(), cache.path(), &args);
    assert_eq!(
        (&report["keyword"]["top1"], &report["keyword"]["top3"]),
        (&json!(1.0), &json!(1.0)),
        "{report:#}"
    );
    let left: Vec<&str> = report["keyword_unjudged"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u["key"].as_str())
        .collect();
    assert!(!left.contains(&merge), "{left:?}");

    // Judged a wrong one, it stays a miss but is judged.
    std::fs::write(&judgments, judged(false, "merge pdf files")).unwrap();
    let report = eval(work.path(), cache.path(), &args);
    assert_eq!(report["keyword"]["top3"], 0.5, "{report:#}");
    assert!(!report["keyword_unjudged"].to_string().contains(merge));

    // A judgment of a query the set does not have is refused, by name.
    std::fs::write(&judgments, judged(true, "merge pdfs")).unwrap();
    let out = embedded_engine(work.path(), cache.path())
        .arg("eval")
        .args(&args)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("judgments.json") && err.contains("\"merge pdfs\""),
        "{err}"
    );
}
