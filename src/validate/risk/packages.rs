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
