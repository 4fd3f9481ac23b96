//! A real S3-compatible server for tests: moto's server (PyPI `moto[server]`),
//! started on a free loopback port and stopped on drop.
//!
//! When `moto_server` is not installed the tests that need it say so and
//! return, unless `AGENTFINDER_REQUIRE_S3=1` (set by `.ci/run`), which makes
//! its absence a failure.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentfinder_skills_reader::store::Store;
use object_store::aws::AmazonS3Builder;

pub const ACCESS_KEY: &str = "moto-test-access";
pub const SECRET_KEY: &str = "moto-test-SECRET-do-not-log";

pub struct Moto {
    child: Child,
    pub port: u16,
}

impl Moto {
    /// Starts a server, or returns `None` (with a printed reason) when
    /// moto_server is missing and not required.
    pub fn start() -> Option<Self> {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let spawned = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let required = std::env::var("AGENTFINDER_REQUIRE_S3").is_ok_and(|v| v == "1");
                assert!(
                    !required,
                    "moto_server is required (AGENTFINDER_REQUIRE_S3=1) but cannot start: {e}"
                );
                eprintln!("skipped: moto_server not available ({e}); `pip install 'moto[server]'` to run S3 tests");
                return None;
            }
        };
        let moto = Self { child, port };
        // Ready when it answers HTTP, not merely when the port accepts.
        let deadline = Instant::now() + Duration::from_secs(30);
        while moto.request("GET", "/").is_err() {
            assert!(
                Instant::now() < deadline,
                "moto_server did not start on port {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(moto)
    }

    /// One plain HTTP request; the status line.
    fn request(&self, verb: &str, path: &str) -> std::io::Result<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        write!(
            stream,
            "{verb} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        Ok(response.lines().next().unwrap_or_default().to_string())
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates a bucket (moto does not check signatures), retrying while a
    /// loaded machine resets connections.
    pub fn create_bucket(&self, bucket: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.request("PUT", &format!("/{bucket}")) {
                Ok(status) if status.starts_with("HTTP/1.1 200") => return,
                other => assert!(
                    Instant::now() < deadline,
                    "create bucket {bucket}: {other:?}"
                ),
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Environment for a child process using `s3://bucket/...`.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY.to_string()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.to_string()),
            ("AWS_REGION", "us-east-1".to_string()),
            ("AWS_ENDPOINT", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".to_string()),
        ]
    }

    /// An in-process store on `bucket`.
    pub fn store(&self, bucket: &str) -> Store {
        let s3 = AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_access_key_id(ACCESS_KEY)
            .with_secret_access_key(SECRET_KEY)
            .with_region("us-east-1")
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .build()
            .unwrap();
        Store::from_object_store(Arc::new(s3), format!("s3://{bucket}"))
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
