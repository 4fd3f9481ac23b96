//! `health`: whether search can answer, for a start-up script. With
//! Meilisearch (`MEILI_URL`), the reader's check of its index against the
//! store (exit codes 0 and 10-14, [`meili::HealthReport::exit_code`]);
//! without it, what answers is the embedded engine, the normal mode: it
//! is healthy (exit 0) when it can serve the store's artifacts, 14 when
//! the store's `latest/` cannot be read, 12 when it can but the engine
//! cannot open them. Problems are cleaned: they can quote what a skill's
//! author wrote.

use serde_json::{json, Value};

use agentfinder_skills_reader::cli::{index_name, CommandFailure, HealthArgs};
use agentfinder_skills_reader::meili::{self, HealthReport};
use agentfinder_skills_reader::outln;

use super::ServingDefaults;
use crate::present::{AgentJson, AgentText};

/// Exit code without Meilisearch when the store's artifacts can be read
/// but the embedded engine cannot open them (as "not loaded").
pub const EMBEDDED_NOT_READY: u8 = 12;
/// Exit code when the store's `latest/` cannot be read (as with
/// Meilisearch: freshness unknown).
pub const STORE_UNREADABLE: u8 = 14;

/// The problem the reader's check names when no Meilisearch is
/// configured: not one when the embedded engine answers.
pub fn not_configured_problem() -> String {
    format!("{} is not set", meili::URL_ENV)
}

/// `report` of a service without Meilisearch: no problem for it.
pub fn without_meilisearch(mut report: HealthReport) -> HealthReport {
    if !report.configured {
        let not_set = not_configured_problem();
        report.problems.retain(|p| *p != not_set);
    }
    report
}

/// `health`.
pub async fn run(mut args: HealthArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    args.meili.resolve_state();
    let config = args.meili.config();
    let store = defaults.reader.open(args.store.as_deref());
    let index = index_name(args.index.clone(), &args.meili.state);
    let mut report =
        meili::health(config.as_ref(), store.as_ref(), &index, &args.meili.state).await;
    let (code, embedded) = match config {
        Some(_) => (report.exit_code(), None),
        None => {
            report = without_meilisearch(report);
            let embedded = &defaults.embedded;
            // Opens (or builds, the first time) its local index of the
            // store's current artifacts, as a search would.
            if let Err(why) = embedded.refresh(args.store.as_deref()).await {
                report.problems.push(format!("embedded engine: {why}"));
            }
            let status = embedded.status(args.store.as_deref());
            let ready = status["ready"] == true;
            report.loaded = ready;
            report.stale = !ready || !report.store_readable;
            report.document_count = status["documents"].as_u64();
            let code = if !report.store_readable {
                STORE_UNREADABLE
            } else if !ready {
                EMBEDDED_NOT_READY
            } else {
                0
            };
            (code, Some(status))
        }
    };
    let problems: Vec<AgentText> = report
        .problems
        .iter()
        .map(|p| AgentText::field(p))
        .collect();
    if args.json {
        let mut value = serde_json::to_value(&report).unwrap_or(Value::Null);
        if let Some(object) = value.as_object_mut() {
            object.insert("problems".into(), json!(problems));
            let engine = match &embedded {
                Some(_) => defaults.embedded.name(),
                None => "meilisearch",
            };
            object.insert("engine".into(), json!(engine));
            if let Some(status) = embedded {
                object.insert("embedded".into(), AgentJson::clean(status).into());
            }
        }
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        let opt = |v: &Option<String>| AgentText::field(v.as_deref().unwrap_or("-"));
        let documents = report.document_count.map_or("-".into(), |c| c.to_string());
        match embedded {
            Some(_) => outln!(
                "health: engine=embedded configured=false ready={} store_readable={} stale={} artifact_commit={} documents={documents}",
                report.loaded,
                report.store_readable,
                report.stale,
                opt(&report.artifact_commit),
            ),
            None => outln!(
                "health: configured={} reachable={} loaded={} store_readable={} stale={} index={index} loaded_commit={} artifact_commit={} documents={documents}",
                report.configured,
                report.reachable,
                report.loaded,
                report.store_readable,
                report.stale,
                opt(&report.loaded_commit),
                opt(&report.artifact_commit),
            ),
        }
        for problem in &problems {
            eprintln!("health: {problem}");
        }
    }
    Ok(code)
}
