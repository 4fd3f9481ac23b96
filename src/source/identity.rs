//! Which repository a source is, and where its files live on the web.
//!
//! The repository named in documents, ids, links and the catalog must be the
//! one that was built. It comes, in this order, from an explicit name
//! (`--repo`, `[source].repo`), from the URL the source was cloned from (or
//! the `origin` remote of a local clone), or nowhere: a plain folder or a
//! clone without a remote gets a local name and no web links. Links follow
//! the host (GitHub, GitLab, Hugging Face, Bitbucket, Codeberg); a host we do
//! not know gets no links unless `[links]` names its templates.
//!
//! Pure: strings in, strings out.

/// A code host whose link layout is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// github.com: `blob/`, raw.githubusercontent.com, `tree/`.
    GitHub,
    /// gitlab.com or a host named gitlab.*: `/-/blob/`, `/-/raw/`, `/-/tree/`.
    GitLab,
    /// huggingface.co (models, datasets, spaces): `blob/`, `resolve/`, `tree/`.
    HuggingFace,
    /// bitbucket.org: `src/`, `raw/`.
    Bitbucket,
    /// codeberg.org (Gitea/Forgejo): `src/commit/`, `raw/commit/`, `src/branch/`.
    Codeberg,
}

impl Host {
    fn from_name(host: &str) -> Option<Self> {
        let host = host.to_ascii_lowercase();
        let host = host.strip_prefix("www.").unwrap_or(&host);
        match host {
            "github.com" => Some(Self::GitHub),
            "huggingface.co" | "hf.co" => Some(Self::HuggingFace),
            "bitbucket.org" => Some(Self::Bitbucket),
            "codeberg.org" => Some(Self::Codeberg),
            h if h == "gitlab.com" || h.starts_with("gitlab.") => Some(Self::GitLab),
            _ => None,
        }
    }

    /// The host's URL templates for files and folders of the repository at
    /// `web` (its home page); `{commit}`, `{branch}`, `{path}`, `{dir}` are
    /// filled in per document.
    pub fn templates(&self, web: &str, repo: &str) -> WebTemplates {
        let github_raw = format!("https://raw.githubusercontent.com/{repo}/{{commit}}/{{path}}");
        let (blob, raw, tree) = match self {
            Self::GitHub => (
                "{web}/blob/{commit}/{path}",
                github_raw.as_str(),
                "{web}/tree/{branch}/{dir}",
            ),
            Self::GitLab => (
                "{web}/-/blob/{commit}/{path}",
                "{web}/-/raw/{commit}/{path}",
                "{web}/-/tree/{branch}/{dir}",
            ),
            Self::HuggingFace => (
                "{web}/blob/{commit}/{path}",
                "{web}/resolve/{commit}/{path}",
                "{web}/tree/{branch}/{dir}",
            ),
            Self::Bitbucket => (
                "{web}/src/{commit}/{path}",
                "{web}/raw/{commit}/{path}",
                "{web}/src/{branch}/{dir}",
            ),
            Self::Codeberg => (
                "{web}/src/commit/{commit}/{path}",
                "{web}/raw/commit/{commit}/{path}",
                "{web}/src/branch/{branch}/{dir}",
            ),
        };
        let fill = |template: &str| template.replace("{web}", web);
        WebTemplates {
            blob: fill(blob),
            raw: fill(raw),
            tree: fill(tree),
        }
    }

    /// The host's icon, for the catalog.
    pub fn logo_url(&self) -> &'static str {
        match self {
            Self::GitHub => "https://github.com/favicon.ico",
            Self::GitLab => "https://gitlab.com/favicon.ico",
            Self::HuggingFace => "https://huggingface.co/favicon.ico",
            Self::Bitbucket => "https://bitbucket.org/favicon.ico",
            Self::Codeberg => "https://codeberg.org/favicon.ico",
        }
    }
}

/// URL templates of a repository's files (`{commit}`, `{branch}`, `{path}`, `{dir}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebTemplates {
    /// A file's page.
    pub blob: String,
    /// A file's raw bytes.
    pub raw: String,
    /// A folder's page.
    pub tree: String,
}

/// A repository at a known host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebRepo {
    /// The host.
    pub host: Host,
    /// `owner/name` (for GitLab, possibly `group/subgroup/name`).
    pub repo: String,
    /// The repository's home page, e.g. `https://huggingface.co/datasets/o/n`.
    pub web: String,
}

