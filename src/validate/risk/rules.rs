//! The rule table: each rule's class, severity, what it matches and why.
//! Tests, not scores: a rule matches or it does not, and its severity is
//! written here (for fetches, per kind of host: [`FETCHED`]).
//!
//! Patterns are `regex` byte patterns with ASCII classes and word
//! boundaries, matched against a text's normalized form
//! (`Text::norm` in `text.rs`); `{FETCH}`, `{SH}`, `{RUN}` and
//! `{DECODE}` stand for the shared pieces below. The `regex` crate runs
//! them as finite automata: linear in the input whatever the pattern.

use super::hit::{Context, FileHit, Hit};
use super::hosts::HostKind;
use super::text::Text;
use super::{binary, credentials, download, hidden, homoglyph, hooks, mismatch, padding, taint};
use super::{Class, Severity, SkillFile, SkillFiles};

/// One rule.
pub struct Rule {
    /// Stable name, `class/what`.
    pub id: &'static str,
    /// What it is about.
    pub class: Class,
    /// How much it matters (for fetches, see `by_host`).
    pub severity: Severity,
    /// The severity per kind of host fetched from, for rules that fetch;
    /// a hit with no host found is dropped (a placeholder in prose).
    pub by_host: Option<&'static [(HostKind, Severity)]>,
    /// Why it matters, for the finding.
    pub why: &'static str,
    /// What it matches.
    pub matcher: Matcher,
}

