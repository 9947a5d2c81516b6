//! The home directory by allowlist: what of the user's home a jail sees (host posture), and the
//! environment variables that move a credential store out of it.
//!
//! In the host posture the home directory is a private, empty directory in the jail. What shows
//! through is listed here, each entry with its reason: the toolchain trees of
//! [`VETTED_HOME_TREES`] (read-only), what each `PATH` entry below the home shows (the entry, its
//! programs' targets and interpreters' prefixes: `super::shown`), the writable roots below the home, the configuration's `[filesystem] read`
//! grants, and the host's git identity ([`git_identity`]). A tool installed tomorrow keeps its
//! tokens in a directory nobody listed, and so out of every jail.
//!
//! A store the user's environment moved elsewhere (`GNUPGHOME=/data/gnupg`) is not in the home
//! at all: [`RELOCATING_VARIABLES`] names the variables, read from the launcher's environment
//! ([`relocated_stores`]), and what they name is masked wherever it is.
//!
//! The credential masks stay as a second layer beneath all of this (a registry token inside a
//! vetted tree, a store outside the home); `docs/credential-stores.md` is the survey that says,
//! store by store, which layer keeps each out.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A toolchain tree below the home directory that the jail sees read-only, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VettedTree {
    /// Relative to the home directory.
    pub(crate) path: &'static str,
    /// The tool it belongs to.
    pub(crate) tool: &'static str,
    /// Why a jailed command needs it, and why it holds no credential.
    pub(crate) reason: &'static str,
}

const fn tree(path: &'static str, tool: &'static str, reason: &'static str) -> VettedTree {
    VettedTree { path, tool, reason }
}

/// The vetted toolchain trees: programs, the runtimes they run, and the dependency caches a build
/// reads with the network denied. None is a configuration directory (those hold tokens); a tool
/// whose tree mixes both is listed by its parts. Only the ones that exist are bound.
pub(crate) const VETTED_HOME_TREES: &[VettedTree] = &[
    tree(
        ".rustup",
        "rustup",
        "Rust toolchains that the rustc and cargo proxies run",
    ),
    tree(
        ".cargo/bin",
        "cargo",
        "cargo-installed programs and rustup's proxies (on PATH)",
    ),
    tree(
        ".cargo/registry",
        "cargo",
        "the crates.io index and crate sources: builds work offline",
    ),
    tree(
        ".cargo/git",
        "cargo",
        "git dependencies' checkouts: builds work offline",
    ),
    tree(
        ".cargo/env",
        "rustup",
        "the PATH snippet rustup's installer sources from shell profiles",
    ),
    tree(".pyenv", "pyenv", "Python versions and pyenv's shims"),
    tree(".nvm", "nvm", "Node versions installed by nvm"),
    tree(".nodenv", "nodenv", "Node versions and shims"),
    tree(".volta", "volta", "volta's tool images and shims"),
    tree(".asdf", "asdf", "asdf's installs and shims"),
    tree(".local/share/mise", "mise", "mise's installs and shims"),
    tree(
        ".sdkman",
        "SDKMAN!",
        "JDKs, Gradle, Maven and Kotlin installed by SDKMAN!",
    ),
    tree(".ghcup", "ghcup", "GHC, cabal and stack binaries"),
    tree(".cabal/bin", "cabal", "cabal-installed programs"),
    tree(
        ".cabal/packages",
        "cabal",
        "downloaded Hackage packages (the config beside it may hold a password)",
    ),
    tree(".opam", "opam", "OCaml switches"),
    tree(".rbenv", "rbenv", "Ruby versions and shims"),
    tree(
        ".gem/ruby",
        "RubyGems",
        "gems installed with --user-install (the credentials file beside it is not)",
    ),
    tree(".goenv", "goenv", "Go versions and shims"),
    tree(
        "go/bin",
        "go",
        "programs from `go install` (GOPATH's default)",
    ),
    tree("go/pkg/mod", "go", "Go's module cache: builds work offline"),
    tree(".bun/bin", "bun", "bun and its global binaries"),
    tree(".bun/install/global", "bun", "globally installed packages"),
    tree(".deno/bin", "deno", "deno and installed scripts"),
    tree(
        ".local/share/pnpm",
        "pnpm",
        "pnpm's home: global binaries and its store",
    ),
    tree(
        ".local/share/uv/python",
        "uv",
        "Python versions uv installed",
    ),
    tree(
        ".local/share/uv/tools",
        "uv",
        "tools `uv tool install` made",
    ),
    tree(
        ".local/bin",
        "pip, pipx, uv",
        "user-local programs (pip --user, pipx, uv tool)",
    ),
    tree(
        ".local/lib",
        "pip",
        "Python's user site-packages (pip install --user)",
    ),
    tree(
        "bin",
        "the user",
        "the user's own programs (on PATH by Debian's default profile)",
    ),
    tree(
        ".m2/repository",
        "Maven",
        "Maven's local repository of dependencies (settings.xml beside it is not)",
    ),
    tree(
        ".gradle/caches",
        "Gradle",
        "Gradle's dependency cache (gradle.properties beside it is not)",
    ),
    tree(
        ".gradle/wrapper",
        "Gradle",
        "distributions the Gradle wrapper downloaded",
    ),
    tree(".elan", "elan", "Lean toolchains"),
    tree(".juliaup", "juliaup", "Julia versions"),
    tree(".dotnet/tools", "dotnet", ".NET global tools"),
    tree(
        ".nix-profile",
        "Nix",
        "the user's Nix profile (links into /nix/store)",
    ),
    tree(
        "miniconda3",
        "conda",
        "a Miniconda installation (its envs and packages)",
    ),
    tree("miniforge3", "conda", "a Miniforge installation"),
    tree("anaconda3", "conda", "an Anaconda installation"),
];

