//! The git configuration broker's pure half: a repository configuration a jail edited → the
//! changes the host may keep, merged into the configuration as it is now, and every refused key.
//!
//! A repository's `.git/config` can name programs that the host's git runs later, outside any
//! jail (`core.fsmonitor` on every `git status`, `core.pager`, aliases, filter and diff
//! drivers, credential helpers, includes, …). So a jail never writes it: it edits a private
//! copy, and when the command ends cordon-launch hands this crate three texts (the copy as the
//! jail got it, the copy as the jail left it, and the real configuration now) and gets back the
//! real configuration with only the jail's allowed changes applied ([`merge`]). Allowed means on
//! [`judge`]'s list: identity, remotes and their refspecs, branch tracking, submodule
//! registration and a few plain settings. Everything else, added, changed or removed, is refused
//! and reported by key ([`Refused`]), the dangerous keys with the program they would run.
//! [`sanitize`] drops every key off the list from a configuration a jail created (a submodule's
//! `.git/modules/<name>/config`).
//!
//! Plain data in, artifacts out: this crate reads and writes nothing, so it is fuzzed and
//! property-tested on its own. The file format follows git-config(1): sections `[s]`, `[s "sub"]`
//! and the legacy `[s.sub]`, case-insensitive section and variable names, quoted values with
//! `\"`, `\\`, `\n`, `\t`, `\b` escapes, line continuations, `#` and `;` comments. Lines the
//! jail did not change are kept byte for byte.
//!
//! # Example
//!
//! A jail set an identity (allowed) and `core.fsmonitor` (a program the host's git would run
//! on every `git status`: refused); meanwhile the host added a remote. The merge keeps the
//! host's edit and the identity, and reports the refused key:
//!
//! ```
//! let base = "[core]\n\tbare = false\n";
//! let jail = "[core]\n\tbare = false\n\tfsmonitor = /tmp/evil.sh\n[user]\n\tname = Agent\n";
//! let current = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/r.git\n";
//!
//! let merged = cordon_gitconfig::merge(base, jail, current)?;
//! assert!(merged.text.contains("name = Agent") && merged.text.contains("url = https://example.com/r.git"));
//! assert!(!merged.text.contains("fsmonitor"));
//! assert_eq!(merged.refused[0].key, "core.fsmonitor");
//! # Ok::<(), cordon_gitconfig::MergeError>(())
//! ```

mod keys;
mod parse;

use serde::Serialize;

pub use keys::{Verdict, judge};
pub use parse::{Entry, ParseError, entries};

use parse::Parsed;

/// A key the broker did not let through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refused {
    /// The key as git spells it: `core.fsmonitor`, `remote.origin.uploadpack`.
    pub key: String,
    /// Whether the jail added (or changed) it, or removed it.
    pub change: ChangeKind,
    /// Why it was refused.
    pub reason: &'static str,
}

/// What the jail did to a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// Added a value (a changed value is a removal and an addition).
    Added,
    /// Removed a value.
    Removed,
}

/// The outcome of [`merge`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The configuration to write: the current one with the allowed changes applied. Equal to
    /// the current text when nothing was applied.
    pub text: String,
    /// The allowed changes that were applied, as `key=value` (values of an added or removed
    /// line), in the order the jail's copy has them.
    pub applied: Vec<String>,
    /// The refused changes.
    pub refused: Vec<Refused>,
}

/// Why a merge did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// One of the three texts does not parse as a git configuration.
    #[error("the {which} git configuration does not parse: {source}")]
    Parse {
        /// `jail's copy`, `original copy` or `current`.
        which: &'static str,
        /// The parse error.
        source: ParseError,
    },
}