impl WebRepo {
    /// Parses a clone URL (`https://`, `ssh://`, `git@host:path`), ignoring
    /// credentials and a trailing `.git`; `None` for a host we do not know
    /// or a path that names no repository.
    pub fn from_clone_url(url: &str) -> Option<Self> {
        let (host, path) = split_clone_url(url)?;
        let host_kind = Host::from_name(host)?;
        let path = path.trim_matches('/');
        let path = path.strip_suffix(".git").unwrap_or(path);
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let (web_path, repo) = match host_kind {
            Host::HuggingFace => match segments.as_slice() {
                [kind @ ("datasets" | "spaces"), owner, name, ..] => {
                    (format!("{kind}/{owner}/{name}"), format!("{owner}/{name}"))
                }
                [owner, name, ..] => (format!("{owner}/{name}"), format!("{owner}/{name}")),
                _ => return None,
            },
            Host::GitLab => {
                if segments.len() < 2 {
                    return None;
                }
                let joined = segments.join("/");
                (joined.clone(), joined)
            }
            _ => match segments.as_slice() {
                [owner, name, ..] => (format!("{owner}/{name}"), format!("{owner}/{name}")),
                _ => return None,
            },
        };
        let host_name = match host_kind {
            Host::HuggingFace => "huggingface.co".to_string(),
            _ => host.to_ascii_lowercase(),
        };
        Some(Self {
            web: format!("https://{host_name}/{web_path}"),
            host: host_kind,
            repo,
        })
    }

    /// A repository on GitHub named explicitly (`owner/name`).
    pub fn github(repo: &str) -> Self {
        Self {
            host: Host::GitHub,
            repo: repo.to_string(),
            web: format!("https://github.com/{repo}"),
        }
    }
}

/// `(host, path)` of a clone URL, credentials dropped.
fn split_clone_url(url: &str) -> Option<(&str, &str)> {
    if let Some((scheme, rest)) = url.split_once("://") {
        if scheme == "file" {
            return None;
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = host.split(':').next().unwrap_or(host);
        return Some((host, path.split(['?', '#']).next().unwrap_or(path)));
    }
    // scp-like: [user@]host:path
    let (authority, path) = url.split_once(':')?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.contains('/')).then_some((host, path))
}

/// Who a build's documents say they come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoIdentity {
    /// `owner/name`, or `local/<folder>` when nothing names the repository.
    pub repo: String,
    /// Where its files are on the web, when known.
    pub web: Option<WebRepo>,
    /// `source_url` of the manifest: a public, credential-free clone URL,
    /// or the local path the build read.
    pub source_url: String,
    /// Set when nothing named the repository: what to tell the operator.
    pub unnamed: Option<String>,
}

/// What is known about a source when its identity is decided.
#[derive(Debug, Clone, Copy)]
pub struct IdentityInputs<'a> {
    /// `--repo` or `[source].repo`.
    pub explicit_repo: Option<&'a str>,
    /// `[source].url`, when set.
    pub explicit_url: Option<&'a str>,
    /// The URL cloned, or the local clone's `origin` remote, credentials removed.
    pub remote_url: Option<&'a str>,
    /// How the source was given (a path or URL), credentials removed.
    pub location: &'a str,
    /// How the user names its repository (`--repo` and `[source].repo`, or
    /// a `[[sources]]` entry's `repo`), for the warning when nothing does.
    pub naming_advice: &'a str,
}

/// Decides the identity of a source (see the module documentation).
pub fn identify(inputs: IdentityInputs<'_>) -> RepoIdentity {
    let from_remote = inputs.remote_url.and_then(WebRepo::from_clone_url);
    let web = match (inputs.explicit_repo, from_remote) {
        (Some(repo), Some(mut web)) if web.repo != repo => {
            // An explicit name on a known host: the host's layout, that name.
            let base = web.web.trim_end_matches(web.repo.as_str()).to_string();
            web.web = format!("{base}{repo}");
            web.repo = repo.to_string();
            Some(web)
        }
        (Some(_), Some(web)) => Some(web),
        (Some(repo), None) => Some(WebRepo::github(repo)),
        (None, web) => web,
    };
    let source_url = inputs
        .explicit_url
        .map(str::to_string)
        .or_else(|| inputs.remote_url.map(str::to_string))
        .or_else(|| web.as_ref().map(|w| format!("{}.git", w.web)))
        .unwrap_or_else(|| inputs.location.to_string());
    match web {
        Some(web) => RepoIdentity {
            repo: web.repo.clone(),
            web: Some(web),
            source_url,
            unnamed: None,
        },
        None => {
            let (repo, why) = match inputs.remote_url {
                Some(url) => (
                    owner_and_name(url).unwrap_or_else(|| local_repo(inputs.location)),
                    format!("its remote {url} is on a host whose links are not known"),
                ),
                None => (
                    local_repo(inputs.location),
                    "it has no remote and no repository was named".to_string(),
                ),
            };
            RepoIdentity {
                unnamed: Some(format!(
                    "source {}: {why}; its documents are labelled {repo} and carry no web links. Name it with {} (and [links] templates for a self-hosted server)",
                    inputs.location, inputs.naming_advice
                )),
                repo,
                web: None,
                source_url,
            }
        }
    }
}

/// The last two path segments of a clone URL (`owner/name`).
fn owner_and_name(url: &str) -> Option<String> {
    let (_, path) = split_clone_url(url)?;
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let mut segments = path.rsplit('/').filter(|s| !s.is_empty());
    let name = segments.next()?;
    let owner = segments.next()?;
    Some(format!("{owner}/{name}"))
}

/// `local/<last path segment of the location>`.
fn local_repo(location: &str) -> String {
    format!("local/{}", local_name(location))
}

