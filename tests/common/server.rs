//! A running `serve` for end-to-end tests: the real binary, real HTTP
//! requests over loopback (raw, so a query string can hold what a client
//! library would refuse to send).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::binary;

/// A running `serve`, stopped (SIGTERM) when dropped.
pub struct Server {
    pub child: Child,
    pub addr: String,
    /// What it printed on stderr so far (read by a thread, so the pipe
    /// never fills), for the message when it is gone.
    pub stderr: Arc<Mutex<String>>,
}

impl Server {
    /// Builds `repo` into `work` and serves it; `env` adds variables.
    pub fn start(work: &Path, cache: &Path, env: &[(&str, &str)]) -> Self {
        Self::start_with(work, cache, &[], env)
    }

    /// As [`Server::start`], with more arguments to `serve` (`--refresh 0`
    /// unless they say otherwise).
    pub fn start_with(work: &Path, cache: &Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = binary();
        command.args(["serve", "--addr", "127.0.0.1:0"]);
        if !args.contains(&"--refresh") {
            command.args(["--refresh", "0"]);
        }
        command
            .args(args)
            .current_dir(work)
            .env_remove("MEILI_URL")
            .env_remove("MEILI_MASTER_KEY")
            .env("XDG_CACHE_HOME", cache)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(pipe) = child.stderr.take() {
            let kept = stderr.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    if let Ok(mut kept) = kept.lock() {
                        kept.push_str(&line);
                        kept.push('\n');
                    }
                }
            });
        }
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        // The rest of stdout is read too: a closed pipe would fail a print.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Self {
            child,
            addr,
            stderr,
        }
    }

    /// `GET target` (raw bytes after the method): status, headers, body.
    pub fn get(&self, target: &[u8]) -> (u16, String, String) {
        let mut request = b"GET ".to_vec();
        request.extend_from_slice(target);
        request.extend_from_slice(b" HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
        self.raw(&request)
    }

    /// Sends `request` as it is: status, headers (lowercase), body.
    pub fn raw(&self, request: &[u8]) -> (u16, String, String) {
        let mut stream = TcpStream::connect(&self.addr).unwrap_or_else(|e| {
            panic!(
                "cannot connect to serve at {} ({e}); its stderr:\n{}",
                self.addr,
                self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
            )
        });
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream.write_all(request).unwrap();
        let mut response = Vec::new();
        // An SSE answer keeps the stream open: what came before the
        // timeout is the answer.
        let _ = stream.read_to_end(&mut response);
        let text = String::from_utf8_lossy(&response).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, head.to_ascii_lowercase(), body.to_string())
    }

    pub fn json(&self, target: &str) -> (u16, String, Value) {
        let (status, head, body) = self.get(target.as_bytes());
        let value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{target}: {e}: {body}"));
        (status, head, value)
    }

    pub fn stop(mut self) -> std::process::ExitStatus {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..100 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        panic!("serve did not stop within 5 s of SIGTERM");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
