//! Backfill over real git histories, driving the real binary.

mod common;

use std::collections::BTreeSet;

use serde_json::Value;

use common::*;

/// Six commits; each changes one file of three, so most blobs are shared.
fn history() -> (GitRepo, Vec<String>) {
    let mut repo = GitRepo::new();
    let mut commits = Vec::new();
    for name in ["a", "b", "c"] {
        repo.write(
            &format!("skills/{name}/SKILL.md"),
            skill(name, "first", "# Use\n\nv0\n"),
        );
    }
    commits.push(repo.commit("c0"));
    for i in 1..6 {
        let name = ["a", "b", "c"][i % 3];
        repo.write(
            &format!("skills/{name}/SKILL.md"),
            skill(name, "changed", &format!("# Use\n\nv{i}\n")),
        );
        commits.push(repo.commit(&format!("c{i}")));
    }
    (repo, commits)
}

fn built_commits(work: &std::path::Path) -> BTreeSet<String> {
    std::fs::read_dir(work.join("artifacts/commits"))
        .map(|dir| {
            dir.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|c| {
                    work.join("artifacts/commits")
                        .join(c)
                        .join("_SUCCESS")
                        .exists()
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn backfills_every_commit_once_parsing_each_blob_once_and_resumes() {
    let (repo, commits) = history();
    let work = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    let out = run(work.path(), &["backfill", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stdout(&out);
    assert_eq!(field(&summary, "commits"), "6");
    assert_eq!(field(&summary, "built"), "6");
    // 3 files at c0 + one new version per later commit: 8 distinct blobs,
    // where commits x files would be 18.
    assert_eq!(field(&summary, "parsed"), "8", "{summary}");
    assert_eq!(field(&summary, "reused"), "10", "{summary}");
    assert_eq!(field(&summary, "latest"), "untouched");
    assert!(
        !work.path().join("artifacts/latest").exists(),
        "latest/ must be left alone"
    );
    assert_eq!(
        built_commits(work.path()),
        commits.iter().cloned().collect()
    );
    for commit in &commits {
        assert!(run(work.path(), &["verify", "--commit", commit])
            .status
            .success());
    }
    // The same documents as a plain build of that commit (bar generated_at).
    let plain = tempfile::tempdir().unwrap();
    assert!(run(
        plain.path(),
        &["build", "--source", source, "--ref", &commits[3]]
    )
    .status
    .success());
    let a = commit_file(work.path(), "artifacts", &commits[3], "hf-skills.ndjson");
    let b = commit_file(plain.path(), "artifacts", &commits[3], "hf-skills.ndjson");
    assert_eq!(a, b, "reused parses must give the same documents");

    // Nothing left to do: every commit is skipped without a parse.
    let out = run(work.path(), &["backfill", "--source", source]);
    let summary = stdout(&out);
    assert_eq!(
        (
            field(&summary, "built"),
            field(&summary, "already"),
            field(&summary, "parsed")
        ),
        ("0".into(), "6".into(), "0".into())
    );
}

#[test]
fn a_backfill_killed_midway_continues_where_it_stopped() {
    let (repo, commits) = history();
    let work = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    let killed = binary()
        .args(["backfill", "--source", source])
        .current_dir(work.path())
        .env("AGENTFINDER_FAILPOINT", "commit-after-manifest.json")
        .output()
        .unwrap();
    assert_eq!(killed.status.code(), None, "{}", stderr(&killed));
    assert!(built_commits(work.path()).is_empty());
    let out = run(work.path(), &["backfill", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(field(&stdout(&out), "built"), "6");
    assert_eq!(built_commits(work.path()).len(), commits.len());
}

#[test]
fn selections_and_shards() {
    let (repo, commits) = history();
    let source = repo.path().to_str().unwrap();
    let select = |args: &[&str]| {
        let work = tempfile::tempdir().unwrap();
        let mut all = vec!["backfill", "--source", source];
        all.extend_from_slice(args);
        let out = run(work.path(), &all);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        built_commits(work.path())
    };
    let set = |range: &[String]| range.iter().cloned().collect::<BTreeSet<_>>();
    assert_eq!(select(&["--last", "2"]), set(&commits[4..]));
    assert_eq!(
        select(&["--from", &commits[2], "--to", &commits[4]]),
        set(&commits[2..5])
    );
    assert_eq!(
        select(&["--commits", &format!("{},{}", commits[0], commits[5])]),
        set(&[commits[0].clone(), commits[5].clone()])
    );
    // The fake history's commits are a day apart from 2026-01-01.
    assert_eq!(select(&["--since", "2026-01-05"]), set(&commits[4..]));

    // Shards partition the commits: disjoint, and together complete.
    let work = tempfile::tempdir().unwrap();
    let mut union = BTreeSet::new();
    let mut total = 0;
    for shard in ["1/3", "2/3", "3/3"] {
        let out = run(
            work.path(),
            &["backfill", "--source", source, "--shard", shard],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let summary = stdout(&out);
        total += field(&summary, "built").parse::<usize>().unwrap();
        assert_eq!(field(&summary, "already"), "0", "shards overlap: {summary}");
        union.extend(built_commits(work.path()));
    }
    assert_eq!(total, commits.len());
    assert_eq!(union, set(&commits));
}

#[test]
fn promote_newest_moves_latest_to_the_last_commit() {
    let (repo, commits) = history();
    let work = tempfile::tempdir().unwrap();
    let out = run(
        work.path(),
        &[
            "backfill",
            "--source",
            repo.path().to_str().unwrap(),
            "--last",
            "3",
            "--promote-newest",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        field(&stdout(&out), "latest"),
        format!("promoted:{}", commits[5])
    );
    assert_eq!(
        read_json(work.path().join("artifacts/latest/manifest.json"))["source_commit"],
        commits[5].as_str()
    );
}

#[test]
fn backfill_clones_full_history_from_a_url() {
    let (repo, commits) = history();
    let work = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    // A shallow clone made by `build` first must not stop the walk.
    assert!(
        run(work.path(), &["build", "--source", &url, "--no-promote"])
            .status
            .success()
    );
    let out = run(work.path(), &["backfill", "--source", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        built_commits(work.path()),
        commits.iter().cloned().collect()
    );
}

/// A history that exercises every kind of change a commit can make to the
/// skill files, and the two that make a commit list its tree again (the
/// marketplace file, symlinked skills). Returns the commits and how many of
/// them a backfill can patch from their parent.
fn every_kind_of_change() -> (GitRepo, Vec<String>, usize) {
    let mut repo = GitRepo::new();
    let mut commits = Vec::new();
    for name in ["a", "b", "c", "d"] {
        repo.write(
            &format!("skills/{name}/SKILL.md"),
            skill(name, "first", "# Use\n\nv0\n"),
        );
    }
    repo.write(
        "skills/broken/SKILL.md",
        "---\nname: [broken\n---\n# Body\n",
    );
    repo.write("README.md", "hello\n");
    repo.write("skills/c/references/notes.md", "notes\n");
    commits.push(repo.commit("c0"));
    let patched_from = commits.len();
    fn step(
        (repo, commits): (&mut GitRepo, &mut Vec<String>),
        message: &str,
        change: &dyn Fn(&GitRepo),
    ) {
        change(repo);
        commits.push(repo.commit(message));
    }
    step((&mut repo, &mut commits), "edit a", &|r| {
        r.write("skills/a/SKILL.md", skill("a", "second", "# Use\n\nv1\n"))
    });
    step((&mut repo, &mut commits), "add e, remove b", &|r| {
        r.write("skills/e/SKILL.md", skill("e", "new", "# Use\n\nv0\n"));
        r.remove("skills/b/SKILL.md");
    });
    step((&mut repo, &mut commits), "rename c", &|r| {
        r.git(&["mv", "skills/c", "skills/c2"]);
    });
    step((&mut repo, &mut commits), "readme only", &|r| {
        r.write("README.md", "bye\n")
    });
    step((&mut repo, &mut commits), "e takes a's name", &|r| {
        r.write("skills/e/SKILL.md", skill("a", "new", "# Use\n\nv0\n"))
    });
    step((&mut repo, &mut commits), "make d executable", &|r| {
        use std::os::unix::fs::PermissionsExt;
        let path = r.path().join("skills/d/SKILL.md");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    });
    step(
        (&mut repo, &mut commits),
        "move d under node_modules",
        &|r| {
            std::fs::create_dir_all(r.path().join("node_modules")).unwrap();
            r.git(&["mv", "skills/d", "node_modules/d"]);
        },
    );
    step(
        (&mut repo, &mut commits),
        "a file where a folder will be",
        &|r| {
            r.write("skills/f", "a file\n");
        },
    );
    step(
        (&mut repo, &mut commits),
        "the file becomes a skill folder",
        &|r| {
            r.remove("skills/f");
            r.write("skills/f/SKILL.md", skill("f", "folder", "# Use\n\nv0\n"));
        },
    );
    step((&mut repo, &mut commits), "fix the broken one", &|r| {
        r.write(
            "skills/broken/SKILL.md",
            skill("broken", "fixed", "# Body\n"),
        )
    });
    step(
        (&mut repo, &mut commits),
        "e takes its own name again",
        &|r| {
            // a, untouched, loses its duplicate-name warning.
            r.write("skills/e/SKILL.md", skill("e", "own", "# Use\n\nv1\n"))
        },
    );
    // What a skill ships changes while its SKILL.md does not.
    step((&mut repo, &mut commits), "a script for a", &|r| {
        r.write("skills/a/scripts/run.py", "print('a')\n")
    });
    step(
        (&mut repo, &mut commits),
        "a skill inside a's folder",
        &|r| {
            r.write(
                "skills/a/inner/SKILL.md",
                skill("inner", "nested", "# Use\n\nv0\n"),
            );
            r.write("skills/a/inner/assets/x.png", "png\n");
        },
    );
    step((&mut repo, &mut commits), "a's script goes", &|r| {
        r.remove("skills/a/scripts/run.py");
        r.write("skills/a/node_modules/m/index.js", "js\n");
    });
    let patched = commits.len() - patched_from;
    // These list the tree again.
    step((&mut repo, &mut commits), "marketplace", &|r| {
        r.write(
            ".claude-plugin/marketplace.json",
            r#"{"name":"m","metadata":{"version":"2.0.0"},"plugins":[]}"#,
        )
    });
    step((&mut repo, &mut commits), "a symlinked skill", &|r| {
        std::fs::create_dir_all(r.path().join("skills/alias")).unwrap();
        std::os::unix::fs::symlink("../a/SKILL.md", r.path().join("skills/alias/SKILL.md"))
            .unwrap();
    });
    step(
        (&mut repo, &mut commits),
        "edit a under the symlink",
        &|r| r.write("skills/a/SKILL.md", skill("a", "third", "# Use\n\nv2\n")),
    );
    (repo, commits, patched)
}

/// The four complete files of a commit artifact, the manifest without the
/// time it was generated and without the names of its bucket lists (an
/// entry reused from an earlier commit points into that commit's pack, so
/// the bytes of its bucket differ from a cold build's; what they make does not).
fn complete_files(cwd: &std::path::Path, commit: &str) -> Vec<(String, String)> {
    [
        "hf-skills.ndjson",
        "ai-catalog.json",
        "findings.ndjson",
        "manifest.json",
    ]
    .into_iter()
    .map(|file| {
        let bytes = commit_file(cwd, "artifacts", commit, file);
        let mut text = String::from_utf8(bytes).unwrap();
        if file == "manifest.json" {
            let mut manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
            manifest["generated_at"] = serde_json::Value::Null;
            manifest["parts"]["lists"] = serde_json::Value::Null;
            text = manifest.to_string();
        }
        (file.to_string(), text)
    })
    .collect()
}

#[test]
fn a_commit_patched_from_its_parent_equals_a_cold_build_of_it() {
    let (repo, commits, patched) = every_kind_of_change();
    let work = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    let out = run(work.path(), &["backfill", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stdout(&out);
    assert_eq!(field(&summary, "built"), commits.len().to_string());
    // Every commit but the first and the three that must list their tree.
    assert_eq!(field(&summary, "patched"), patched.to_string(), "{summary}");
    // What a ships, as the patched builds saw it.
    let shipped = |commit: &str, path: &str| {
        let bytes = commit_file(work.path(), "artifacts", commit, "hf-skills.ndjson");
        let skill = String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|d| d["path"] == path && d["kind"] == "skill")
            .unwrap();
        (
            skill["supporting_files"].clone(),
            skill["signals"]["ships"]["total"].clone(),
        )
    };
    let at = |message: &str| {
        &commits[repo
            .git(&["log", "--format=%s", "--reverse"])
            .lines()
            .position(|m| m == message)
            .unwrap()]
    };
    assert_eq!(
        shipped(at("a script for a"), "skills/a/SKILL.md"),
        (serde_json::json!(["scripts/run.py"]), serde_json::json!(1))
    );
    assert_eq!(
        shipped(at("a skill inside a's folder"), "skills/a/SKILL.md"),
        (serde_json::json!(["scripts/run.py"]), serde_json::json!(1))
    );
    assert_eq!(
        shipped(at("a skill inside a's folder"), "skills/a/inner/SKILL.md"),
        (serde_json::json!(["assets/x.png"]), serde_json::json!(1))
    );
    assert_eq!(
        shipped(at("a's script goes"), "skills/a/SKILL.md"),
        (serde_json::Value::Null, serde_json::json!(0))
    );
    assert_eq!(
        shipped(at("rename c"), "skills/c2/SKILL.md"),
        (
            serde_json::json!(["references/notes.md"]),
            serde_json::json!(1)
        )
    );
    for (i, commit) in commits.iter().enumerate() {
        let cold = tempfile::tempdir().unwrap();
        let out = run(
            cold.path(),
            &["build", "--source", source, "--ref", commit, "--no-promote"],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let (ours, theirs) = (
            complete_files(work.path(), commit),
            complete_files(cold.path(), commit),
        );
        for ((file, a), (_, b)) in ours.iter().zip(&theirs) {
            assert_eq!(
                a, b,
                "commit {i} ({commit}): {file} differs from a cold build"
            );
        }
    }
}

#[test]
fn promote_newest_never_promotes_another_configurations_build_of_the_newest_commit() {
    let mut repo = GitRepo::new();
    repo.write("skills/a/SKILL.md", skill("a", "first", "# Use\n\nv0\n"));
    let older = repo.commit("good");
    // A recoverable frontmatter: a warning, which --strict makes a failure.
    repo.write(
        "skills/b/SKILL.md",
        "---\nname: b\ndescription: Use when: things\n---\n# B\n",
    );
    let newest = repo.commit("warned");
    let work = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    // commits/<newest>/ built by another configuration, and not promoted.
    std::fs::write(
        work.path().join("other.toml"),
        "[chunk]\nmax_chars = 5000\n",
    )
    .unwrap();
    let out = run(
        work.path(),
        &[
            "--config",
            "other.toml",
            "build",
            "--source",
            source,
            "--no-promote",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(work
        .path()
        .join(format!("artifacts/commits/{newest}/_SUCCESS"))
        .exists());

    let out = run(
        work.path(),
        &[
            "backfill",
            "--source",
            source,
            "--last",
            "2",
            "--strict",
            "--promote-newest",
        ],
    );
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(field(&stdout(&out), "latest"), "not-promoted");
    assert!(stderr(&out).contains("not promoted"), "{}", stderr(&out));
    assert!(
        !work.path().join("artifacts/latest").exists(),
        "latest/ took the other configuration's build"
    );
    assert!(work
        .path()
        .join(format!("artifacts/commits/{older}/_SUCCESS"))
        .exists());
}

#[test]
fn a_commit_builds_to_the_same_bytes_whatever_was_built_before_it() {
    // 50 commits over 5 skills edited every 2, 5, 8, 11 and 14 commits, one
    // written at the start and one edited at commit 20, the others touching
    // only a README; `history_depth = 32` (an anchor every 2 commits by id,
    // the bound at least 16 down): the history is longer than the walk, so
    // how a build reuses an earlier one decides its dates.
    let mut repo = GitRepo::new();
    let mut commits = Vec::new();
    for i in 0..50usize {
        let mut touched = false;
        if i == 0 || i == 20 {
            let body = format!("# Use\n\nv{i}\n");
            repo.write("skills/late/SKILL.md", skill("late", "L", &body));
            repo.write("skills/still/SKILL.md", skill("still", "S", "# Use\n"));
        }
        for k in 0..5usize {
            if i == 0 || i % (k * 3 + 2) == 0 {
                let body = format!("# Use\n\nv{i}\n");
                let path = format!("skills/s{k}/SKILL.md");
                repo.write(&path, skill(&format!("s{k}"), "S", &body));
                touched = true;
            }
        }
        if !touched {
            repo.write("README.md", format!("r{i}\n"));
        }
        commits.push(repo.commit(&format!("c{i}")));
    }
    let source = repo.path().to_str().unwrap();
    let store = || work_at_depth(32);
    let build = |work: &tempfile::TempDir, commit: &str| {
        let out = run(work.path(), &["build", "--source", source, "--ref", commit]);
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let tail = &commits[34..];
    // The daily job: each commit after the one before it.
    let daily = store();
    for commit in tail {
        build(&daily, commit);
    }
    // A job that missed days: HEAD~15, then HEAD~5, then HEAD.
    let gaps = store();
    for commit in [&commits[34], &commits[44], &commits[49]] {
        build(&gaps, commit);
    }
    // A job last run far below the bound (c5), then just above it (c20).
    let far = store();
    for commit in [&commits[5], &commits[20], &commits[49]] {
        build(&far, commit);
    }
    // A backfill of the whole history, each commit patched from its parent.
    let backfill = store();
    let out = run(backfill.path(), &["backfill", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));

    for (i, commit) in tail.iter().enumerate() {
        let cold = store();
        build(&cold, commit);
        let theirs = complete_files(cold.path(), commit);
        let mut chains = vec![("daily", &daily), ("backfill", &backfill)];
        if [0, 10, 15].contains(&i) {
            chains.push(("gaps", &gaps));
        }
        if i == 15 {
            chains.push(("far", &far));
        }
        for (chain, work) in chains {
            let ours = complete_files(work.path(), commit);
            for ((file, a), (_, b)) in ours.iter().zip(&theirs) {
                assert_eq!(
                    a,
                    b,
                    "{chain}: commit {} ({commit}): {file} differs from a cold build",
                    i + 34
                );
            }
        }
    }
}

/// `(commit, last_updated_at_or_before)` of the skill document of `path` in
/// the artifact of `commit`.
fn dated(work: &std::path::Path, commit: &str, path: &str) -> (Value, Option<Value>) {
    let doc = commit_documents(work, "artifacts", commit)
        .into_iter()
        .find(|d| d["kind"] == "skill" && d["path"] == path)
        .unwrap();
    (
        doc["commit"].clone(),
        doc.get("last_updated_at_or_before").cloned(),
    )
}

#[test]
fn dates_an_earlier_build_cannot_vouch_for_are_walked_for_again() {
    // A skill changed at c0 and c36; the last build, of c40, walked only 4
    // commits (its bound above c36), so it knows the file only as "at or
    // before" its own bound. A build of c49 walking 32 must find c36 itself,
    // as a cold build does, not restate the older bound below it.
    let mut repo = GitRepo::new();
    let mut commits = Vec::new();
    for i in 0..50usize {
        if i == 0 || i == 36 {
            let body = format!("# Use\n\nv{i}\n");
            repo.write("skills/x/SKILL.md", skill("x", "X", &body));
        } else {
            repo.write("README.md", format!("r{i}\n"));
        }
        commits.push(repo.commit(&format!("c{i}")));
    }
    let source = repo.path().to_str().unwrap();
    let build = |work: &std::path::Path, commit: &str| {
        let out = run(work, &["build", "--source", source, "--ref", commit]);
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let path = "skills/x/SKILL.md";
    let chained = work_at_depth(4);
    build(chained.path(), &commits[40]);
    let before = dated(chained.path(), &commits[40], path);
    assert_eq!(before.1, Some(Value::Bool(true)), "{before:?}");
    std::fs::write(
        chained.path().join("pipeline.toml"),
        "[walk]\nhistory_depth = 32\n\n[embed]\nenabled = false\n",
    )
    .unwrap();
    build(chained.path(), &commits[49]);
    let cold = work_at_depth(32);
    build(cold.path(), &commits[49]);
    let theirs = dated(cold.path(), &commits[49], path);
    assert_eq!(theirs, (Value::String(commits[36].clone()), None));
    assert_eq!(dated(chained.path(), &commits[49], path), theirs);
}

/// Every file under `dir` (relative path, size), in the store's own
/// folders only (`commits/`, `parts/`: not locks, caches or `seen.ndjson`).
fn stored_files(dir: &std::path::Path) -> std::collections::BTreeMap<String, u64> {
    let mut found = std::collections::BTreeMap::new();
    let mut stack = vec![dir.join("commits"), dir.join("parts")];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten() {
            let entry = entry.unwrap();
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(dir).unwrap().to_string_lossy();
                found.insert(relative.into_owned(), entry.metadata().unwrap().len());
            }
        }
    }
    found
}

#[test]
fn a_one_file_change_writes_one_bucket_one_list_and_a_small_manifest() {
    let mut repo = GitRepo::new();
    for i in 0..300 {
        repo.write(
            &format!("skills/s{i:03}/SKILL.md"),
            skill(
                &format!("s{i:03}"),
                "a skill of the collection",
                &format!(
                    "# Use\n\n{}\n\n## More\n\nStep {i}.\n",
                    "Some words. ".repeat(40)
                ),
            ),
        );
    }
    let first = repo.commit("many");
    repo.write(
        "skills/s150/SKILL.md",
        skill("s150", "changed", "# Use\n\nNew body.\n"),
    );
    let second = repo.commit("one change");
    let source = repo.path().to_str().unwrap();
    let work = tempfile::tempdir().unwrap();
    let backfill = |store: &str, to: &str| {
        let args = [
            "backfill",
            "--no-embed",
            "--store",
            store,
            "--source",
            source,
        ];
        let out = run(work.path(), &[&args[..], &["--to", to]].concat());
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    backfill("one", &first);
    let summary = backfill("two", &second);
    assert_eq!(field(&summary, "patched"), "1", "{summary}");
    // The first commit writes the same bytes in both stores: what the
    // second store has more is what the one-file change cost.
    let one = stored_files(&work.path().join("one"));
    let two = stored_files(&work.path().join("two"));
    for (path, size) in &one {
        assert_eq!(two.get(path), Some(size), "{path}");
    }
    let added: Vec<(&String, &u64)> = two.iter().filter(|(p, _)| !one.contains_key(*p)).collect();
    let count = |folder: &str| added.iter().filter(|(p, _)| p.starts_with(folder)).count();
    assert_eq!(count("parts/buckets/"), 1, "{added:?}");
    assert_eq!(count("parts/lists/"), 1, "{added:?}");
    assert_eq!(count("parts/packs/"), 1, "{added:?}");
    assert_eq!(count(&format!("commits/{second}/")), 2, "{added:?}");
    assert_eq!(added.len(), 5, "{added:?}");
    let artifact: u64 = one.values().sum();
    let written: u64 = added.iter().map(|(_, size)| **size).sum();
    assert!(
        written * 40 < artifact,
        "a one-file change wrote {written} bytes of an artifact of {artifact}: {added:?}"
    );
    // Its manifest names lists, not every bucket.
    let manifest = added
        .iter()
        .find(|(p, _)| p.ends_with("manifest.json"))
        .map_or(0, |(_, size)| **size);
    assert!(manifest < 32 * 1024, "manifest of {manifest} bytes");
    // And it reads back as the cold build of the same commit does.
    let out = run(
        work.path(),
        &[
            "build",
            "--no-embed",
            "--no-promote",
            "--store",
            "cold",
            "--source",
            source,
            "--ref",
            &second,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for file in ["hf-skills.ndjson", "ai-catalog.json", "findings.ndjson"] {
        assert_eq!(
            commit_file(work.path(), "two", &second, file),
            commit_file(work.path(), "cold", &second, file),
            "{file}"
        );
    }
}
