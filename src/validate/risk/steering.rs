//! The lists of what steers an agent: words that keep things from the
//! user, that drop its instructions, and the prose and tool descriptions
//! that steer it. One list per concept, as in `signals` (which
//! re-exports these); the prose reader, the HTML-comment check and the
//! pattern rules all build from them.

use super::concepts::Steer;

/// Words that keep what the agent does from the user ("do not tell the
/// user about this", "don't bring it up with the user", "keep this from
/// the user"): one list, read by the prose reader, the HTML-comment check
/// and the pattern rules. Not "don't tell the user to ...": that is advice.
macro_rules! conceal {
    () => {
        r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert)\s+(?:the\s+)?(?:user|human|operator)s?(?:\s+about\s+(?:this|it|these|that|what|any)|\s+(?:that|what)\s+you\b|\s*(?:[.;!)]|$))|\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose)\s+(?:this|these|it|that|them|anything)\s+to\s+(?:the\s+)?(?:user|human)\b|\b(?:do\s+not|don'?t|never)\s+(?:bring|raise)\s+(?:it|this|that|these|them)\s+up\b[^.\n]{0,20}\b(?:user|human)s?\b|\b(?:hide|conceal|keep)\s+(?:this|it|these|that|them)\s+(?:hidden\s+|secret\s+)?from\s+(?:the\s+)?(?:user|human)s?\b"
    };
}
/// Acts done so that the user does not see them ("silently send",
/// "upload ... without telling the user").
macro_rules! covert_acts {
    () => {
        r"\b(?:silently|quietly|secretly|covertly|discreetly|invisibly)\b[^\n]{0,60}\b(?:send|upload|post|run|execute|copy|read|include|add|install|transmit|forward|append|attach|write|download|modify|delete)\b|\b(?:send|upload|post|run|execute|copy|read|include|add|install|transmit|forward|append|attach|write)\b[^\n]{0,60}\b(?:silently|quietly|secretly|covertly|without\s+(?:telling|informing|notifying|alerting|mentioning\s+(?:it\s+)?to)\s+(?:the\s+)?user)\b"
    };
}
/// In a comment the user never sees, more of the same words count: any
/// "don't show / mention ... the user", "override ... instructions",
/// "without asking the user", "leave it out of the summary" (in visible
/// prose they are ordinary advice).
pub const HIDDEN_EXTRAS: &str = r"\boverride\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|system|original|other)\s+(?:instructions|prompts?|rules|guidelines)\b|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|reveal|show|notify|alert)\b[^.\n]{0,30}\b(?:user|human)\b|\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?(?:user|human)\b|\bleave\s+(?:it|this|that|them)\s+out\s+of\s+(?:the\s+|your\s+)?(?:summary|report|reply|answer)\b";

/// Words that keep what the agent does from the user (case-insensitive
/// once wrapped in `(?i:...)`).
pub const CONCEAL: &str = conceal!();
/// Acts done out of the user's sight.
pub const COVERT_ACTS: &str = covert_acts!();
/// Words that tell the agent to drop its instructions.
pub const OVERRIDE: &str = r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|original|system|other)\s+(?:instructions|prompts?|rules|guidelines|directives)\b";

/// Prose and tool descriptions that steer the agent.
pub const STEER: &[(Steer, &str)] = &[
    (
        Steer::ImageExfiltration,
        r"!\[[^\]\n]*\]\(\s*https?://[^)\s]*\?[^)\s]*=[^)\s]*(?:\{|\$|%7B|<|\[)",
    ),
    (
        Steer::ToolPoisoning,
        r"(?i:<\s*/?\s*(?:important|system|instructions?|secret|hidden)\s*>)",
    ),
    (
        Steer::FetchAndObey,
        r"(?i:\b(?:fetch|download|read|load|retrieve|get|curl|open|visit|dig|nslookup|resolve|query)\b[^\n]{0,80}https?://\S+[^\n]{0,160}\b(?:follow|obey|execute|apply|comply\s+with|adhere\s+to|do\s+what|carry\s+out|run)\b[^\n]{0,60}\b(?:instructions?|rules|directives|commands|steps|says|it\s+says|them)\b)",
    ),
    (
        Steer::FetchAndObey,
        r"(?i:\b(?:follow|obey|execute|comply\s+with|adhere\s+to)\b[^\n]{0,40}\b(?:instructions?|rules|directives|commands)\b[^\n]{0,40}\b(?:at|from|in|served\s+(?:at|by))\b[^\n]{0,20}https?://)",
    ),
    // Instructions read from DNS records and obeyed.
    (
        Steer::FetchAndObey,
        r"(?i:\b(?:dig|nslookup|resolve|query)\b[^\n]{0,80}(?-i:\sTXT\b)[^\n]{0,160}\b(?:follow|obey|execute|comply\s+with|adhere\s+to|do\s+what)\b[^\n]{0,60}\b(?:instructions?|directives|commands|it\s+says|they\s+say)\b)",
    ),
    (
        Steer::Covert,
        concat!("(?i:", conceal!(), "|", covert_acts!(), ")"),
    ),
    (
        Steer::SecretRequest,
        r#"(?i:\b(?:read|cat|open|include|pass|send|attach|upload|provide|copy|embed|append)\b[^\n]{0,80}(?:~/\.ssh/(?:id_|\s|$)|\.ssh/id_[a-z0-9]+\b(?:[^.]|$)|\.aws/credentials|\.netrc|\.git-credentials|\.config/gcloud|browser\s+cookies|keychain))"#,
    ),
    (
        Steer::SecretRequest,
        r"(?i:\b(?:read|cat|open|get|copy|take)\b[^\n]{0,60}(?:\.env\b|\.npmrc|credentials\s+file|private\s+key)[^\n]{0,120}\b(?:post|send|upload|share|attach|submit|comment|include\s+(?:it|them|its\s+contents?)\s+in)\b)",
    ),
    (
        Steer::SecretRequest,
        r"(?i:\b(?:install|configure|set|add|register)\b[^\n]{0,60}\bcredential\.helper\b)",
    ),
    (
        Steer::ForgedMarker,
        r"(?i:\[/?(?:system|inst|assistant)\])|\bEND\s+OF\s+(?:UNTRUSTED|USER|SKILL)\b|\bSYSTEM\s+(?:OVERRIDE|MESSAGE|PROMPT)\s*:",
    ),
    (Steer::ForgedMarker, CHAT_TOKENS),
];

/// A model's chat-template tokens (`<|im_end|>`): a forged marker when
/// written bare; quoted as a value (`--eos_token '<|im_end|>'`) they are
/// a tokenizer's setting, and only that form is read so.
pub const CHAT_TOKENS: &str = r"(?i:<\|(?:im_start|im_end|system|endoftext)\|>)";
