//! Opening an artifact store from a `--store` value: a local folder or an
//! object_store URL (`file://`, `s3://`, `gs://`, `az://`).

use std::sync::Arc;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::local::LocalFileSystem;
use object_store::prefix::PrefixStore;
use object_store::ClientConfigKey;
use object_store::ObjectStore;

/// A store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL's scheme is not one this program knows.
    #[error("unsupported store URL scheme `{scheme}` in {url} (use a folder, file://, s3://, gs:// or az://)")]
    UnsupportedScheme {
        /// The scheme found.
        scheme: String,
        /// The URL, redacted.
        url: String,
    },
    /// The local folder could not be created or opened.
    #[error("cannot open store folder {path}: {error}")]
    Folder {
        /// The folder.
        path: String,
        /// What went wrong.
        error: std::io::Error,
    },
    /// The store names a file, not a folder.
    #[error("store {path} is a file, not a folder: name a folder (or an object_store URL)")]
    NotAFolder {
        /// The path.
        path: String,
    },
    /// A reader was pointed at a local folder that does not exist.
    #[error("empty store: {path} does not exist (nothing has been built into it; `agentfinder-skills build --store {path}` makes one)")]
    Empty {
        /// The folder.
        path: String,
    },
    /// The object store client rejected its configuration.
    #[error("cannot open store {url}: {message}")]
    Client {
        /// The URL, redacted.
        url: String,
        /// The client's message, redacted.
        message: String,
    },
}

/// An opened artifact store and a printable, secret-free name for it.
#[derive(Debug, Clone)]
pub struct Store {
    /// The store, rooted at the artifact root (`commits/` and `latest/` below it).
    pub inner: Arc<dyn ObjectStore>,
    /// Where it is, with credentials removed, for logs.
    pub display: String,
    /// The folder, when the store is a local folder (large files are then
    /// copied with the file system rather than uploaded in parts).
    pub local_root: Option<std::path::PathBuf>,
}

/// How a remote store is reached; every field is optional and falls back to
/// the usual environment variables (`AWS_ENDPOINT`, `AWS_REGION`,
/// `AWS_ALLOW_HTTP`, ...), then to the client's defaults.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreOptions {
    /// S3-compatible endpoint (MinIO, a bucket gateway), e.g. `http://127.0.0.1:9000`.
    pub endpoint: Option<String>,
    /// Region.
    pub region: Option<String>,
    /// Allow plain `http://` endpoints.
    pub allow_http: Option<bool>,
    /// Virtual-hosted-style requests (`bucket.host`) instead of path-style (`host/bucket`).
    pub virtual_hosted_style: Option<bool>,
    /// Use conditional writes (`If-None-Match`, `If-Match`); turn off only
    /// for a store that rejects them.
    pub conditional_put: bool,
    /// Retries of a transient error (timeout, 5xx, throttling).
    pub max_retries: usize,
    /// Give up retrying after this many seconds.
    pub retry_timeout_secs: u64,
    /// First backoff pause in milliseconds (doubling).
    pub initial_backoff_ms: u64,
    /// Timeout of one request, in seconds.
    pub request_timeout_secs: u64,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            endpoint: None,
            region: None,
            allow_http: None,
            virtual_hosted_style: None,
            conditional_put: true,
            max_retries: 5,
            retry_timeout_secs: 120,
            initial_backoff_ms: 200,
            request_timeout_secs: 60,
        }
    }
}

impl StoreOptions {
    fn retry(&self) -> object_store::RetryConfig {
        object_store::RetryConfig {
            backoff: object_store::BackoffConfig {
                init_backoff: std::time::Duration::from_millis(self.initial_backoff_ms),
                max_backoff: std::time::Duration::from_secs(15),
                base: 2.0,
            },
            max_retries: self.max_retries,
            retry_timeout: std::time::Duration::from_secs(self.retry_timeout_secs),
        }
    }

