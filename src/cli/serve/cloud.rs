//! LOGDIR in an object store: `s3://bucket/prefix` and `gs://bucket/prefix`, through the
//! `object_store` crate, behind the same [`Store`] as a local folder.
//!
//! Credentials and endpoints come from the environment as each SDK reads them
//! (`AmazonS3Builder::from_env`: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
//! `AWS_ENDPOINT_URL` for an S3-compatible server; `GoogleCloudStorageBuilder::from_env`:
//! `GOOGLE_SERVICE_ACCOUNT` (a key file) or `GOOGLE_SERVICE_ACCOUNT_KEY`, else the application
//! default credentials of `gcloud auth application-default login`). An endpoint given as
//! `http://` is allowed plain HTTP (a local MinIO or moto); otherwise HTTPS only.
//!
//! Object keys have no `..` or symlinks: a key is literal, and [`super::paths::segments`] has
//! already refused `.`, `..` and empty segments, so a request names a key under the prefix or
//! nothing. The routes are synchronous (they run on the server's blocking pool); each call runs
//! on this module's own small tokio runtime.

use super::listing::{is_trace_file, Entry, HEADER_BYTES};
use super::paths::Refusal;
use super::store::{head_of, hidden, is_hidden, only_traces, Blob, Store};
use futures::StreamExt;
use object_store::path::{Path as ObjectPath, PathPart};
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};
use std::io::Read;
use std::ops::Range;
use std::sync::Arc;
use std::time::SystemTime;
use tokio::runtime::Runtime;

/// True for the LOGDIRs this module reads.
#[cfg(test)]
fn is_cloud_url(logdir: &str) -> bool {
    logdir.starts_with("s3://") || logdir.starts_with("gs://")
}

pub struct Cloud {
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    runtime: Arc<Runtime>,
}

/// `s3://bucket/some/prefix/` as (scheme, bucket, prefix).
fn split_url(url: &str) -> Result<(&str, &str, &str), String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or(format!("'{url}' is not a URL"))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(format!("'{url}' names no bucket"));
    }
    Ok((scheme, bucket, prefix.trim_matches('/')))
}

impl Cloud {
    pub fn new(url: &str) -> Result<Cloud, String> {
        let (scheme, bucket, prefix) = split_url(url)?;
        let store: Arc<dyn ObjectStore> = match scheme {
            "s3" => {
                let mut b = object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket);
                let endpoint = ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"]
                    .iter()
                    .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()));
                if endpoint.is_some_and(|e| e.starts_with("http://")) {
                    b = b.with_allow_http(true);
                }
                Arc::new(b.build().map_err(|e| format!("{url}: {e}"))?)
            }
            "gs" => Arc::new(
                object_store::gcp::GoogleCloudStorageBuilder::from_env()
                    .with_bucket_name(bucket)
                    .build()
                    .map_err(|e| format!("{url}: {e}"))?,
            ),
            other => {
                return Err(format!(
                    "{other}:// is not read; LOGDIR is a folder, s3:// or gs://"
                ))
            }
        };
        let prefix = ObjectPath::parse(prefix).map_err(|e| format!("{url}: {e}"))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("starting the object store's runtime: {e}"))?;
        Ok(Cloud {
            store,
            prefix,
            runtime: Arc::new(runtime),
        })
    }

    fn key(&self, segments: &[String]) -> ObjectPath {
        self.prefix
            .parts()
            .chain(segments.iter().map(|s| PathPart::from(s.as_str())))
            .collect()
    }
}

