//! The one list per concept the capability rules read: what fetches,
//! what runs a program, what decodes, where secrets live, what sends data
//! away, where a program makes itself permanent, what turns an agent's
//! safety off. Each list is written once here; the rules build their
//! patterns from it. Edit them here, with a test beside the rule.
//!
//! Every pattern is matched against code in its normal form (see
//! `code`), one statement a line, so quoting, escapes and names bound to
//! literals are already resolved.

use super::concepts::{Persist, Secret};
pub use super::packages::{INDEX_FLAGS, POPULAR_PACKAGES, REAL_INDEXES, UNVERIFIED_SOURCES};
pub use super::steering::{CHAT_TOKENS, CONCEAL, OVERRIDE, STEER};

/// Commands that fetch a URL (shell and PowerShell), matched as words
/// in any case: the rules' `{FETCH}`.
pub const FETCH_COMMANDS: &[&str] = &[
    "curl",
    "wget",
    "iwr",
    "irm",
    "invoke-webrequest",
    "invoke-restmethod",
];

/// Calls that fetch in code, besides the commands.
pub const FETCH_CALLS: &[&str] = &[
    "downloadstring",
    "downloadfile",
    "urlopen",
    "urlretrieve",
    "requests.get",
    "httpx.get",
    "axios.get",
    "fetch",
];

/// POSIX shells: the rules' `{SH}`.
pub const SHELLS: &[&str] = &[
    "bash", "zsh", "dash", "ksh", "fish", "tcsh", "csh", "ash", "sh",
];

/// Calls and commands that run a string as code (and see
/// [`COMMAND_LINE_RUNNERS`]).
pub const EVALUATORS: &[&str] = &[
    r"(?:^|[^.\w])exec\s*\(",
    r"(?:^|[^.\w])eval\s*\(",
    // (Perl's `eval { ... }` is a block that catches errors, not a string run.)
    r"\beval\s+[^{\s]",
    r"(?:^|[^.\w])compile\s*\(",
    r"\bnew\s+Function\s*\(",
    r"(?:^|[^.\w])Function\s*\(",
    r"\bvm\.run\w*\(",
    r"(?i:\[scriptblock\]::create)",
    r#"\bimport\s*\(\s*['"`]?data:"#,
    r"(?i:\biex\b)",
    r"(?i:\binvoke-expression\b)",
    r"\bos\.system\s*\(",
    r"\bchild_process\b[^\n]*\bexec(?:Sync)?\s*\(",
    r"\bexecSync\s*\(",
    // Go: a shell given a script (`exec.Command("sh", "-s")`, `"-c"`).
    r#"\bexec\.Command(?:Context)?\s*\([^\n]*"(?:/bin/)?(?:ba|z|da)?sh"\s*,\s*"-[a-z]*[sc]""#,
];

/// Shells given a command line, which also run a string as code: the
/// words of that line are commands, so a decoder in it (`sh -c 'gunzip
/// -k logs.gz'`) is run as a program, not evaluated on its output.
pub const COMMAND_LINE_RUNNERS: &[&str] = &[
    r"\b(?:ba|z|da)?sh\s+-c\b",
    r"\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b",
    r#"\bsource\s+['"]?[~/$.<]"#,
    r"\bsubprocess\.\w+\([^\n]*shell\s*=\s*True",
];

/// Shell commands that decode text (or print escaped bytes): the rules'
/// `{DECODE}`.
pub const SHELL_DECODERS: &[&str] = &[
    r"\bbase64[ \t]+(?:-[A-Za-z]*[dD][A-Za-z]*|--decode)",
    r"\bbase32[ \t]+(?:-[A-Za-z]*[dD][A-Za-z]*|--decode)",
    r"\bxxd[ \t]+(?:-[a-z]+[ \t]+)*-r",
    r"\bopenssl[ \t]+(?:enc[ \t]+)?-?(?:base64|a)\b[^\n|]*[ \t]-d\b",
    r"\bopenssl[ \t]+(?:enc\b|-?aes-|-?des|-?chacha)[^\n|]*[ \t]-d\b",
    r"\bbasenc\b[^\n|]*(?:[ \t]-d\b|--decode)",
    r#"\bprintf[ \t]+["']?(?:\\x[0-9a-fA-F]{2}|\\[0-7]{3}){4}"#,
    r#"\becho[ \t]+-[neE]+[ \t]+["']?(?:\\x[0-9a-fA-F]{2}){4}"#,
    r"\buudecode\b",
    r"(?i:frombase64string)",
];

