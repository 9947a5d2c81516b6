//! The rules the judge applies: the auto-run registry, the inert allowlist, the bounds.

use cordon_policy::AutoRun;

/// Every rule id a [`Finding`](crate::Finding) can carry.
pub const RULE_IDS: &[&str] = &["special-file"];

/// What the judge applies. `Rules::default()` is cordon's.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The auto-run registry.
    pub registry: &'static [AutoRun],
    /// The largest git configuration judged (bigger: refused).
    pub max_config_bytes: usize,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            registry: AutoRun::REGISTRY,
            max_config_bytes: 1 << 20,
        }
    }
}

/// The mode a committed node gets: `mode` without set-id bits (04000, 02000) and without the
/// world-writable bit (0002).
pub fn allowed_mode(mode: u32) -> u32 {
    mode & 0o7777 & !0o6002
}
