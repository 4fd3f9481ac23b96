//! Search with no server: the embedded engine behind `search` and `find`
//! when MEILI_URL is unset, over artifacts the real binary built.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// A repository with a few skills whose words tell them apart.
fn repo() -> GitRepo {
    let mut repo = GitRepo::with_origin("https://github.com/o/skills.git");
    for (folder, description, body) in [
        (
            "pdf",
            "Merge and split PDF files",
            "# Split\n\nCut a PDF into single pages.\n",
        ),
        (
            "gif",
            "Make a looping animated GIF",
            "# Frames\n\nStitch frames into an animation.\n",
        ),
        (
            "deploy",
            "Deploy a web service to the cloud",
            "# Rollback\n\nUndo a bad release with kubectl rollout undo.\n",
        ),
        (
            "letters",
            "Letters from us to you, for you and with you",
            "# To you\n\nFrom us to you, for you, with you, to you and for us.\n",
        ),
    ] {
        repo.write(
            &format!("skills/{folder}/SKILL.md"),
            skill(folder, description, body),
        );
    }
    repo.commit("skills");
    repo
}

fn search(work: &Path, cache: &Path, args: &[&str]) -> std::process::Output {
    embedded_engine(work, cache)
        .arg("search")
        .args(args)
        .output()
        .unwrap()
}

