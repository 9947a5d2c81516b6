//! Every spelling of a path that Seatbelt may compare a rule against.
//!
//! Seatbelt matches the path of the vnode an operation reaches, with every symlink resolved: on
//! macOS `/tmp/x` is seen as `/private/tmp/x`, so a rule that names only `/tmp/x` matches
//! nothing. A plan's paths are canonical on the host that resolved them, but a path that does not
//! exist yet (a missing mask, the private temporary directory before it is made) or a plan resolved
//! on another host (`cordon explain --platform macos` on Linux) may still hold a link. So each path
//! is emitted as given, as resolved through [`HostFacts`], and in the `/private` spelling of
//! macOS's fixed top-level links.

use std::path::{Path, PathBuf};

use cordon_policy::HostFacts;

/// macOS's top-level symlinks into `/private`, present on every installation, whatever the host
/// that resolved the plan says.
pub const MACOS_FIXED_LINKS: &[(&str, &str)] = &[
    ("/tmp", "/private/tmp"),
    ("/var", "/private/var"),
    ("/etc", "/private/etc"),
];

/// `path`, then its resolved form (the longest existing ancestor resolved, the rest appended),
/// then the `/private` spelling of each, without duplicates and in that order.
pub fn spellings(path: &Path, host: &dyn HostFacts) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    if let Some(resolved) = resolve(path, host) {
        out.push(resolved);
    }
    let mut fixed = Vec::new();
    for p in &out {
        for (link, target) in MACOS_FIXED_LINKS {
            if let Ok(rest) = p.strip_prefix(link) {
                let spelled = if rest.as_os_str().is_empty() {
                    PathBuf::from(target)
                } else {
                    Path::new(target).join(rest)
                };
                fixed.push(spelled);
            }
        }
    }
    out.extend(fixed);
    let mut seen: Vec<PathBuf> = Vec::new();
    for p in out {
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    seen
}

fn resolve(path: &Path, host: &dyn HostFacts) -> Option<PathBuf> {
    if let Some(c) = host.canonicalize(path) {
        return Some(c);
    }
    for ancestor in path.ancestors().skip(1) {
        if let Some(c) = host.canonicalize(ancestor) {
            let rest = path.strip_prefix(ancestor).ok()?;
            return Some(c.join(rest));
        }
    }
    None
}

/// True when `path` lies strictly below `root`.
pub(crate) fn strictly_within(path: &Path, root: &Path) -> bool {
    path != root && path.starts_with(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::FakeHost;

    fn shown(v: Vec<PathBuf>) -> Vec<String> {
        v.into_iter().map(|p| p.display().to_string()).collect()
    }

    #[test]
    fn fixed_links_are_spelled_out_even_on_a_host_without_them() {
        let host = FakeHost::new();
        assert_eq!(
            shown(spellings(Path::new("/tmp/ws"), &host)),
            ["/tmp/ws", "/private/tmp/ws"]
        );
        assert_eq!(
            shown(spellings(Path::new("/var"), &host)),
            ["/var", "/private/var"]
        );
        assert_eq!(
            shown(spellings(Path::new("/private/etc/x"), &host)),
            ["/private/etc/x"]
        );
        assert_eq!(shown(spellings(Path::new("/tmpfoo"), &host)), ["/tmpfoo"]);
    }

    #[test]
    fn links_the_host_knows_are_resolved_through_the_longest_existing_ancestor() {
        let host = FakeHost::new()
            .dir("/Volumes/data/home/u")
            .symlink("/Users", "/Volumes/data/home");
        assert_eq!(
            shown(spellings(Path::new("/Users/u/.netrc"), &host)),
            ["/Users/u/.netrc", "/Volumes/data/home/u/.netrc"]
        );
        let mac = FakeHost::new()
            .dir("/private/var/folders/x/T")
            .symlink("/var", "private/var");
        assert_eq!(
            shown(spellings(Path::new("/var/folders/x/T/cordon-1"), &mac)),
            [
                "/var/folders/x/T/cordon-1",
                "/private/var/folders/x/T/cordon-1"
            ]
        );
    }
}
