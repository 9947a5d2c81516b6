//! The environment policy: the input this crate filters the host environment with.
//!
//! It lives here, not in `cordon-policy`, so that filtering an environment needs nothing but
//! serde and thiserror; `cordon-policy` re-exports it as `cordon_policy::EnvPolicy` and hashes
//! its serialized form, so its derives and serde attributes are part of the policy hash.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The environment the jailed command receives, beyond the fixed allowlist.
///
/// `pass` names are copied from the host only when they do not read as a credential;
/// `set` values are applied inside the jail, never to the launcher's own process. `owned` values
/// are cordon's own (its private toolchain caches, `cordon_policy::CacheLayout`): they replace a
/// host or `pass` value of the same name, and an explicit `set` value replaces them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EnvPolicy {
    /// Host variables passed through by name.
    pub pass: BTreeSet<String>,
    /// Explicit values set inside the jail.
    pub set: BTreeMap<String, String>,
    /// Values cordon itself sets (never read from the host, never from a configuration file):
    /// the plan fills them in for its private toolchain caches. Not serialized when empty, and
    /// never deserialized, so no configuration layer can name one.
    #[serde(
        default,
        skip_deserializing,
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub owned: BTreeMap<String, String>,
}
