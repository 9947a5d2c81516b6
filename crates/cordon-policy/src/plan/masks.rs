//! Credential masks: the policy's, resolved on the host, and the stores the launcher's
//! environment moved elsewhere ([`home::RELOCATING_VARIABLES`]), masked wherever they are.

use std::path::{Path, PathBuf};

use super::Invocation;
use super::home;
use super::host::{EntryKind, HostFacts};
use super::parts::{CredentialMask, RelocatedStore, Resolved, SkipReason, Skipped};
use crate::defaults;
use crate::error::PolicyError;
use crate::model::policy::Policy;
use crate::paths::{DisplayPath, check_no_nul, is_within};

/// The policy's masks that exist on the host, canonical; the missing ones are skipped.
pub(super) fn resolve_masks(
    policy: &Policy,
    host: &dyn HostFacts,
    home: &Path,
    workspace: &Path,
) -> Result<Resolved<CredentialMask>, PolicyError> {
    let mut masks = Vec::new();
    let mut skipped = Vec::new();
    for spec in policy.masks() {
        let requested = spec.under(home, workspace);
        check_no_nul(&requested)?;
        let Some(target) = host.canonicalize(&requested) else {
            skipped.push(Skipped {
                path: requested,
                reason: SkipReason::MaskMissing,
            });
            continue;
        };
        if target == Path::new("/") {
            return Err(PolicyError::MaskIsRoot { path: requested });
        }
        let kind = match host.kind(&target) {
            Some(EntryKind::Dir) => EntryKind::Dir,
            _ => EntryKind::File,
        };
        masks.push(CredentialMask {
            target,
            requested,
            kind,
        });
    }
    masks.sort();
    masks.dedup_by(|a, b| a.target == b.target);
    Ok((masks, skipped))
}

pub(super) type Moved = Vec<(&'static str, CredentialMask)>;

/// The stores the launcher's environment moves ([`home::relocated_stores`]), as masks with their
/// variable; what was left alone is in the report with the reason, a missing one also in
/// `skipped` (as [`SkipReason::MaskMissing`], so Seatbelt still denies the name).
pub(super) fn resolve_relocated(
    invocation: &Invocation,
    host: &dyn HostFacts,
    home: &Path,
) -> Result<(Moved, Vec<RelocatedStore>, Vec<Skipped>), PolicyError> {
    let mut moved = Vec::new();
    let mut report = Vec::new();
    let mut skipped = Vec::new();
    let stores = home::relocated_stores(|name| invocation.env.get(name).cloned());
    for (variable, requested) in stores {
        check_no_nul(&requested)?;
        let entry = |outcome: &str| RelocatedStore {
            variable: variable.to_owned(),
            path: requested.clone(),
            outcome: outcome.to_owned(),
        };
        let broad = |p: &Path| {
            home.starts_with(p)
                || defaults::BROAD_DIRS.iter().any(|d| p == Path::new(d))
                || defaults::SYSTEM_TREES.iter().any(|d| p == Path::new(d))
        };
        if broad(&requested) {
            report.push(entry(
                "left alone: it is the home directory, an ancestor of it, or a top-level directory",
            ));
            continue;
        }
        let Some(target) = host.canonicalize(&requested) else {
            report.push(entry("missing"));
            skipped.push(Skipped {
                path: requested.clone(),
                reason: SkipReason::MaskMissing,
            });
            continue;
        };
        if broad(&target) {
            report.push(entry("left alone: it resolves to the home directory, an ancestor of it, or a top-level directory"));
            continue;
        }
        let kind = match host.kind(&target) {
            Some(EntryKind::Dir) => EntryKind::Dir,
            _ => EntryKind::File,
        };
        report.push(entry("masked"));
        moved.push((
            variable,
            CredentialMask {
                target,
                requested: requested.clone(),
                kind,
            },
        ));
    }
    Ok((moved, report, skipped))
}

/// `moved` without the stores that hold a writable root the caller granted: masking one would
/// hide the root, so it is left alone and reported in `relocated`. The default masks inside it
/// still apply.
pub(super) fn clear_of_roots(
    mut moved: Moved,
    relocated: &mut [RelocatedStore],
    roots: &[PathBuf],
) -> Moved {
    moved.retain(|(variable, m)| {
        let Some(root) = roots.iter().find(|r| is_within(r, &m.target)) else {
            return true;
        };
        if let Some(r) = relocated
            .iter_mut()
            .find(|r| r.variable == *variable && r.path == m.requested)
        {
            r.outcome = format!(
                "left alone: it holds the writable root {}",
                DisplayPath(root.clone())
            );
        }
        false
    });
    moved
}
