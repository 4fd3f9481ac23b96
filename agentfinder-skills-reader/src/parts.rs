//! Reading the shared parts of a commit artifact (the layout is the
//! contract's: [`crate::contract::parts`]): lists and buckets checked
//! against their names, documents streamed from packs with each range checked against
//! its entry's sha256, and the complete files composed.

use std::future::Future;

use bytes::{Bytes, BytesMut};
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::{GetOptions, GetRange, GetResult, GetResultPayload, ObjectStoreExt};
use sha2::{Digest, Sha256};

use crate::contract::parts::{
    bucket_path, compose_catalog, compose_findings, list_path, pack_path, Bucket, BucketList,
    PartEntry, PartRef, PartsIndex,
};
use crate::contract::{ArtifactLocation, CATALOG_FILE, DOCUMENTS_FILE, FINDINGS_FILE};
use crate::read::{line_cut, ReadError, StreamError};
use crate::store::Store;

fn corrupt(location: &ArtifactLocation, file: &str, message: String) -> ReadError {
    ReadError::Invalid {
        location: location.to_string(),
        file: file.to_string(),
        line: None,
        message: format!("{message}: the artifact's parts are damaged"),
    }
}

/// The bytes of a content-addressed object, checked against its name.
async fn read_named(
    store: &Store,
    location: &ArtifactLocation,
    path: &object_store::path::Path,
    sha256: &str,
) -> Result<Bytes, ReadError> {
    let bytes = match store.inner.get(path).await {
        Ok(got) => got.bytes().await.map_err(|e| ReadError::store(path, &e))?,
        Err(object_store::Error::NotFound { .. }) => {
            return Err(corrupt(location, path.as_ref(), "missing".into()))
        }
        Err(e) => return Err(ReadError::store(path, &e)),
    };
    if hex::encode(Sha256::digest(&bytes)) != sha256 {
        return Err(corrupt(
            location,
            path.as_ref(),
            "does not match its name".into(),
        ));
    }
    Ok(bytes)
}

fn parse<T: serde::de::DeserializeOwned>(
    location: &ArtifactLocation,
    path: &object_store::path::Path,
    bytes: &[u8],
) -> Result<T, ReadError> {
    serde_json::from_slice(bytes).map_err(|e| ReadError::Invalid {
        location: location.to_string(),
        file: path.to_string(),
        line: Some(e.line()),
        message: e.to_string(),
    })
}

/// Reads one bucket, checked against its name.
pub async fn read_bucket(
    store: &Store,
    location: &ArtifactLocation,
    sha256: &str,
) -> Result<Bucket, ReadError> {
    let path = bucket_path(sha256);
    let bytes = read_named(store, location, &path, sha256).await?;
    parse(location, &path, &bytes)
}

/// Reads one bucket list (schema 8), checked against its name and size.
pub async fn read_list(
    store: &Store,
    location: &ArtifactLocation,
    sha256: &str,
    size: u32,
) -> Result<BucketList, ReadError> {
    let path = list_path(sha256);
    let bytes = read_named(store, location, &path, sha256).await?;
    let list: BucketList = parse(location, &path, &bytes)?;
    if list.buckets.len() != size as usize {
        let message = format!("names {} buckets, not {size}", list.buckets.len());
        return Err(corrupt(location, path.as_ref(), message));
    }
    Ok(list)
}

/// The most buckets a manifest may name: far above any builder's count
/// (8,192 at schema 8), low enough that a damaged count is refused
/// before anything is allocated for it.
const MAX_BUCKETS: u32 = 1 << 20;

