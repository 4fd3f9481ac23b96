//! The MCP session over stdio, with JSON-RPC's answer to a line that is
//! not JSON ([`super::parse`]): stdin is read here line by line, each JSON
//! line handed to the SDK's session, each other line answered `-32700`
//! on stdout; the session's own lines and those answers are written
//! whole, one at a time, so they never interleave.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::parse::{error_response, verdict, Verdict, PARSE_ERROR};

/// The longest line read (the MCP SDK's own limit over stdio); a longer
/// one is answered as not JSON, unread.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// A line of `reader`, without its `\n`, into `line`; `Ok(None)` at the
/// end; `Ok(Some(false))` when the line was longer than `max` (then
/// skipped, not kept).
async fn next_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<bool>> {
    line.clear();
    let mut fits = true;
    let mut any = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(any.then_some(fits));
        }
        any = true;
        let (chunk, ended) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..at], at + 1),
            None => (buf, 0),
        };
        if fits && line.len() + chunk.len() > max {
            fits = false;
            line.clear();
        }
        if fits {
            line.extend_from_slice(chunk);
        }
        let used = if ended > 0 { ended } else { chunk.len() };
        reader.consume(used);
        if ended > 0 {
            return Ok(Some(fits));
        }
    }
}

/// Reads `input`'s lines: JSON goes to `session`, the answer to any
/// other line to `out`. Ends at the input's end (closing `session`).
async fn read_input(
    input: impl tokio::io::AsyncRead + Unpin,
    mut session: impl tokio::io::AsyncWrite + Unpin,
    out: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    while let Ok(Some(fits)) = next_line(&mut input, &mut line, MAX_LINE).await {
        let text = line.strip_suffix(b"\r").unwrap_or(&line);
        if text.iter().all(u8::is_ascii_whitespace) && fits {
            continue;
        }
        let why = match (fits, verdict(text)) {
            (true, Verdict::Json) => None,
            (true, Verdict::NotJson(why)) => Some(why),
            (false, _) => Some(format!("a message longer than {MAX_LINE} bytes")),
        };
        match why {
            None => {
                let mut message = text.to_vec();
                message.push(b'\n');
                if session.write_all(&message).await.is_err() {
                    break;
                }
            }
            Some(why) => {
                let mut reply = error_response(PARSE_ERROR, &why).to_string().into_bytes();
                reply.push(b'\n');
                if out.send(reply).is_err() {
                    break;
                }
            }
        }
    }
    let _ = session.shutdown().await;
}

/// Copies the session's lines to `out`, whole.
async fn read_session(
    session: impl tokio::io::AsyncRead + Unpin,
    out: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut session = BufReader::new(session);
    let mut line = Vec::new();
    loop {
        line.clear();
        match session.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if out.send(line.clone()).is_err() {
                    return;
                }
            }
        }
    }
}

/// Writes every line sent until no one can send one.
async fn write_lines(
    mut output: impl tokio::io::AsyncWrite + Unpin,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(line) = lines.recv().await {
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}

/// The two ends a session is served on (read, write), and the work that
/// joins them to `input` and `output`; the returned handle ends once
/// everything the session wrote is written.
pub fn plumb<I, O>(
    input: I,
    output: O,
) -> (
    (tokio::io::DuplexStream, tokio::io::DuplexStream),
    tokio::task::JoinHandle<()>,
)
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (to_session, session_in) = tokio::io::duplex(64 * 1024);
    let (session_out, from_session) = tokio::io::duplex(64 * 1024);
    let (lines, written) = mpsc::unbounded_channel();
    tokio::spawn(read_input(input, to_session, lines.clone()));
    let copied = tokio::spawn(read_session(from_session, lines));
    let writer = tokio::spawn(async move {
        write_lines(output, written).await;
        let _ = copied.await;
    });
    ((session_in, session_out), writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_read_whole_and_a_long_one_is_skipped() {
        let text = b"one\r\ntoo long here\nthree";
        let mut reader = BufReader::with_capacity(4, &text[..]);
        let mut line = Vec::new();
        assert_eq!(
            next_line(&mut reader, &mut line, 8).await.unwrap(),
            Some(true)
        );
        assert_eq!(line, b"one\r");
        assert_eq!(
            next_line(&mut reader, &mut line, 8).await.unwrap(),
            Some(false)
        );
        assert_eq!(
            next_line(&mut reader, &mut line, 8).await.unwrap(),
            Some(true)
        );
        assert_eq!(line, b"three");
        assert_eq!(next_line(&mut reader, &mut line, 8).await.unwrap(), None);
    }

    #[tokio::test]
    async fn json_goes_to_the_session_and_anything_else_is_answered() {
        let input: &[u8] =
            b"not json\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"a\":\n";
        let (mut session, to_session) = tokio::io::duplex(1024);
        let (lines, mut written) = mpsc::unbounded_channel();
        read_input(input, to_session, lines).await;
        let mut forwarded = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut session, &mut forwarded)
            .await
            .unwrap();
        assert_eq!(
            forwarded,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        );
        let mut answers = Vec::new();
        while let Ok(line) = written.try_recv() {
            let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
            answers.push((value["id"].clone(), value["error"]["code"].clone()));
        }
        assert_eq!(
            answers,
            vec![(serde_json::Value::Null, serde_json::json!(-32700)); 2]
        );
    }
}