/// The jail's changes (`base` → `jail`) that [`judge`] allows, applied to `current` (the real
/// configuration now, which host git or another jail may have changed meanwhile). A removal
/// deletes the first line of `current` with the same key and value (none: nothing to do); an
/// addition goes after the last line of the last section of the same name in `current`, or in a
/// new section at the end.
///
/// # Errors
///
/// When a text does not parse; nothing is merged then (the caller keeps `current` and reports
/// every change as refused).
pub fn merge(base: &str, jail: &str, current: &str) -> Result<Merged, MergeError> {
    let parse = |text: &str, which| {
        Parsed::parse(text).map_err(|source| MergeError::Parse { which, source })
    };
    let base = parse(base, "original copy")?;
    let jail = parse(jail, "jail's copy")?;
    let original = current;
    let mut current = parse(current, "current")?;
    // What the output must read as: checked at the end, so no edit can change another line's
    // meaning (a continuation swallowing what follows it, say).
    let mut expected: Vec<Entry> = current.entries().cloned().collect();

    let mut remaining: Vec<&Entry> = base.entries().collect();
    let mut added: Vec<&Entry> = Vec::new();
    for e in jail.entries() {
        match remaining.iter().position(|b| *b == e) {
            Some(i) => {
                remaining.remove(i);
            }
            None => added.push(e),
        }
    }
    let removed = remaining;

    let mut applied = Vec::new();
    let mut refused = Vec::new();
    for e in removed {
        match judge(e) {
            Verdict::Allowed => {
                if current.remove(e) {
                    applied.push(format!("-{}", e.shown()));
                    if let Some(i) = expected.iter().position(|x| x == e) {
                        expected.remove(i);
                    }
                }
            }
            Verdict::Refused(reason) => refused.push(Refused {
                key: e.key(),
                change: ChangeKind::Removed,
                reason,
            }),
        }
    }
    for e in added {
        match judge(e) {
            Verdict::Allowed => {
                if current.add(e) {
                    applied.push(format!("+{}", e.shown()));
                    expected.push(e.clone());
                } else {
                    refused.push(Refused {
                        key: e.key(),
                        change: ChangeKind::Added,
                        reason: "its section name or value cannot be written back safely",
                    });
                }
            }
            Verdict::Refused(reason) => refused.push(Refused {
                key: e.key(),
                change: ChangeKind::Added,
                reason,
            }),
        }
    }
    let text = current.render();
    let mut got: Vec<Entry> = Parsed::parse(&text)
        .map(|p| p.entries().cloned().collect())
        .unwrap_or_default();
    let mut want = expected;
    let key = |e: &Entry| (e.key(), e.value.clone());
    got.sort_by_key(key);
    want.sort_by_key(key);
    if got != want {
        // Nothing is written rather than something other than what was judged.
        refused.extend(applied.drain(..).map(|shown| Refused {
            key: shown[1..].split('=').next().unwrap_or("").to_owned(),
            change: if shown.starts_with('-') {
                ChangeKind::Removed
            } else {
                ChangeKind::Added
            },
            reason: "the change could not be written back without changing the meaning of other lines",
        }));
        return Ok(Merged {
            text: original.to_owned(),
            applied,
            refused,
        });
    }
    Ok(Merged {
        text,
        applied,
        refused,
    })
}

/// `text` without any key [`judge`] refuses (for a configuration a jail created, such as a new
/// submodule's), and the keys dropped.
///
/// # Errors
///
/// When `text` does not parse (the caller should not trust the file at all then).
pub fn sanitize(text: &str) -> Result<(String, Vec<Refused>), ParseError> {
    sanitize_keeping(text, |_| false)
}

/// [`sanitize`], keeping the refused entries `keep` accepts (the caller knows what a value
/// means on its host: a submodule's `core.worktree` that leads back into the workspace).
///
/// # Errors
///
/// As [`sanitize`].
pub fn sanitize_keeping(
    text: &str,
    keep: impl Fn(&Entry) -> bool,
) -> Result<(String, Vec<Refused>), ParseError> {
    let mut parsed = Parsed::parse(text)?;
    let mut refused = Vec::new();
    let mut drop: Vec<Entry> = Vec::new();
    for e in parsed.entries() {
        if keep(e) {
            continue;
        }
        if let Verdict::Refused(reason) = judge(e) {
            refused.push(Refused {
                key: e.key(),
                change: ChangeKind::Added,
                reason,
            });
            drop.push(e.clone());
        }
    }
    for e in &drop {
        if !parsed.remove(e) {
            // An entry that shares its line with a section header: the header stays, alone.
            parsed.strip_inline(e);
        }
    }
    Ok((parsed.render(), refused))
}

/// Whether a `.gitmodules` text holds only plain submodule registrations: every entry in a
/// `[submodule "name"]` section, its `path` relative with no `..` component, no leading `-`
/// and no control character, every other key one [`judge`] allows (`url` without a transport
/// helper, `update` without a command, `branch`, …). That is what `git submodule add` writes,
/// and host git runs nothing from it. A text that does not parse is not plain.
pub fn plain_gitmodules(text: &str) -> bool {
    entries(text).is_ok_and(|entries| {
        entries.iter().all(|e| {
            let plain = if e.name == "path" {
                plain_submodule_path(e.value.as_deref())
            } else {
                judge(e) == Verdict::Allowed
            };
            e.section == "submodule" && e.subsection.is_some() && plain
        })
    })
}

/// A submodule's `path`: relative, no `..`, no leading `-` (an option to a program git runs),
/// no control character.
fn plain_submodule_path(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        !v.is_empty()
            && !v.starts_with(['-', '/'])
            && !v.chars().any(char::is_control)
            && !v.split('/').any(|c| c == "..")
    })
}

#[cfg(test)]
mod tests;
