//! The lists cordon loads out of the box. Each entry is here because a careful user would expect it.

/// Credential masks below the home directory: unreadable in every profile unless a global
/// configuration or the caller removes them (which `cordon audit` reports).
pub(crate) const HOME_CREDENTIAL_MASKS: &[&str] = &[
    // Keys and agents.
    ".ssh",
    ".gnupg",
    ".password-store",
    ".local/share/keyrings",
    // Cloud and cluster credentials.
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".oci",
    ".config/doctl",
    ".docker/config.json",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    // Forges and package registries.
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".netrc",
    ".git-credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".gem/credentials",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    // Databases.
    ".pgpass",
    ".my.cnf",
    // Password managers.
    ".config/op",
    ".config/Bitwarden CLI",
    // The agent hosts' own authentication.
    ".claude/.credentials.json",
    ".claude.json",
    ".codex/auth.json",
    ".config/anthropic",
    ".config/openai",
    // Browser profiles hold session cookies, which are credentials.
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    // Shell histories often hold secrets typed on a command line.
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
];

/// Credential masks at absolute paths: readable by root without any capability, so they need a
/// mask even though file permissions protect them from other users.
pub(crate) const SYSTEM_CREDENTIAL_MASKS: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssh/ssh_host_dsa_key",
];

// The paths inside every writable root that stay read-only (git hooks and config, editor,
// devcontainer, hook-manager and agent configuration, cordon's control directory) are the
// registry of auto-run files: `crate::autorun::REGISTRY`.

/// cordon's own configuration and state below the home directory (the global configuration,
/// trusted and able to remove default masks; the probe cache): read-only in every jail, whatever
/// the writable roots. `XDG_CONFIG_HOME` and `XDG_CACHE_HOME` add their `cordon` directories
/// through [`crate::Invocation::own_state`].
pub(crate) const OWN_STATE_IN_HOME: &[&str] = &[".config/cordon", ".cache/cordon"];

/// System trees bound read-only in the minimal posture (when they exist): the loader's and the
/// toolchains' trees, and the parts of `/etc` that programs need to start, resolve names and
/// verify certificates.
pub(crate) const MINIMAL_SYSTEM_TREES: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/localtime",
    "/etc/mime.types",
    "/etc/os-release",
    "/etc/gitconfig",
];

/// Toolchain trees below the home directory bound read-only in the minimal posture, so language
/// runtimes installed per user still start. Credential masks inside them still apply.
pub(crate) const MINIMAL_HOME_TREES: &[&str] = &[".rustup", ".cargo", ".pyenv", ".nvm"];

/// Directories replaced by private, empty ones in every jail: the shared temporary directories and
/// `/run` (which holds the host's sockets: D-Bus, container engines, agent sockets).
pub(crate) const PRIVATE_DIRS: &[&str] = &["/tmp", "/var/tmp", "/run"];

/// Top-level system trees: neither they nor anything below them may become writable.
pub(crate) const SYSTEM_TREES: &[&str] = &[
    "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/dev",
    "/proc", "/sys",
];

/// Directories too broad to become writable themselves (what lies below them may).
pub(crate) const BROAD_DIRS: &[&str] = &[
    "/", "/var", "/home", "/opt", "/srv", "/mnt", "/media", "/run", "/tmp", "/var/tmp", "/root",
    "/snap", "/nix",
];