/// Calls in code that decode text to bytes or another text (besides the
/// shell's, [`SHELL_DECODERS`]).
pub const DECODERS: &[&str] = &[
    r"\b(?:b64|b32|b85|a85|b16|urlsafe_b64)decode\b",
    r"\bunhexlify\b",
    r"\bfromhex\b",
    r"\bcodecs\.decode\b",
    r"\b(?:zlib|gzip|lzma|bz2)\.decompress\b",
    r"\bmarshal\.loads\b",
    r"\batob\s*\(",
    r"\bBuffer\.from\s*\([^\n]*['\x22](?:base64|hex)['\x22]",
    r"(?i:frombase64string)",
    r"\bbase64_decode\b",
    r"\bstr_rot13\b",
    r"\btr\s+['\x22]?(?:A-Za-z|a-zA-Z)['\x22]?\s+['\x22]?(?:N-ZA-Mn-za-m|n-za-mN-ZA-M)",
    r"\brev\b\s*(?:\||$|\))",
    r"\[::-1\]",
    r"\.reverse\(\)",
    r"\bgunzip\b",
    r"\bzcat\b",
    // Perl and Ruby: uuencoded or hex text unpacked.
    r#"(?:^|[^.\w])unpack\s*\(?\s*['"](?:u|[Hh]\*|m0?)['"]"#,
    // PowerShell: bytes XORed with a key.
    r"(?i:-bxor\b)",
];

/// Hosts that receive data for whoever holds a link: webhooks, bot APIs,
/// request catchers, out-of-band testing hosts.
pub const DROP_ENDPOINTS: &[&str] = &[
    r"discord(?:app)?\.com/api/webhooks",
    r"hooks\.slack\.com/",
    r"api\.telegram\.org/bot",
    r"webhook\.site",
    r"pipedream\.net",
    r"requestbin\.",
    r"\.ngrok(?:-free)?\.(?:io|app|dev)",
    r"\.trycloudflare\.com",
    r"oastify\.com",
    r"burpcollaborator\.net",
    r"interact\.sh",
    r"\.oast\.(?:fun|live|site|online|me|pro)",
    r"canarytokens\.com",
    r"hookbin\.com",
    r"beeceptor\.com",
];

/// A line that reads a file it names (for the credential files below,
/// which honest tools name without reading: `ssh -i ~/.ssh/id_rsa`).
pub const READS: &str = r#"\b(?:cat|less|more|head|tail|base64|base32|xxd|od|strings|tar|zip|7z|gzip|cp|scp|rsync|curl|wget|nc|open|read|readFile|readFileSync|read_text|read_bytes|readlines|Get-Content|gc|type|ReadAllText|ReadAllBytes|load|loads|fopen|file_get_contents|copyfile|copy2?|shutil|readAsText|createReadStream|InFile|upload|attach|include|paste|send|pass|provide)\b|<\s*["']?(?:~|\$HOME|/)|@["']?(?:~|\$HOME|\$\{HOME\}|/)"#;

/// Calls that read a file in code, in the languages skills ship: a path
/// named on one line of a program and one of these on another is a read
/// (and on the same line, with [`READS`]).
pub const CODE_READS: &str = r"\b(?:readFile\w*|ReadFile|read_text|read_bytes|read_to_string|createReadStream|ReadAll\w+|readAll\w+|readString|Get-Content|File\.(?:read|binread|open|readlines)\b|IO\.(?:read|binread|readlines)\b|File::open|fs::read(?:_to_string)?\b|FileInputStream|FileReader|file_get_contents|fopen|slurp|os\.Open\b|open\s*\(|open\s+(?:my\s+)?\$?\w+\s*,)";