/// `search` with `args`, which must succeed; its output as JSON.
fn search_json(work: &Path, cache: &Path, args: &[&str]) -> Value {
    let out = search(work, cache, args);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn search_answers_from_the_store_with_no_meilisearch_and_reuses_its_local_index() {
    let repo = repo();
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = run(
        work.path(),
        &[
            "build",
            "--no-embed",
            "--source",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));

    let out = search(work.path(), cache.path(), &["undo a bad release", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hits: Value = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["results"].clone();
    let hits = hits.as_array().unwrap();
    assert_eq!(hits[0]["displayName"], "deploy", "{hits:#?}");
    assert_eq!(hits[0]["mediaType"], "application/ai-skill");
    assert_eq!(hits[0]["metadata"]["sourceType"], "embedded");
    assert_eq!(hits[0]["score"], hits[0]["metadata"]["rankingScore"]);
    // One hit per skill.
    let keys: std::collections::HashSet<&str> = hits
        .iter()
        .map(|h| h["metadata"]["skillKey"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), hits.len());
    // Words with no meaning of their own are not matched on: a skill that
    // repeats them does not outrank the one the query names.
    let out = search(
        work.path(),
        cache.path(),
        &[
            "a looping animation for you and with you",
            "--json",
            "--limit",
            "1",
        ],
    );
    let hits: Value = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["results"].clone();
    assert_eq!(hits[0]["displayName"], "gif", "{hits:#?}");
    // A typo in a name still finds it.
    let out = search(
        work.path(),
        cache.path(),
        &["delpoy", "--json", "--limit", "1"],
    );
    let hits: Value = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["results"].clone();
    assert_eq!(hits[0]["displayName"], "deploy", "{hits:#?}");
    // ... but not in a word under five letters, as Meilisearch allows them.
    let out = search(work.path(), cache.path(), &["gfi", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hits: Value = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["results"].clone();
    let hits = hits.as_array().expect("a list of hits");
    assert!(hits.iter().all(|h| h["displayName"] != "gif"), "{hits:#?}");

    // The local index was built once, under a key of the artifact.
    let engine = cache.path().join("agentfinder-skills/engine");
    let folders: Vec<_> = std::fs::read_dir(&engine)
        .unwrap()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert_eq!(folders.len(), 1);
    let meta = folders[0].path().join("meta.json");
    let built = std::fs::metadata(&meta).unwrap().modified().unwrap();
    let out = search(work.path(), cache.path(), &["gif", "--json"]);
    assert!(out.status.success());
    assert_eq!(std::fs::metadata(&meta).unwrap().modified().unwrap(), built);

    // TopGun's adapter object from the same engine.
    let out = search(
        work.path(),
        cache.path(),
        &["animated gif", "--format", "topgun"],
    );
    let adapter: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(adapter["status"], "ok", "{adapter:#}");
    assert_eq!(adapter["results"][0]["name"], "gif");
    assert_eq!(adapter["results"][0]["source_registry"], "o-skills");

    // A new commit is a new artifact: a second local index.
    let mut repo = repo;
    repo.write(
        "skills/csv/SKILL.md",
        skill("csv", "Clean CSV files", "# Rows\n\nDrop empty rows.\n"),
    );
    repo.commit("csv");
    let out = run(
        work.path(),
        &[
            "build",
            "--no-embed",
            "--source",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success());
    let out = search(
        work.path(),
        cache.path(),
        &["drop empty rows", "--json", "--limit", "1"],
    );
    let hits: Value = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["results"].clone();
    assert_eq!(hits[0]["displayName"], "csv");
    assert_eq!(std::fs::read_dir(&engine).unwrap().count(), 2);
}

#[test]
fn hybrid_search_uses_the_artifacts_vectors_when_the_model_is_here() {
    let Some(model) = model_dir() else { return };
    let repo = repo();
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let config = work.path().join("p.toml");
    std::fs::write(
        &config,
        format!(
            "[embed]\nmodel_dir = \"{}\"\ncache_dir = \"emb\"\n",
            model.display()
        ),
    )
    .unwrap();
    let out = run(
        work.path(),
        &[
            "--config",
            config.to_str().unwrap(),
            "build",
            "--source",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // No word in common with "deploy": only the vectors can find it.
    let query = |extra: &[&str]| {
        let out = embedded_engine(work.path(), cache.path())
            .args([
                "--config",
                config.to_str().unwrap(),
                "search",
                "publish my application on production servers",
                "--json",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let hits: Value = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["results"].clone();
        (hits, stderr(&out))
    };
    let (keywords, _) = query(&["--keyword-only"]);
    assert!(keywords.as_array().unwrap().is_empty(), "{keywords:#?}");
    let (hits, log) = query(&["--semantic-ratio", "0.9"]);
    assert!(!log.contains("keywords only"), "{log}");
    assert_eq!(hits[0]["displayName"], "deploy", "{hits:#?}");
}

#[test]
fn agents_get_descriptions_cut_at_1024_characters_without_control_characters() {
    let mut repo = GitRepo::new();
    let long = format!(
        "Merges PDF files\\a\\e[2J into one.{}",
        " Really.".repeat(400)
    );
    repo.write(
        "skills/pdf-merge/SKILL.md",
        format!("---\nname: pdf-merge\ndescription: \"{long}\"\nlicense: \"MIT\\u202E\"\n---\n# Merge\n\nJoin PDF files.\n"),
    );
    repo.commit("long");
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    let out = run(work.path(), &["build", "--no-embed", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The artifact keeps the text as written.
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    let kept = docs[0]["skill_description"].as_str().unwrap();
    assert!(
        kept.chars().count() > 3000 && kept.contains('\u{7}'),
        "{kept}"
    );

    let fit = |text: &Value, what: &str| {
        let text = text.as_str().unwrap_or_else(|| panic!("{what}: {text}"));
        assert!(
            text.starts_with("Merges PDF files[2J into one."),
            "{what}: {text}"
        );
        assert_eq!(text.chars().count(), 1024, "{what}");
        assert!(text.ends_with('…'), "{what}");
        assert!(!text.chars().any(char::is_control), "{what}: {text:?}");
    };
    let hits = search_json(work.path(), cache.path(), &["merge pdf files", "--json"]);
    fit(&hits["results"][0]["description"], "search --json");

    let topgun = ["merge pdf files", "--format", "topgun"];
    let adapter = search_json(work.path(), cache.path(), &topgun);
    let result = &adapter["results"][0];
    fit(&result["description"], "search --format topgun");
    assert_eq!(
        result["raw_metadata"]["data"]["license"], "MIT",
        "{result:#}"
    );

    let out = embedded_engine(work.path(), cache.path())
        .args(["find", "merge pdf files", "--out", "found.json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let found = read_json(work.path().join("found.json"));
    fit(&found["results"][0]["description"], "find");
}

#[test]
fn results_carry_what_a_skill_ships_and_the_rules_it_breaks() {
    let mut repo = GitRepo::new();
    // Its name is not its folder's (a rule of the specification, line 2).
    repo.write(
        "skills/pdf-merge/SKILL.md",
        "---\nname: pdf-merger\ndescription: Merges PDF files into one\n---\n# Merge\n\nJoin PDF files.\n",
    );
    repo.write("skills/pdf-merge/scripts/merge.py", "print('merge')\n");
    repo.write("skills/pdf-merge/scripts/split.sh", "echo split\n");
    repo.write("skills/pdf-merge/LICENSE", "MIT\n");
    repo.commit("pdf");
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    let out = run(work.path(), &["build", "--no-embed", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = serde_json::json!({
        "ships": {"total": 3, "scripts": 2, "references": 0, "assets": 0, "other": 1,
                  "kinds": {"": 1, "py": 1, "sh": 1}},
        "spec": {"conforms": false, "findings": [{"class": "name-mismatch", "line": 2}]},
        "risk": {"level": "none"},
    });

    let hits = search_json(work.path(), cache.path(), &["merge pdf files", "--json"]);
    assert_eq!(
        hits["results"][0]["metadata"]["signals"], expected,
        "{hits:#}"
    );

    let topgun = ["merge pdf files", "--format", "topgun"];
    let adapter = search_json(work.path(), cache.path(), &topgun);
    let result = &adapter["results"][0];
    assert_eq!(
        result["raw_metadata"]["data"]["signals"], expected,
        "{result:#}"
    );
}

#[test]
fn an_answer_with_no_good_match_says_so_in_every_output_with_the_rule_applied() {
    let repo = repo();
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    let out = run(work.path(), &["build", "--no-embed", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    // "split" finds the PDF skill, which holds one of the four words asked for ("my" is not one).
    let off_topic = "split my monthly household budget";

    let out = search(work.path(), cache.path(), &[off_topic, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let body: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(body["no_good_match"], true, "{body:#}");
    assert_eq!(body["match"]["good"], false, "{body:#}");
    assert_eq!(body["match"]["words_held"], 0.25, "{body:#}");
    let rule = "keywords only, cards not compared (no model): the first result holds 25% of the query's words (under 50%)";
    assert_eq!(body["match"]["rule"], rule, "{body:#}");
    // The weak result is still listed, flagged: a person may still want it.
    assert_eq!(body["results"][0]["displayName"], "pdf", "{body:#}");
    assert!(
        stderr(&out).contains(&format!("search: no good match: {rule}")),
        "{}",
        stderr(&out)
    );
    // A question the store answers is a good match, said the same way.
    let good = search_json(work.path(), cache.path(), &["split pdf files", "--json"]);
    assert_eq!(good["no_good_match"], false, "{good:#}");
    assert_eq!(good["match"]["words_held"], 1.0, "{good:#}");

    // TopGun's objects have no field for it: the weak skills are left
    // out and the reason says why.
    let adapter = search_json(
        work.path(),
        cache.path(),
        &[off_topic, "--format", "topgun"],
    );
    assert_eq!(adapter["status"], "ok", "{adapter:#}");
    assert!(
        adapter["results"].as_array().unwrap().is_empty(),
        "{adapter:#}"
    );
    let reason = adapter["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!("no good match: {rule}")),
        "{reason}"
    );

    let out = embedded_engine(work.path(), cache.path())
        .args(["find", off_topic, "--out", "found.json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let block = stdout(&out);
    assert!(block.contains("Found 0 skills"), "{block}");
    assert!(block.contains(&format!("no good match: {rule}")), "{block}");
    let found = read_json(work.path().join("found.json"));
    assert_eq!(found["total_results"], 0, "{found:#}");
}
