//! JSON-RPC 2.0's answer to what is not JSON: `-32700 Parse error`, with
//! `id: null`, on both front doors. The MCP SDK ignores a line of stdio
//! that is not JSON, and answers such a POST to `/mcp` with a plain-text
//! 415; the specification wants `{"jsonrpc":"2.0","id":null,"error":
//! {"code":-32700,...}}` (and `-32600 Invalid Request` for JSON that is
//! not a request), so an agent hears why it got no answer.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// JSON-RPC's code for input that is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a request.
pub const INVALID_REQUEST: i64 = -32600;

/// The largest `/mcp` body read (the MCP SDK's own limit).
pub const MAX_HTTP_BODY: usize = 4 * 1024 * 1024;

/// What a message is, as far as JSON goes.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// JSON: the SDK takes it from here.
    Json,
    /// Not JSON (or cut short): why.
    NotJson(String),
}

/// Whether `bytes` (one message; a leading byte-order mark allowed, as
/// RFC 8259 lets a parser ignore it) are JSON.
pub fn verdict(bytes: &[u8]) -> Verdict {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        Ok(_) => Verdict::Json,
        Err(e) if e.is_syntax() || e.is_eof() => Verdict::NotJson(e.to_string()),
        Err(_) => Verdict::Json,
    }
}

/// The JSON-RPC error answering a message that could not be read:
/// `code`, `id: null`, `why` as its data.
pub fn error_response(code: i64, why: &str) -> Value {
    let message = match code {
        PARSE_ERROR => "Parse error",
        _ => "Invalid Request",
    };
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message, "data": why}})
}

/// `serve`'s middleware for `POST /mcp`: a body that is not JSON (or JSON
/// that is not a request), which the SDK refuses with a plain-text 415
/// once it has checked the host, origin and headers, is answered 400 with
/// the JSON-RPC error instead. Everything else passes as it came.
pub async fn http_errors(request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if request.method() != Method::POST || (path != "/mcp" && path != "/mcp/") {
        return next.run(request).await;
    }
    let json_body = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_HTTP_BODY).await else {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Payload Too Large: request body exceeds {MAX_HTTP_BODY} bytes"),
        )
            .into_response();
    };
    let verdict = verdict(&bytes);
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if !json_body || response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    // The SDK could not read the body it was given as JSON.
    let (code, why) = match verdict {
        Verdict::NotJson(why) => (PARSE_ERROR, why),
        Verdict::Json => (INVALID_REQUEST, "not a JSON-RPC 2.0 message".to_string()),
    };
    let mut response = (
        StatusCode::BAD_REQUEST,
        axum::Json(error_response(code, &why)),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_json_is_told_apart_from_json_that_is_no_request() {
        assert_eq!(
            verdict(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Verdict::Json
        );
        assert_eq!(verdict(b"\xEF\xBB\xBF{\"a\": 1}"), Verdict::Json);
        assert_eq!(verdict(b"[1, 2]"), Verdict::Json);
        for garbage in [&b"hello"[..], b"{\"a\": ", b"", b"{'a': 1}", b"\xFF\xFE"] {
            assert!(
                matches!(verdict(garbage), Verdict::NotJson(_)),
                "{garbage:?}"
            );
        }
        let reply = error_response(PARSE_ERROR, "expected value at line 1 column 1");
        assert_eq!(reply["jsonrpc"], "2.0");
        assert_eq!(reply["id"], Value::Null);
        assert_eq!(reply["error"]["code"], -32700);
        assert_eq!(reply["error"]["message"], "Parse error");
    }
}
