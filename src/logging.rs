//! What a run tells its operator: log lines on stderr, a progress bar on a
//! terminal, one summary line at the end on stdout.
//!
//! `--log-format json` turns every line into one JSON object (`ts`, `level`,
//! `stage`, `message` and the line's own fields), for Hugging Face Jobs and
//! GitHub Actions; the summary is then a JSON object too, on stdout.

use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Map, Value};

/// How lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// Readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

static GLOBAL_FORMAT: std::sync::OnceLock<LogFormat> = std::sync::OnceLock::new();

/// Sets the process-wide log format (once, at start-up), for the few places
/// that log without a [`Reporter`] at hand.
pub fn set_global_format(format: LogFormat) {
    let _ = GLOBAL_FORMAT.set(format);
}

/// A reporter with the process-wide format.
pub fn global() -> Reporter {
    Reporter {
        format: GLOBAL_FORMAT.get().copied().unwrap_or_default(),
        ..Reporter::default()
    }
}

/// How much to print, and how.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reporter {
    /// Only warnings, errors and the summary.
    pub quiet: bool,
    /// Every warning, not only the first few.
    pub verbose: bool,
    /// Text or JSON lines.
    pub format: LogFormat,
    /// The source a line is about, when a run builds many: text lines are
    /// prefixed with `[<id>] `, JSON lines carry `"source"`.
    pub source: Option<&'static str>,
}

/// Warnings printed before the rest are only counted (all go to the manifest).
const WARNINGS_SHOWN: usize = 20;

impl Reporter {
    /// This reporter, with its lines naming `source`. The id is kept for
    /// the rest of the process (a run names a handful of sources).
    pub fn for_source(&self, source: &str) -> Reporter {
        Reporter {
            source: Some(Box::leak(source.to_string().into_boxed_str())),
            ..*self
        }
    }

    /// An informational line of `stage`.
    pub fn info(&self, stage: &str, message: impl AsRef<str>) {
        if !self.quiet {
            self.line("info", stage, message.as_ref(), Map::new());
        }
    }

    /// A warning of `stage` (always shown).
    pub fn warn(&self, stage: &str, message: impl AsRef<str>) {
        self.line("warn", stage, message.as_ref(), Map::new());
    }

    /// An error (always shown); `code` is the exit code that follows.
    pub fn error(&self, message: impl AsRef<str>, code: u8) {
        let mut fields = Map::new();
        fields.insert("exit_code".into(), json!(code));
        self.line("error", "error", message.as_ref(), fields);
    }

    /// A skipped file.
    pub fn skipped(&self, path: &str, class: &str, reason: &str) {
        let fields = object(json!({"path": path, "class": class}));
        match self.format {
            LogFormat::Text => eprintln!("{}skipped: {path}: {class}: {reason}", self.scope()),
            LogFormat::Json => self.line("warn", "validate", reason, fields),
        }
    }

    /// Per-file warnings, as `path:line: class: message`: the examples the
    /// build kept (a few per class), the first 20 of them unless verbose,
    /// then how many more there are (`total` counts them all; every one is
    /// in the artifact's findings.ndjson).
    pub fn findings<'a>(
        &self,
        examples: impl IntoIterator<Item = (&'a str, Option<usize>, &'a str, &'a str)>,
        total: u64,
    ) {
        let limit = if self.verbose {
            usize::MAX
        } else {
            WARNINGS_SHOWN
        };
        let mut shown = 0u64;
        for (path, line, class, message) in examples.into_iter().take(limit) {
            shown += 1;
            match self.format {
                LogFormat::Text => {
                    let place = line.map_or(path.to_string(), |l| format!("{path}:{l}"));
                    eprintln!("{}warning: {place}: {class}: {message}", self.scope());
                }
                LogFormat::Json => {
                    let fields = object(json!({"path": path, "line": line, "class": class}));
                    self.line("warn", "validate", message, fields);
                }
            }
        }
        if total > shown {
            self.warn(
                "validate",
                format!(
                    "... and {} more warnings (counts per class are in manifest.json, every one in findings.ndjson)",
                    total - shown
                ),
            );
        }
    }

    /// The summary every run ends with: `text` as it is, or `fields` as JSON, on stdout.
    pub fn summary(&self, text: &str, fields: Value) {
        match self.format {
            // A closed stdout (`| head`) ends the output, not the run.
            LogFormat::Text => {
                let _ = writeln!(std::io::stdout(), "{text}");
            }
            LogFormat::Json => {
                let mut line = object(json!({"ts": now(), "level": "info", "stage": "summary"}));
                line.extend(object(fields));
                let _ = writeln!(std::io::stdout(), "{}", Value::Object(line));
            }
        }
    }

    /// A progress bar over `total` items, hidden when stderr is not a
    /// terminal, when quiet, or with JSON logs.
    pub fn progress(&self, total: u64, what: &str) -> ProgressBar {
        if self.quiet || self.format == LogFormat::Json || !std::io::stderr().is_terminal() {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(total);
        let style = ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {{pos}}/{{len}} [{{bar:30}}] {{per_sec}} eta {{eta}} {{msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar
    }

    /// `[<source>] ` before a text line about one source; empty otherwise.
    fn scope(&self) -> String {
        self.source.map(|s| format!("[{s}] ")).unwrap_or_default()
    }

    fn line(&self, level: &str, stage: &str, message: &str, fields: Map<String, Value>) {
        match self.format {
            LogFormat::Text => {
                let scope = self.scope();
                match level {
                    "info" => eprintln!("{scope}{message}"),
                    "warn" => eprintln!("{scope}warning: {message}"),
                    _ => eprintln!("{scope}error: {message}"),
                }
            }
            LogFormat::Json => {
                let mut line = object(
                    json!({"ts": now(), "level": level, "stage": stage, "message": message}),
                );
                if let Some(source) = self.source {
                    line.insert("source".into(), json!(source));
                }
                line.extend(fields);
                eprintln!("{}", Value::Object(line));
            }
        }
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}