/// What a relocating variable names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Names {
    /// The store itself (a directory or a file): masked whole.
    Whole,
    /// A `:`-separated list of stores (`KUBECONFIG`): each masked.
    List,
    /// A tool's home that also holds its programs or caches: only these entries in it are masked.
    Inside(&'static [&'static str]),
}

/// An environment variable that moves a credential store or a configuration directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Relocation {
    /// The variable.
    pub(crate) variable: &'static str,
    /// What of its value is masked.
    pub(crate) names: Names,
    /// The tool that reads it, and what it keeps there.
    pub(crate) what: &'static str,
}

const fn whole(variable: &'static str, what: &'static str) -> Relocation {
    Relocation {
        variable,
        names: Names::Whole,
        what,
    }
}

const fn inside(
    variable: &'static str,
    entries: &'static [&'static str],
    what: &'static str,
) -> Relocation {
    Relocation {
        variable,
        names: Names::Inside(entries),
        what,
    }
}

/// The surveyed variables, from the vetted tools and the mask list. `XDG_CACHE_HOME` is
/// surveyed and left out: caches hold no credential by design, and cordon's own caches live
/// there. Relative values are ignored (the XDG specification says so for its variables; a
/// relative store path means nothing to a jail whose cwd differs).
pub(crate) const RELOCATING_VARIABLES: &[Relocation] = &[
    whole(
        "XDG_CONFIG_HOME",
        "every XDG tool's configuration (gh, glab, gcloud, git's credential store, rclone, …)",
    ),
    whole(
        "XDG_DATA_HOME",
        "XDG data: keyrings, browsers' and agents' state, password stores",
    ),
    whole("XDG_STATE_HOME", "XDG state: shells' and REPLs' histories"),
    whole(
        "XDG_RUNTIME_DIR",
        "agent sockets (ssh-agent, gpg-agent, keyrings) and session buses",
    ),
    whole("GNUPGHOME", "GnuPG's keyrings and private keys"),
    whole("SSH_AUTH_SOCK", "the ssh agent's socket"),
    whole("DOCKER_CONFIG", "Docker's registry auths and contexts"),
    whole(
        "DOCKER_CERT_PATH",
        "the TLS client key of a remote Docker engine",
    ),
    whole(
        "REGISTRY_AUTH_FILE",
        "Podman, Buildah and Skopeo registry auths",
    ),
    whole("HELM_REGISTRY_CONFIG", "Helm's OCI registry auths"),
    whole("AWS_SHARED_CREDENTIALS_FILE", "AWS access keys"),
    whole(
        "AWS_CONFIG_FILE",
        "AWS profiles, SSO sessions, credential_process",
    ),
    whole("AWS_WEB_IDENTITY_TOKEN_FILE", "an AWS web-identity token"),
    whole("AZURE_CONFIG_DIR", "Azure CLI tokens"),
    whole("CLOUDSDK_CONFIG", "gcloud's credentials database"),
    whole(
        "GOOGLE_APPLICATION_CREDENTIALS",
        "a Google service-account key",
    ),
    whole("BOTO_CONFIG", "gsutil's and boto's credentials"),
    whole("OCI_CLI_CONFIG_FILE", "Oracle Cloud CLI keys"),
    Relocation {
        variable: "KUBECONFIG",
        names: Names::List,
        what: "cluster credentials (a list of files)",
    },
    whole("MINIKUBE_HOME", "minikube's client keys"),
    whole("TALOSCONFIG", "Talos cluster credentials"),
    whole("GH_CONFIG_DIR", "GitHub CLI tokens"),
    whole("GLAB_CONFIG_DIR", "GitLab CLI tokens"),
    whole(
        "GIT_CONFIG_GLOBAL",
        "git's global configuration (credential helpers, tokens in URLs)",
    ),
    whole("NETRC", "a netrc file (curl, Go, Python requests)"),
    inside(
        "CARGO_HOME",
        &["credentials", "credentials.toml"],
        "cargo's registry tokens (its programs and caches stay usable)",
    ),
    inside(
        "GRADLE_USER_HOME",
        &["gradle.properties"],
        "Gradle's repository credentials",
    ),
    whole(
        "NPM_CONFIG_USERCONFIG",
        "npm's user configuration (registry tokens)",
    ),
    whole(
        "npm_config_userconfig",
        "npm's user configuration (registry tokens)",
    ),
    whole(
        "PIP_CONFIG_FILE",
        "pip's configuration (index URLs with passwords)",
    ),
    whole("POETRY_CONFIG_DIR", "Poetry's repository credentials"),
    inside(
        "COMPOSER_HOME",
        &["auth.json"],
        "Composer's registry tokens",
    ),
    whole("CONDARC", "conda's channel tokens"),
    inside(
        "HF_HOME",
        &["token", "stored_tokens"],
        "Hugging Face tokens (the model cache stays usable)",
    ),
    whole("HF_TOKEN_PATH", "a Hugging Face token"),
    whole("KAGGLE_CONFIG_DIR", "Kaggle's API key"),
    whole("RCLONE_CONFIG", "rclone's remotes and their tokens"),
    whole("TF_CLI_CONFIG_FILE", "Terraform's registry tokens"),
    whole("SOPS_AGE_KEY_FILE", "an age private key for sops"),
    whole("ANSIBLE_VAULT_PASSWORD_FILE", "an Ansible vault password"),
    whole("PASSWORD_STORE_DIR", "pass's encrypted store"),
    whole("OP_CONFIG_DIR", "the 1Password CLI's sessions"),
    whole("BITWARDENCLI_APPDATA_DIR", "the Bitwarden CLI's vault"),
    whole("PGPASSFILE", "PostgreSQL passwords"),
    whole(
        "PGSERVICEFILE",
        "PostgreSQL service definitions with passwords",
    ),
    whole("PSQL_HISTORY", "psql's history"),
    whole("MYSQL_HISTFILE", "mysql's history"),
    whole("HISTFILE", "the shell's history"),
    whole("PYTHON_HISTORY", "Python's REPL history"),
    inside("CODEX_HOME", &["auth.json"], "the Codex CLI's OAuth tokens"),
    whole(
        "CLAUDE_CONFIG_DIR",
        "Claude Code's OAuth tokens and settings",
    ),
];

