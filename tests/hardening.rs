//! What real repositories and new users exposed: the repository named in
//! every link, one key per SKILL.md, rebuilds under a new configuration,
//! bounded manifests, and the rough edges of the command line.

mod common;

use common::*;

fn build(cwd: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["build", "--no-embed"];
    all.extend_from_slice(args);
    run(cwd, &all)
}

fn one_skill_repo(origin: Option<&str>) -> (GitRepo, String) {
    let mut repo = match origin {
        Some(url) => GitRepo::with_origin(url),
        None => GitRepo::new(),
    };
    repo.write(
        "skills/pdf/SKILL.md",
        skill("pdf", "Reads PDFs", "# Use It\n\nRun it.\n"),
    );
    let commit = repo.commit("one");
    (repo, commit)
}

#[test]
fn documents_links_ids_and_catalog_name_the_repository_that_was_built() {
    let (repo, commit) = one_skill_repo(Some("https://github.com/anthropics/skills.git"));
    let work = tempfile::tempdir().unwrap();
    let out = build(work.path(), &["--source", repo.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let latest = work.path().join("artifacts/latest");
    let docs = documents(latest.join("hf-skills.ndjson"));
    for doc in &docs {
        assert_eq!(doc["repo"], "anthropics/skills");
        assert_eq!(
            doc["skill_key"],
            "anthropics-skills:anthropics/skills:skills/pdf/SKILL.md"
        );
        assert_eq!(doc["source"], "anthropics-skills");
        let url = doc["url"].as_str().unwrap();
        assert!(
            url.starts_with(&format!(
                "https://github.com/anthropics/skills/blob/{commit}/skills/pdf/SKILL.md"
            )),
            "{url}"
        );
        assert!(doc["id"]
            .as_str()
            .unwrap()
            .starts_with("anthropics-skills-"));
        assert_eq!(
            doc["raw_url"],
            format!(
                "https://raw.githubusercontent.com/anthropics/skills/{commit}/skills/pdf/SKILL.md"
            )
        );
    }
    let manifest = read_json(latest.join("manifest.json"));
    assert_eq!(manifest["source_repo"], "anthropics/skills");
    assert_eq!(
        manifest["source_url"],
        "https://github.com/anthropics/skills.git"
    );
    let catalog = read_json(latest.join("ai-catalog.json"));
    assert_eq!(catalog["host"]["displayName"], "anthropics/skills");
    assert_eq!(
        catalog["host"]["documentationUrl"],
        "https://github.com/anthropics/skills"
    );
    assert_eq!(catalog["entries"][0]["tags"][0], "anthropics");

    // Another repository cannot be promoted over it, even newer; --force can.
    let (other, _) = one_skill_repo(Some("https://gitlab.com/group/skills.git"));
    let out = build(work.path(), &["--source", other.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("another repository"),
        "{}",
        stderr(&out)
    );
    let out = build(
        work.path(),
        &["--source", other.path().to_str().unwrap(), "--force"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let docs = documents(latest.join("hf-skills.ndjson"));
    assert!(
        docs[0]["url"]
            .as_str()
            .unwrap()
            .starts_with("https://gitlab.com/group/skills/-/blob/"),
        "{}",
        docs[0]["url"]
    );
    assert!(docs[0]["raw_url"].as_str().unwrap().contains("/-/raw/"));
}

#[test]
fn an_unnamed_source_is_labelled_locally_with_no_links_and_advice() {
    let (repo, _) = one_skill_repo(None);
    let work = tempfile::tempdir().unwrap();
    let out = build(work.path(), &["--source", repo.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--repo OWNER/NAME"),
        "{}",
        stderr(&out)
    );
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    assert!(docs.iter().all(|d| d["url"] == "" && d["raw_url"] == ""));
    assert!(docs[0]["repo"].as_str().unwrap().starts_with("local/"));

    // --repo names it, with GitHub links.
    let work = tempfile::tempdir().unwrap();
    let out = build(
        work.path(),
        &[
            "--source",
            repo.path().to_str().unwrap(),
            "--repo",
            "me/my-skills",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("--repo OWNER/NAME"));
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    assert!(docs.iter().all(|d| d["repo"] == "me/my-skills"
        && d["url"]
            .as_str()
            .unwrap()
            .starts_with("https://github.com/me/my-skills/blob/")));
}

#[test]
fn a_configured_repo_names_its_own_location_only() {
    let (configured, _) = one_skill_repo(None);
    let (elsewhere, _) = one_skill_repo(Some("https://github.com/openai/skills.git"));
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("pipeline.toml"),
        format!(
            "[source]\nlocation = \"{}\"\nrepo = \"huggingface/skills\"\n",
            configured.path().display()
        ),
    )
    .unwrap();
    let out = build(work.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    assert_eq!(docs[0]["repo"], "huggingface/skills");
    let out = build(
        work.path(),
        &[
            "--source",
            elsewhere.path().to_str().unwrap(),
            "--store",
            "other",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let docs = documents(work.path().join("other/latest/hf-skills.ndjson"));
    assert_eq!(
        docs[0]["repo"], "openai/skills",
        "--source elsewhere is not huggingface/skills"
    );
}

#[test]
fn a_plain_folder_takes_no_ref_and_gets_no_links() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(folder.path().join("s/a")).unwrap();
    std::fs::write(
        folder.path().join("s/a/SKILL.md"),
        skill("a", "A skill", "# A\n"),
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let source = folder.path().to_str().unwrap();
    let out = build(work.path(), &["--source", source, "--ref", "main"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("plain folder"), "{}", stderr(&out));
    let out = build(work.path(), &["--source", source, "--repo", "o/r"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    assert!(
        docs.iter().all(|d| d["url"] == "" && d["raw_url"] == ""),
        "a folder-<digest> version pins no commit a link could name"
    );
}

#[test]
fn skills_with_one_folder_name_keep_one_key_each() {
    let work = tempfile::tempdir().unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/skills");
    let out = build(work.path(), &["--source", fixtures.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    let keys: std::collections::BTreeSet<(String, String)> = docs
        .iter()
        .filter(|d| d["skill"] == "pdf-tools")
        .map(|d| {
            (
                d["skill_key"].as_str().unwrap().to_string(),
                d["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let paths: Vec<&str> = keys.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "plugin-a/skills/pdf-tools/SKILL.md",
            "skills/pdf-tools/SKILL.md"
        ],
        "two SKILL.md files named pdf-tools, two keys"
    );
    assert!(keys.iter().all(|(k, p)| k.ends_with(&format!(":{p}"))));
    let manifest = read_json(work.path().join("artifacts/latest/manifest.json"));
    assert!(manifest["meilisearch"]["settings"]["filterableAttributes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "skill_key"));
}

#[test]
fn a_commit_built_differently_gets_its_own_artifact_and_an_identical_one_is_a_no_op() {
    let (repo, commit) = one_skill_repo(Some("https://github.com/o/r.git"));
    let source = repo.path().to_str().unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = build(work.path(), &["--source", source]);
    assert!(stdout(&out).contains("status=built"), "{}", stderr(&out));

    std::fs::write(
        work.path().join("pipeline.toml"),
        "[chunk]\nmax_chars = 200\noverlap_chars = 20\n",
    )
    .unwrap();
    let out = build(work.path(), &["--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stdout(&out);
    assert!(summary.contains("status=rebuilt"), "{summary}");
    assert!(
        stderr(&out).contains("chunking 12000/800 -> 200/20"),
        "{}",
        stderr(&out)
    );
    let artifact = field(&summary, "artifact");
    assert!(artifact.starts_with(&format!("{commit}.")), "{artifact}");
    assert!(summary.contains("latest=promoted"), "{summary}");
    let marker = read_json(work.path().join("artifacts/latest/_SUCCESS"));
    assert_eq!(marker["artifact_id"], artifact.as_str());
    assert_eq!(marker["commit"], commit.as_str());
    for id in [commit.as_str(), artifact.as_str()] {
        let out = run(work.path(), &["verify", "--commit", id]);
        assert!(out.status.success(), "{id}: {}", stderr(&out));
    }
    // The same configuration again: the fast no-op, on the rebuilt artifact.
    let out = build(work.path(), &["--source", source]);
    let summary = stdout(&out);
    assert!(summary.contains("status=already-built"), "{summary}");
    assert_eq!(field(&summary, "artifact"), artifact);
    assert!(summary.contains("latest=already-latest"), "{summary}");
}

#[test]
fn the_manifest_stays_small_and_every_finding_is_in_the_findings_file() {
    let mut repo = GitRepo::with_origin("https://github.com/o/messy.git");
    let long_name = "x".repeat(200);
    for i in 0..1200 {
        // Broken YAML (recovered), a name that is not the folder's, a shared name.
        repo.write(
            &format!("skills/s{i:04}/SKILL.md"),
            format!("---\nname: {long_name}\ndescription: Use when: {i}: it breaks YAML\n---\n# S\n\nBody {i}.\n"),
        );
    }
    repo.write("skills/empty/SKILL.md", "");
    repo.commit("messy");
    let work = tempfile::tempdir().unwrap();
    let out = build(work.path(), &["--source", repo.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let latest = work.path().join("artifacts/latest");
    let mut manifest = read_json(latest.join("manifest.json"));
    // The parts index is bounded by the list count, whatever the findings;
    // the rest (findings examples and counts among it) stays small.
    let parts = manifest.as_object_mut().unwrap().remove("parts").unwrap();
    use agentfinder_skills_reader::contract::parts::{BUCKET_COUNT, LIST_SIZE};
    assert_eq!(
        parts["lists"].as_array().unwrap().len(),
        (BUCKET_COUNT / LIST_SIZE) as usize
    );
    assert!(parts.get("buckets").is_none(), "schema 8 names lists only");
    let manifest_bytes = serde_json::to_vec_pretty(&manifest).unwrap().len();
    assert!(
        manifest_bytes < 16 * 1024,
        "manifest.json without its parts index is {manifest_bytes} bytes"
    );
    let counted: u64 = manifest["warning_counts"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(manifest["warning_counts"]["duplicate-name"], 1200);
    assert_eq!(manifest["skipped_counts"]["empty"], 1);
    assert!(
        manifest["warnings"].as_array().unwrap().len()
            <= 5 * manifest["warning_counts"].as_object().unwrap().len()
    );
    let findings = documents(latest.join("findings.ndjson"));
    let warnings = findings
        .iter()
        .filter(|f| f["severity"] == "warning")
        .count() as u64;
    assert_eq!(warnings, counted);
    assert_eq!(
        findings
            .iter()
            .filter(|f| f["severity"] == "skipped")
            .count(),
        1
    );
    assert!(findings
        .iter()
        .all(|f| f["path"].is_string() && f["class"].is_string()));
    let summary = stdout(&out);
    assert_eq!(field(&summary, "warnings"), counted.to_string());
    // _SUCCESS vouches for it.
    let marker = read_json(latest.join("_SUCCESS"));
    assert!(marker["files"]["findings.ndjson"]["sha256"].is_string());
    assert!(run(work.path(), &["verify"]).status.success());
}

#[test]
fn a_store_that_is_a_file_or_missing_is_said_plainly() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a-file"), "x").unwrap();
    let out = build(work.path(), &["--source", ".", "--store", "a-file"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("is a file, not a folder"), "{said}");
    assert!(!said.contains("File exists"), "{said}");

    let out = run(work.path(), &["verify", "--store", "nowhere"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("empty store"), "{}", stderr(&out));
    assert!(
        !work.path().join("nowhere").exists(),
        "verify created the store"
    );
    std::fs::create_dir(work.path().join("empty")).unwrap();
    let out = run(work.path(), &["verify", "--store", "empty"]);
    assert!(
        stderr(&out).contains("nothing has been built"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn serving_commands_refuse_a_malformed_configuration_naming_the_key() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("pipeline.toml"),
        "[output]\nstore = \"./artifacts\"\n\n[store]\nallow_htp = true\n",
    )
    .unwrap();
    for command in [
        vec!["health"],
        vec!["search", "pdf"],
        vec!["sync"],
        vec!["verify"],
    ] {
        let out = run(work.path(), &command);
        assert_eq!(out.status.code(), Some(1), "{command:?}: {}", stderr(&out));
        let said = stderr(&out);
        assert!(
            said.contains("allow_htp") && said.contains("line 5"),
            "{command:?}: {said}"
        );
    }
}

#[test]
fn help_shows_no_empty_environment_values() {
    let work = tempfile::tempdir().unwrap();
    for command in ["sync", "health", "search"] {
        let out = run(work.path(), &[command, "--help"]);
        let help = stdout(&out);
        assert!(!help.contains("=]"), "{command} --help: {help}");
    }
}

#[test]
fn durations_past_what_a_clock_holds_are_refused_not_a_panic() {
    let work = tempfile::tempdir().unwrap();
    for command in [
        vec!["find", "pdf", "--deadline"],
        vec!["search", "pdf", "--deadline"],
        vec!["search", "pdf", "--timeout"],
        vec!["sync", "--retry-pause"],
        vec!["serve", "--request-timeout"],
    ] {
        let flag = command[command.len() - 1];
        for value in ["inf", "1e300", "NaN"] {
            let mut args = command.clone();
            args.push(value);
            let out = run(work.path(), &args);
            let said = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
            assert!(!said.contains("panicked"), "{said}");
            assert!(said.contains(flag) && said.contains(value), "{said}");
        }
    }
}