/// Secrets, by kind. `true`: naming it in code is reading it (no honest
/// skill touches a browser's login database); `false`: a line must also
/// read it (see [`READS`]).
pub const SECRETS: &[(Secret, bool, &str)] = &[
    (
        Secret::SshKey,
        false,
        r#"\.ssh[\s'"/,+()]{1,8}(?:id_[a-z0-9]+|[a-z0-9_.-]*(?:_rsa|_ed25519|_ecdsa|_dsa|\.pem|\.key))\b|\.ssh/?\s*["']?\s*(?:$|\)|\s)|\bid_(?:rsa|ed25519|ecdsa|dsa)\b"#,
    ),
    (
        Secret::Cloud,
        false,
        r#"\.aws[\s'"/,+()]{1,8}credentials\b|\.aws/config\b|gcloud[\s'"/,+()]{1,8}(?:credentials\.db|application_default_credentials\.json|access_tokens\.db|legacy_credentials)|\.azure[\s'"/,+()]{1,8}(?:accessTokens\.json|msal_token_cache)|\.kube/config\b|\.docker[\s'"/,+()]{1,8}config\.json|/var/run/secrets/kubernetes\.io"#,
    ),
    // Secret folders taken whole (`tar czf x ~/.ssh .aws`).
    (
        Secret::Cloud,
        false,
        r#"(?:^|[\s'"/=])\.(?:aws|azure|kube|docker)(?:/|\s|$|['"])|\.config/gcloud\b"#,
    ),
    (
        Secret::SshKey,
        false,
        r#"(?:^|[\s'"=])(?:~|\$HOME|\$\{HOME\}|\$home)/\.ssh/?(?:\s|$|['"*])|(?:^|[\s'"])\.ssh(?:\s|$|/\*)"#,
    ),
    (
        Secret::Tokens,
        false,
        r#"\.netrc\b|\.git-credentials\b|\.npmrc\b|\.pypirc\b|gh/hosts\.yml|\.claude/\.credentials\.json|\.codex/auth\.json|\.password-store/|\.gnupg/|\.config/gh\b|\.vault-token\b|credentials\.tfrc\.json"#,
    ),
    // Agents' login tokens. (Their MCP configs hold keys too, but honest
    // installers read and write them: only a read that is sent could
    // tell, and lines read together cannot.)
    (
        Secret::Tokens,
        false,
        r#"\.gemini[\s'"/,+()]{1,8}oauth_creds\.json|github-copilot[\s'"/,+()]{1,8}(?:hosts|apps)\.json"#,
    ),
    (
        Secret::DotEnv,
        false,
        r#"(?:^|[\s"'(=@<:/,])\.env(?:\.[a-z]+)?\b(?:[^.\w]|$)"#,
    ),
    (
        Secret::Browser,
        true,
        r#"[/\\'"](?:Login Data|Web Data|Cookies|Local State)\b|Local Storage[/\\'", +]{1,6}leveldb|(?i:logins\.json|key[34]\.db|cookies\.sqlite|signons\.sqlite|cookies\.binarycookies|browser_cookie3|Chrome/User Data|Google/Chrome/|\.mozilla/firefox|BraveSoftware)"#,
    ),
    (
        Secret::Wallet,
        true,
        r#"(?i:wallet\.dat|exodus(?:\.wallet|/)|\.electrum|electrum/wallets|solana/id\.json|\.ethereum/keystore|keystore/UTC--|nkbihfbeogaeaoehlefnkodbefgpgknn|metamask|phantom/|atomic/Local Storage|\bwallets?/)"#,
    ),
    (
        Secret::Keychain,
        true,
        r#"\bsecurity\s+(?:dump-keychain|export)\b|\bsecurity\s+find-(?:generic|internet)-password\b[^\n]*\s-[a-zA-Z]*[wg]\b|login\.keychain|/Keychains/|(?i:cmdkey\s+/list|vaultcmd|CredEnumerate|Get-StoredCredential|kwallet|secret-tool\s+(?:lookup|search))|\bsecretstorage\.\w+\s*\([^\n]*\bget_all_collections\b|\bget_all_collections\s*\(|\bgit\s+credential(?:-[\w-]+)?\s+(?:fill|get)\b"#,
    ),
    (
        Secret::PasswordPrompt,
        true,
        r#"(?i:display\s+dialog[^\n]*(?:password|passcode|hidden\s+answer)|hidden\s+answer\s+true|Get-Credential\b|zenity\s+--password|kdialog\s+--password|osascript[^\n]*password)"#,
    ),
    (
        Secret::Environment,
        true,
        r#"(?:^|[;&|({]\s*|\$\(\s*|`\s*)(?:env|printenv|export\s+-p)\s*(?:$|\||>|\)|`|;|\})|(?:json|data|body|payload|params)\s*[=:]\s*(?:dict\s*\(\s*)?(?:os\.environ|process\.env)\b\s*[,)}]|(?:json\.dumps|str|repr|dict|list|pickle\.dumps|b64encode)\s*\(\s*(?:dict\s*\(\s*)?os\.environ\b(?:\.items\(\))?\s*\)|JSON\.stringify\s*\([^\n]*\bprocess\.env\b\s*[,)}\]]|json\.dumps\s*\([^\n]*\bos\.environ\b\s*[,)}\]]|JSON\.stringify\s*\([^\n]*\bprocess\.env\b\s*[,)}\]]|json\.dumps\s*\([^\n]*\bos\.environ\b\s*[,)}\]]|JSON\.stringify\s*\(\s*process\.env\b|Object\.(?:entries|keys)\s*\(\s*process\.env\s*\)|(?i:(?:get-childitem|gci|dir|ls)\s+env:)|\[(?:System\.)?Environment\]::GetEnvironmentVariables|\b(?:json\.Marshal\w*|strings\.Join|fmt\.Sprint\w*)\s*\(\s*os\.Environ\s*\(\s*\)|\bENV\.to_(?:h|a)\.(?:to_json|to_s|inspect)\b|\btoJSON\s*\(\s*secrets\s*\)|\bDeno\.env\.toObject\s*\(|\bBun\.env\b\s*[),}]"#,
    ),
    (
        Secret::Clipboard,
        true,
        r#"\bpbpaste\b|\bxclip\b[^\n]*(?:-o\b|-out)|\bxsel\b[^\n]*(?:-o\b|--output|-b\s*$)|\bwl-paste\b|(?i:Get-Clipboard)|pyperclip\.paste|clipboard\.readText|clipboardy\.read|Clipboard\.GetText|NSPasteboard"#,
    ),
    (
        Secret::System,
        true,
        r#"/etc/shadow\b|\.(?:bash|zsh)_history\b"#,
    ),
    (
        Secret::Cloud,
        true,
        r#"169\.254\.169\.254/[^\s'"]*(?:security-credentials|identity-credentials)|metadata\.google\.internal/[^\s'"]*service-accounts/[^\s'"]*/token"#,
    ),
];

