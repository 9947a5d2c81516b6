//! Configuration files (TOML) and the layering rules: profile defaults ← global file ← project file
//! (may only tighten) ← caller overrides. A file is read into a [`ConfigLayer`] (its schema,
//! `ConfigFile`, is this module's own: the TOML tables, checked for unknown keys), and
//! [`effective_policy`] combines the layers into an [`Effective`] policy with the provenance of
//! each value.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::modes::{HomeMode, Limits, Network, Unavailable};
use super::policy::{Policy, PolicyBuilder, Source};
use super::profile::Profile;
use crate::error::PolicyError;
use crate::paths::{DisplayPath, PathSpec};

/// A configuration file's contents. Every section is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    /// The profile name (`shell`, `document-parser`, …).
    pub(crate) profile: Option<String>,
    /// `[filesystem]`.
    #[serde(default)]
    pub(crate) filesystem: FilesystemSection,
    /// `[network]`.
    #[serde(default)]
    pub(crate) network: NetworkSection,
    /// `[env]`.
    #[serde(default)]
    pub(crate) env: EnvSection,
    /// `[limits]`.
    #[serde(default)]
    pub(crate) limits: LimitsSection,
    /// `[backend]`.
    #[serde(default)]
    pub(crate) backend: BackendSection,
}

/// `[filesystem]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FilesystemSection {
    /// Extra writable roots.
    #[serde(default)]
    pub(crate) writable: Vec<String>,
    /// Extra credential masks.
    #[serde(default)]
    pub(crate) deny_read: Vec<String>,
    /// Extra protected paths inside writable roots.
    #[serde(default)]
    pub(crate) deny_write: Vec<String>,
    /// Default credential masks to remove (global file and caller only; `cordon audit` flags it).
    #[serde(default)]
    pub(crate) allow_read: Vec<String>,
    /// `hidden` (default) or `visible`: the home directory in the host posture (global file and
    /// caller only for `visible`; `cordon audit` fails it).
    pub(crate) home: Option<HomeMode>,
    /// Paths shown read-only on top of the home allowlist (global file and caller; a project
    /// file's list keeps only those of its entries already granted, so it can only remove).
    pub(crate) read: Option<Vec<String>>,
}

/// `[network]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NetworkSection {
    /// `deny`, `proxy` or `allow`.
    pub(crate) mode: Option<Network>,
    /// The destinations a `proxy` network reaches (`HOST`, `*.DOMAIN`, `HOST:PORT`, `IP:PORT`).
    /// A project file's list only removes entries: those it does not name are dropped.
    pub(crate) allow: Option<Vec<String>>,
}

/// `[env]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EnvSection {
    /// Host variables passed by name.
    #[serde(default)]
    pub(crate) pass: Vec<String>,
    /// Explicit values.
    #[serde(default)]
    pub(crate) set: BTreeMap<String, String>,
    /// Names removed from `pass` and `set` of earlier layers.
    #[serde(default)]
    pub(crate) drop: Vec<String>,
}

/// `[limits]`; each value replaces the one of earlier layers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitsSection {
    /// CPU seconds.
    pub(crate) cpu_secs: Option<u64>,
    /// Largest file, bytes.
    pub(crate) file_size_bytes: Option<u64>,
    /// Open descriptors.
    pub(crate) open_files: Option<u64>,
    /// Processes.
    pub(crate) processes: Option<u64>,
    /// Address space, bytes.
    pub(crate) address_space_bytes: Option<u64>,
    /// Wall-clock timeout, seconds.
    pub(crate) timeout_secs: Option<u64>,
    /// Output cap per stream, bytes.
    pub(crate) output_cap_bytes: Option<u64>,
    /// Size of each private temporary filesystem, bytes.
    pub(crate) tmp_bytes: Option<u64>,
    /// Memory of the whole jail, bytes.
    pub(crate) memory_bytes: Option<u64>,
}

/// `[backend]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BackendSection {
    /// `refuse` (default) or `warn`.
    pub(crate) unavailable: Option<Unavailable>,
}

