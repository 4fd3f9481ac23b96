//! The small, documented tables that say who owns which domains:
//! well-known installers and the GitHub owners that publish them, paste
//! and file-drop sites, platforms where anyone gets a subdomain. Edit
//! them here; [`super`] reads them.

/// Well-known installer domains (a domain and its subdomains), and the
/// GitHub owners that publish each. A skill from one of these owners that
/// fetches from its own domain fetches from its publisher.
pub const INSTALLERS: &[(&str, &[&str])] = &[
    ("hf.co", &["huggingface"]),
    ("huggingface.co", &["huggingface"]),
    ("claude.ai", &["anthropics"]),
    ("anthropic.com", &["anthropics"]),
    ("openai.com", &["openai"]),
    ("astral.sh", &["astral-sh"]),
    ("rustup.rs", &["rust-lang"]),
    ("bun.sh", &["oven-sh"]),
    ("deno.land", &["denoland"]),
    ("deno.com", &["denoland"]),
    ("brew.sh", &["Homebrew"]),
    ("get.docker.com", &["docker"]),
    ("ollama.com", &["ollama"]),
    ("get.pnpm.io", &["pnpm"]),
    ("pyenv.run", &["pyenv"]),
    ("bootstrap.pypa.io", &["pypa"]),
    ("install.python-poetry.org", &["python-poetry"]),
    ("sdk.cloud.google.com", &["google", "GoogleCloudPlatform"]),
    ("dl.k8s.io", &["kubernetes"]),
    ("fly.io", &["superfly"]),
    ("tailscale.com", &["tailscale"]),
    ("opencode.ai", &["sst", "anomalyco"]),
    ("cursor.com", &["cursor"]),
    ("mise.run", &["jdx"]),
    ("get.sdkman.io", &["sdkman"]),
    ("install.determinate.systems", &["DeterminateSystems"]),
    ("nixos.org", &["NixOS"]),
    ("aka.ms", &["microsoft", "Azure", "MicrosoftDocs"]),
    ("deb.nodesource.com", &["nodesource"]),
    ("starship.rs", &["starship"]),
    ("foundry.paradigm.xyz", &["foundry-rs"]),
    ("community.chocolatey.org", &["chocolatey"]),
    ("get.scoop.sh", &["ScoopInstaller"]),
    ("k8s.io", &["kubernetes", "kubernetes-sigs"]),
    ("cli.coderabbit.ai", &["coderabbitai"]),
    ("packages.microsoft.com", &["microsoft"]),
];

/// GitHub owners whose install scripts, served from GitHub, are well known.
pub const INSTALLER_OWNERS_ON_GITHUB: &[&str] =
    &["nvm-sh", "Homebrew", "ohmyzsh", "rbenv", "pyenv"];

/// Paste, file-drop, tunnel and URL-shortener services (and subdomains):
/// attacks host payloads there because nobody owns what is on them.
pub const DROP_SITES: &[&str] = &[
    "pastebin.com",
    "paste.ee",
    "hastebin.com",
    "glot.io",
    "rentry.co",
    "rentry.org",
    "controlc.com",
    "termbin.com",
    "transfer.sh",
    "0x0.st",
    "file.io",
    "temp.sh",
    "ngrok.io",
    "ngrok-free.app",
    "ngrok.app",
    "trycloudflare.com",
    "serveo.net",
    "loca.lt",
    "webhook.site",
    "pipedream.net",
    "bit.ly",
    "tinyurl.com",
    "is.gd",
    "cutt.ly",
    "rb.gy",
    "shorturl.at",
    "gofile.io",
    "catbox.moe",
    "cdn.discordapp.com",
    "anonfiles.com",
    "pastes.dev",
    "dpaste.org",
    "ix.io",
    "sprunge.us",
];