/// Data going out of the machine, with whether the line itself says the
/// data is built from something (a command substitution or a variable in
/// a URL, a file upload).
pub const SENDS: &[&str] = &[
    r#"\bcurl\b[^\n]*\s(?:-[a-zA-Z]*[dFT]\b|--data\b|--data-[a-z]+|--form\b|--upload-file\b|--json\b|-X\s*["']?(?:POST|PUT|PATCH)\b)"#,
    r#"\b(?:curl|wget)\b[^\n]*https?://[^\s'"]*\?[^\s'"]*=[^\s'"]*(?:\$\(|\$\{?[A-Za-z_]|`)"#,
    r"\bwget\b[^\n]*--post-(?:data|file)",
    r"\b(?:nc|ncat|netcat)\b(?:\s+-[a-zA-Z]+(?:\s+[0-9]+\b)?)*\s+[A-Za-z0-9.$_{}-]+\s+[0-9]{2,5}\b",
    r"\bsocat\b[^\n]*(?i:tcp|udp|openssl)[0-9]?[:-]",
    r"/dev/(?:tcp|udp)/",
    r"(?:\b(?:dig|nslookup|drill)\b|\bhost\s+[^=\s])[^\n]*(?:\$\([^\n]*\)|`[^`\n]*`|\$\{?[A-Za-z_]\w*\}?)[^\s]*\.[A-Za-z]",
    r"\bgethostbyname\w*\s*\([^\n]*(?:\+|\{|%|format)",
    r"\bdns\.(?:lookup|resolve\w*)\s*\([^\n]*(?:\+|\$\{)",
    r"(?i:Resolve-DnsName)\b[^\n]*(?:\$|\+)",
    r"\b(?:requests|httpx|session|client|http|s|sess|aiohttp)\.(?:post|put|patch)\s*\(",
    r"\bRequest\s*\([^\n]*\bdata\s*=",
    r"\burlopen\s*\([^\n]*\bdata\b",
    r#"\bfetch\s*\([^\n]*\b(?:method\s*:\s*['"](?:POST|PUT|PATCH)|body\s*:)"#,
    r"\baxios\.(?:post|put|patch)\s*\(",
    r"\baxios\s*\(\s*\{[^\n]*method",
    r"\bhttps?\.request\s*\(",
    r"\bnavigator\.sendBeacon\b",
    r"\bsocket\.(?:socket|create_connection)\b",
    r"\.connect\s*\(\s*\(",
    r"\bnet\.(?:connect|createConnection|Socket)\b",
    r"\bnew\s+WebSocket\s*\(",
    r"(?i:invoke-(?:webrequest|restmethod)[^\n]*-(?:method\s+['\x22]?(?:post|put)|body|infile))",
    r"(?i:\.Upload(?:String|Data|File|Values)\s*\()",
    r"(?i:Net\.Sockets\.TCPClient|Net\.Sockets\.UdpClient)",
    r"\bsmtplib\b|\bftplib\b|\bnodemailer\b",
    r"\bscp\s+[^\n]*\s[A-Za-z0-9_.$@{}-]+:\S*",
    r"\brsync\b[^\n]*\s[A-Za-z0-9_.$@{}-]+:\S*",
    r"!\[[^\]\n]*\]\(\s*https?://[^)\s]*\?[^)\s]*=[^)\s]*",
    // Go and Ruby requests with a body.
    r"\bhttp\.Post(?:Form)?\s*\(",
    r#"\bhttp\.NewRequest(?:WithContext)?\s*\([^\n]*(?:"(?:POST|PUT|PATCH)"|Method(?:Post|Put|Patch))"#,
    r"\bNet::HTTP(?:::(?:Post|Put|Patch)\b|\.post\b)",
    r"\bwebsockets?\.(?:create_connection|connect)\s*\(",
    // Python's standard client, zsh's TCP module, Deno and Bun.
    r#"\.request\s*\(\s*['"](?:POST|PUT|PATCH)['"]"#,
    r"\bztcp\b",
    // A URL that carries a credential held in a variable
    // (`git ls-remote https://x:$TOKEN@host/r`).
    // (Written from `://`, so that its literal picks the lines it runs on.)
    r"://[^\s/@'\x22]*:(?:\$\{?[A-Za-z_]\w*\}?|\$\([^\n@()]{0,300}\))@",
    // An agent's model API pointed at another host: every prompt, file
    // read and key goes there.
    r#"\b(?:ANTHROPIC|OPENAI|CLAUDE_CODE|GEMINI|GOOGLE_GEMINI)_(?:BASE_URL|API_BASE|API_URL|BASE)\b['"]?\s*[:=]\s*['"]?https?://"#,
    // ICMP padding bytes chosen by the sender carry data.
    r"\bping\b[^\n]*\s-p\s",
];

