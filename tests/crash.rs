//! Crash safety, on a local folder and on a real S3-compatible server (moto):
//! kill -9 at every fail point, torn reads during promotions, builders
//! racing each other. Run with `--nocapture` to see the counts.

mod common;

use std::collections::HashSet;
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use agentfinder_skills::failpoint::{FAILPOINTS, FAILPOINT_ENV};
use agentfinder_skills::promote::{promote, PromotePolicy};
use agentfinder_skills_reader::artifact::{check_documents, read_artifact, Artifact};
use agentfinder_skills_reader::contract::{ArtifactLocation, CATALOG_FILE};
use agentfinder_skills_reader::read::ReadError;
use agentfinder_skills_reader::store::Store;
use common::moto::{Moto, SECRET_KEY};
use common::*;

/// Where a test writes: a local folder, or a bucket on the moto server.
enum Target<'a> {
    Local(tempfile::TempDir),
    S3 { moto: &'a Moto, bucket: String },
}

impl<'a> Target<'a> {
    fn local() -> Self {
        Self::Local(tempfile::tempdir().unwrap())
    }

    fn s3(moto: &'a Moto, bucket: &str) -> Self {
        moto.create_bucket(bucket);
        Self::S3 {
            moto,
            bucket: bucket.to_string(),
        }
    }

    fn url(&self) -> String {
        match self {
            Self::Local(dir) => dir.path().join("store").display().to_string(),
            Self::S3 { bucket, .. } => format!("s3://{bucket}/index"),
        }
    }

    fn store(&self) -> Store {
        match self {
            Self::Local(_) => Store::open(&self.url()).unwrap(),
            Self::S3 { moto, bucket } => {
                let s3 = moto.store(bucket);
                let prefixed = object_store::prefix::PrefixStore::new(s3.inner, "index");
                Store::from_object_store(Arc::new(prefixed), self.url())
            }
        }
    }

    /// Runs the binary against this target, with an optional fail point.
    fn run(&self, cwd: &Path, args: &[&str], failpoint: Option<&str>) -> Output {
        let url = self.url();
        let mut command = binary();
        command
            .args(args)
            .args(["--store", &url])
            .current_dir(cwd)
            .env_remove(FAILPOINT_ENV)
            .env_remove("MEILI_URL");
        if let Self::S3 { moto, .. } = self {
            command.envs(moto.env());
        }
        if let Some(point) = failpoint {
            command.env(FAILPOINT_ENV, point);
        }
        let out = command.output().unwrap();
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            !text.contains(SECRET_KEY),
            "a credential leaked into the output: {text}"
        );
        out
    }
}

fn repo_with_commits(n: usize) -> (GitRepo, Vec<String>) {
    let mut repo = GitRepo::new();
    let mut commits = Vec::new();
    for i in 0..n {
        for j in 0..=i {
            repo.write(
                &format!("skills/s{j}/SKILL.md"),
                skill(
                    &format!("s{j}"),
                    &format!("skill {j} at version {i}"),
                    &format!("# Part\n\ntext {i} {j}\n\n## More\n\nmore {i}\n"),
                ),
            );
        }
        commits.push(repo.commit(&format!("c{i}")));
    }
    (repo, commits)
}

