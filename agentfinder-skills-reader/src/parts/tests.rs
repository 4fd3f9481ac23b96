//! Reading parts: lists and flat buckets, damage, ranges.
use super::*;

fn entry(path: &str, pack: &str, offset: u64, length: u64) -> PartEntry {
    PartEntry {
        path: path.into(),
        key: "k".into(),
        blob: None,
        commit: "c".into(),
        changed_at: None,
        changed_at_or_before: false,
        documents: Some(PartRef {
            pack: pack.into(),
            offset,
            length,
            sha256: String::new(),
        }),
        document_count: 1,
        skill_count: 1,
        name: None,
        catalog: Some(format!("{{\"p\":\"{path}\"}}")),
        findings: String::new(),
    }
}

async fn store_of(objects: &[(object_store::path::Path, Bytes)]) -> Store {
    let inner = std::sync::Arc::new(object_store::memory::InMemory::new());
    for (path, bytes) in objects {
        inner.put(path, bytes.clone().into()).await.unwrap();
    }
    Store::from_object_store(inner, "memory")
}

#[tokio::test]
async fn buckets_are_named_by_lists_or_by_a_flat_index_and_checked() {
    use crate::contract::parts::{encode_bucket, encode_list};
    let (a, a_bytes) = encode_bucket(&Bucket {
        entries: vec![entry("a", "p", 0, 1)],
    });
    let (b, b_bytes) = encode_bucket(&Bucket {
        entries: vec![entry("b", "p", 1, 1)],
    });
    let names = vec![a.clone(), String::new(), String::new(), b.clone()];
    let (l0, l0_bytes) = encode_list(&BucketList {
        buckets: names[..2].to_vec(),
    });
    let (l1, l1_bytes) = encode_list(&BucketList {
        buckets: names[2..].to_vec(),
    });
    let store = store_of(&[
        (bucket_path(&a), a_bytes),
        (bucket_path(&b), b_bytes),
        (list_path(&l0), l0_bytes),
        (list_path(&l1), l1_bytes.clone()),
    ])
    .await;
    let location = ArtifactLocation::Latest;
    let listed = PartsIndex {
        bucket_count: 4,
        list_size: 2,
        lists: vec![l0.clone(), l1.clone()],
        ..PartsIndex::default()
    };
    let flat = PartsIndex {
        bucket_count: 4,
        buckets: names.clone(),
        ..PartsIndex::default()
    };
    for index in [&listed, &flat] {
        let (read, entries) = read_tree(&store, &location, index).await.unwrap();
        assert_eq!(read, names);
        let paths: Vec<&str> = entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["a", "b"]);
    }
    // An empty list stands for empty buckets, and is not read.
    let sparse = PartsIndex {
        lists: vec![String::new(), l1.clone()],
        ..listed.clone()
    };
    let (read, entries) = read_tree(&store, &location, &sparse).await.unwrap();
    assert_eq!(read, ["", "", "", b.as_str()]);
    assert_eq!(entries.len(), 1);
    // A list of other bytes than its name says, or of another size,
    // or lists that do not make the bucket count: damaged.
    let swapped = store_of(&[(list_path(&l0), l1_bytes)]).await;
    let err = read_tree(&swapped, &location, &listed).await.unwrap_err();
    assert!(err.to_string().contains("does not match its name"), "{err}");
    let wrong = PartsIndex {
        bucket_count: 6,
        list_size: 3,
        ..listed.clone()
    };
    let err = read_tree(&store, &location, &wrong).await.unwrap_err();
    assert!(err.to_string().contains("names 2 buckets, not 3"), "{err}");
    let short = PartsIndex {
        bucket_count: 8,
        ..listed.clone()
    };
    let err = read_tree(&store, &location, &short).await.unwrap_err();
    assert!(err.to_string().contains("do not make 8"), "{err}");
    // Counts past any builder's are refused before anything is
    // allocated for them; both layouts at once is damage too.
    let huge = PartsIndex {
        bucket_count: u32::MAX,
        list_size: u32::MAX,
        lists: vec![String::new()],
        ..listed.clone()
    };
    let err = read_tree(&store, &location, &huge).await.unwrap_err();
    assert!(err.to_string().contains("do not make"), "{err}");
    let both = PartsIndex {
        buckets: vec![b.clone(); 4],
        ..listed
    };
    let err = read_tree(&store, &location, &both).await.unwrap_err();
    assert!(err.to_string().contains("named directly"), "{err}");
}

#[test]
fn adjacent_ranges_of_one_pack_are_read_at_once() {
    let entries = [
        entry("a", "p1", 0, 10),
        entry("b", "p1", 10, 5),
        entry("c", "p2", 0, 3),
        entry("d", "p1", 40, 2),
    ];
    let runs = runs(&entries);
    let shape: Vec<(&str, u64, u64, usize)> = runs
        .iter()
        .map(|r| (r.pack, r.start, r.end, r.parts.len()))
        .collect();
    assert_eq!(
        shape,
        [("p1", 0, 15, 2), ("p2", 0, 3, 1), ("p1", 40, 42, 1)]
    );
}

#[test]
fn the_catalog_is_the_head_the_objects_and_the_tail() {
    let index = PartsIndex {
        bucket_count: 1,
        catalog_head: "{\n  \"entries\": [".into(),
        ..PartsIndex::default()
    };
    let empty = compose_catalog(&index, &[]);
    let empty: serde_json::Value = serde_json::from_slice(&empty).unwrap();
    assert_eq!(empty["entries"], serde_json::json!([]));
    let two = compose_catalog(&index, &[entry("a", "p", 0, 1), entry("b", "p", 1, 1)]);
    let two: serde_json::Value = serde_json::from_slice(&two).unwrap();
    assert_eq!(two["entries"][1]["p"], "b");
}