/// A name looked up in DNS that is built at run time under a fixed domain
/// (`gethostbyname(f"{chunk}.{i}.c.example.net")`): the name carries data.
pub const DNS_BUILT_NAME: &str = r#"(?:\bgethostbyname\w*|\bgetaddrinfo|\bdns\.(?:lookup|resolve\w*)|(?i:Resolve-DnsName)|\b(?:dig|nslookup|drill)\b|\bhost\s+[^=\s])[^\n]*(?:\}|\$\w+|\$\([^)\n]*\)|['"]\s*\+\s*\w+\s*\+\s*['"])\.(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?:['"`\s]|$)"#;

/// Where a program makes itself run again later, and how much that alone
/// matters: `true` for places with no honest use in a skill (a key in
/// `authorized_keys`, a command in SSH's config, an agent's own settings).
pub const PERSIST: &[(Persist, bool, &str)] = &[
    (
        Persist::Cron,
        false,
        r#"\|\s*crontab\b|\bcrontab\s+(?:-u\s+\S+\s+)?(?:-\s*$|[^\s-])|/etc/cron|/var/spool/cron|\bcron\.d/|(?i:schtasks\s+/create|Register-ScheduledTask|New-ScheduledTask)"#,
    ),
    (
        Persist::Launchd,
        false,
        r"Library/Launch(?:Agents|Daemons)|\blaunchctl\s+(?:load|bootstrap|submit)",
    ),
    (
        Persist::Systemd,
        false,
        r"\.config/systemd/user|/etc/systemd/system/|\bsystemctl\s+(?:--user\s+)?enable\b",
    ),
    (
        Persist::ShellStartup,
        false,
        r#"(?:~|\$HOME|\$\{HOME\}|/home/\w+|/root|\$env:USERPROFILE|\bhome\b['"]?\s*[,/+]\s*['"]?)/?\.(?:bashrc|zshrc|profile|bash_profile|zprofile|zshenv|bash_login|bash_logout|zlogin)\b|config/fish/config\.fish|\$PROFILE\b|(?i:CurrentVersion\\Run|Start Menu\\Programs\\Startup)"#,
    ),
    (Persist::AuthorizedKeys, true, r"authorized_keys2?\b"),
    (
        Persist::SshConfig,
        true,
        r"\bProxyCommand\b|\bLocalCommand\b|\bPermitLocalCommand\b",
    ),
    (Persist::SshConfig, false, r"\.ssh/config\b"),
    (
        Persist::GitHooks,
        false,
        r"\.git/hooks/|\bcore\.hooksPath\b|\binit\.templateDir\b",
    ),
    (
        Persist::AgentSettings,
        true,
        r#"\.claude/(?:settings(?:\.local)?\.json|hooks/|commands/|agents/)|\.cursor/(?:rules|mcp\.json|hooks)|\.cursorrules\b|\.codex/(?:config\.toml|instructions)|\.gemini/(?:settings\.json|GEMINI\.md)|claude_desktop_config\.json|\.windsurfrules\b|\.continue/config|\.vscode/settings\.json|\.mcp\.json\b"#,
    ),
    (
        Persist::AgentInstructions,
        true,
        r"(?:~|\$HOME|\$\{HOME\}|home\b[^\n]{0,12})/?\.(?:claude|codex|gemini|config/\w+)/(?:CLAUDE|AGENTS|GEMINI)\.md\b|(?:^|[\s'\x22/])(?:CLAUDE|AGENTS|GEMINI)\.md\b|copilot-instructions\.md",
    ),
];