/// Which layer a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// The user's own file: may loosen.
    Global,
    /// The repository's file: may only tighten.
    Project,
}

/// A parsed configuration file and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigLayer {
    /// Global or project.
    pub kind: LayerKind,
    /// The file it was read from.
    pub file: PathBuf,
    /// Its contents.
    pub(crate) config: ConfigFile,
}

impl ConfigLayer {
    /// The name of the project file at the workspace root.
    pub const PROJECT_FILE: &'static str = ".cordon.toml";

    /// Where the global file lives: `$XDG_CONFIG_HOME/cordon/config.toml`, else
    /// `~/.config/cordon/config.toml`. Relative `XDG_CONFIG_HOME` values are ignored, as the XDG
    /// specification requires.
    pub fn global_path(xdg_config_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
        if let Some(xdg) = xdg_config_home.map(Path::new).filter(|p| p.is_absolute()) {
            return Some(xdg.join("cordon").join("config.toml"));
        }
        home.map(Path::new)
            .filter(|p| p.is_absolute())
            .map(|h| h.join(".config").join("cordon").join("config.toml"))
    }

    /// Reads and parses a configuration file.
    pub fn load(path: &Path, kind: LayerKind) -> Result<ConfigLayer, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::ConfigRead {
            file: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path, kind)
    }

    /// Parses configuration text; `file` is only used in errors and provenance.
    pub fn parse(text: &str, file: &Path, kind: LayerKind) -> Result<ConfigLayer, PolicyError> {
        let value: toml::Table = toml::from_str(text).map_err(|e| PolicyError::ConfigParse {
            file: file.to_path_buf(),
            message: e.message().to_owned(),
        })?;
        check_known_keys(&value, file)?;
        let config: ConfigFile =
            ConfigFile::deserialize(toml::Value::Table(value)).map_err(|e| {
                PolicyError::ConfigParse {
                    file: file.to_path_buf(),
                    message: e.message().to_owned(),
                }
            })?;
        Ok(ConfigLayer {
            kind,
            file: file.to_path_buf(),
            config,
        })
    }

    /// The host variables the file passes by name (`[env] pass`), as written.
    pub fn env_pass(&self) -> &[String] {
        &self.config.env.pass
    }

    fn source(&self) -> Source {
        let file = DisplayPath(self.file.clone()).to_string();
        match self.kind {
            LayerKind::Global => Source::Global(file),
            LayerKind::Project => Source::Project(file),
        }
    }
}

/// Caller overrides: the last layer, trusted like the global file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--profile`.
    pub profile: Option<Profile>,
    /// `--network`.
    pub network: Option<Network>,
    /// `--allow-host PATTERN`, added to the `network.allow` of the files.
    pub allow_hosts: Vec<String>,
    /// `--write DIR`, absolute paths.
    pub writable: Vec<PathBuf>,
    /// `--pass-env NAME`.
    pub pass_env: Vec<String>,
    /// `--env KEY=VALUE`.
    pub set_env: Vec<(String, String)>,
    /// `--timeout SECS`.
    pub timeout_secs: Option<u64>,
    /// `--home hidden|visible`.
    pub home: Option<HomeMode>,
    /// `--read PATH`, absolute paths (or `~/…`).
    pub read: Vec<PathBuf>,
}

const KNOWN: &[(&str, &[&str])] = &[
    (
        "filesystem",
        &[
            "writable",
            "deny_read",
            "deny_write",
            "allow_read",
            "home",
            "read",
        ],
    ),
    ("network", &["mode", "allow"]),
    ("env", &["pass", "set", "drop"]),
    (
        "limits",
        &[
            "cpu_secs",
            "file_size_bytes",
            "open_files",
            "processes",
            "address_space_bytes",
            "timeout_secs",
            "output_cap_bytes",
            "tmp_bytes",
            "memory_bytes",
        ],
    ),
    ("backend", &["unavailable"]),
];

