//! The package lists the supply-chain rules read: the real package
//! indexes, how a command names another index, and the popular packages
//! whose misspellings are typosquats. One list per concept, as in
//! `signals` (which re-exports these).

/// Package indexes that are the real ones (an install from any other
/// index is a look-alike until a person says otherwise).
pub const REAL_INDEXES: &[&str] = &[
    "pypi.org",
    "files.pythonhosted.org",
    "download.pytorch.org",
    "pypi.nvidia.com",
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "npm.pkg.github.com",
    "crates.io",
    "proxy.golang.org",
    "goproxy.io",
];

/// Settings that make a package manager accept what it cannot verify:
/// plain HTTP, bad certificates, unsigned packages. (Not a tool's TLS
/// switched off in general, `GIT_SSL_NO_VERIFY`, npm's `strict-ssl`,
/// pip's `--trusted-host`: troubleshooting guides give those to users
/// behind proxies; nor apt's `[trusted=yes]`, which vendors' own
/// repositories document.)
pub const UNVERIFIED_SOURCES: &str = r#"(?i:\ballowInsecureConnections\s*=\s*["']?true\b|\b(?:is)?AllowInsecureProtocol\s*(?:=\s*|\(\s*)true\b|\bsignatureValidationMode["']?\s+value\s*=\s*["']accept\b|\bapt(?:-get)?\b[^\n]*--allow-unauthenticated\b)"#;

/// A package installed from an index named on the line.
pub const INDEX_FLAGS: &str = r#"(?:--extra-index-url|--index-url|(?:^|\s)-i|--registry|--index|GOPROXY|registry|index-url|extra-index-url|(?i:pip_(?:extra_)?index_url|uv_(?:extra_)?index_url|npm_config_registry))[\s=:]+['"]?(?:sparse\+)?https?://([A-Za-z0-9.-]+)"#;

/// Popular packages, whose one-letter misspellings are typosquats.
pub const POPULAR_PACKAGES: &[&str] = &[
    "requests",
    // npm's (deprecated) HTTP client, and an everyday word: itself, not a squat.
    "request",
    "numpy",
    "pandas",
    "urllib3",
    "setuptools",
    "colorama",
    "beautifulsoup4",
    "matplotlib",
    "django",
    "flask",
    "boto3",
    "pyyaml",
    "cryptography",
    "pillow",
    "scipy",
    "openai",
    "anthropic",
    "transformers",
    "lodash",
    "express",
    "react",
    "axios",
    "chalk",
    "commander",
    "moment",
    "dotenv",
    "typescript",
    "webpack",
    "puppeteer",
    "playwright",
    "server-filesystem",
    "server-github",
    "server-postgres",
    "server-puppeteer",
    "server-memory",
    "server-fetch",
];