/// Privilege changes.
pub const PRIVILEGE: &[&str] = &[
    r"\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*s[rwx]*\b|[2-7][0-7]{3}\b)",
    r"\bsetcap\b",
    r#"\bos\.chmod\s*\([^\n]*(?:int\s*\(\s*['"]|0o)[2-7][0-7]{3}\b"#,
    r"\bpolkit\.Result\.YES\b",
    r"\busermod\s+(?:-\w+\s+)*-a?G\s+(?:sudo|wheel|admin|root)\b",
    r"\bS_ISUID\b",
    r"/etc/(?:passwd|group)\b[^\n]*(?:>>|tee|write|append)",
    // Windows: UAC off, remote admin tokens, any host trusted for remoting.
    r"(?i:\bEnableLUA\b[^\n]*\b0\b|\bConsentPromptBehaviorAdmin\b[^\n]*\b0\b|\bLocalAccountTokenFilterPolicy\b[^\n]*\b1\b|\bTrustedHosts\b[^\n]*['\x22]\*['\x22])",
    // An administrator added: local groups, macOS directory groups,
    // Kubernetes' anonymous users given a cluster role.
    r"(?i:\bAdd-LocalGroupMember\b[^\n]*(?:Administrators|S-1-5-32-544)|\bnet\s+localgroup\s+administrators\b[^\n]*/add\b)",
    r"\bdscl\b[^\n]*\b(?:GroupMembership|-append\s+/Groups/admin)\b|\bdseditgroup\b[^\n]*\badmin\b",
    r#"\bkubectl\s+create\s+(?:cluster)?rolebinding\b[^\n]*--(?:group|user)[=\s]+system:(?:unauthenticated|anonymous)\b|^\s*-?\s*name:\s*['"]?system:(?:unauthenticated|anonymous)\b"#,
    // PAM: any password accepted.
    r"\bpam_permit\.so\b",
];

/// Privilege files, which count only when written.
pub const PRIVILEGE_FILES: &str =
    r"/etc/sudoers\b|\bsudoers\.d\b|\bNOPASSWD\b|\bdoas\.conf\b|\bpermit\s+nopass\b";

/// Flags, modes and settings that switch an agent's permission checks or
/// sandbox off.
pub const SAFETY_OFF: &[&str] = &[
    r"--dangerously-skip-permissions\b",
    r"--dangerously-bypass-approvals-and-sandbox\b",
    r"\bbypassPermissions\b",
    r"--yolo\b",
    r"--approval-mode[\s=]+['\x22]?yolo\b",
    r"\bskipDangerousModePermissionPrompt\b",
    r"\bapproval_policy['\x22]?\s*[=:]\s*['\x22]*never\b",
    r"\bsandbox_mode['\x22]?\s*[=:]\s*['\x22]*danger-full-access\b",
    r"--sandbox\s+danger-full-access\b",
    r"\bBash\(\*\)|\bBash\(\s*:\*\s*\)",
    r"--allow-all-tools\b|--trust-all-tools\b|--auto-approve\b",
    r"\bchat\.tools\.autoApprove\b|\bautoApprove\b|\balwaysAllow\b",
    r"(?i:\b(?:enable|turn\s+on|switch\s+(?:\w+\s+)?(?:on|to))\s+(?:auto[- ]?approv\w*|yolo\s+mode|full[- ]auto|bypass\s*permissions)\b)",
    r"(?i:\b(?:disable|turn\s+off|switch\s+off|bypass|skip)\s+(?:all\s+|the\s+|your\s+)?(?:permission\s+(?:checks?|prompts?)|sandbox(?:ing)?|safety\s+checks?|approval\s+prompts?)\b)",
    // The machine's own protections: Gatekeeper, quarantine, XProtect,
    // Defender, auditing and shell history, git's hooks.
    r"\bspctl\s+--master-disable\b|\bLSQuarantine\b[^\n]*\b(?:false|NO|0)\b|\bcsrutil\s+disable\b|\blaunchctl\s+(?:bootout|unload|disable)\b[^\n]*XProtect",
    r"(?i:\bSet-MpPreference\b[^\n]*-Disable\w+\s+\$?(?:true|1)\b|\bDisableAntiSpyware\b|\bDisableRealtimeMonitoring\b[^\n]*\b(?:true|1)\b)",
    r"\bauditctl\s+-e\s*0\b|\bsystemctl\s+(?:stop|disable|mask)\s+auditd\b|\bHISTFILE=/dev/null\b|\bunset\s+HISTFILE\b|\bset\s+\+o\s+history\b",
    r"\bcore\.hooksPath[\s=]+/dev/null\b",
    // The kernel's and the host's own protections.
    r"\bsetenforce\s+0\b|\bSELINUX=disabled\b|\bufw\s+disable\b|\bsystemctl\s+(?:stop|disable|mask)\s+(?:--now\s+)?(?:firewalld|apparmor)\b|\biptables\s+-P\s+INPUT\s+ACCEPT\b",
    r"\bkernel\.yama\.ptrace_scope\s*=\s*0\b|\bkernel\.randomize_va_space\s*=\s*0\b",
    r"(?i:\bVBAWarnings\b[^\n]*\b1\b|\bEnableSmartScreen\b[^\n]*\b0\b|\bEnableFirewall\b[^\n]*\b0\b|\bnetsh\s+advfirewall\s+set\s+\w+\s+state\s+off\b)",
    // An agent's hooks or project servers switched on or off wholesale;
    // every command allowed.
    r#"\bdisableAllHooks['"]?\s*[:=]\s*true\b|\benableAllProjectMcpServers['"]?\s*[:=]\s*true\b|\byes-always\s*:\s*true\b|['"]bash['"]\s*:\s*\{?\s*['"]\*['"]\s*:\s*['"]allow['"]"#,
];