    /// The request timeout as a config value; set key by key so that the
    /// client options read from the environment (`AWS_ALLOW_HTTP`, ...) stay.
    fn timeout(&self) -> String {
        format!("{}s", self.request_timeout_secs)
    }
}

impl Store {
    /// Opens `spec` with default options; see [`Store::open_with`].
    pub fn open(spec: &str) -> Result<Self, StoreError> {
        Self::open_with(spec, &StoreOptions::default())
    }

    /// Opens `spec`: a folder path (created if missing) or an object_store
    /// URL, `s3://bucket/prefix` and the like. Credentials come from the
    /// usual environment variables (`AWS_*`, `GOOGLE_*`, `AZURE_*`); `options`
    /// override endpoint, region and transport, and always set the retry
    /// policy explicitly.
    pub fn open_with(spec: &str, options: &StoreOptions) -> Result<Self, StoreError> {
        Self::open_inner(spec, options, true)
    }

    /// Opens `spec` as [`Store::open_with`] does, for reading only: a local
    /// folder that does not exist is [`StoreError::Empty`], not created.
    pub fn open_existing_with(spec: &str, options: &StoreOptions) -> Result<Self, StoreError> {
        Self::open_inner(spec, options, false)
    }

    fn open_inner(spec: &str, options: &StoreOptions, create: bool) -> Result<Self, StoreError> {
        let display = redact_url(spec);
        let Some((scheme, rest)) = spec.split_once("://") else {
            return Self::open_folder(std::path::Path::new(spec), display, create);
        };
        if scheme == "file" {
            return Self::open_folder(std::path::Path::new(rest), display, create);
        }
        let rest = rest.split('?').next().unwrap_or(rest);
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let bucket_url = format!("{scheme}://{bucket}");
        let client = |e: object_store::Error| StoreError::Client {
            url: display.clone(),
            message: redact_text(&e.to_string()),
        };
        let inner: Arc<dyn ObjectStore> = match scheme {
            "s3" | "s3a" => {
                let mut builder = AmazonS3Builder::from_env()
                    .with_url(bucket_url)
                    .with_retry(options.retry())
                    .with_config(
                        AmazonS3ConfigKey::Client(ClientConfigKey::Timeout),
                        options.timeout(),
                    );
                if let Some(endpoint) = &options.endpoint {
                    builder = builder.with_endpoint(endpoint);
                }
                if let Some(region) = &options.region {
                    builder = builder.with_region(region);
                }
                if let Some(allow) = options.allow_http {
                    builder = builder.with_allow_http(allow);
                }
                if let Some(virtual_hosted) = options.virtual_hosted_style {
                    builder = builder.with_virtual_hosted_style_request(virtual_hosted);
                }
                if !options.conditional_put {
                    builder =
                        builder.with_conditional_put(object_store::aws::S3ConditionalPut::Disabled);
                }
                Arc::new(builder.build().map_err(client)?)
            }
            "gs" => Arc::new(
                GoogleCloudStorageBuilder::from_env()
                    .with_url(bucket_url)
                    .with_retry(options.retry())
                    .with_config(
                        GoogleConfigKey::Client(ClientConfigKey::Timeout),
                        options.timeout(),
                    )
                    .build()
                    .map_err(client)?,
            ),
            "az" | "abfs" | "abfss" => Arc::new(
                MicrosoftAzureBuilder::from_env()
                    .with_url(bucket_url)
                    .with_retry(options.retry())
                    .with_config(
                        AzureConfigKey::Client(ClientConfigKey::Timeout),
                        options.timeout(),
                    )
                    .build()
                    .map_err(client)?,
            ),
            other => {
                return Err(StoreError::UnsupportedScheme {
                    scheme: other.to_string(),
                    url: display,
                })
            }
        };
        let prefix = prefix.trim_matches('/');
        let inner: Arc<dyn ObjectStore> = if prefix.is_empty() {
            inner
        } else {
            Arc::new(PrefixStore::new(inner, prefix))
        };
        Ok(Self {
            inner,
            display,
            local_root: None,
        })
    }

