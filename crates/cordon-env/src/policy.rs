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
/// `set` values are applied inside the jail, never to the launcher's own process.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EnvPolicy {
    /// Host variables passed through by name.
    pub pass: BTreeSet<String>,
    /// Explicit values set inside the jail.
    pub set: BTreeMap<String, String>,
}