/// An interactive shell handed to a socket.
pub const REVERSE_SHELLS: &[&str] = &[
    r"\b(?:ba|z|da)?sh\s+-i\b[^\n]*/dev/(?:tcp|udp)/",
    r"/dev/(?:tcp|udp)/[^\n]*(?:0>&1|>&\s*/dev/|<&|>&\s*[0-9])",
    r"\bexec\s+[0-9]+<>\s*/dev/tcp/",
    r#"\b(?:nc|ncat|netcat)\b[^\n]*\s-(?:[a-z]*e|c)\s+['"]?(?:/bin/|/usr/bin/)?(?:ba|z|da)?sh\b"#,
    r"\bmkfifo\b[^\n]*\b(?:nc|ncat|netcat|telnet|openssl\s+s_client)\b",
    r"\bsocat\b[^\n]*\b(?i:exec|system):[^\n]*\b(?:ba|z)?sh\b",
    // An interactive shell piped to a network tool, or one piped into a shell.
    r"\b(?:ba|z|da)?sh\s+-i\b[^\n]*\|\s*(?:nc|ncat|netcat|telnet|openssl\s+s_client|socat)\b",
    r"\b(?:nc|ncat|netcat|telnet|openssl\s+s_client)\b[^\n]*\|\s*(?:/bin/)?(?:ba|z|da)?sh\b",
    r#"\bfsockopen\s*\([^\n]*\b(?:exec|shell_exec|system|proc_open)\b|\bproc_open\s*\(\s*['"](?:/bin/)?sh"#,
    r"\buse\s+Socket\b[^\n]*\bexec\b",
    r"\bTCPSocket\.(?:new|open)\b[^\n]*\b(?:exec|spawn|sh)\b",
];

/// What, with a socket in the same program, makes a reverse shell.
pub const SHELL_ON_SOCKET: &[&str] = &[
    r"\bpty\.spawn\s*\(",
    r"\bos\.dup2\s*\(",
    r"\bstdin\s*=\s*[\w.()\[\]]+\.fileno\(\)",
    // Go: a process's standard streams wired to a value (`cmd.Stdin = conn`).
    r"\.Stdin\s*,\s*\w+\.Stdout\s*,\s*\w+\.Stderr\s*=\s*\w+\s*,\s*\w+\s*,\s*\w+\s*$",
    // Ruby: `spawn(shell, in: s, out: s)`.
    r"\bin:\s*\w+\s*,\s*out:\s*\w+",
    r#"\bspawn\s*\(\s*['"](?:/bin/)?(?:ba|z)?sh['"]"#,
    r"\.pipe\s*\(\s*\w+\.stdin\s*\)",
    r"\.pipeTo\s*\(\s*\w+\.stdin\b",
    r"(?i:GetStream\s*\(\))",
    r#"\bopen\s*\(\s*STD(?:IN|OUT|ERR)\s*,\s*["']?[<>+]*&"#,
    r#"\bexec\s*\(?\s*["'](?:/bin/)?(?:ba|z)?sh\b"#,
];