fn check_known_keys(table: &toml::Table, file: &Path) -> Result<(), PolicyError> {
    for (key, value) in table {
        if key == "profile" {
            continue;
        }
        let Some((_, keys)) = KNOWN.iter().find(|(section, _)| section == key) else {
            return Err(PolicyError::UnknownKey {
                file: file.to_path_buf(),
                key: key.clone(),
            });
        };
        if let toml::Value::Table(inner) = value {
            for inner_key in inner.keys() {
                if !keys.contains(&inner_key.as_str()) {
                    return Err(PolicyError::UnknownKey {
                        file: file.to_path_buf(),
                        key: format!("{key}.{inner_key}"),
                    });
                }
            }
        }
    }
    Ok(())
}

/// The effective policy and where each value came from.
#[derive(Debug, Clone)]
pub struct Effective {
    /// The policy.
    pub policy: Policy,
    /// Dotted key (or `key:entry`) → the layer that set it last.
    pub provenance: BTreeMap<String, Source>,
}

/// Combines the layers into the effective policy.
///
/// The profile is chosen by the caller, else the global file, else `shell`; a project file may
/// name only that same profile.
pub fn effective_policy(
    global: Option<&ConfigLayer>,
    project: Option<&ConfigLayer>,
    overrides: &Overrides,
) -> Result<Effective, PolicyError> {
    let global_profile = match global.and_then(|g| g.config.profile.as_deref()) {
        Some(name) => Some(Profile::from_name(name).map_err(|e| invalid(global, "profile", e))?),
        None => None,
    };
    let profile = overrides
        .profile
        .or(global_profile)
        .unwrap_or(Profile::Shell);
    let mut builder = PolicyBuilder::new(profile);
    if let Some(layer) = global {
        apply_global(&mut builder, layer)?;
    }
    if let Some(layer) = project {
        apply_project(&mut builder, layer)?;
    }
    apply_overrides(&mut builder, overrides)?;
    if overrides.profile.is_some() {
        builder.record("profile", Source::Caller);
    } else if let (Some(layer), Some(_)) = (global, global_profile) {
        builder.record("profile", layer.source());
    }
    let (policy, provenance) = builder.build_with_provenance();
    if !overrides.allow_hosts.is_empty() && policy.network() != Network::Proxy {
        return Err(PolicyError::InvalidOverride {
            key: "--allow-host".into(),
            why: format!(
                "the network mode is {} (set by {}); destinations apply only with --network proxy",
                policy.network(),
                provenance
                    .get("network.mode")
                    .map_or_else(|| "the profile".to_owned(), ToString::to_string)
            ),
        });
    }
    if policy.network() == Network::Proxy && policy.network_allow().is_empty() {
        return Err(PolicyError::ProxyWithoutDestinations {
            set_by: provenance
                .get("network.mode")
                .map_or_else(|| "the profile".to_owned(), ToString::to_string),
        });
    }
    Ok(Effective { policy, provenance })
}

fn invalid(layer: Option<&ConfigLayer>, key: &str, err: PolicyError) -> PolicyError {
    PolicyError::InvalidValue {
        file: layer.map(|l| l.file.clone()).unwrap_or_default(),
        key: key.to_owned(),
        why: err.to_string(),
    }
}

fn parse_spec(layer: &ConfigLayer, key: &str, text: &str) -> Result<PathSpec, PolicyError> {
    PathSpec::parse(text).map_err(|e| invalid(Some(layer), key, e))
}

fn check_env_name(layer: Option<&ConfigLayer>, key: &str, name: &str) -> Result<(), PolicyError> {
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        return Ok(());
    }
    let why = format!(
        "{name:?} is not a variable name (letters, digits and `_`, not starting with a digit)"
    );
    Err(match layer {
        Some(l) => PolicyError::InvalidValue {
            file: l.file.clone(),
            key: key.to_owned(),
            why,
        },
        None => PolicyError::InvalidOverride {
            key: key.to_owned(),
            why,
        },
    })
}

