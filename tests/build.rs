//! End to end: the real binary over real git repositories in temp dirs.

mod common;

use std::collections::BTreeMap;

use common::*;

fn ids_by_path(docs: &[serde_json::Value]) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in docs {
        map.entry(d["path"].as_str().unwrap().to_string())
            .or_default()
            .push(d["id"].as_str().unwrap().to_string());
    }
    map
}

fn two_commit_repo() -> (GitRepo, String, String) {
    let mut repo = GitRepo::with_origin("https://github.com/o/skills.git");
    repo.write(
        "skills/pdf/SKILL.md",
        skill(
            "pdf",
            "Reads PDFs",
            "# Use\n\nRun it.\n\n## More\n\nDetails.\n",
        ),
    );
    repo.write(
        "skills/csv/SKILL.md",
        skill("csv", "Reads CSV", "# CSV\n\nParse rows.\n"),
    );
    repo.write(
        ".curated/hidden/SKILL.md",
        skill("hidden", "In a hidden folder", "Body.\n"),
    );
    let first = repo.commit("first");
    repo.write(
        "skills/csv/SKILL.md",
        skill(
            "csv",
            "Reads and writes CSV",
            "# CSV\n\nParse and write rows.\n",
        ),
    );
    repo.write(
        "skills/new/SKILL.md",
        skill("new", "A new skill", "# New\n\nFresh.\n"),
    );
    let second = repo.commit("second");
    (repo, first, second)
}