/// Sockets opened in code.
pub const SOCKETS: &str = r"\bsocket\s*\(\s*\w+\s*,\s*PF_INET|IO::Socket::INET|\bTCPSocket\b|\bsocket\.(?:socket|create_connection)\b|\.connect\s*\(\s*\(|\bnet\.(?:connect|createConnection|Socket)\b|new\s+net\.Socket|(?i:Net\.Sockets\.TCPClient)|\bnet\.Dial(?:TCP|Timeout)?\s*\(|\btls\.Dial\s*\(|\bnew\s+Socket\s*\(|\bDeno\.connect(?:Tls)?\s*\(|\bztcp\b|\bBun\.connect\s*\(|\bnew\s+WebSocket\s*\(";

/// A program running a command it was sent: a field of a message passed
/// to a command runner (`exec(msg.cmd)`, `Open3.capture2e(t['run'])`);
/// with a socket or a request in the same program, a remote shell.
/// (The object is named in the match's first group: a program's own
/// options, `args.cmd` or `server.cmd`, are not a message.)
pub const RUNS_SENT_COMMAND: &str = r#"\b(?:exec|execSync|spawn|spawnSync|system|popen|Popen|capture2e?|capture3|check_output|check_call|run|shell_exec|passthru)\s*\(\s*(\w+)(?:\.\w+(?:\([^()\n]*\))?)*(?:\.|\[\s*['"])(?:cmd|command|commands|shell|script|exec|code)\b"#;

/// Names of a program's own settings, not of a message it received.
pub const OWN_SETTINGS: &[&str] = &[
    "args", "argv", "argparse", "parser", "opts", "options", "config", "cfg", "conf", "settings",
    "server", "servers", "self", "this", "params", "cli", "flags", "ns", "parsed", "step", "hook",
    "tool", "spec", "job", "jobs",
];

/// Commands and calls that gather the user's data in bulk: the
/// workspace, its history, the screen, the machine's identity.
pub const COLLECTS: &[&str] = &[
    r"\btar\b[^\n]*\s(?:\.|\./|\$PWD|\$\(pwd\)|~|\$HOME|\$\{HOME\})(?:\s|$|/)",
    r"\bzip\s+-r\w*\b[^\n]*\s(?:\.|~|\$HOME)(?:\s|$|/)",
    r"\bgit\s+(?:diff|ls-files|log|bundle|archive|config\s+(?:--list|-l|--get|user\.)|remote\s+-v|show)\b",
    r"\bfind\s+(?:\.|~|\$HOME|/)(?:\s|$)",
    r"\bscreencapture\b|\bscrot\b|\bgnome-screenshot\b|ImageGrab\.grab|\bimport\s+-window\s+root",
    r"\btarfile\.open\s*\(|\bzipfile\.ZipFile\s*\(|\bshutil\.make_archive\s*\(",
    r"\bos\.walk\s*\(|\bglob\s*\([^\n]*\*\*|\brglob\s*\(|readdirSync\s*\([^\n]*recursive|\bwalkSync\b|(?i:Get-ChildItem[^\n]*-Recurse)",
    // Go, Rust, Java and Deno tree walks.
    r"\bfilepath\.Walk(?:Dir)?\s*\(|\bWalkDir::new\b|\bFiles\.walk\s*\(|\bDeno\.readDir\b[^\n]*\brecursive",
    // Keystrokes, mail and calendars, a browser's open tabs and history.
    r"\bpynput\b|\bkeyboard\.(?:on_press|hook|Listener)\b|\bGetAsyncKeyState\b|\bSetWindowsHookEx\w*|\bCGEventTapCreate\b|\biohook\b",
    r"(?i:Outlook\.Application|GetDefaultFolder|MAPI\.Folder|tell\s+application\s+\x22(?:Mail|Calendar|Messages)\x22)",
    r#"(?i:\bURL\s+of\s+(?:every\s+|the\s+active\s+)?tab\b)|[/\\](?:Default|Profile \d+)[/\\]History\b|\bHistory['"]?\s*\)?[^\n]*\bsqlite3\b|\bplaces\.sqlite\b"#,
];

/// The machine's identity: gathered only when a line sends it.
pub const IDENTITY: &str = r"\bwhoami\b|\buname\s+-a\b|\bifconfig\b|\bip\s+addr\b|\bhostname\b|os\.userInfo\(|getpass\.getuser\(";

/// The APIs of language models: a skill made to send code or text to a
/// model sends it there.
pub const MODEL_APIS: &[&str] = &[
    "api.openai.com",
    "api.anthropic.com",
    "generativelanguage.googleapis.com",
    "api.mistral.ai",
    "openrouter.ai",
    "api.groq.com",
    "api-inference.huggingface.co",
    "router.huggingface.co",
    "api.cohere.com",
    "api.deepseek.com",
    "api.together.xyz",
];