fn apply_common_tightening(
    builder: &mut PolicyBuilder,
    layer: &ConfigLayer,
) -> Result<(), PolicyError> {
    let source = layer.source();
    let fs = &layer.config.filesystem;
    for text in &fs.deny_read {
        let spec = parse_spec(layer, "filesystem.deny_read", text)?;
        builder
            .add_mask(spec, source.clone())
            .map_err(|e| invalid(Some(layer), "filesystem.deny_read", e))?;
    }
    for text in &fs.deny_write {
        let spec = parse_spec(layer, "filesystem.deny_write", text)?;
        builder
            .add_protected(spec, source.clone())
            .map_err(|e| invalid(Some(layer), "filesystem.deny_write", e))?;
    }
    for name in &layer.config.env.drop {
        check_env_name(Some(layer), "env.drop", name)?;
        builder.drop_env(name, source.clone());
    }
    Ok(())
}

fn apply_global(builder: &mut PolicyBuilder, layer: &ConfigLayer) -> Result<(), PolicyError> {
    let source = layer.source();
    let cfg = &layer.config;
    for text in &cfg.filesystem.writable {
        let spec = parse_spec(layer, "filesystem.writable", text)?;
        builder.add_writable(spec, false, source.clone());
    }
    for text in &cfg.filesystem.allow_read {
        let spec = parse_spec(layer, "filesystem.allow_read", text)?;
        builder.remove_mask(&spec, source.clone());
    }
    if let Some(home) = cfg.filesystem.home {
        builder.set_home(home, source.clone());
    }
    for text in cfg.filesystem.read.iter().flatten() {
        let spec = parse_spec(layer, "filesystem.read", text)?;
        builder
            .add_read(spec, source.clone())
            .map_err(|e| invalid(Some(layer), "filesystem.read", e))?;
    }
    apply_common_tightening(builder, layer)?;
    if let Some(mode) = cfg.network.mode {
        builder.set_network(mode, source.clone());
    }
    for entry in cfg.network.allow.iter().flatten() {
        builder
            .allow_host(entry, source.clone())
            .map_err(|e| invalid(Some(layer), "network.allow", e))?;
    }
    for name in &cfg.env.pass {
        check_env_name(Some(layer), "env.pass", name)?;
        builder.pass_env(name.clone(), source.clone());
    }
    for (name, value) in &cfg.env.set {
        check_env_name(Some(layer), "env.set", name)?;
        builder.set_env(name.clone(), value.clone(), source.clone());
    }
    apply_limits(builder, layer, false)?;
    if let Some(u) = cfg.backend.unavailable {
        builder.set_unavailable(u, source);
    }
    Ok(())
}