#[test]
fn two_commits_build_promote_rebuild_refuse_and_verify() {
    let (repo, first, second) = two_commit_repo();
    let work = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();

    let out = run(work.path(), &["build", "--source", source, "--ref", &first]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(work.path(), &["build", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stdout(&out);
    assert!(summary.contains(&format!("commit={second}")), "{summary}");
    assert!(
        summary.contains("status=built") && summary.contains("latest=promoted"),
        "{summary}"
    );
    assert!(
        summary.contains("skills=4")
            && summary.contains(&format!(
                "schema={}",
                agentfinder_skills_reader::contract::SCHEMA_VERSION
            )),
        "{summary}"
    );

    let artifacts = work.path().join("artifacts");
    for commit in [&first, &second] {
        let dir = artifacts.join("commits").join(commit);
        // A commit's folder holds its manifest and marker; the documents
        // are shared parts (see tests/parts.rs).
        for file in ["manifest.json", "_SUCCESS"] {
            assert!(dir.join(file).is_file(), "{commit}/{file}");
        }
        let out = run(work.path(), &["verify", "--commit", commit]);
        assert!(out.status.success(), "{}", stderr(&out));
    }

    // Unchanged files keep their ids; changed ones keep them too (ids follow
    // path and position), and the new commit pins its own URLs.
    let old = commit_documents(work.path(), "artifacts", &first);
    let new = commit_documents(work.path(), "artifacts", &second);
    let (old_ids, new_ids) = (ids_by_path(&old), ids_by_path(&new));
    assert_eq!(
        old_ids["skills/pdf/SKILL.md"],
        new_ids["skills/pdf/SKILL.md"]
    );
    assert_eq!(
        old_ids[".curated/hidden/SKILL.md"],
        new_ids[".curated/hidden/SKILL.md"]
    );
    // skills/csv/SKILL.md changed between the commits (same sections).
    let csv = |docs: &[serde_json::Value]| {
        docs.iter()
            .find(|d| d["path"] == "skills/csv/SKILL.md")
            .map(|d| d["content_sha"].clone())
    };
    assert_ne!(csv(&old), csv(&new), "the file did change");
    assert_eq!(
        old_ids["skills/csv/SKILL.md"],
        new_ids["skills/csv/SKILL.md"]
    );
    assert!(
        new_ids.contains_key("skills/new/SKILL.md") && !old_ids.contains_key("skills/new/SKILL.md")
    );
    // Each document is pinned to the commit that last changed its file
    // (schema 5): its links are permalinks to the same bytes, and an
    // unchanged file's documents stay byte-identical from commit to commit.
    for doc in &new {
        let pinned = if doc["path"] == "skills/pdf/SKILL.md" {
            &first
        } else if doc["path"] == "skills/csv/SKILL.md" {
            &second
        } else {
            continue;
        };
        let url = doc["url"].as_str().unwrap();
        assert!(url.contains(&format!("/blob/{pinned}/")), "{url}");
        assert_eq!(doc["commit"], pinned.as_str());
        assert_eq!(doc["updated_at"], doc["last_updated"]);
    }
    // last_updated is when each file last changed, not the commit's time:
    // pdf and hidden are as the first commit left them.
    let changed_at = |path: &str| {
        let times: std::collections::BTreeSet<String> = new
            .iter()
            .filter(|d| d["path"] == path)
            .map(|d| d["last_updated"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(times.len(), 1, "{path}: {times:?}");
        times.into_iter().next().unwrap()
    };
    assert_eq!(changed_at("skills/pdf/SKILL.md"), "2026-01-01T10:00:00Z");
    assert_eq!(
        changed_at(".curated/hidden/SKILL.md"),
        "2026-01-01T10:00:00Z"
    );
    assert_eq!(changed_at("skills/csv/SKILL.md"), "2026-01-02T10:00:00Z");
    assert_eq!(changed_at("skills/new/SKILL.md"), "2026-01-02T10:00:00Z");
    assert!(
        new.iter().all(|d| d["source"] == "o-skills"),
        "the source id follows the repository"
    );

    // latest/ is byte-for-byte the newer commit's complete files.
    for file in [
        "hf-skills.ndjson",
        "ai-catalog.json",
        "findings.ndjson",
        "manifest.json",
        "_SUCCESS",
    ] {
        let a = std::fs::read(artifacts.join("latest").join(file)).unwrap();
        let b = commit_file(work.path(), "artifacts", &second, file);
        assert_eq!(a, b, "latest/{file}");
    }
    let manifest = read_json(artifacts.join("latest/manifest.json"));
    assert_eq!(manifest["source_commit"], second.as_str());
    assert_eq!(manifest["document_count"], new.len());
    assert_eq!(manifest["source_commit_time"], "2026-01-02T10:00:00Z");

    // A rebuild is a no-op that says so.
    let out = run(work.path(), &["build", "--source", source]);
    assert!(
        stdout(&out).contains("status=already-built"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("latest=already-latest"));

    // Promoting the older commit is refused without --force, allowed with it.
    let out = run(work.path(), &["build", "--source", source, "--ref", &first]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(
        read_json(artifacts.join("latest/manifest.json"))["source_commit"],
        second.as_str()
    );
    let out = run(work.path(), &["promote", "--commit", &first, "--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        read_json(artifacts.join("latest/manifest.json"))["source_commit"],
        first.as_str()
    );

    // A corrupted file makes verify fail, naming the file.
    let manifest = artifacts.join(format!("commits/{second}/manifest.json"));
    let mut bytes = std::fs::read(&manifest).unwrap();
    bytes[10] ^= 1;
    std::fs::write(&manifest, bytes).unwrap();
    let out = run(work.path(), &["verify", "--commit", &second]);
    assert_eq!(out.status.code(), Some(7));
    assert!(stderr(&out).contains("manifest.json"), "{}", stderr(&out));
}

#[test]
fn files_come_from_the_commit_not_the_working_tree() {
    let mut repo = GitRepo::new();
    repo.write(
        "s/a/SKILL.md",
        skill("a", "committed text", "# A\n\ncommitted body\n"),
    );
    repo.commit("c");
    repo.write(
        "s/a/SKILL.md",
        skill("a", "LOCAL EDIT", "# A\n\nLOCAL EDIT\n"),
    );
    repo.write("s/b/SKILL.md", skill("b", "untracked", "# B\n"));
    let work = tempfile::tempdir().unwrap();
    let out = run(
        work.path(),
        &["build", "--source", repo.path().to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text =
        std::fs::read_to_string(work.path().join("artifacts/latest/hf-skills.ndjson")).unwrap();
    assert!(text.contains("committed body"));
    assert!(!text.contains("LOCAL EDIT") && !text.contains("untracked"));
}

#[test]
fn clones_a_url_into_the_cache_and_reuses_it() {
    let (mut repo, _, second) = two_commit_repo();
    let work = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    let out = run(work.path(), &["build", "--source", &url, "--no-promote"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("commit={second}")),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("latest=not-requested"));
    assert!(!work.path().join("artifacts/latest/_SUCCESS").exists());
    assert!(
        work.path()
            .join(".cache/sources")
            .read_dir()
            .unwrap()
            .count()
            >= 1
    );
    // Second run fetches into the existing cache.
    let out = run(work.path(), &["build", "--source", &url, "--no-promote"]);
    assert!(
        stdout(&out).contains("status=already-built"),
        "{}",
        stderr(&out)
    );
    // A new upstream commit arrives through the cached clone.
    repo.write("skills/third/SKILL.md", skill("third", "Third", "# T\n"));
    let third = repo.commit("third");
    let out = run(work.path(), &["build", "--source", &url]);
    assert!(
        stdout(&out).contains(&format!("commit={third}")),
        "{} {}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("status=built"));
}

#[test]
fn bad_files_are_skipped_or_recovered_and_reported_in_the_manifest() {
    let mut repo = GitRepo::new();
    repo.write("s/good/SKILL.md", skill("good", "fine", "# Good\n"));
    repo.write(
        "s/colon/SKILL.md",
        "---\nname: colon\ndescription: Use when: things\n---\n# C\n",
    );
    repo.write("s/binary/SKILL.md", b"---\nname: x\n---\n\x00\x01");
    repo.write("s/latin1/SKILL.md", b"caf\xe9\n");
    repo.write("s/empty/SKILL.md", "");
    repo.write("node_modules/x/SKILL.md", skill("vendored", "never", "x"));
    std::os::unix::fs::symlink("../good/SKILL.md", repo.path().join("s/alias")).ok();
    std::fs::create_dir_all(repo.path().join("s/alias-dir")).unwrap();
    std::os::unix::fs::symlink("../good/SKILL.md", repo.path().join("s/alias-dir/SKILL.md"))
        .unwrap();
    std::fs::create_dir_all(repo.path().join("s/escape")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", repo.path().join("s/escape/SKILL.md")).unwrap();
    repo.commit("mixed");

    let work = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    let out = run(work.path(), &["build", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("s/colon/SKILL.md:3: frontmatter-recovered"),
        "{err}"
    );
    assert!(
        err.contains("skipped: s/binary/SKILL.md: nul-byte"),
        "{err}"
    );

    let manifest = read_json(work.path().join("artifacts/latest/manifest.json"));
    let skipped: BTreeMap<String, String> = manifest["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().into(),
                s["class"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(skipped["s/binary/SKILL.md"], "nul-byte");
    assert_eq!(skipped["s/latin1/SKILL.md"], "not-utf8");
    assert_eq!(skipped["s/empty/SKILL.md"], "empty");
    assert_eq!(skipped["s/escape/SKILL.md"], "symlink");
    assert_eq!(skipped.len(), 4);
    let warnings = manifest["warnings"].as_array().unwrap();
    assert!(warnings
        .iter()
        .any(|w| w["path"] == "s/alias-dir/SKILL.md" && w["class"] == "symlink-alias"));
    assert!(warnings
        .iter()
        .any(|w| w["path"] == "s/colon/SKILL.md" && w["line"] == 3));

    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    let colon = docs
        .iter()
        .find(|d| d["path"] == "s/colon/SKILL.md" && d["kind"] == "skill")
        .unwrap();
    assert_eq!(colon["skill_description"], "Use when: things");
    assert!(docs.iter().all(|d| d["path"] != "node_modules/x/SKILL.md"));
    assert!(docs.iter().any(|d| d["path"] == "s/alias-dir/SKILL.md"));

    // --strict turns the same input into a failed build that writes nothing.
    let strict_work = tempfile::tempdir().unwrap();
    let out = run(
        strict_work.path(),
        &["build", "--source", source, "--strict"],
    );
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(!strict_work.path().join("artifacts/commits").exists());
    // Naming an unrelated class still fails on the skips.
    let out = run(
        strict_work.path(),
        &["build", "--source", source, "--strict=name-invalid"],
    );
    assert_eq!(out.status.code(), Some(4));
}

#[test]
fn a_build_that_shrinks_too_much_is_not_promoted() {
    let mut repo = GitRepo::new();
    for i in 0..6 {
        repo.write(
            &format!("s/k{i}/SKILL.md"),
            skill(&format!("k{i}"), "d", "# H\n\nbody\n"),
        );
    }
    repo.commit("six");
    for i in 1..6 {
        repo.remove(&format!("s/k{i}/SKILL.md"));
    }
    let small = repo.commit("one");
    let work = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    assert!(run(
        work.path(),
        &["build", "--source", source, "--ref", "HEAD~1"]
    )
    .status
    .success());
    let out = run(work.path(), &["build", "--source", source]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("max_shrink_ratio"),
        "{}",
        stderr(&out)
    );
    // The commit artifact itself was written and is complete.
    assert!(run(work.path(), &["verify", "--commit", &small])
        .status
        .success());
    let out = run(work.path(), &["build", "--source", source, "--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn the_load_stage_is_skipped_with_a_reason_unless_required() {
    let (repo, _, _) = two_commit_repo();
    let work = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    let out = binary()
        .args(["build", "--source", source])
        .current_dir(work.path())
        .env_remove("MEILI_URL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("load: skipped (MEILI_URL is not set)"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("load=skipped"));

    let unreachable = |extra: &[&str]| {
        binary()
            .args(["build", "--source", source, "--retry-pause", "0.01"])
            .args(extra)
            .current_dir(work.path())
            .env("MEILI_URL", "http://127.0.0.1:1")
            .env("MEILI_MASTER_KEY", "very-secret-key")
            .output()
            .unwrap()
    };
    let out = unreachable(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("unreachable"), "{}", stderr(&out));
    let out = unreachable(&["--require-load"]);
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    assert!(stdout(&out).contains("load=failed"));
    assert!(!stderr(&out).contains("very-secret-key") && !stdout(&out).contains("very-secret-key"));
    // The artifact was written and promoted all the same.
    assert!(work.path().join("artifacts/latest/_SUCCESS").exists());
}

/// Builds `source` with `[walk] history_depth = depth`: its `skill`
/// documents by path.
fn skill_documents_at_depth(source: &str, depth: usize) -> BTreeMap<String, serde_json::Value> {
    let work = work_at_depth(depth);
    let out = run(work.path(), &["build", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    documents(work.path().join("artifacts/latest/hf-skills.ndjson"))
        .into_iter()
        .filter(|d| d["kind"] == "skill")
        .map(|d| (d["path"].as_str().unwrap().to_string(), d))
        .collect()
}

#[test]
fn past_the_history_depth_a_file_is_dated_at_or_before_the_oldest_commit_walked() {
    let mut repo = GitRepo::new();
    repo.write(
        "skills/old/SKILL.md",
        skill("old", "From the start", "# Use\n\nv0\n"),
    );
    let mut commits = vec![repo.commit("c0")];
    for i in 1..=3 {
        let body = format!("# Use\n\nv{i}\n");
        repo.write("skills/new/SKILL.md", skill("new", "Edited often", &body));
        commits.push(repo.commit(&format!("c{i}")));
    }
    let source = repo.path().to_str().unwrap();
    let dated = |depth: usize| {
        let skill_docs = skill_documents_at_depth(source, depth);
        let skill_doc = |path: &str| skill_docs[path].clone();
        (
            skill_doc("skills/old/SKILL.md"),
            skill_doc("skills/new/SKILL.md"),
        )
    };
    // Depth 4: the walk stops at the first anchor commit past half of it
    // (with fewer than 32, every commit is one): two commits walked (c3,
    // c2), nothing there changed `old`, so it is as c1 holds it, dated at
    // or before c1 and pinned to it.
    let (old, new) = dated(4);
    assert_eq!(old["last_updated_at_or_before"], true, "{old:#}");
    assert_eq!(old["last_updated"], "2026-01-02T10:00:00Z");
    assert_eq!(old["commit"], commits[1].as_str());
    assert!(new.get("last_updated_at_or_before").is_none(), "{new:#}");
    assert_eq!(new["commit"], commits[3].as_str());
    assert_eq!(new["last_updated"], "2026-01-04T10:00:00Z");
    // With no bound (0) the walk reaches the commit that added it.
    let (old, _) = dated(0);
    assert!(old.get("last_updated_at_or_before").is_none(), "{old:#}");
    assert_eq!(old["commit"], commits[0].as_str());
    assert_eq!(old["last_updated"], "2026-01-01T10:00:00Z");

    // A URL source is cloned as deep as the walk goes, and dated the same
    // (it was cloned at depth 1 and left undated): by `file://` and over
    // git's smart HTTP protocol, both shallow.
    let http = common::git_http::GitHttp::serve(repo.path().parent().unwrap());
    let name = repo.path().file_name().unwrap().to_str().unwrap();
    for url in [format!("file://{source}"), http.url(name)] {
        for depth in [2, 4, 0] {
            let by_url = skill_documents_at_depth(&url, depth);
            let by_path = skill_documents_at_depth(source, depth);
            for path in ["skills/old/SKILL.md", "skills/new/SKILL.md"] {
                for field in ["last_updated", "last_updated_at_or_before", "commit"] {
                    assert_eq!(
                        by_url[path].get(field),
                        by_path[path].get(field),
                        "{url}: {path} {field} at depth {depth}"
                    );
                }
            }
        }
    }
    assert!(http.requests.load(std::sync::atomic::Ordering::SeqCst) >= 3);
}

#[test]
fn a_clone_no_deeper_than_its_tip_dates_files_at_or_before_it() {
    // A cache cloned before at depth 1 (as earlier versions did), then
    // built with history the clone does not hold: every file is marked as
    // changed at or before the tip, not left undated.
    let mut repo = GitRepo::new();
    repo.write("skills/a/SKILL.md", skill("a", "A", "# Use\n\nv0\n"));
    repo.commit("c0");
    repo.write("skills/b/SKILL.md", skill("b", "B", "# Use\n\nv0\n"));
    let tip = repo.commit("c1");
    let shallow = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    let out = std::process::Command::new("git")
        .args(["clone", "-q", "--depth", "1", &url])
        .arg(shallow.path().join("repo"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let docs = skill_documents_at_depth(shallow.path().join("repo").to_str().unwrap(), 0);
    for path in ["skills/a/SKILL.md", "skills/b/SKILL.md"] {
        let doc = &docs[path];
        assert_eq!(doc["last_updated_at_or_before"], true, "{doc:#}");
        assert_eq!(doc["commit"], tip.as_str(), "{doc:#}");
        assert_eq!(doc["last_updated"], "2026-01-02T10:00:00Z", "{doc:#}");
    }
}

/// How many commits below the newest of `commits` (oldest first) a walk
/// `depth` deep stops, as `[walk] history_depth` documents it: at the first
/// commit at least half of `depth` down whose id's first 16 hex digits are
/// a multiple of `depth / 16` (at least 1), else at `depth`.
fn history_bound(commits: &[String], depth: usize) -> usize {
    let spacing = (depth as u64 / 16).max(1);
    let newest_first: Vec<&String> = commits.iter().rev().collect();
    (depth.div_ceil(2)..=depth)
        .find(|at| {
            let number = u64::from_str_radix(&newest_first[*at][..16], 16).unwrap();
            number.is_multiple_of(spacing) || *at == depth
        })
        .unwrap()
}

#[test]
fn dates_agree_with_git_log_over_a_history_longer_than_one_run_of_the_walk() {
    // 41 commits over 6 skills changed every 2, 5, 8, 11, 14 commits (the
    // last only by the first), the others touching only a README: the
    // walk takes them in runs split across threads, and must still find,
    // for each file, the newest commit that changed it (git log's answer).
    let mut repo = GitRepo::new();
    let mut commits = Vec::new();
    for i in 0..41usize {
        let mut touched = false;
        for k in 0..6usize {
            if i == 0 || (k < 5 && i % (k * 3 + 2) == 0) {
                let body = format!("# Use\n\nv{i}\n");
                repo.write(
                    &format!("skills/s{k}/SKILL.md"),
                    skill(&format!("s{k}"), "S", &body),
                );
                touched = true;
            }
        }
        if !touched {
            repo.write("README.md", format!("r{i}\n"));
        }
        commits.push(repo.commit(&format!("c{i}")));
    }
    let source = repo.path().to_str().unwrap();
    for depth in [0usize, 9, 17, 40] {
        let skill_docs = skill_documents_at_depth(source, depth);
        for k in 0..6 {
            let path = format!("skills/s{k}/SKILL.md");
            let doc = &skill_docs[&path];
            let newest = repo.git(&["log", "-1", "--format=%H", "--", &path]);
            let back = commits.len() - 1 - commits.iter().position(|c| *c == newest).unwrap();
            let bound = history_bound(&commits, depth);
            let (commit, bounded) = if depth == 0 || back < bound {
                (newest, false)
            } else {
                (commits[commits.len() - 1 - bound].clone(), true)
            };
            assert_eq!(doc["commit"], commit.as_str(), "depth {depth}, {path}");
            assert_eq!(
                doc.get("last_updated_at_or_before").is_some(),
                bounded,
                "depth {depth}, {path}: {doc:#}"
            );
        }
    }
}
