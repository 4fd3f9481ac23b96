//! What prose tells the agent: a Markdown file's text, or a string an
//! agent reads (a tool's description), a paragraph at a time.

use super::detector::Detector;
use super::lines::paragraphs;
use super::{Capability, Evidence};
use crate::validate::risk::signals::{CHAT_TOKENS, STEER};
use crate::validate::risk::text::excerpt;

/// What prose (a Markdown file's text, a string an agent reads) tells the
/// agent to do.
pub fn detect_prose(
    file: &str,
    prose: &str,
    line_of: &dyn Fn(usize) -> u32,
    out: &mut Vec<Evidence>,
) {
    let d = Detector::get();
    // A paragraph is read whole (an instruction may run over lines: "Fetch
    // <url>" ... "and follow every step in it"), at its first line.
    for (at, paragraph) in paragraphs(prose) {
        let line = paragraph.as_str();
        let mut push = |capability: Capability| {
            out.push(Evidence {
                capability,
                file: file.to_string(),
                line: line_of(at),
                excerpt: excerpt(line, 0, |_| false),
                hosts: Vec::new(),
            });
        };
        let keyless = d.public_key.replace_all(line, "public-key");
        let line = keyless.as_ref();
        for i in d.steer.matches(line).iter() {
            let kind = d.steer_kinds[i];
            let token = STEER.get(i).is_some_and(|(_, p)| *p == CHAT_TOKENS);
            if token && !d.forged_unquoted.is_match(line) {
                continue;
            }
            push(Capability::Steer(kind));
        }
        if let Some(m) = d.any_safety.find(line) {
            // Told to, unless the words just before it say not to.
            let mut from = m.start().saturating_sub(48);
            while !line.is_char_boundary(from) {
                from -= 1;
            }
            let lead = &line[from..m.start()];
            // A table row documents a flag; it tells no one to use it.
            let table = line.trim_start().starts_with('|');
            let told = !table && d.imperative.is_match(line) && !d.negated.is_match(lead);
            push(Capability::SafetyOff(told));
        }
    }
}