fn apply_project(builder: &mut PolicyBuilder, layer: &ConfigLayer) -> Result<(), PolicyError> {
    let source = layer.source();
    let cfg = &layer.config;
    let loosens = |key: &str, why: String| PolicyError::ProjectLoosens {
        file: layer.file.clone(),
        key: key.to_owned(),
        why,
    };
    if let Some(name) = &cfg.profile {
        let wanted = Profile::from_name(name).map_err(|e| invalid(Some(layer), "profile", e))?;
        let current = builder.current().profile();
        if wanted != current {
            return Err(loosens(
                "profile",
                format!("it names profile {wanted}, but the caller chose {current}"),
            ));
        }
    }
    for text in &cfg.filesystem.writable {
        let spec = parse_spec(layer, "filesystem.writable", text)?;
        if !spec.is_relative() {
            return Err(loosens(
                "filesystem.writable",
                format!("{text} is not a path relative to the workspace"),
            ));
        }
        builder.add_writable(spec, true, source.clone());
    }
    if let Some(first) = cfg.filesystem.allow_read.first() {
        return Err(loosens(
            "filesystem.allow_read",
            format!("it removes the credential mask {first}"),
        ));
    }
    match cfg.filesystem.home {
        Some(HomeMode::Visible) => {
            return Err(loosens(
                "filesystem.home",
                "it shows the home directory".into(),
            ));
        }
        Some(HomeMode::Hidden) => builder.set_home(HomeMode::Hidden, source.clone()),
        None => {}
    }
    if let Some(list) = &cfg.filesystem.read {
        let mut keep = std::collections::BTreeSet::new();
        for text in list {
            let spec = parse_spec(layer, "filesystem.read", text)?;
            if !builder.current().read().contains(&spec) {
                return Err(loosens(
                    "filesystem.read",
                    format!("it grants a read of {text}, which no earlier layer granted"),
                ));
            }
            keep.insert(spec);
        }
        builder.retain_read(&keep, source.clone());
    }
    apply_common_tightening(builder, layer)?;
    let before = builder.current().network();
    match (cfg.network.mode, before) {
        (Some(Network::Allowed), Network::Allowed) | (None, _) => {}
        (Some(Network::Allowed), _) => {
            return Err(loosens("network.mode", "it allows the network".into()));
        }
        (Some(Network::Proxy), Network::Denied) => {
            return Err(loosens(
                "network.mode",
                "it opens a proxy where the network is denied".into(),
            ));
        }
        (Some(mode), _) => builder.set_network(mode, source.clone()),
    }
    if let Some(entries) = &cfg.network.allow {
        let mut keep = std::collections::BTreeSet::new();
        for entry in entries {
            let normalized = cordon_proxy::Pattern::parse(entry)
                .map_err(|e| invalid(Some(layer), "network.allow", e.into()))?
                .to_string();
            keep.insert(normalized);
        }
        if before == Network::Allowed {
            // The whole network before: any list is narrower.
            for entry in &keep {
                builder
                    .allow_host(entry, source.clone())
                    .map_err(|e| invalid(Some(layer), "network.allow", e))?;
            }
        } else {
            let current = builder.current().network_allow().clone();
            if let Some(extra) = keep.iter().find(|e| !current.contains(*e)) {
                return Err(loosens(
                    "network.allow",
                    format!(
                        "it adds the destination {extra}; a project file may only remove entries"
                    ),
                ));
            }
            builder.keep_allowed_hosts(&keep);
        }
    }
    if let Some(name) = cfg.env.pass.first() {
        return Err(loosens(
            "env.pass",
            format!("it passes the host variable {name}"),
        ));
    }
    if let Some(name) = cfg.env.set.keys().next() {
        return Err(loosens("env.set", format!("it sets the variable {name}")));
    }
    apply_limits(builder, layer, true)?;
    match cfg.backend.unavailable {
        Some(Unavailable::Warn) => {
            return Err(loosens(
                "backend.unavailable",
                "it asks to run unsandboxed when no backend enforces".into(),
            ));
        }
        Some(Unavailable::Refuse) => builder.set_unavailable(Unavailable::Refuse, source),
        None => {}
    }
    Ok(())
}

fn apply_limits(
    builder: &mut PolicyBuilder,
    layer: &ConfigLayer,
    tighten_only: bool,
) -> Result<(), PolicyError> {
    let section = &layer.config.limits;
    let fields: [(&str, Option<u64>); 9] = [
        ("cpu_secs", section.cpu_secs),
        ("file_size_bytes", section.file_size_bytes),
        ("open_files", section.open_files),
        ("processes", section.processes),
        ("address_space_bytes", section.address_space_bytes),
        ("timeout_secs", section.timeout_secs),
        ("output_cap_bytes", section.output_cap_bytes),
        ("tmp_bytes", section.tmp_bytes),
        ("memory_bytes", section.memory_bytes),
    ];
    for (key, value) in fields {
        let Some(value) = value else { continue };
        if key == "timeout_secs" && value == 0 {
            return Err(PolicyError::InvalidValue {
                file: layer.file.clone(),
                key: format!("limits.{key}"),
                why: "a timeout of 0 seconds would kill every command at once".into(),
            });
        }
        if let Some((floor, what)) = LIMIT_FLOORS
            .iter()
            .find_map(|(k, floor, what)| (*k == key && value < *floor).then_some((*floor, *what)))
        {
            return Err(PolicyError::InvalidValue {
                file: layer.file.clone(),
                key: format!("limits.{key}"),
                why: format!("{value} is below {floor} bytes, too small for {what}"),
            });
        }
        let limits = *builder.current().limits();
        if tighten_only && let Some(previous) = limit_value(&limits, key).filter(|p| value > *p) {
            return Err(PolicyError::ProjectLoosens {
                file: layer.file.clone(),
                key: format!("limits.{key}"),
                why: format!("it raises the limit from {previous} to {value}"),
            });
        }
        builder.set_limits(with_limit(limits, key, value), key, layer.source());
    }
    Ok(())
}

