//! Work proportional to change: a build reuses the entries of the files an
//! earlier build saw, and commit artifacts share unchanged parts, yet every
//! commit composes to exactly what a cold build of it gives.

mod common;

use std::path::Path;

use common::*;

const FILES: [&str; 3] = ["hf-skills.ndjson", "ai-catalog.json", "findings.ndjson"];

/// `n` skills, one of them with a duplicate name and one with broken
/// frontmatter, in a repository with a GitHub origin (so links are pinned).
fn repository(n: usize) -> (GitRepo, String) {
    let mut repo = GitRepo::with_origin("https://github.com/acme/skills.git");
    for i in 0..n {
        repo.write(
            &format!("skills/s{i:03}/SKILL.md"),
            skill(
                &format!("s{i:03}"),
                &format!("Skill number {i}."),
                &format!("# Use\n\nStep {i}.\n\n## Detail\n\nMore about {i}.\n"),
            ),
        );
    }
    repo.write(
        "skills/broken/SKILL.md",
        "---\nname: broken\ndescription: [unclosed\n---\n# Body\n",
    );
    let first = repo.commit("first");
    (repo, first)
}

fn bytes_under(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() {
            bytes_under(&entry.path())
        } else {
            meta.len()
        };
    }
    total
}

fn build(cwd: &Path, store: &str, source: &str, commit: &str) -> String {
    let out = run(
        cwd,
        &[
            "build",
            "--store",
            store,
            "--source",
            source,
            "--ref",
            commit,
            "--no-embed",
        ],
    );
    assert!(out.status.success(), "build: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn a_build_after_a_change_parses_only_what_changed_and_equals_a_cold_build() {
    let (mut repo, first) = repository(30);
    let source = repo.path().to_str().unwrap().to_string();
    let work = tempfile::tempdir().unwrap();
    let summary = build(work.path(), "warm", &source, &first);
    assert_eq!(field(&summary, "parsed"), "31", "{summary}");

    // Two edits, one new skill named like an unchanged one (so that file's
    // duplicate-name warning is new), one deletion.
    repo.write(
        "skills/s001/SKILL.md",
        skill("s001", "Edited.", "# Use\n\nNew.\n"),
    );
    repo.write(
        "skills/s002/SKILL.md",
        skill("s002", "Edited too.", "# Use\n\nNew.\n"),
    );
    repo.write(
        "skills/twin/SKILL.md",
        skill("s010", "Same name as s010.", "# Use\n\nTwin.\n"),
    );
    repo.remove("skills/s003/SKILL.md");
    let second = repo.commit("second");
    let summary = build(work.path(), "warm", &source, &second);
    assert_eq!(
        (field(&summary, "parsed"), field(&summary, "reused")),
        ("3".into(), "28".into()),
        "{summary}"
    );

    let cold = build(work.path(), "cold", &source, &second);
    assert_eq!(field(&cold, "parsed"), "31", "{cold}");
    for file in FILES {
        let warm = commit_file(work.path(), "warm", &second, file);
        let cold = commit_file(work.path(), "cold", &second, file);
        assert!(
            warm == cold,
            "{file} differs between a reusing and a cold build"
        );
        let latest = std::fs::read(work.path().join("warm/latest").join(file)).unwrap();
        assert!(latest == cold, "latest/{file} differs from a cold build");
    }
    let findings = String::from_utf8(commit_file(work.path(), "warm", &second, FILES[2])).unwrap();
    assert!(
        findings.contains("skills/s010/SKILL.md") && findings.contains("duplicate-name"),
        "{findings}"
    );

    // An unchanged file's documents stay pinned to the commit that last
    // changed it; an edited one's to the new commit.
    let docs = commit_documents(work.path(), "warm", &second);
    let pinned = |path: &str| {
        let doc = docs.iter().find(|d| d["path"] == path).unwrap();
        (
            doc["commit"].as_str().unwrap().to_string(),
            doc["url"].as_str().unwrap().to_string(),
        )
    };
    let (commit, url) = pinned("skills/s020/SKILL.md");
    assert_eq!(commit, first);
    assert!(url.contains(&format!("/blob/{first}/")), "{url}");
    assert_eq!(pinned("skills/s001/SKILL.md").0, second);
    assert!(!docs.iter().any(|d| d["path"] == "skills/s003/SKILL.md"));

    for store in ["warm", "cold"] {
        let out = run(
            work.path(),
            &["verify", "--store", store, "--commit", &second],
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

#[test]
fn commits_share_unchanged_parts_and_each_one_still_verifies() {
    let (mut repo, first) = repository(40);
    let mut commits = vec![first];
    for i in 0..6 {
        repo.write(
            &format!("skills/s{i:03}/SKILL.md"),
            skill(
                &format!("s{i:03}"),
                "Changed.",
                &format!("# Use\n\nv{i}.\n"),
            ),
        );
        commits.push(repo.commit(&format!("change {i}")));
    }
    let source = repo.path().to_str().unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = run(
        work.path(),
        &[
            "backfill",
            "--store",
            "shared",
            "--source",
            source,
            "--no-embed",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stdout(&out);
    assert_eq!(field(&summary, "built"), "7", "{summary}");
    assert_eq!(field(&summary, "parsed"), "47", "{summary}");

    // One cold build, for scale.
    let one = build(work.path(), "one", source, commits.last().unwrap());
    assert_eq!(field(&one, "status"), "built");
    let one_bytes = bytes_under(&work.path().join("one/parts"));
    let shared_bytes = bytes_under(&work.path().join("shared"));
    // Seven complete copies would be about 7x; shared parts stay near 1x.
    assert!(
        shared_bytes < one_bytes * 2,
        "7 commits take {shared_bytes} bytes where one takes {one_bytes}"
    );
    // Each later commit changed one file, so it wrote one bucket: the
    // others are named, not copied.
    let objects = |store: &str| {
        std::fs::read_dir(work.path().join(store).join("parts/buckets"))
            .unwrap()
            .count()
    };
    assert!(
        objects("shared") <= objects("one") + 6,
        "{} buckets for 7 commits, {} for one",
        objects("shared"),
        objects("one")
    );
    for (i, commit) in commits.iter().enumerate() {
        let out = run(
            work.path(),
            &["verify", "--store", "shared", "--commit", commit],
        );
        assert!(out.status.success(), "{commit}: {}", stderr(&out));
        let docs = commit_documents(work.path(), "shared", commit);
        let changed = docs
            .iter()
            .filter(|d| d["kind"] == "skill" && d["skill_description"] == "Changed.")
            .count();
        assert_eq!(
            changed, i,
            "commit {i} composes its own version of each file"
        );
    }
    let newest = commits.last().unwrap();
    for file in FILES {
        assert!(
            commit_file(work.path(), "shared", newest, file)
                == commit_file(work.path(), "one", newest, file),
            "{file}: a backfilled commit differs from a cold build of it"
        );
    }
}

#[test]
fn a_damaged_part_fails_verify_and_promotion_naming_it() {
    let (repo, first) = repository(5);
    let source = repo.path().to_str().unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = run(
        work.path(),
        &[
            "build",
            "--store",
            "s",
            "--source",
            source,
            "--no-promote",
            "--no-embed",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let packs = work.path().join("s/parts/packs");
    let pack = std::fs::read_dir(&packs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&pack).unwrap();
    let at = bytes.iter().position(|&b| b == b'S').unwrap();
    bytes[at] = b'Z';
    std::fs::write(&pack, bytes).unwrap();

    let out = run(work.path(), &["verify", "--store", "s", "--commit", &first]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(stderr(&out).contains("parts/packs/"), "{}", stderr(&out));
    let out = run(
        work.path(),
        &["promote", "--store", "s", "--commit", &first],
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("do not match"), "{}", stderr(&out));
    assert!(
        !work.path().join("s/latest/_SUCCESS").exists(),
        "nothing damaged may reach latest/"
    );
}

#[test]
fn a_build_with_its_entries_set_aside_writes_the_parts_a_backfill_keeps_in_memory() {
    // `build` (a run of one commit) sets each entry's catalog and findings
    // aside on disk until its buckets are encoded; `backfill` keeps them in
    // memory for its next commit. The bucket objects, named by digest,
    // must be the very same: with a duplicate name (findings settled after
    // being set aside) and a file that cannot be used (no catalog).
    let (mut repo, _) = repository(40);
    repo.write(
        "skills/dup/SKILL.md",
        skill("s001", "The same name as another.", "# Use\n"),
    );
    repo.write("skills/binary/SKILL.md", b"\x00\x01\x02 not text");
    let head = repo.commit("a duplicate and a file that cannot be used");
    let work = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    build(work.path(), "built", source, &head);
    let filled = [
        "backfill",
        "--store",
        "filled",
        "--source",
        source,
        "--last",
        "1",
        "--no-embed",
    ];
    let out = run(work.path(), &filled);
    assert!(out.status.success(), "backfill: {}", stderr(&out));
    let buckets = |store: &str| -> std::collections::BTreeSet<String> {
        std::fs::read_dir(work.path().join(store).join("parts/buckets"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    assert!(buckets("built").len() > 20, "{:?}", buckets("built"));
    assert_eq!(buckets("built"), buckets("filled"));
    let findings = std::fs::read_to_string(work.path().join("built/latest/findings.ndjson"));
    let findings = findings.unwrap();
    assert!(findings.contains("duplicate-name"), "{findings}");
}