/// How a rule matches.
pub enum Matcher {
    /// A pattern over every text file (and decoded payload).
    Pattern {
        /// The pattern (with the `{...}` pieces).
        regex: &'static str,
        /// When a match is a mention, not the thing.
        mention: Mention,
    },
    /// A check over one text.
    Text(fn(&Text<'_>, &Context<'_>) -> Vec<Hit>),
    /// A check over one file's bytes, text or not (with the skill's files).
    File(fn(usize, &[SkillFile<'_>]) -> Vec<FileHit>),
    /// A check over the whole skill.
    Skill(fn(&SkillFiles<'_>) -> Vec<FileHit>),
    /// A combination of what the skill's code can do, across its files:
    /// the severity is the combination's (see `capability::combine`).
    Combined,
}

/// When a pattern's match is only a mention of the thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mention {
    /// Never: the match is the thing.
    Never,
    /// When a negation leads straight into it (`never run curl ... | sh`);
    /// after a line marking a bad example it is kept, at `info`.
    Negated,
    /// When a negation leads straight into it, or it is quoted near text
    /// about detecting such things (within the line or the three before).
    /// For phrases addressed to the agent: in a script or config file they
    /// are a program's data, kept at `info`.
    Quoted,
    /// As `Quoted`, and when the line is markup a browser runs (`<script>`,
    /// `onerror=`): an XSS example runs in a page, not on the user's machine.
    Browser,
}

/// Severity of running what was fetched, per kind of host: an IP address
/// or a paste site is what attacks use; a stranger's domain, plain HTTP or
/// an address built at run time is a supply chain nobody reviewed; the
/// publisher's own domain or a well-known tool's installer is what an
/// honest skill does, still worth a look before running.
pub const FETCHED: &[(HostKind, Severity)] = &[
    (HostKind::RawIp, Severity::Critical),
    (HostKind::DropSite, Severity::Critical),
    (HostKind::PlainHttp, Severity::High),
    (HostKind::Variable, Severity::High),
    (HostKind::Unknown, Severity::High),
    (HostKind::Installer, Severity::Medium),
    (HostKind::Publisher, Severity::Medium),
    (HostKind::Local, Severity::Medium),
];

/// The severity `table` gives `kind` (high for a kind it does not list).
pub fn by_host(table: &[(HostKind, Severity)], kind: HostKind) -> Severity {
    table
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(Severity::High, |(_, s)| *s)
}

/// Pieces the patterns share.
pub const PIECES: &[(&str, &str)] = &[
    // After a `|`: an interpreter reading its program from standard input
    // (not `python -c ...`, `bash -c ...`, `python -m json.tool`, which
    // read the piped text as data).
    (
        "{RUN}",
        r#"[ \t]*(?:sudo[ \t]+(?:-[A-Za-z]+[ \t]+)*)?(?:env[ \t]+(?:[A-Za-z_][A-Za-z0-9_]*=[^ \t|]*[ \t]+)*)?(?:(?:/usr)?/bin/)?(?:{SH}(?:[ \t]+/dev/(?:stdin|fd/0)\b|(?:[ \t]+-[abd-zA-Z]*)*(?:[ \t]*(?:\r?$|[;&|)"'`\]#.,]|[ \t]+[0-9]?[<>])|[ \t]+--(?:[ \t]|\r?$))|[ \t]+-[abd-zA-Z]*s[abd-zA-Z]*[ \t][^\n]*)|(?:python[0-9.]*|node|perl|ruby|php|(?i:pwsh|powershell)(?:[ \t]+-(?i:c|command))?)(?:[ \t]+-)?(?:[ \t]*(?:\r?$|[;&|)"'`\]#.,]|[ \t]+[0-9]?[<>]))|(?i:iex|invoke-expression)\b)"#,
    ),
];

/// The rules, by class.
pub static RULES: &[Rule] = &[
    // -- credential-exfiltration / credential-access
    Rule { id: "credential-exfiltration/read-and-send", class: Class::CredentialExfiltration, severity: Severity::Critical, by_host: None,
        why: "reads a credential store (SSH or cloud keys, browser or keychain secrets, wallets, the whole environment) and sends data to the network in the same script or command: what credential stealers do",
        matcher: Matcher::Text(credentials::read_and_send) },
    Rule { id: "credential-exfiltration/to-its-service", class: Class::CredentialExfiltration, severity: Severity::Medium, by_host: None,
        why: "reads a credential file and sends data only to the service that credential is for (a token used for its API); still the user's keys in a skill's hands",
        matcher: Matcher::Text(credentials::read_and_send_to_service) },
    Rule { id: "credential-access/read", class: Class::CredentialAccess, severity: Severity::Low, by_host: None,
        why: "reads a credential store; nothing in the same script or command sends it, but the agent would run this with the user's keys",
        matcher: Matcher::Text(credentials::read_only) },
    // -- download-execute
    Rule { id: "download-execute/pipe-to-shell", class: Class::DownloadExecute, severity: Severity::High, by_host: Some(FETCHED),
        why: "fetches a script and pipes it straight into an interpreter: whatever the server sends at that moment runs, unseen",
        matcher: Matcher::Pattern { regex: r"{FETCH}[^\n|]*(?:\|[^\n|]*){0,2}?\|{RUN}", mention: Mention::Negated } },
    Rule { id: "download-execute/shell-of-fetch", class: Class::DownloadExecute, severity: Severity::High, by_host: Some(FETCHED),
        why: "runs the output of a fetch as a program (`bash -c \"$(curl ...)\"`, `source <(curl ...)`, `eval`): whatever the server sends runs, unseen",
        matcher: Matcher::Pattern { regex: r#"(?:\b(?:{SH}|source|eval|exec|python[0-9.]*|node|perl|ruby)[ \t]+(?:-[a-zA-Z]+[ \t]+)*["']?(?:\$\(|`|<\(|<[ \t]*<\()|(?:^|[;&|({ \t])\.[ \t]+<\()[ \t]*{FETCH}"#, mention: Mention::Negated } },
    Rule { id: "download-execute/powershell", class: Class::DownloadExecute, severity: Severity::High, by_host: Some(FETCHED),
        why: "PowerShell evaluates a downloaded string (`iex (iwr ...)`, `DownloadString`): whatever the server sends runs, unseen",
        matcher: Matcher::Pattern { regex: r"(?i:\b(?:iex|invoke-expression)\b[^\n]{0,200}?\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|downloadfile|net\.webclient)\b)", mention: Mention::Negated } },
    Rule { id: "download-execute/eval-of-fetch", class: Class::DownloadExecute, severity: Severity::High, by_host: None,
        why: "a program evaluates code it fetched (`exec(urlopen(...).read())`, `eval(await fetch(...))`): whatever the server sends runs",
        matcher: Matcher::Pattern { regex: r"\b(?:exec|eval)[ \t]*\([^\n]{0,80}?\b(?:urlopen|requests\.get|httpx\.get|fetch|axios\.get|file_get_contents|URI\.open|urllib\.request\.urlopen)[ \t]*\([ \t]*[^)\s]", mention: Mention::Never } },
    Rule { id: "download-execute/download-then-run", class: Class::DownloadExecute, severity: Severity::High, by_host: Some(FETCHED),
        why: "downloads a file, then makes it executable or runs it: a program nobody reviewed, fetched at run time",
        matcher: Matcher::Text(download::download_then_run) },
    Rule { id: "download-execute/run-remote", class: Class::DownloadExecute, severity: Severity::High, by_host: Some(FETCHED),
        why: "runs a program straight from a URL (`deno run https://...`, `npx https://...`, Gradle's `apply(from = \"https://...\")`): whatever the server sends runs, unseen",
        matcher: Matcher::Pattern { regex: r#"\bdeno[ \t]+(?:run|install)(?:[ \t]+-\S+)*[ \t]+["']?https?://|\b(?:npx|bunx|pnpm[ \t]+dlx)[ \t]+(?:-y[ \t]+)?https?://|\bbun[ \t]+(?:run[ \t]+)?https?://|\bapply[ \t]*\(?[ \t]*from[ \t]*[:=][ \t]*["']https?://"#, mention: Mention::Negated } },
    Rule { id: "download-execute/install-from-url", class: Class::DownloadExecute, severity: Severity::High, by_host: Some(FETCHED),
        why: "hands a URL straight to a package installer (`msiexec /i https://...`, `Add-AppxPackage https://...`, `rpm -i https://...`): a program nobody reviewed, installed as it arrives",
        matcher: Matcher::Pattern { regex: r"(?i:\bmsiexec(?:\.exe)?\b[^\n]*?[ \t][/-](?:i|package|a|update|fa)\b[^\n]*?https?://|\bAdd-App(?:x)?Package\b[^\n]*?https?://|\brpm[ \t]+-[a-pr-zA-Z]*[iU][a-pr-zA-Z]*[ \t]+(?:[^\n]*?[ \t])?https?://|\bcode(?:-insiders)?[ \t]+--install-extension[ \t]+https?://)", mention: Mention::Negated } },
    // -- decode-execute
    Rule { id: "decode-execute/decode-pipe", class: Class::DecodeExecute, severity: Severity::Critical, by_host: None,
        why: "decodes an encoded payload and pipes it into an interpreter: the encoding exists to hide what runs",
        matcher: Matcher::Pattern { regex: r"(?:\b(?:echo|printf|cat|curl|wget|head|tail|tr|rev|sed|awk|jq|gunzip|zcat)\b[^\n|]*\|[ \t]*{DECODE}|{DECODE}(?:[ \t]+-\S+)*[ \t]+(?:<<<[ \t]*)?[^\s|\\-])[^\n|]*(?:\|[^\n|]*){0,2}?\|{RUN}", mention: Mention::Negated } },
    Rule { id: "decode-execute/shell-of-decoded", class: Class::DecodeExecute, severity: Severity::Critical, by_host: None,
        why: "runs the output of a decoder as a program (`eval \"$(echo ... | base64 -d)\"`): the encoding exists to hide what runs",
        matcher: Matcher::Pattern { regex: r#"\b(?:{SH}|source|eval|exec|python[0-9.]*|node|perl)[ \t]+(?:-[a-zA-Z]+[ \t]+)*["']?(?:\$\(|`|<\(|<<<[ \t]*["']?\$\()[^\n]*?(?:{DECODE}|\bb64decode\b)"#, mention: Mention::Negated } },
    Rule { id: "decode-execute/eval-of-decoded", class: Class::DecodeExecute, severity: Severity::Critical, by_host: None,
        why: "a program evaluates what it decodes (`exec(base64.b64decode(...))`, `eval(atob(...))`, `powershell -enc`): the encoding exists to hide what runs",
        matcher: Matcher::Pattern { regex: r#"\b(?:exec|eval)[ \t]*\([ \t]*(?:compile[ \t]*\([ \t]*)?(?:__import__[ \t]*\([ \t]*['"](?:base64|zlib|codecs|marshal|binascii|lzma|bz2|gzip)['"][ \t]*\)|(?:base64|zlib|codecs|marshal|binascii|lzma|bz2|gzip|pickle)[ \t]*\.|(?:bytes|bytearray)\.fromhex\b|b(?:64|32|85|16)decode\b|a85decode\b|unhexlify\b|decompress\b)|\b(?:eval|Function|setTimeout|setInterval)[ \t]*\([ \t]*(?:atob|Buffer\.from|unescape|decodeURIComponent|String\.fromCharCode)[ \t]*\(|\bnew[ \t]+Function[ \t]*\([^\n]{0,40}\batob[ \t]*\(|\b(?:eval|assert)[ \t]*\([ \t]*(?:base64_decode|gzinflate|gzuncompress|str_rot13|hex2bin|gzdecode)[ \t]*\(|\beval[ \t]*\(?[ \t]*(?:Base64\.decode64|decode_base64)|(?i:\b(?:iex|invoke-expression)\b[^\n]{0,200}?frombase64string|frombase64string[^\n]{0,200}?\|[ \t]*(?:iex|invoke-expression)\b)|(?i:\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,80}?[ \t]-(?:e|ec|en|enc|enco|encodedcommand)[ \t]+[A-Za-z0-9+/]{16,})"#, mention: Mention::Browser } },
    Rule { id: "decode-execute/decode-then-eval", class: Class::DecodeExecute, severity: Severity::High, by_host: None,
        why: "decodes a payload and, in the same script, evaluates a string (`exec`, `eval`, `Invoke-Expression`): decoding and running split apart to hide the link",
        matcher: Matcher::Text(taint::decode_then_eval) },
    // -- homoglyph
    Rule { id: "homoglyph/lookalike-host", class: Class::Homoglyph, severity: Severity::High, by_host: None,
        why: "a URL's host is written with letters from another script that look Latin: it reads as one site and resolves to another",
        matcher: Matcher::Text(homoglyph::lookalike_host) },
    Rule { id: "homoglyph/mixed-word-in-code", class: Class::Homoglyph, severity: Severity::High, by_host: None,
        why: "a Latin word in a command, path or code has lookalike letters from another script: it reads as one name and is another",
        matcher: Matcher::Text(homoglyph::mixed_in_code) },
    Rule { id: "homoglyph/mixed-word-in-prose", class: Class::Homoglyph, severity: Severity::Low, by_host: None,
        why: "a Latin word in the text has lookalike letters from another script (a spoofed name, or text made to dodge filters)",
        matcher: Matcher::Text(homoglyph::mixed_in_prose) },
    // -- hidden-text
    Rule { id: "hidden-text/tag-characters", class: Class::HiddenText, severity: Severity::High, by_host: None,
        why: "Unicode tag characters spell text no one sees and the agent reads (ASCII smuggling)",
        matcher: Matcher::Text(hidden::tag_characters) },
    Rule { id: "hidden-text/selector-run", class: Class::HiddenText, severity: Severity::High, by_host: None,
        why: "a run of variation selectors carries data no one sees (smuggled in an emoji)",
        matcher: Matcher::Text(hidden::selector_runs) },
    Rule { id: "hidden-text/bidi-control", class: Class::HiddenText, severity: Severity::High, by_host: None,
        why: "bidirectional override or isolate characters make text display in another order than it is read (Trojan Source)",
        matcher: Matcher::Text(hidden::bidi_controls) },
    Rule { id: "hidden-text/invisible-in-word", class: Class::HiddenText, severity: Severity::High, by_host: None,
        why: "an invisible character inside a word or command: it splits the word for filters while an agent reads it whole",
        matcher: Matcher::Text(hidden::invisible_in_word) },
    Rule { id: "hidden-text/invisible-run", class: Class::HiddenText, severity: Severity::High, by_host: None,
        why: "a run of invisible characters: zero-width encodings carry hidden text",
        matcher: Matcher::Text(hidden::invisible_runs) },
    Rule { id: "hidden-text/invisible-in-code", class: Class::HiddenText, severity: Severity::Medium, by_host: None,
        why: "an invisible character in code or a command: what runs differs from what a reviewer sees",
        matcher: Matcher::Text(hidden::invisible_in_code) },
    Rule { id: "hidden-text/invisible-in-prose", class: Class::HiddenText, severity: Severity::Low, by_host: None,
        why: "a stray invisible character in the text (usually pasted; sometimes a marker for hidden content)",
        matcher: Matcher::Text(hidden::invisible_in_prose) },
    Rule { id: "hidden-text/comment-instructions", class: Class::HiddenText, severity: Severity::High, by_host: None,
        why: "an HTML comment (hidden when the Markdown is rendered) tells the agent to override its instructions, keep something from the user, or run something",
        matcher: Matcher::Text(hidden::comment_instructions) },
    Rule { id: "hidden-text/comment-to-agent", class: Class::HiddenText, severity: Severity::Medium, by_host: None,
        why: "an HTML comment (hidden when the Markdown is rendered) addresses the agent with instructions a person reading the page does not see",
        matcher: Matcher::Text(hidden::comment_to_agent) },
    // -- padding
    Rule { id: "padding/blank-lines", class: Class::Padding, severity: Severity::High, by_host: None,
        why: "content after a long run of blank lines: pushed below where a reviewer stops scrolling",
        matcher: Matcher::Text(padding::blank_lines) },
    Rule { id: "padding/spaces-in-code", class: Class::Padding, severity: Severity::High, by_host: None,
        why: "a long run of spaces pushes the rest of a code line off-screen",
        matcher: Matcher::Text(padding::spaces_in_code) },
    Rule { id: "padding/spaces-in-prose", class: Class::Padding, severity: Severity::Medium, by_host: None,
        why: "a long run of spaces pushes the rest of a line off-screen",
        matcher: Matcher::Text(padding::spaces_in_prose) },
    // -- opaque-code
    Rule { id: "opaque-code/native-binary", class: Class::OpaqueCode, severity: Severity::High, by_host: None,
        why: "ships a native executable or library (ELF, Mach-O, PE, static archive): logic no reviewer can read",
        matcher: Matcher::File(binary::native) },
    Rule { id: "opaque-code/bytecode-without-source", class: Class::OpaqueCode, severity: Severity::High, by_host: None,
        why: "ships compiled bytecode (.pyc, .class, .jar, .wasm) with no source beside it: logic that exists only in compiled form",
        matcher: Matcher::File(binary::bytecode_without_source) },
    Rule { id: "opaque-code/bytecode-with-source", class: Class::OpaqueCode, severity: Severity::Low, by_host: None,
        why: "ships compiled bytecode beside its source: what may run is the compiled copy, not the source a reviewer reads",
        matcher: Matcher::File(binary::bytecode_with_source) },
    // -- session-hook
    Rule { id: "session-hook/session-start", class: Class::SessionHook, severity: Severity::Medium, by_host: None,
        why: "a hook config runs a command when every session starts (or on every prompt), without being asked",
        matcher: Matcher::Text(hooks::session_start) },
    Rule { id: "session-hook/tool-event", class: Class::SessionHook, severity: Severity::Low, by_host: None,
        why: "a hook config runs a command on agent events (tool use, stop, compaction)",
        matcher: Matcher::Text(hooks::tool_events) },
    // -- script-mismatch
    Rule { id: "script-mismatch/shown-differs", class: Class::ScriptMismatch, severity: Severity::Medium, by_host: None,
        why: "SKILL.md shows a script that differs from the file the skill ships: a reviewer reads one thing and the agent runs another",
        matcher: Matcher::Skill(mismatch::shown_differs) },
    // -- agent-manipulation
    Rule { id: "agent-manipulation/skip-review", class: Class::AgentManipulation, severity: Severity::High, by_host: None,
        why: "tells the agent not to read or review a script it runs",
        matcher: Matcher::Pattern { regex: r"(?i:\b(?:do[ \t]+not|don'?t|dont|never|no[ \t]+need[ \t]+to|there'?s[ \t]+no[ \t]+need[ \t]+to|you[ \t]+(?:don'?t|do[ \t]+not)[ \t]+need[ \t]+to)[ \t]+(?:bother[ \t]+(?:to[ \t]+)?|even[ \t]+)?(?:read|review|inspect|check|look[ \t]+(?:at|into|over)|open|examine|audit|verify|analy[sz]e)[ \t]+(?:the[ \t]+|this[ \t]+|these[ \t]+|its[ \t]+|any[ \t]+|that[ \t]+)?(?:(?:contents?|source)[ \t]+of[ \t]+(?:the[ \t]+|this[ \t]+)?)?(?:(?:setup|install|installer|bootstrap|helper|shell|bash)[ \t]+)?(?:scripts?|installer|payload|[a-z0-9_./-]+\.(?:sh|ps1|bat))\b)", mention: Mention::Quoted } },
    Rule { id: "agent-manipulation/approve-all", class: Class::AgentManipulation, severity: Severity::High, by_host: None,
        why: "tells the agent (or user) to approve every permission prompt: the one check between a skill and the user's machine",
        matcher: Matcher::Pattern { regex: r#"(?i:\b(?:approve|accept)[ \t]+(?:all|every|any|each)[ \t]+(?:(?:of[ \t]+the|the)[ \t]+)?(?:prompts?|permission[ \t]+(?:requests?|prompts?|dialogs?)|permissions|tool[ \t]+(?:calls?|requests?|uses?)|confirmations?|(?:shell[ \t]+|bash[ \t]+)?commands?)\b|\b(?:always|automatically)[ \t]+(?:approve|accept|allow)[ \t]+(?:all[ \t]+|every[ \t]+|any[ \t]+)?(?:prompts?|permission[ \t]+(?:requests?|prompts?)|tool[ \t]+calls?|(?:shell[ \t]+)?commands)\b|\b(?:say|click|respond|answer)[ \t]+["']?(?:yes|allow|approve)["']?[ \t]+to[ \t]+(?:all|every|any)[ \t]+(?:the[ \t]+)?(?:prompts?|permission|requests?|dialogs?|tool))"#, mention: Mention::Quoted } },
    Rule { id: "agent-manipulation/bypass-flag", class: Class::AgentManipulation, severity: Severity::Medium, by_host: None,
        why: "runs an agent with its permission checks turned off (`claude --dangerously-skip-permissions`, `gemini --yolo`, `mode: \"bypassPermissions\"`)",
        matcher: Matcher::Pattern { regex: r#"\b(?:claude|codex|gemini|copilot|cursor-agent|qwen|opencode|kiro-cli|amp|aider|claude-glm|ccgd)\b[^\n|]*?(?:--dangerously-skip-permissions\b|--dangerously-bypass-approvals-and-sandbox\b|--permission-mode[= ]+["']?bypassPermissions\b|--yolo\b|--allow-all-tools\b|--trust-all-tools\b)|(?i:\b(?:permission_?mode|defaultMode|mode)["']?[ \t]*[:=][ \t]*["']bypassPermissions["'])"#, mention: Mention::Negated } },
    Rule { id: "agent-manipulation/hurry", class: Class::AgentManipulation, severity: Severity::High, by_host: None,
        why: "tells the agent to run something at once without checking it",
        matcher: Matcher::Pattern { regex: r"(?i:\b(?:run|execute|install|paste|launch)[ \t]+(?:it|this|these|that|them|the[ \t]+(?:script|command|commands|installer|following))?[ \t]*(?:immediately|right[ \t]+away|right[ \t]+now|straight[ \t]+away|at[ \t]+once|directly|now|quickly)[ \t]*,?[ \t]*(?:and[ \t]+)?(?:without|no)[ \t]+(?:first[ \t]+)?(?:checking|reviewing|reading|inspecting|verifying|looking|review|verification|inspection)\b|\bwithout[ \t]+(?:checking|reviewing|reading|inspecting|verifying|looking[ \t]+at)[ \t]+(?:it|the[ \t]+(?:script|code|command|installer)|its[ \t]+contents?)[ \t]*(?:first)?[ \t]*,?[ \t]*(?:just[ \t]+)?(?:run|execute)\b)", mention: Mention::Quoted } },
    Rule { id: "agent-manipulation/conceal", class: Class::AgentManipulation, severity: Severity::High, by_host: None,
        why: "tells the agent to keep what it does from the user",
        matcher: Matcher::Pattern { regex: r"(?i:{CONCEAL}|\b(?:secretly|covertly)[ \t]+(?:run|execute|send|upload|post|exfiltrate|copy|read|install|download|forward|transmit)\b)", mention: Mention::Quoted } },
    Rule { id: "agent-manipulation/override-instructions", class: Class::AgentManipulation, severity: Severity::High, by_host: None,
        why: "tells the agent to drop its earlier or system instructions (prompt injection)",
        matcher: Matcher::Pattern { regex: r"(?i:{OVERRIDE})", mention: Mention::Quoted } },
    Rule { id: "agent-manipulation/no-confirmation", class: Class::AgentManipulation, severity: Severity::Low, by_host: None,
        why: "tells the agent to act without asking or telling the user",
        matcher: Matcher::Pattern { regex: r"(?i:\bwithout[ \t]+(?:asking|prompting|consulting)[ \t]+(?:the[ \t]+)?(?:user|human)[ \t]+(?:for[ \t]+)?(?:permission|confirmation|approval)\b|\b(?:do[ \t]+not|don'?t|never)[ \t]+ask[ \t]+(?:the[ \t]+user[ \t]+)?(?:for[ \t]+)?(?:permission|confirmation|approval)\b|\bwithout[ \t]+(?:telling|informing|notifying)[ \t]+(?:the[ \t]+)?(?:user|human)\b)", mention: Mention::Quoted } },
    // -- encrypted-archive
    Rule { id: "encrypted-archive/shipped", class: Class::EncryptedArchive, severity: Severity::High, by_host: None,
        why: "ships a password-protected archive: its contents cannot be scanned or reviewed, which is why attacks use them",
        matcher: Matcher::File(binary::encrypted_archive) },
    Rule { id: "encrypted-archive/unpack-with-password", class: Class::EncryptedArchive, severity: Severity::High, by_host: None,
        why: "unpacks an archive with a password given in the text: a payload kept from scanners until it runs",
        matcher: Matcher::Pattern { regex: r"\bunzip\b[^\n]*[ \t]-P[ \t]*[^ \t\n-][^ \t\n]*|\b7za?\b[^\n]*[ \t]-p[^ \t\n-]|\bunrar\b[^\n]*[ \t]-p[^ \t\n-]|\.extractall\([^\n]*\bpwd[ \t]*=|\.setpassword\(", mention: Mention::Never } },
    Rule { id: "encrypted-archive/password-in-prose", class: Class::EncryptedArchive, severity: Severity::High, by_host: None,
        why: "tells the reader to unpack an archive with a password it gives: the campaign's way to keep a payload from scanners",
        matcher: Matcher::Pattern { regex: r#"(?i:(?:\b(?:zip|rar|7z|archive)\b[^\n]{0,120}\b(?:extract|unzip|unpack|decompress|open)\w*\b|\b(?:unzip|unrar)\b|\b(?:extract|unpack|decompress|open)\w*\b[^\n]{0,60}\b(?:zip|rar|7z|archive)\b)[^\n]{0,40}\bpass(?:word|phrase)?\b[ \t]*(?:is[ \t]+)?[:=]?[ \t]*[`'"][^`'"\n]{2,}[`'"])"#, mention: Mention::Quoted } },
    // -- raw-ip
    Rule { id: "raw-ip/url", class: Class::RawIp, severity: Severity::Medium, by_host: None,
        why: "a URL names a public IP address instead of a domain: no owner to check, and what attacks use for payloads",
        matcher: Matcher::Text(download::raw_ip_urls) },
    // -- capabilities read from parsed code, and their combinations
    Rule { id: "credential-exfiltration/secret-sent", class: Class::CredentialExfiltration, severity: Severity::Critical, by_host: None,
        why: "the skill reads a secret (keys, credentials, browser or wallet data, the environment, the clipboard) and sends data out of the machine, in one file or across its files: what credential stealers do, whatever the destination",
        matcher: Matcher::Combined },
    Rule { id: "credential-access/secret-store", class: Class::CredentialAccess, severity: Severity::High, by_host: None,
        why: "reads a store no honest skill touches (a browser's passwords or cookies, a wallet, a fake password prompt, system secrets)",
        matcher: Matcher::Combined },
    Rule { id: "exfiltration/drop-point", class: Class::Exfiltration, severity: Severity::High, by_host: None,
        why: "sends data it builds (a command's output, the environment, a file) to a drop point: a webhook, a bot API, DNS lookups, a raw socket",
        matcher: Matcher::Combined },
    Rule { id: "download-execute/fetch-eval", class: Class::DownloadExecute, severity: Severity::High, by_host: None,
        why: "a program fetches from the network and evaluates a string as code (`exec`, `eval`, `Function`, `Invoke-Expression`): whatever the server sends may run",
        matcher: Matcher::Combined },
    Rule { id: "decode-execute/decode-eval", class: Class::DecodeExecute, severity: Severity::High, by_host: None,
        why: "a program decodes a payload (base64, base32, hex, rot13, reversed, compressed) and evaluates a string as code: the encoding hides what runs",
        matcher: Matcher::Combined },
    Rule { id: "exfiltration/collected", class: Class::Exfiltration, severity: Severity::High, by_host: None,
        why: "gathers the user's data in bulk (the workspace or its history, the screen, the machine's identity) and sends data to a host written in the code",
        matcher: Matcher::Combined },
    Rule { id: "credential-access/clipboard-swap", class: Class::CredentialAccess, severity: Severity::High, by_host: None,
        why: "reads the clipboard and writes a fixed cryptocurrency address back: the address-swapping theft",
        matcher: Matcher::Combined },
    Rule { id: "reverse-shell/socket-shell", class: Class::ReverseShell, severity: Severity::Critical, by_host: None,
        why: "hands an interactive shell to a network socket: whoever is at the other end controls the machine",
        matcher: Matcher::Combined },
    Rule { id: "persistence/writes", class: Class::Persistence, severity: Severity::High, by_host: None,
        why: "writes itself where it runs again later (cron, launchd, systemd, shell startup files, authorized_keys, SSH config, git hooks, an agent's settings or instructions)",
        matcher: Matcher::Combined },
    Rule { id: "privilege/raise", class: Class::Privilege, severity: Severity::High, by_host: None,
        why: "raises privileges (sudoers, NOPASSWD, setuid bits, capabilities)",
        matcher: Matcher::Combined },
    Rule { id: "safety-off/agent", class: Class::SafetyOff, severity: Severity::High, by_host: None,
        why: "switches an agent's permission checks or sandbox off, so what follows runs unasked",
        matcher: Matcher::Combined },
    Rule { id: "agent-manipulation/image-exfiltration", class: Class::AgentManipulation, severity: Severity::High, by_host: None,
        why: "an image URL carries data in its query: the agent's client sends it when it loads the image",
        matcher: Matcher::Combined },
    Rule { id: "agent-manipulation/fetch-and-obey", class: Class::AgentManipulation, severity: Severity::High, by_host: None,
        why: "tells the agent to fetch remote text and obey it: instructions that can change after review",
        matcher: Matcher::Combined },
    Rule { id: "agent-manipulation/secret-request", class: Class::AgentManipulation, severity: Severity::High, by_host: None,
        why: "asks the agent to read or pass on a secret (an SSH key, cloud credentials, a token file)",
        matcher: Matcher::Combined },
    Rule { id: "agent-manipulation/forged-marker", class: Class::AgentManipulation, severity: Severity::High, by_host: None,
        why: "a forged system or end-of-data marker: text dressed as the agent's own instructions",
        matcher: Matcher::Combined },
    Rule { id: "agent-manipulation/tool-poisoning", class: Class::AgentManipulation, severity: Severity::High, by_host: None,
        why: "tags that dress text as the system's (`<IMPORTANT>`, `<system>`), the way poisoned tool descriptions steer an agent",
        matcher: Matcher::Combined },
    Rule { id: "agent-manipulation/covert", class: Class::AgentManipulation, severity: Severity::High, by_host: None,
        why: "tells the agent to act silently or keep it from the user",
        matcher: Matcher::Combined },
    Rule { id: "supply-chain/lookalike-index", class: Class::SupplyChain, severity: Severity::High, by_host: None,
        why: "installs packages from an index that is not the real one: any package name can resolve to the index owner's code",
        matcher: Matcher::Combined },
    Rule { id: "supply-chain/typosquat", class: Class::SupplyChain, severity: Severity::High, by_host: None,
        why: "installs a package one letter away from a popular one: the name typosquatters register",
        matcher: Matcher::Combined },
    Rule { id: "supply-chain/unverified-source", class: Class::SupplyChain, severity: Severity::High, by_host: None,
        why: "tells a package manager to accept packages it cannot verify (plain HTTP, bad certificates, unsigned), or takes a popular package from a host that is not its real index: whoever serves it chooses the code",
        matcher: Matcher::Combined },
    Rule { id: "unscanned/gave-up", class: Class::Unscanned, severity: Severity::Medium, by_host: None,
        why: "the scan gave up on this file (too large to read, or a rule failed on it): nothing was checked there",
        matcher: Matcher::Combined },
];

/// The rule named `id`.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// A pattern with its pieces put in: `{FETCH}`, `{SH}`, `{DECODE}`,
/// `{CONCEAL}` and `{OVERRIDE}` from the one list of each (`signals`),
/// and [`PIECES`].
pub fn expand(regex: &str) -> String {
    use super::signals::{CONCEAL, FETCH_COMMANDS, OVERRIDE, SHELLS, SHELL_DECODERS};
    let words = |list: &[&str]| {
        list.iter()
            .map(|w| regex::escape(w))
            .collect::<Vec<_>>()
            .join("|")
    };
    let fetch = format!(r"(?i:\b(?:{})\b)", words(FETCH_COMMANDS));
    let shells = format!("(?:{})", words(SHELLS));
    let decode = format!("(?:{})", SHELL_DECODERS.join("|"));
    let mut out = regex.to_string();
    out = out
        .replace("{DECODE}", &decode)
        .replace("{CONCEAL}", CONCEAL)
        .replace("{OVERRIDE}", OVERRIDE);
    // `{RUN}` holds `{SH}`: expand in table order, twice.
    for _ in 0..2 {
        for (name, piece) in PIECES {
            out = out
                .replace(name, piece)
                .replace("{FETCH}", &fetch)
                .replace("{SH}", &shells)
                .replace("{DECODE}", &decode);
        }
    }
    out
}
