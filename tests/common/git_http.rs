//! A real git smart-HTTP server for tests: git's own `git http-backend`
//! (the CGI program that serves clones and fetches behind a web server),
//! behind a small loopback HTTP/1.1 front that runs it once per request.
//! Clients speak the real protocol (`info/refs`, `git-upload-pack`,
//! protocol v2 included), as they would to GitHub.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Serves every repository below a folder at `http://127.0.0.1:PORT/<name>`
/// until dropped.
pub struct GitHttp {
    pub port: u16,
    stop: Arc<AtomicBool>,
    /// Requests answered so far.
    pub requests: Arc<AtomicUsize>,
}

impl GitHttp {
    pub fn serve(root: &Path) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicUsize::new(0));
        let (root, flag, count) = (root.to_path_buf(), stop.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                let (root, count) = (root.clone(), count.clone());
                std::thread::spawn(move || {
                    if answer(stream, &root).is_ok() {
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        Self {
            port,
            stop,
            requests,
        }
    }

    /// The URL of repository `name` (a folder below the root).
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for GitHttp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accepting thread so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// One request: read it, run `git http-backend` on it, write its answer.
fn answer(stream: TcpStream, root: &PathBuf) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, target) = (
        parts.next().unwrap_or("GET").to_string(),
        parts.next().unwrap_or("/").to_string(),
    );
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let body = match header("content-length") {
        Some(length) => {
            let mut body = vec![0; length.parse().unwrap_or(0)];
            reader.read_exact(&mut body)?;
            body
        }
        None if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) => {
            chunked(&mut reader)?
        }
        None => Vec::new(),
    };
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", &method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, variable) in [
        ("content-type", "CONTENT_TYPE"),
        ("content-encoding", "HTTP_CONTENT_ENCODING"),
        ("git-protocol", "GIT_PROTOCOL"),
    ] {
        if let Some(value) = header(name) {
            cgi.env(variable, value);
        }
    }
    let mut child = cgi.spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let feeder = std::thread::spawn(move || stdin.write_all(&body));
    let out = child.wait_with_output()?;
    let _ = feeder.join();
    // The CGI answer: headers (a `Status:` among them), a blank line, the body.
    let crlf = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| (at, 4));
    let lf = out
        .stdout
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|at| (at, 2));
    // The first blank line ends the headers, however it is written.
    let split = [crlf, lf].into_iter().flatten().min_by_key(|(at, _)| *at);
    let (head, rest) = match split {
        Some((at, gap)) => (&out.stdout[..at], &out.stdout[at + gap..]),
        None => (&b""[..], &out.stdout[..]),
    };
    let mut status = "200 OK".to_string();
    let mut response = Vec::new();
    for line in String::from_utf8_lossy(head).lines() {
        match line.split_once(':') {
            Some((name, value)) if name.eq_ignore_ascii_case("status") => {
                status = value.trim().to_string()
            }
            Some(_) => response.extend_from_slice(format!("{line}\r\n").as_bytes()),
            None => {}
        }
    }
    let mut stream = stream;
    stream.write_all(format!("HTTP/1.1 {status}\r\n").as_bytes())?;
    stream.write_all(&response)?;
    stream.write_all(
        format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            rest.len()
        )
        .as_bytes(),
    )?;
    stream.write_all(rest)?;
    stream.flush()
}

/// A chunked request body, decoded.
fn chunked(reader: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size)?;
        let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        let mut chunk = vec![0; size + 2]; // the chunk and its CRLF
        reader.read_exact(&mut chunk)?;
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}
