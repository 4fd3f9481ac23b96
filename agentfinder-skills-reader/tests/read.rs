//! Reading artifacts from a real local store: only complete, matching builds.

use std::collections::BTreeMap;

use agentfinder_skills_reader::artifact::{read_artifact, read_artifact_retrying};
use agentfinder_skills_reader::contract::{
    ArtifactLocation, SuccessMarker, DATA_FILES, SUCCESS_FILE,
};
use agentfinder_skills_reader::read::{digest_of, ReadError};
use agentfinder_skills_reader::store::Store;

fn manifest(commit: &str) -> String {
    serde_json::json!({
        "schema_version": 1, "source_repo": "o/r", "source_url": "u", "source_branch": "main",
        "source_commit": commit, "generated_at": "t", "document_count": 0, "index": "hf_skills",
        "artifact": "hf-skills.ndjson", "artifacts": {}, "skill_count": 0, "source_commit_time": "t",
        "files": {}, "builder": {"name": "b", "version": "0"},
        "chunking": {"max_chars": 12000, "overlap_chars": 800}, "config_digest": "",
        "meilisearch": {"index": "hf_skills", "primary_key": "id", "settings": {}},
        "skipped": [], "warnings": []
    })
    .to_string()
}

/// Writes a complete artifact for `commit` into `dir/<prefix>/`.
fn write(dir: &std::path::Path, prefix: &str, commit: &str) {
    let root = dir.join(prefix);
    std::fs::create_dir_all(&root).unwrap();
    let contents = [
        String::new(),
        "{\"entries\": []}".to_string(),
        manifest(commit),
    ];
    let mut files = BTreeMap::new();
    for (name, content) in DATA_FILES.iter().zip(&contents) {
        std::fs::write(root.join(name), content).unwrap();
        files.insert(name.to_string(), digest_of(content.as_bytes()));
    }
    let marker = SuccessMarker {
        schema_version: 1,
        commit: commit.into(),
        generated_at: "t".into(),
        files,
        artifact_id: None,
    };
    std::fs::write(
        root.join(SUCCESS_FILE),
        serde_json::to_vec(&marker).unwrap(),
    )
    .unwrap();
}

fn store(dir: &tempfile::TempDir) -> Store {
    Store::open(dir.path().to_str().unwrap()).unwrap()
}

#[tokio::test]
async fn a_complete_artifact_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "commits/abc", "abc");
    let location = ArtifactLocation::Commit("abc".into());
    let artifact = read_artifact(&store(&dir), &location).await.unwrap();
    assert_eq!(artifact.manifest.source_commit, "abc");
}

#[tokio::test]
async fn no_success_marker_means_not_found() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "latest", "abc");
    std::fs::remove_file(dir.path().join("latest/_SUCCESS")).unwrap();
    let err = read_artifact(&store(&dir), &ArtifactLocation::Latest)
        .await
        .unwrap_err();
    assert!(matches!(err, ReadError::NotFound { .. }), "{err}");
    assert!(err.is_transient());
}

#[tokio::test]
async fn a_folder_with_nothing_in_it_is_empty_not_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let err = read_artifact(&store(&dir), &ArtifactLocation::Latest)
        .await
        .unwrap_err();
    assert!(matches!(err, ReadError::Empty { .. }), "{err}");
    assert!(err.to_string().contains("nothing has been built"), "{err}");
    // A first promotion may be about to fill it: a reader retries.
    assert!(err.is_transient());
}

#[tokio::test]
async fn a_file_from_another_build_is_in_progress_never_returned() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "latest", "old");
    // A promotion in flight replaced the manifest but not yet _SUCCESS.
    std::fs::write(dir.path().join("latest/manifest.json"), manifest("new")).unwrap();
    let store = store(&dir);
    let err = read_artifact(&store, &ArtifactLocation::Latest)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ReadError::InProgress { ref file, .. } if file == "manifest.json"),
        "{err}"
    );
    assert!(err.to_string().contains("retry"));
    let started = std::time::Instant::now();
    let pause = std::time::Duration::from_millis(10);
    let err = read_artifact_retrying(&store, &ArtifactLocation::Latest, 3, pause)
        .await
        .unwrap_err();
    assert!(err.is_transient());
    assert!(started.elapsed() >= pause * 3, "retried with backoff");
}

#[tokio::test]
async fn a_marker_under_the_wrong_commit_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "commits/abc", "def");
    let location = ArtifactLocation::Commit("abc".into());
    let err = read_artifact(&store(&dir), &location).await.unwrap_err();
    assert!(matches!(err, ReadError::Invalid { .. }), "{err}");
    assert!(!err.is_transient());
}

mod streaming {
    use super::*;
    use agentfinder_skills_reader::artifact::read_manifest;
    use agentfinder_skills_reader::documents::for_each_batch;
    use agentfinder_skills_reader::read::StreamError;

    fn ndjson_store(lines: usize) -> (tempfile::TempDir, Store, String) {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "latest", "abc");
        let body: String = (0..lines)
            .map(|i| format!("{{\"n\":{i},\"pad\":\"{}\"}}\n", "x".repeat(i % 50)))
            .collect();
        // Re-vouch for the new documents file.
        let root = dir.path().join("latest");
        std::fs::write(root.join("hf-skills.ndjson"), &body).unwrap();
        let mut marker: SuccessMarker =
            serde_json::from_slice(&std::fs::read(root.join(SUCCESS_FILE)).unwrap()).unwrap();
        marker
            .files
            .insert("hf-skills.ndjson".into(), digest_of(body.as_bytes()));
        std::fs::write(
            root.join(SUCCESS_FILE),
            serde_json::to_vec(&marker).unwrap(),
        )
        .unwrap();
        let store = Store::open(dir.path().to_str().unwrap()).unwrap();
        (dir, store, body)
    }

    #[tokio::test]
    async fn batches_are_whole_lines_under_the_limit_and_add_up_to_the_file() {
        let (_dir, store, body) = ndjson_store(2000);
        let (success, manifest) = read_manifest(&store, &ArtifactLocation::Latest)
            .await
            .unwrap();
        let mut seen = Vec::new();
        let latest = ArtifactLocation::Latest;
        let result = for_each_batch(&store, &latest, &success, &manifest, 4096, |batch| {
            seen.push(batch);
            async { Ok::<(), ()>(()) }
        })
        .await;
        assert!(result.is_ok());
        assert!(seen.len() > 10);
        assert!(seen.iter().all(|b| b.len() <= 4096 && b.ends_with(b"\n")));
        let joined: Vec<u8> = seen.concat();
        assert_eq!(joined, body.as_bytes());
    }

    #[tokio::test]
    async fn a_file_changed_under_the_reader_fails_at_the_end() {
        let (dir, store, body) = ndjson_store(500);
        let (success, manifest) = read_manifest(&store, &ArtifactLocation::Latest)
            .await
            .unwrap();
        std::fs::write(
            dir.path().join("latest/hf-skills.ndjson"),
            format!("{body}{{\"late\":1}}\n"),
        )
        .unwrap();
        let result = for_each_batch(
            &store,
            &ArtifactLocation::Latest,
            &success,
            &manifest,
            4096,
            |_| async { Ok::<(), ()>(()) },
        )
        .await;
        match result {
            Err(StreamError::Read(e)) => {
                assert!(e.is_transient() && e.to_string().contains("retry"), "{e}")
            }
            other => panic!("expected a mismatch, got {other:?}"),
        }
    }
}