/// Variables an [`Invocation`](crate::Invocation) keeps from the launcher's environment besides
/// [`RELOCATING_VARIABLES`]: `PATH` (what its entries below the home show is bound,
/// `super::shown::path_trees`).
pub(crate) const OTHER_VARIABLES: &[&str] = &["PATH"];

/// Whether `name` is a variable the plan reads from the launcher's environment.
pub(crate) fn is_read(name: &str) -> bool {
    OTHER_VARIABLES.contains(&name) || RELOCATING_VARIABLES.iter().any(|r| r.variable == name)
}

/// The stores `lookup` (the launcher's environment) moves, each with its variable: absolute
/// values only, in the order of [`RELOCATING_VARIABLES`].
pub(crate) fn relocated_stores(
    lookup: impl Fn(&str) -> Option<OsString>,
) -> Vec<(&'static str, PathBuf)> {
    let mut out = Vec::new();
    for r in RELOCATING_VARIABLES {
        let Some(value) = lookup(r.variable) else {
            continue;
        };
        let values: Vec<&OsStr> = match r.names {
            Names::List => value
                .as_bytes()
                .split(|b| *b == b':')
                .map(OsStr::from_bytes)
                .collect(),
            _ => vec![value.as_os_str()],
        };
        for v in values {
            let base = Path::new(v);
            if !base.is_absolute() {
                continue;
            }
            match r.names {
                Names::Inside(entries) => {
                    out.extend(entries.iter().map(|e| (r.variable, base.join(e))));
                }
                _ => out.push((r.variable, base.to_path_buf())),
            }
        }
    }
    out
}