/// Every file of an artifact comes from one build: the documents, the
/// catalog, the manifest and `_SUCCESS` all name the same commit.
fn one_build(artifact: &Artifact) -> bool {
    let commit = &artifact.success.commit;
    let docs_ok = std::str::from_utf8(&artifact.documents)
        .unwrap()
        .lines()
        .all(|line| {
            let doc: serde_json::Value = serde_json::from_str(line).unwrap();
            doc["commit"] == commit.as_str()
        });
    let catalog: serde_json::Value = serde_json::from_slice(&artifact.files[CATALOG_FILE]).unwrap();
    let catalog_ok = catalog["entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["metadata"]["commit"] == commit.as_str());
    docs_ok && catalog_ok && &artifact.manifest.source_commit == commit
}

/// What a reader finds at `location`: a complete build's commit, or nothing.
async fn complete_or_absent(store: &Store, location: &ArtifactLocation) -> Option<String> {
    match read_artifact(store, location).await {
        Ok(artifact) => {
            check_documents(&artifact).unwrap();
            assert!(one_build(&artifact), "{location} mixes builds");
            Some(artifact.success.commit)
        }
        Err(ReadError::NotFound { .. } | ReadError::Empty { .. }) => None,
        Err(other) => panic!("{location} is neither complete nor absent: {other}"),
    }
}

async fn kill_at_every_failpoint<'a>(target_for: impl Fn(usize) -> Target<'a>) -> usize {
    let (repo, commits) = repo_with_commits(2);
    let (old, new) = (&commits[0], &commits[1]);
    let source = repo.path().to_str().unwrap();
    let mut aborts = 0;
    for (i, point) in FAILPOINTS.iter().enumerate() {
        let target = target_for(i);
        let cwd = tempfile::tempdir().unwrap();
        let out = target.run(
            cwd.path(),
            &["build", "--source", source, "--ref", old],
            None,
        );
        assert!(out.status.success(), "{}", stderr(&out));

        let out = target.run(
            cwd.path(),
            &["build", "--source", source, "--ref", new],
            Some(point),
        );
        assert!(
            stderr(&out).contains(&format!("failpoint {point}: aborting")),
            "{point} not reached: {}",
            stderr(&out)
        );
        assert_eq!(
            out.status.code(),
            None,
            "{point}: the process must die by signal"
        );
        aborts += 1;

        let store = target.store();
        let latest = complete_or_absent(&store, &ArtifactLocation::Latest).await;
        assert!(
            latest.is_none() || latest.as_ref() == Some(old) || latest.as_ref() == Some(new),
            "{point}: {latest:?}"
        );
        let built = complete_or_absent(&store, &ArtifactLocation::Commit(new.clone())).await;
        assert!(built.is_none() || built.as_ref() == Some(new));
        // verify agrees with what a reader sees.
        let verified = target.run(cwd.path(), &["verify", "--commit", "latest"], None);
        assert_eq!(
            verified.status.success(),
            latest.is_some(),
            "{point}: verify disagrees: {}",
            stderr(&verified)
        );

        // The next run completes normally, whatever the crash left.
        let out = target.run(
            cwd.path(),
            &["build", "--source", source, "--ref", new],
            None,
        );
        assert!(
            out.status.success(),
            "{point}: rerun failed: {}",
            stderr(&out)
        );
        assert_eq!(
            complete_or_absent(&store, &ArtifactLocation::Latest)
                .await
                .as_ref(),
            Some(new),
            "{point}"
        );
        assert!(target
            .run(cwd.path(), &["verify", "--commit", new], None)
            .status
            .success());
    }
    aborts
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_at_every_failpoint_on_a_local_folder() {
    let aborts = kill_at_every_failpoint(|_| Target::local()).await;
    eprintln!(
        "crash (local): {} fail points, {aborts} aborts, all recovered",
        FAILPOINTS.len()
    );
    assert_eq!(aborts, FAILPOINTS.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_at_every_failpoint_on_s3() {
    let Some(moto) = Moto::start() else { return };
    let aborts = kill_at_every_failpoint(|i| Target::s3(&moto, &format!("crash-{i}"))).await;
    eprintln!(
        "crash (s3): {} fail points, {aborts} aborts, all recovered",
        FAILPOINTS.len()
    );
    assert_eq!(aborts, FAILPOINTS.len());
}

/// A reader loops over `latest/` while a writer promotes build after build.
async fn torn_reads(target: Target<'_>) -> (usize, usize, usize) {
    let (repo, commits) = repo_with_commits(4);
    let cwd = tempfile::tempdir().unwrap();
    for commit in &commits {
        let out = target.run(
            cwd.path(),
            &[
                "build",
                "--no-promote",
                "--source",
                repo.path().to_str().unwrap(),
                "--ref",
                commit,
            ],
            None,
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let store = target.store();
    let done = Arc::new(AtomicBool::new(false));
    let (complete, in_progress, mixes) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let reader = {
        let (store, done, complete, in_progress, mixes) = (
            store.clone(),
            done.clone(),
            complete.clone(),
            in_progress.clone(),
            mixes.clone(),
        );
        tokio::spawn(async move {
            while !done.load(Ordering::SeqCst) {
                match read_artifact(&store, &ArtifactLocation::Latest).await {
                    Ok(artifact) if one_build(&artifact) => complete.fetch_add(1, Ordering::SeqCst),
                    Ok(_) => mixes.fetch_add(1, Ordering::SeqCst),
                    Err(e) if e.is_transient() => in_progress.fetch_add(1, Ordering::SeqCst),
                    Err(e) => panic!("unexpected read error: {e}"),
                };
            }
        })
    };
    let policy = PromotePolicy {
        force: true,
        max_shrink_ratio: 0.5,
    };
    for round in 0..40 {
        promote(&store, &commits[round % commits.len()], policy)
            .await
            .unwrap();
    }
    done.store(true, Ordering::SeqCst);
    reader.await.unwrap();
    let counts = (
        complete.load(Ordering::SeqCst),
        in_progress.load(Ordering::SeqCst),
        mixes.load(Ordering::SeqCst),
    );
    assert_eq!(counts.2, 0, "a reader saw a mix of two builds");
    assert!(counts.0 > 0, "no complete read at all: {counts:?}");
    counts
}

#[tokio::test(flavor = "multi_thread")]
async fn readers_never_see_a_torn_latest_on_a_local_folder() {
    let (complete, in_progress, mixes) = torn_reads(Target::local()).await;
    eprintln!("torn reads (local): 40 promotions, {} reads: {complete} complete, {in_progress} in progress, {mixes} mixes", complete + in_progress + mixes);
}

#[tokio::test(flavor = "multi_thread")]
async fn readers_never_see_a_torn_latest_on_s3() {
    let Some(moto) = Moto::start() else { return };
    let (complete, in_progress, mixes) = torn_reads(Target::s3(&moto, "torn")).await;
    eprintln!("torn reads (s3): 40 promotions, {} reads: {complete} complete, {in_progress} in progress, {mixes} mixes", complete + in_progress + mixes);
}

/// Four builders at once: two on the newest commit, two on older ones.
async fn concurrent_builders(target: Target<'_>) {
    let (repo, commits) = repo_with_commits(3);
    let source = repo.path().to_str().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let newest = commits[2].clone();
    let refs = [&commits[2], &commits[2], &commits[1], &commits[0]];
    let outputs: Vec<Output> = std::thread::scope(|scope| {
        let handles: Vec<_> = refs
            .iter()
            .map(|r| {
                let target = &target;
                let cwd = cwd.path();
                scope.spawn(move || {
                    target.run(cwd, &["build", "--source", source, "--ref", r], None)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for out in &outputs {
        // 0, or 6 for a builder whose older commit lost to a newer latest/.
        assert!(matches!(out.status.code(), Some(0 | 6)), "{}", stderr(out));
    }
    // Of the two builders of the newest commit, exactly one wrote it; the
    // other found it complete (it waited for the lock, or lost the race on
    // the create-only _SUCCESS).
    let newest_statuses: Vec<String> = refs
        .iter()
        .zip(&outputs)
        .filter(|(r, _)| ***r == newest)
        .map(|(_, out)| field(&stdout(out), "status"))
        .collect();
    let mut sorted = newest_statuses.clone();
    sorted.sort();
    assert_eq!(sorted, ["already-built", "built"], "{newest_statuses:?}");
    let store = target.store();
    let mut seen = HashSet::new();
    for commit in &commits {
        assert_eq!(
            complete_or_absent(&store, &ArtifactLocation::Commit(commit.clone()))
                .await
                .as_ref(),
            Some(commit)
        );
        assert!(target
            .run(cwd.path(), &["verify", "--commit", commit], None)
            .status
            .success());
        seen.insert(commit.clone());
    }
    assert_eq!(seen.len(), 3, "every commit built, each once: {seen:?}");
    assert_eq!(
        complete_or_absent(&store, &ArtifactLocation::Latest).await,
        Some(newest)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_builders_on_a_local_folder() {
    for _ in 0..3 {
        concurrent_builders(Target::local()).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_builders_on_s3() {
    let Some(moto) = Moto::start() else { return };
    for round in 0..3 {
        concurrent_builders(Target::s3(&moto, &format!("race-{round}"))).await;
    }
}

/// An artifact over the multipart threshold is uploaded in parts and
/// promoted by a streamed, verified copy.
async fn large_artifact(target: Target<'_>) {
    let mut repo = GitRepo::with_origin("https://github.com/o/large-skills.git");
    let paragraph =
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "
            .repeat(12);
    for i in 0..150 {
        let body: String = (0..40)
            .map(|h| format!("## Section {h}\n\n{paragraph}\n\n"))
            .collect();
        repo.write(
            &format!("skills/k{i}/SKILL.md"),
            skill(&format!("k{i}"), "large", &body),
        );
    }
    let commit = repo.commit("large");
    let cwd = tempfile::tempdir().unwrap();
    let out = target.run(
        cwd.path(),
        &["build", "--source", repo.path().to_str().unwrap()],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let store = target.store();
    let artifact = read_artifact(&store, &ArtifactLocation::Latest)
        .await
        .unwrap();
    assert!(
        artifact.documents.len() as u64 > agentfinder_skills::store::put::MULTIPART_THRESHOLD,
        "{}",
        artifact.documents.len()
    );
    assert_eq!(artifact.success.commit, commit);
    check_documents(&artifact).unwrap();
    assert!(target
        .run(cwd.path(), &["verify", "--commit", &commit], None)
        .status
        .success());
}

#[tokio::test(flavor = "multi_thread")]
async fn large_artifacts_on_a_local_folder() {
    large_artifact(Target::local()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn large_artifacts_on_s3() {
    let Some(moto) = Moto::start() else { return };
    large_artifact(Target::s3(&moto, "large")).await;
}

/// A builder paused past its lease (its heartbeat frozen too, as a stopped
/// process's would be) while another takes the lock over and completes the
/// commit: the paused one must stop writing when it wakes (exit 5), so the
/// commit's files keep agreeing with the `_SUCCESS` the other wrote.
async fn a_builder_paused_past_its_lease(target: Target<'_>) {
    let (repo, commits) = repo_with_commits(1);
    let commit = &commits[0];
    let source = repo.path().to_str().unwrap().to_string();
    let url = target.url();
    let (cwd_a, cwd_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut paused = binary();
    paused
        .args([
            "build",
            "--no-embed",
            "--no-promote",
            "--source",
            &source,
            "--store",
            &url,
        ])
        .current_dir(cwd_a.path())
        .env_remove(FAILPOINT_ENV)
        .env(agentfinder_skills::lock::LOCK_TTL_ENV, "2")
        .env(
            agentfinder_skills::failpoint::PAUSE_ENV,
            "commit-after-pack:8",
        );
    if let Target::S3 { moto, .. } = &target {
        paused.envs(moto.env());
    }
    let paused = paused
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the paused builder has written its first file (and so holds the
    // lock and is frozen), wait out its 2 s lease; then another takes over.
    let store = target.store();
    let packs =
        object_store::path::Path::from(agentfinder_skills_reader::contract::parts::PACKS_DIR);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while futures::StreamExt::next(&mut store.inner.list(Some(&packs)))
        .await
        .is_none()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the paused builder never wrote"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let other = target.run(
        cwd_b.path(),
        &["build", "--no-embed", "--no-promote", "--source", &source],
        None,
    );
    assert!(other.status.success(), "{}", stderr(&other));
    assert!(
        stdout(&other).contains("status=built"),
        "{}",
        stdout(&other)
    );

    let paused = paused.wait_with_output().unwrap();
    let said = stderr(&paused);
    // The commit is whole: every file matches the _SUCCESS the other wrote.
    let artifact = read_artifact(&store, &ArtifactLocation::Commit(commit.clone()))
        .await
        .unwrap_or_else(|e| panic!("the commit was corrupted: {e}\n{said}"));
    check_documents(&artifact).unwrap();
    assert_eq!(paused.status.code(), Some(5), "{said}");
    assert!(said.contains("lock") && said.contains("lost"), "{said}");
    let verify = target.run(cwd_b.path(), &["verify", "--commit", commit], None);
    assert!(verify.status.success(), "{}", stderr(&verify));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_builder_paused_past_its_lease_stops_writing_on_a_local_folder() {
    a_builder_paused_past_its_lease(Target::local()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_builder_paused_past_its_lease_stops_writing_on_s3() {
    let Some(moto) = Moto::start() else { return };
    a_builder_paused_past_its_lease(Target::s3(&moto, "paused")).await;
}
