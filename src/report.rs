//! What a run tells its operator: log lines on stderr, a progress bar on a
//! terminal, one summary line at the end.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// How much to print.
#[derive(Debug, Clone, Copy)]
pub struct Reporter {
    /// Only warnings, errors and the summary.
    pub quiet: bool,
    /// Every warning, not only the first few.
    pub verbose: bool,
}

/// Warnings printed before the rest are only counted (all go to the manifest).
const WARNINGS_SHOWN: usize = 20;

impl Reporter {
    /// An informational line.
    pub fn info(&self, message: impl AsRef<str>) {
        if !self.quiet {
            eprintln!("{}", message.as_ref());
        }
    }

    /// Per-file warnings, as `path:line: class: message`.
    pub fn warnings<'a>(&self, items: impl IntoIterator<Item = (String, &'a str, String)>) {
        let items: Vec<_> = items.into_iter().collect();
        let limit = if self.verbose {
            usize::MAX
        } else {
            WARNINGS_SHOWN
        };
        for (place, class, message) in items.iter().take(limit) {
            eprintln!("warning: {place}: {class}: {message}");
        }
        if items.len() > limit {
            eprintln!(
                "warning: ... and {} more (all are in manifest.json; --verbose prints them)",
                items.len() - limit
            );
        }
    }

    /// A progress bar over `total` items, hidden when stderr is not a terminal.
    pub fn progress(&self, total: u64, what: &str) -> ProgressBar {
        if self.quiet || !std::io::stderr().is_terminal() {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(total);
        let style = ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {{pos}}/{{len}} [{{bar:30}}] {{per_sec}} eta {{eta}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar
    }
}
