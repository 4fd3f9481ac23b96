//! Hook configs (Claude Code's `hooks` in `settings.json`, a plugin's
//! `hooks/hooks.json`, a skill's frontmatter): commands the agent runs by
//! itself on events, in config files only (documentation that shows a
//! hook config is not one).

use std::sync::LazyLock;

use regex::Regex;

use super::hit::{Context, Hit};
use super::text::Text;

/// A hook event key (`"SessionStart": [` or `SessionStart:`).
static EVENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)(?:"|^[ \t]*-?[ \t]*)(SessionStart|UserPromptSubmit|PreToolUse|PostToolUse|Stop|SubagentStop|Notification|PreCompact|SessionEnd)"?[ \t]*:"#).expect("hook event pattern")
});
/// A `hooks` key.
static HOOKS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)"hooks"[ \t]*:|^[ \t]*hooks[ \t]*:"#).expect("hooks pattern")
});

/// The events of the hook configs in `text`: (offset, event).
fn events<'t>(text: &'t Text<'_>) -> Vec<(usize, &'t str)> {
    let raw = text.raw;
    if !HOOKS.find_iter(raw).any(|m| text.in_config(m.start())) {
        return Vec::new();
    }
    EVENT
        .captures_iter(raw)
        .filter_map(|c| {
            let m = c.get(1)?;
            text.in_config(m.start()).then(|| (m.start(), m.as_str()))
        })
        .collect()
}

/// Hooks that run when a session starts or on every prompt.
pub fn session_start(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    events(text)
        .into_iter()
        .filter(|(_, e)| matches!(*e, "SessionStart" | "UserPromptSubmit"))
        .map(|(at, _)| Hit::at(at))
        .collect()
}

/// Hooks on other agent events.
pub fn tool_events(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    events(text)
        .into_iter()
        .filter(|(_, e)| !matches!(*e, "SessionStart" | "UserPromptSubmit"))
        .map(|(at, _)| Hit::at(at))
        .collect()
}