/// The smallest value a limit takes, with why: below it no command could start.
const LIMIT_FLOORS: &[(&str, u64, &str)] = &[
    (
        "tmp_bytes",
        1 << 20,
        "a temporary directory (at least 1 MiB)",
    ),
    (
        "memory_bytes",
        64 << 20,
        "the jail's own start-up (at least 64 MiB)",
    ),
];

/// The current value of a limit by its configuration key; `None` means unlimited.
fn limit_value(limits: &Limits, key: &str) -> Option<u64> {
    match key {
        "cpu_secs" => limits.cpu_secs,
        "file_size_bytes" => limits.file_size_bytes,
        "open_files" => limits.open_files,
        "processes" => limits.processes,
        "address_space_bytes" => limits.address_space_bytes,
        "timeout_secs" => limits.timeout_secs,
        "output_cap_bytes" => Some(limits.output_cap_bytes),
        "tmp_bytes" => limits.tmp_bytes,
        "memory_bytes" => limits.memory_bytes,
        _ => None,
    }
}

fn with_limit(mut limits: Limits, key: &str, value: u64) -> Limits {
    match key {
        "cpu_secs" => limits.cpu_secs = Some(value),
        "file_size_bytes" => limits.file_size_bytes = Some(value),
        "open_files" => limits.open_files = Some(value),
        "processes" => limits.processes = Some(value),
        "address_space_bytes" => limits.address_space_bytes = Some(value),
        "timeout_secs" => limits.timeout_secs = Some(value),
        "output_cap_bytes" => limits.output_cap_bytes = value,
        "tmp_bytes" => limits.tmp_bytes = Some(value),
        "memory_bytes" => limits.memory_bytes = Some(value),
        _ => {}
    }
    limits
}

fn apply_overrides(builder: &mut PolicyBuilder, overrides: &Overrides) -> Result<(), PolicyError> {
    for path in &overrides.writable {
        if !path.is_absolute() {
            return Err(PolicyError::RelativeInvocationPath {
                what: "writable root",
                path: path.clone(),
            });
        }
        let spec = PathSpec::from_path(path)?;
        builder.add_writable(spec, false, Source::Caller);
    }
    if let Some(network) = overrides.network {
        builder.set_network(network, Source::Caller);
    }
    for entry in &overrides.allow_hosts {
        builder
            .allow_host(entry, Source::Caller)
            .map_err(|e| PolicyError::InvalidOverride {
                key: "--allow-host".into(),
                why: e.to_string(),
            })?;
    }
    if let Some(home) = overrides.home {
        builder.set_home(home, Source::Caller);
    }
    for path in &overrides.read {
        let spec = PathSpec::from_path(path)?;
        if spec.is_relative() {
            return Err(PolicyError::RelativeInvocationPath {
                what: "read grant",
                path: path.clone(),
            });
        }
        builder.add_read(spec, Source::Caller)?;
    }
    for name in &overrides.pass_env {
        check_env_name(None, "--pass-env", name)?;
        builder.pass_env(name.clone(), Source::Caller);
    }
    for (name, value) in &overrides.set_env {
        check_env_name(None, "--env", name)?;
        builder.set_env(name.clone(), value.clone(), Source::Caller);
    }
    if let Some(timeout) = overrides.timeout_secs {
        if timeout == 0 {
            return Err(PolicyError::InvalidOverride {
                key: "--timeout".into(),
                why: "a timeout of 0 seconds would kill every command at once".into(),
            });
        }
        let limits = with_limit(*builder.current().limits(), "timeout_secs", timeout);
        builder.set_limits(limits, "timeout_secs", Source::Caller);
    }
    Ok(())
}