impl Store for Cloud {
    fn list(&self) -> Result<Vec<Entry>, String> {
        let prefix = (!self.prefix.as_ref().is_empty()).then_some(&self.prefix);
        let mut stream = self.store.list(prefix);
        self.runtime.block_on(async {
            let mut out = Vec::new();
            while let Some(meta) = stream.next().await {
                let meta = meta.map_err(|e| e.to_string())?;
                let Some(parts) = meta.location.prefix_match(&self.prefix) else {
                    continue;
                };
                let path = parts
                    .map(|p| p.as_ref().to_string())
                    .collect::<Vec<_>>()
                    .join("/");
                let name = path.rsplit('/').next().unwrap_or("");
                if path.is_empty() || !is_trace_file(name) || path.split('/').any(is_hidden) {
                    continue;
                }
                out.push(Entry {
                    path,
                    size: meta.size,
                    mtime_ms: Some(meta.last_modified.timestamp_millis()),
                });
            }
            Ok(out)
        })
    }

    fn open(&self, segments: &[String]) -> Result<Box<dyn Blob>, Refusal> {
        let shown = segments.join("/");
        if !is_trace_file(segments.last().map_or("", String::as_str)) {
            return Err(only_traces(&shown));
        }
        if segments.iter().any(|s| is_hidden(s)) {
            return Err(hidden(&shown));
        }
        let key = self.key(segments);
        let meta = self
            .runtime
            .block_on(self.store.head(&key))
            .map_err(|e| match e {
                object_store::Error::NotFound { .. } => {
                    Refusal::NotFound(format!("'{shown}': no such file"))
                }
                e => Refusal::Failed(format!("'{shown}': {e}")),
            })?;
        Ok(Box::new(Object {
            store: Arc::clone(&self.store),
            runtime: Arc::clone(&self.runtime),
            key,
            size: meta.size,
            modified: meta.last_modified.into(),
        }))
    }

    fn head(&self, entry: &Entry) -> Option<Vec<u8>> {
        let segments: Vec<String> = entry.path.split('/').map(str::to_string).collect();
        let end = entry.size.min(HEADER_BYTES as u64);
        let bytes = self
            .runtime
            .block_on(self.store.get_range(&self.key(&segments), 0..end))
            .ok()?;
        head_of(&bytes[..])
    }
}

/// An object as a [`Blob`]: its listing's size and time, its bytes by a ranged GET.
struct Object {
    store: Arc<dyn ObjectStore>,
    runtime: Arc<Runtime>,
    key: ObjectPath,
    size: u64,
    modified: SystemTime,
}

impl Blob for Object {
    fn size(&self) -> u64 {
        self.size
    }

    fn modified(&self) -> Option<SystemTime> {
        Some(self.modified)
    }

    fn read(self: Box<Self>, range: Range<u64>) -> std::io::Result<Box<dyn Read + Send>> {
        if range.is_empty() {
            return Ok(Box::new(std::io::empty()));
        }
        let options = GetOptions {
            range: Some(GetRange::Bounded(range)),
            ..GetOptions::default()
        };
        let got = self
            .runtime
            .block_on(self.store.get_opts(&self.key, options))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Box::new(StreamReader {
            stream: got.into_stream().map(|r| r.map(|b| b.to_vec())).boxed(),
            runtime: Arc::clone(&self.runtime),
            chunk: Vec::new(),
            at: 0,
        }))
    }
}

/// An object's byte stream as a blocking `Read`, one chunk at a time.
struct StreamReader {
    stream: futures::stream::BoxStream<'static, object_store::Result<Vec<u8>>>,
    runtime: Arc<Runtime>,
    chunk: Vec<u8>,
    at: usize,
}

impl Read for StreamReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.chunk.len() {
            match self.runtime.block_on(self.stream.next()) {
                None => return Ok(0),
                Some(Ok(b)) => {
                    self.chunk = b;
                    self.at = 0;
                }
                Some(Err(e)) => return Err(std::io::Error::other(e.to_string())),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(split_url("s3://b/p/q/"), Ok(("s3", "b", "p/q")));
        assert_eq!(split_url("gs://b"), Ok(("gs", "b", "")));
        assert!(split_url("s3:///x").is_err());
        assert!(is_cloud_url("s3://b") && is_cloud_url("gs://b") && !is_cloud_url("./s3"));
    }
}