/// The `[user]` name and email of a git configuration file's text: the identity the jail's
/// `git commit` uses, and nothing else of the file. A later value wins, as in git; `include`
/// directives are not followed.
pub(crate) fn git_identity(text: &str) -> (Option<String>, Option<String>) {
    let mut name = None;
    let mut email = None;
    let mut in_user = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with('[') {
            let section = line
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim();
            in_user = section.eq_ignore_ascii_case("user");
            continue;
        }
        if !in_user || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = unquote(value.trim());
        if value.is_empty() || value.contains(['\n', '\0']) {
            continue;
        }
        match key.trim().to_ascii_lowercase().as_str() {
            "name" => name = Some(value),
            "email" => email = Some(value),
            _ => {}
        }
    }
    (name, email)
}

fn unquote(value: &str) -> String {
    let value = match value.find([';', '#']) {
        // A comment outside quotes ends the value.
        Some(i) if !value[..i].contains('"') => value[..i].trim_end(),
        _ => value,
    };
    value.trim_matches('"').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_least_twenty_five_variables_are_surveyed_and_none_twice() {
        assert!(RELOCATING_VARIABLES.len() >= 25);
        let mut names: Vec<&str> = RELOCATING_VARIABLES.iter().map(|r| r.variable).collect();
        names.sort_unstable();
        let len = names.len();
        names.dedup();
        assert_eq!(names.len(), len);
    }

    #[test]
    fn vetted_trees_are_relative_plain_and_not_config_directories() {
        for t in VETTED_HOME_TREES {
            let p = Path::new(t.path);
            assert!(p.is_relative() && !t.path.contains(".."), "{}", t.path);
            assert!(!t.path.starts_with(".config"), "{}", t.path);
            assert!(!t.reason.is_empty());
            for m in crate::defaults::HOME_CREDENTIAL_MASKS {
                assert!(
                    !Path::new(m).starts_with(p),
                    "{} holds the mask {m}",
                    t.path
                );
            }
        }
    }

    #[test]
    fn relocations_read_absolute_values_lists_and_inner_entries() {
        let env = |n: &str| -> Option<OsString> {
            match n {
                "GNUPGHOME" => Some("/data/gpg".into()),
                "KUBECONFIG" => Some("/k/a:relative:/k/b".into()),
                "CARGO_HOME" => Some("/opt/cargo".into()),
                "XDG_CONFIG_HOME" => Some("relative".into()),
                _ => None,
            }
        };
        let got = relocated_stores(env);
        assert!(got.contains(&("GNUPGHOME", PathBuf::from("/data/gpg"))));
        assert!(got.contains(&("KUBECONFIG", PathBuf::from("/k/a"))));
        assert!(got.contains(&("KUBECONFIG", PathBuf::from("/k/b"))));
        assert!(got.contains(&("CARGO_HOME", PathBuf::from("/opt/cargo/credentials.toml"))));
        assert!(!got.iter().any(|(v, _)| *v == "XDG_CONFIG_HOME"));
        assert!(!got.iter().any(|(_, p)| p == Path::new("/opt/cargo")));
    }

    #[test]
    fn the_git_identity_is_the_user_section_only() {
        let text = "[core]\n\tname = not-me\n[user]\n\tname = \"Ada L\"\n\temail = ada@example.com ; work\n[credential]\n\thelper = store\n";
        assert_eq!(
            git_identity(text),
            (Some("Ada L".into()), Some("ada@example.com".into()))
        );
        assert_eq!(git_identity("[credential]\nhelper=store\n"), (None, None));
    }
}