/// The digest of every bucket `index` names, by bucket number (`""` for
/// an empty one): the manifest's own (schema 5 to 7), or its lists'
/// (schema 8).
pub async fn bucket_names(
    store: &Store,
    location: &ArtifactLocation,
    index: &PartsIndex,
) -> Result<Vec<String>, ReadError> {
    if index.lists.is_empty() {
        return Ok(index.buckets.clone());
    }
    let size = index.list_size;
    // A damaged manifest must be an error, not an allocation of its
    // counts: no store has more buckets than the builder makes.
    let too_many = index.bucket_count > MAX_BUCKETS || size > MAX_BUCKETS;
    if size == 0
        || too_many
        || !index.buckets.is_empty()
        || index.lists.len() as u64 * u64::from(size) != u64::from(index.bucket_count)
    {
        let message = format!(
            "{} lists of {size} buckets (and {} buckets named directly) do not make {}",
            index.lists.len(),
            index.buckets.len(),
            index.bucket_count
        );
        return Err(corrupt(location, "manifest.json", message));
    }
    let reads: Vec<_> = index
        .lists
        .iter()
        .filter(|l| !l.is_empty())
        .map(|sha| read_list(store, location, sha.as_str(), size))
        .collect();
    let lists: Vec<Result<BucketList, ReadError>> =
        futures::stream::iter(reads).buffered(16).collect().await;
    let mut lists = lists.into_iter();
    let mut names = Vec::with_capacity(index.bucket_count as usize);
    for sha in &index.lists {
        // One read per non-empty list, in order.
        let read = if sha.is_empty() { None } else { lists.next() };
        match read {
            Some(list) => names.extend(list?.buckets),
            None => names.extend(std::iter::repeat_n(String::new(), size as usize)),
        }
    }
    Ok(names)
}

/// Every entry `index` names, sorted by path (the order of the composed files).
pub async fn read_entries(
    store: &Store,
    location: &ArtifactLocation,
    index: &PartsIndex,
) -> Result<Vec<PartEntry>, ReadError> {
    Ok(read_tree(store, location, index).await?.1)
}

/// The digest of every bucket, by number ([`bucket_names`]), and every
/// entry, sorted by path ([`read_entries`]).
pub async fn read_tree(
    store: &Store,
    location: &ArtifactLocation,
    index: &PartsIndex,
) -> Result<(Vec<String>, Vec<PartEntry>), ReadError> {
    let names = bucket_names(store, location, index).await?;
    // The futures made up front: a closure inside the stream would make
    // this future not `Send` for every lifetime (rust-lang/rust#102211).
    let reads: Vec<_> = names
        .iter()
        .filter(|b| !b.is_empty())
        .map(|sha| read_bucket(store, location, sha.as_str()))
        .collect();
    let buckets: Vec<Result<Bucket, ReadError>> =
        futures::stream::iter(reads).buffered(16).collect().await;
    let mut entries = Vec::new();
    for bucket in buckets {
        entries.extend(bucket?.entries);
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((names, entries))
}

/// A run of entries whose documents are adjacent in one pack: one read.
struct Run<'a> {
    pack: &'a str,
    start: u64,
    end: u64,
    parts: Vec<&'a PartRef>,
}

fn runs(entries: &[PartEntry]) -> Vec<Run<'_>> {
    let mut runs: Vec<Run<'_>> = Vec::new();
    for part in entries.iter().filter_map(|e| e.documents.as_ref()) {
        if part.length == 0 {
            continue;
        }
        match runs.last_mut() {
            Some(run) if run.pack == part.pack && run.end == part.offset => {
                run.end += part.length;
                run.parts.push(part);
            }
            _ => runs.push(Run {
                pack: &part.pack,
                start: part.offset,
                end: part.offset + part.length,
                parts: vec![part],
            }),
        }
    }
    runs
}

