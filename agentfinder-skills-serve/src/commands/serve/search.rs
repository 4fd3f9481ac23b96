//! `GET /search`: its parameters checked, the answer in either format.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use super::{error, with_engine, App, DEFAULT_LIMIT, MAX_LIMIT};
use crate::present::agentfinder::search_body;
use crate::present::topgun::{adapter_response, RegistryStatus};
use crate::MAX_QUERY_BYTES;
use agentfinder_skills_reader::contract::Severity;

/// The parameters of a search.
#[derive(Debug, PartialEq)]
struct SearchParams {
    q: String,
    limit: usize,
    source: Option<String>,
    max_risk: Option<Severity>,
    topgun: bool,
}

/// Parses a raw query string; the error is the status and the message.
fn parse_params(raw: Option<&str>) -> Result<SearchParams, (StatusCode, String)> {
    let bad = |m: String| (StatusCode::BAD_REQUEST, m);
    let mut q = None;
    let mut limit = None;
    let mut source = None;
    let mut format = None;
    let mut max_risk = None;
    for pair in raw.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = value.replace('+', " ");
        let decoded = percent_encoding::percent_decode_str(&value).collect::<Vec<u8>>();
        let value = String::from_utf8(decoded)
            .map_err(|_| bad(format!("parameter `{key}` is not valid UTF-8")))?;
        match key {
            "q" => q = Some(value),
            "limit" => limit = Some(value),
            "source" => source = Some(value).filter(|s| !s.is_empty()),
            "format" => format = Some(value),
            "max_risk" => max_risk = Some(value),
            _ => {}
        }
    }
    let q = q.map(|q| q.trim().to_string()).unwrap_or_default();
    if q.is_empty() {
        return Err(bad(
            "`q` is missing or empty: say what the skill should do".into()
        ));
    }
    if q.len() > MAX_QUERY_BYTES {
        return Err((
            StatusCode::URI_TOO_LONG,
            format!("`q` is {} bytes; at most {MAX_QUERY_BYTES}", q.len()),
        ));
    }
    let limit = match limit {
        None => DEFAULT_LIMIT,
        Some(text) => match text.parse::<usize>() {
            Ok(0) => return Err(bad("`limit` must be at least 1".into())),
            Ok(n) => n.min(MAX_LIMIT),
            Err(_) => return Err(bad(format!("`limit` = {text:?} is not a number"))),
        },
    };
    let max_risk = crate::pipeline::max_risk_param(max_risk.as_deref()).map_err(bad)?;
    let topgun = match format.as_deref() {
        None | Some("agentfinder") => false,
        Some("topgun") => true,
        Some(other) => {
            return Err(bad(format!(
                "`format` = {other:?}: use agentfinder or topgun"
            )))
        }
    };
    Ok(SearchParams {
        q,
        limit,
        source,
        max_risk,
        topgun,
    })
}

/// `GET /search`.
pub(super) async fn search(State(app): State<Arc<App>>, RawQuery(raw): RawQuery) -> Response {
    let params = match parse_params(raw.as_deref()) {
        Ok(params) => params,
        Err((status, message)) => return error(status, &message),
    };
    let timeout = app.searcher.settings.request_timeout;
    let arrived = Instant::now();
    let answered = tokio::time::timeout(timeout, async {
        let Ok(_permit) = app.searcher.permits.acquire().await else {
            return error(StatusCode::SERVICE_UNAVAILABLE, "shutting down");
        };
        answer(&app, &params, arrived).await
    })
    .await;
    answered.unwrap_or_else(|_| {
        error(
            StatusCode::GATEWAY_TIMEOUT,
            &format!("no answer within {:.1} s", timeout.as_secs_f64()),
        )
    })
}

/// The search's answer in the format asked for. `arrived` is when the
/// request came.
async fn answer(app: &App, params: &SearchParams, arrived: Instant) -> Response {
    let started = Instant::now();
    let found = app
        .searcher
        .search(
            &params.q,
            params.limit,
            params.source.as_deref(),
            params.max_risk,
            0,
            arrived,
        )
        .await;
    let answer = match found {
        Ok(answer) => answer,
        Err(e) if params.topgun => {
            let (adapter, _) = adapter_response(
                "agentfinder",
                Err((RegistryStatus::Unavailable, e)),
                started.elapsed().as_millis() as u64,
                &mut |_| {},
            );
            return with_engine(StatusCode::OK, json!(adapter), "none");
        }
        Err(e) => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("no engine can answer: {e}"),
            )
        }
    };
    let engine = answer.engine;
    if params.topgun {
        let (adapter, _) = adapter_response(
            "agentfinder",
            Ok(answer),
            started.elapsed().as_millis() as u64,
            &mut |line| eprintln!("serve: {line}"),
        );
        return with_engine(StatusCode::OK, json!(adapter), engine);
    }
    with_engine(StatusCode::OK, search_body(&answer), engine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_checked() {
        let ok = parse_params(Some(
            "q=merge+pdf%20files&limit=5&source=hf&format=topgun&max_risk=Medium",
        ))
        .unwrap();
        assert_eq!(
            ok,
            SearchParams {
                q: "merge pdf files".into(),
                limit: 5,
                source: Some("hf".into()),
                max_risk: Some(Severity::Medium),
                topgun: true
            }
        );
        assert_eq!(
            parse_params(Some("q=x&limit=100000")).unwrap().limit,
            MAX_LIMIT
        );
        let status = |raw: &str| parse_params(Some(raw)).unwrap_err().0;
        assert_eq!(status("limit=3"), StatusCode::BAD_REQUEST);
        assert_eq!(status("q=%20"), StatusCode::BAD_REQUEST);
        assert_eq!(status("q=x&limit=0"), StatusCode::BAD_REQUEST);
        assert_eq!(status("q=x&limit=ten"), StatusCode::BAD_REQUEST);
        assert_eq!(status("q=x&format=xml"), StatusCode::BAD_REQUEST);
        assert_eq!(status("q=x&max_risk=severe"), StatusCode::BAD_REQUEST);
        assert_eq!(parse_params(Some("q=x&max_risk=")).unwrap().max_risk, None);
        assert_eq!(status("q=%FF%FE"), StatusCode::BAD_REQUEST);
        assert_eq!(
            status(&format!("q={}", "a".repeat(100_000))),
            StatusCode::URI_TOO_LONG
        );
    }
}