    /// Wraps an already configured object store.
    pub fn from_object_store(inner: Arc<dyn ObjectStore>, display: impl Into<String>) -> Self {
        Self {
            inner,
            display: display.into(),
            local_root: None,
        }
    }

    /// The part of this store below `prefix` (`sources/<id>`), as a store
    /// of its own: a many-source build gives each source one.
    pub fn scoped(&self, prefix: &str) -> Store {
        let prefix = prefix.trim_matches('/');
        Store {
            inner: Arc::new(PrefixStore::new(self.inner.clone(), prefix)),
            display: format!("{}/{prefix}", self.display.trim_end_matches('/')),
            local_root: self.local_root.as_ref().map(|root| root.join(prefix)),
        }
    }

    fn open_folder(
        path: &std::path::Path,
        display: String,
        create: bool,
    ) -> Result<Self, StoreError> {
        let folder_error = |error| StoreError::Folder {
            path: display.clone(),
            error,
        };
        if path.is_file() {
            return Err(StoreError::NotAFolder { path: display });
        }
        if !path.exists() && !create {
            return Err(StoreError::Empty { path: display });
        }
        std::fs::create_dir_all(path).map_err(folder_error)?;
        let absolute = std::fs::canonicalize(path).map_err(folder_error)?;
        let inner = LocalFileSystem::new_with_prefix(&absolute)
            .map_err(|e| StoreError::Client {
                url: display.clone(),
                message: e.to_string(),
            })?
            .with_automatic_cleanup(true);
        Ok(Self {
            inner: Arc::new(inner),
            display,
            local_root: Some(absolute),
        })
    }
}

/// Removes credentials from a URL: user-info (`user:secret@`) and the query
/// string, where signed URLs and SAS tokens live.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority_and_path, query) = match rest.split_once('?') {
        Some((before, _)) => (before, true),
        None => (rest, false),
    };
    let (authority, path) = match authority_and_path.find('/') {
        Some(i) => authority_and_path.split_at(i),
        None => (authority_and_path, ""),
    };
    let host = match authority.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => authority.to_string(),
    };
    let query = if query { "?***" } else { "" };
    format!("{scheme}://{host}{path}{query}")
}

/// Redacts every URL found in free text (an error message, say).
pub fn redact_text(text: &str) -> String {
    text.split_inclusive(char::is_whitespace)
        .map(|word| {
            if word.contains("://") {
                let trimmed = word.trim_end();
                let tail = &word[trimmed.len()..];
                format!("{}{tail}", redact_url(trimmed))
            } else {
                word.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_user_info_and_query() {
        assert_eq!(
            redact_url("https://user:s3cret@github.com/o/r.git"),
            "https://***@github.com/o/r.git"
        );
        assert_eq!(
            redact_url("s3://bucket/prefix?X-Amz-Signature=abc"),
            "s3://bucket/prefix?***"
        );
        assert_eq!(redact_url("./artifacts"), "./artifacts");
        assert_eq!(redact_url("s3://bucket/p"), "s3://bucket/p");
    }

    #[test]
    fn redacts_urls_inside_text() {
        let text = redact_text("failed to fetch https://tok:en@host/x (timeout)");
        assert_eq!(text, "failed to fetch https://***@host/x (timeout)");
        assert!(!text.contains("tok:en"));
    }

    #[test]
    fn opens_a_folder_and_rejects_unknown_schemes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("nested/store");
        let store = Store::open(root.to_str().unwrap()).unwrap();
        assert!(store.local_root.is_some());
        assert!(root.is_dir());
        let err = Store::open("ftp://user:pw@example.org/x").unwrap_err();
        let message = err.to_string();
        assert!(message.contains("ftp"), "{message}");
        assert!(!message.contains("pw"), "{message}");
    }
}