/// Streams the documents of `entries` (in their order) to `consume`, in
/// batches of whole lines of at most `max_bytes`, checking each entry's
/// range against its sha256 before any of it is passed on.
pub async fn for_each_document_batch<E, F, Fut>(
    store: &Store,
    location: &ArtifactLocation,
    entries: &[PartEntry],
    max_bytes: usize,
    mut consume: F,
) -> Result<(), StreamError<E>>
where
    F: FnMut(Bytes) -> Fut,
    Fut: Future<Output = Result<(), E>>,
{
    let mut pending = BytesMut::new();
    for run in runs(entries) {
        let path = pack_path(run.pack);
        let options = GetOptions {
            range: Some(GetRange::Bounded(run.start..run.end)),
            ..Default::default()
        };
        let got = match store.inner.get_opts(&path, options).await {
            Ok(got) => got,
            Err(object_store::Error::NotFound { .. }) => {
                return Err(StreamError::Read(corrupt(
                    location,
                    path.as_ref(),
                    "missing".into(),
                )))
            }
            Err(e) => return Err(StreamError::Read(ReadError::store(&path, &e))),
        };
        let mut stream = chunks_of(got);
        let mut parts = run.parts.iter();
        let mut current = parts.next().copied();
        let (mut hasher, mut left) = (Sha256::new(), current.map_or(0, |p| p.length));
        let mut checked = BytesMut::new();
        while let Some(chunk) = stream.next().await {
            let mut chunk = chunk.map_err(|e| StreamError::Read(ReadError::store(&path, &e)))?;
            while !chunk.is_empty() {
                let Some(part) = current else {
                    return Err(StreamError::Read(corrupt(
                        location,
                        path.as_ref(),
                        "longer than its entries say".into(),
                    )));
                };
                let take = (left as usize).min(chunk.len());
                let piece = chunk.split_to(take);
                hasher.update(&piece);
                checked.extend_from_slice(&piece);
                left -= take as u64;
                if left == 0 {
                    let sha = hex::encode(std::mem::take(&mut hasher).finalize());
                    if sha != part.sha256 {
                        return Err(StreamError::Read(corrupt(
                            location,
                            path.as_ref(),
                            format!(
                                "bytes {}..{} do not match their sha256",
                                part.offset,
                                part.offset + part.length
                            ),
                        )));
                    }
                    pending.extend_from_slice(&checked);
                    checked.clear();
                    current = parts.next().copied();
                    left = current.map_or(0, |p| p.length);
                    while pending.len() >= max_bytes {
                        // Whole parts end in a newline: a cut is always found.
                        let Some(cut) = line_cut(&pending, max_bytes) else {
                            break;
                        };
                        consume(pending.split_to(cut).freeze())
                            .await
                            .map_err(StreamError::Consumer)?;
                    }
                }
            }
        }
        if current.is_some() {
            return Err(StreamError::Read(corrupt(
                location,
                path.as_ref(),
                "shorter than its entries say".into(),
            )));
        }
    }
    if !pending.is_empty() {
        consume(pending.freeze())
            .await
            .map_err(StreamError::Consumer)?;
    }
    Ok(())
}

/// Bytes a local file is read in, per hop to a blocking thread.
const FILE_BLOCK: u64 = 4 << 20;

/// The bytes of a ranged read: a local file's in blocks of [`FILE_BLOCK`],
/// each read on a blocking thread (object_store's own stream hops to one
/// per 8 KiB: 112,000 hops, most of a promotion's time, for a 900 MB
/// pack), any other store's as it streams them.
fn chunks_of(got: GetResult) -> BoxStream<'static, object_store::Result<Bytes>> {
    let range = got.range;
    let file = match got.payload {
        GetResultPayload::File(file, _) => file,
        GetResultPayload::Stream(stream) => return stream,
    };
    let io = |e: std::io::Error| object_store::Error::Generic {
        store: "LocalFileSystem",
        source: Box::new(e),
    };
    futures::stream::try_unfold((file, range.start), move |(mut file, at)| async move {
        if at >= range.end {
            return Ok(None);
        }
        let want = (range.end - at).min(FILE_BLOCK);
        let read = tokio::task::spawn_blocking(move || {
            use std::io::{Read, Seek, SeekFrom};
            let mut block = vec![0; usize::try_from(want).unwrap_or(usize::MAX)];
            file.seek(SeekFrom::Start(at))?;
            file.read_exact(&mut block)?;
            Ok((file, block))
        })
        .await
        .map_err(|e| io(std::io::Error::other(e)))?;
        let (file, block) = read.map_err(io)?;
        Ok(Some((Bytes::from(block), (file, at + want))))
    })
    .boxed()
}

/// The whole of one composed data file in memory (tests, `verify`'s catalog).
pub async fn compose_file(
    store: &Store,
    location: &ArtifactLocation,
    index: &PartsIndex,
    file: &str,
) -> Result<Bytes, ReadError> {
    let entries = read_entries(store, location, index).await?;
    match file {
        CATALOG_FILE => Ok(Bytes::from(compose_catalog(index, &entries))),
        FINDINGS_FILE => Ok(Bytes::from(compose_findings(index, &entries))),
        DOCUMENTS_FILE => {
            let mut out = BytesMut::new();
            let result = for_each_document_batch(store, location, &entries, 8 << 20, |b| {
                out.extend_from_slice(&b);
                async { Ok::<(), ReadError>(()) }
            })
            .await;
            match result {
                Ok(()) => Ok(out.freeze()),
                Err(StreamError::Read(e) | StreamError::Consumer(e)) => Err(e),
            }
        }
        other => Err(corrupt(location, other, "not a composed file".into())),
    }
}

#[cfg(test)]
mod tests;