/// The last path segment of a location, as a name.
fn local_name(location: &str) -> String {
    let trimmed = location.trim_end_matches(['/', '\\']);
    let last = trimmed.rsplit(['/', '\\']).next().unwrap_or(trimmed);
    let last = last.strip_suffix(".git").unwrap_or(last);
    let name: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.is_empty() || name == "." || name == ".." {
        "source".to_string()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs<'a>(explicit: Option<&'a str>, remote: Option<&'a str>) -> IdentityInputs<'a> {
        IdentityInputs {
            explicit_repo: explicit,
            explicit_url: None,
            remote_url: remote,
            location: "/home/me/src/my-skills",
            naming_advice: "--repo OWNER/NAME or [source].repo",
        }
    }

    #[test]
    fn clone_urls_of_known_hosts_name_the_repository() {
        let cases = [
            (
                "https://github.com/anthropics/skills.git",
                "anthropics/skills",
                "https://github.com/anthropics/skills",
            ),
            (
                "git@github.com:openai/skills.git",
                "openai/skills",
                "https://github.com/openai/skills",
            ),
            ("ssh://git@github.com/o/r", "o/r", "https://github.com/o/r"),
            (
                "https://***@github.com/o/r.git",
                "o/r",
                "https://github.com/o/r",
            ),
            (
                "https://gitlab.com/group/sub/r.git",
                "group/sub/r",
                "https://gitlab.com/group/sub/r",
            ),
            (
                "https://huggingface.co/datasets/o/r",
                "o/r",
                "https://huggingface.co/datasets/o/r",
            ),
            (
                "https://huggingface.co/spaces/o/r.git",
                "o/r",
                "https://huggingface.co/spaces/o/r",
            ),
            (
                "https://hf.co/o/model",
                "o/model",
                "https://huggingface.co/o/model",
            ),
            (
                "https://codeberg.org/o/r.git",
                "o/r",
                "https://codeberg.org/o/r",
            ),
        ];
        for (url, repo, web) in cases {
            let parsed = WebRepo::from_clone_url(url).unwrap_or_else(|| panic!("{url}"));
            assert_eq!(
                (parsed.repo.as_str(), parsed.web.as_str()),
                (repo, web),
                "{url}"
            );
        }
        for unknown in [
            "https://git.example.org/o/r.git",
            "file:///tmp/r",
            "/tmp/r",
            "https://github.com/only-owner",
        ] {
            assert_eq!(WebRepo::from_clone_url(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn link_templates_follow_the_host() {
        let gl = WebRepo::from_clone_url("https://gitlab.com/g/r").unwrap();
        let t = gl.host.templates(&gl.web, &gl.repo);
        assert_eq!(t.blob, "https://gitlab.com/g/r/-/blob/{commit}/{path}");
        assert_eq!(t.raw, "https://gitlab.com/g/r/-/raw/{commit}/{path}");
        let hf = WebRepo::from_clone_url("https://huggingface.co/datasets/o/r").unwrap();
        let t = hf.host.templates(&hf.web, &hf.repo);
        assert_eq!(
            t.blob,
            "https://huggingface.co/datasets/o/r/blob/{commit}/{path}"
        );
        assert_eq!(
            t.raw,
            "https://huggingface.co/datasets/o/r/resolve/{commit}/{path}"
        );
        let gh = WebRepo::github("o/r");
        let t = gh.host.templates(&gh.web, &gh.repo);
        assert_eq!(t.blob, "https://github.com/o/r/blob/{commit}/{path}");
        assert_eq!(
            t.raw,
            "https://raw.githubusercontent.com/o/r/{commit}/{path}"
        );
        assert_eq!(t.tree, "https://github.com/o/r/tree/{branch}/{dir}");
    }

    #[test]
    fn the_remote_names_the_repository_unless_one_is_given() {
        let id = identify(inputs(
            None,
            Some("https://github.com/anthropics/skills.git"),
        ));
        assert_eq!(id.repo, "anthropics/skills");
        assert_eq!(id.source_url, "https://github.com/anthropics/skills.git");
        assert!(id.unnamed.is_none());

        let id = identify(inputs(Some("me/fork"), Some("https://gitlab.com/g/r.git")));
        assert_eq!(id.repo, "me/fork");
        let web = id.web.unwrap();
        assert_eq!(
            (web.host, web.web.as_str()),
            (Host::GitLab, "https://gitlab.com/me/fork")
        );

        let id = identify(inputs(Some("huggingface/skills"), None));
        assert_eq!(id.repo, "huggingface/skills");
        assert_eq!(id.source_url, "https://github.com/huggingface/skills.git");
    }

    #[test]
    fn an_unnamed_source_gets_a_local_name_no_links_and_advice() {
        let id = identify(inputs(None, None));
        assert_eq!(id.repo, "local/my-skills");
        assert!(id.web.is_none());
        assert_eq!(id.source_url, "/home/me/src/my-skills");
        let advice = id.unnamed.unwrap();
        assert!(advice.contains("--repo OWNER/NAME"), "{advice}");

        let id = identify(inputs(None, Some("https://git.example.org/o/r.git")));
        assert_eq!(id.repo, "o/r");
        assert!(id.web.is_none());
        assert!(id.unnamed.unwrap().contains("git.example.org"));
    }
}
