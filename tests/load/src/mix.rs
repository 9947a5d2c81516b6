//! The mix: which kinds of command run, in which workspace, in which order, all fixed by a seed.
//!
//! Every payload is `/bin/sh -c SCRIPT loadjail-<marker>`, so the marker is the shell's `$0` and
//! shows in its argv (and in bubblewrap's, and the CLI's). Every `sleep` a payload starts gets a
//! duration whose decimals are the marker (`sleep 60.0<marker>`), so even a child that outlives
//! its shell carries the marker in `/proc/<pid>/cmdline`.

use std::ffi::OsString;

use serde::Serialize;

/// What one run does, and so what its outcome must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Prints a line: exit 0, exactly that line.
    Ordinary,
    /// Writes [`FLOOD_BYTES`], far beyond the output cap: exit 0, truncated, every byte counted.
    Flood,
    /// Sleeps past a 1 s timeout: status `timeout`, exit 124, the tree gone within 1 s.
    Timeout,
    /// A command the floor refuses (`rm -rf /` after creating a sentinel): refused, nothing ran.
    FloorRefusal,
    /// Leaves a background child (`sleep 60 & echo started`): exit 0, the child gone on return.
    Background,
    /// Writes a file named after itself into `/tmp` and lists `/tmp`: sees only its own file.
    PrivateTmp,
    /// In a git workspace shared by many jails, without `.vscode`/`.claude` (placeholders):
    /// every protected path stays unwritable.
    GitShared,
    /// In a shared git workspace that has `.vscode` and `.claude`: the same.
    GitSharedIde,
    /// In a git workspace of its own, without `.vscode`/`.claude`: the same.
    GitOwn,
    /// Through the CLI: the launcher is SIGKILLed once the payload said `ready`.
    KilledReady,
    /// Through the CLI: the launcher is SIGKILLed a few milliseconds after it started, wherever
    /// it is (guard, jail set-up, payload).
    KilledEarly,
    /// Through the CLI with a home of its own and no probe cache: the launcher is SIGKILLed
    /// 5–40 ms after it started, mostly while it probes bubblewrap.
    KilledProbing,
}

impl Kind {
    /// Every kind, in table order, with its share of the mix in percent.
    pub const WEIGHTS: &'static [(Kind, u32)] = &[
        (Kind::Ordinary, 20),
        (Kind::Flood, 8),
        (Kind::Timeout, 4),
        (Kind::FloorRefusal, 8),
        (Kind::Background, 10),
        (Kind::PrivateTmp, 10),
        (Kind::GitShared, 12),
        (Kind::GitSharedIde, 8),
        (Kind::GitOwn, 6),
        (Kind::KilledReady, 5),
        (Kind::KilledEarly, 5),
        (Kind::KilledProbing, 4),
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Ordinary => "ordinary",
            Kind::Flood => "flood",
            Kind::Timeout => "timeout",
            Kind::FloorRefusal => "floor-refusal",
            Kind::Background => "background",
            Kind::PrivateTmp => "private-tmp",
            Kind::GitShared => "git-shared",
            Kind::GitSharedIde => "git-shared-ide",
            Kind::GitOwn => "git-own",
            Kind::KilledReady => "killed-ready",
            Kind::KilledEarly => "killed-early",
            Kind::KilledProbing => "killed-probing",
        }
    }

    /// Runs through the `cordon` CLI (so that its launcher can be killed) rather than the library.
    pub fn through_cli(self) -> bool {
        matches!(
            self,
            Kind::KilledReady | Kind::KilledEarly | Kind::KilledProbing
        )
    }

    /// Whether the jail is killed rather than left to finish, so its processes get up to
    /// [`super::host::KILLED_GRACE`] to disappear.
    pub fn killed(self) -> bool {
        self == Kind::Timeout || self.through_cli()
    }
}

/// Bytes a flood writes (the output cap of the load's policy is [`super::OUTPUT_CAP`]).
pub const FLOOD_BYTES: u64 = 1024 * 1024;

/// Where a run works.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workspace {
    /// A plain directory of its own (`own-<index>`).
    Own,
    /// A git repository of its own without `.vscode`/`.claude` (`git-own-<index>`).
    GitOwn,
    /// The git repository every such run shares, without `.vscode`/`.claude`.
    SharedGit,
    /// The git repository every such run shares, with `.vscode` and `.claude`.
    SharedGitIde,
}

impl Workspace {
    /// The directory name below the load's `ws/` directory.
    pub fn dir_name(&self, index: usize) -> String {
        match self {
            Workspace::Own => format!("own-{index:05}"),
            Workspace::GitOwn => format!("git-own-{index:05}"),
            Workspace::SharedGit => "shared-git".into(),
            Workspace::SharedGitIde => "shared-git-ide".into(),
        }
    }
}

/// One run of the mix.
#[derive(Debug, Clone)]
pub struct Planned {
    /// Position in the mix (also part of the marker).
    pub index: usize,
    pub kind: Kind,
    pub workspace: Workspace,
    /// Digits unique to this run: the session's digits then the index.
    pub marker: String,
    /// For [`Kind::KilledEarly`] and [`Kind::KilledProbing`]: milliseconds between spawning the
    /// CLI and killing it.
    pub kill_after_ms: u64,
}

impl Planned {
    /// The shell's `$0`, which carries the marker.
    pub fn name(&self) -> String {
        format!("loadjail-{}", self.marker)
    }

    /// A `sleep` argument of `secs` seconds that carries the marker in its decimals.
    fn sleep(&self, secs: u32) -> String {
        format!("sleep {secs}.0{}", self.marker)
    }

    /// The shell script the payload runs.
    pub fn script(&self) -> String {
        match self.kind {
            Kind::Ordinary => "printf 'ran %s\\n' \"$0\"".into(),
            Kind::Flood => format!("yes \"$0\" | head -c {FLOOD_BYTES}"),
            Kind::Timeout => format!("{}; :", self.sleep(30)),
            // Safe even if the floor failed: GNU rm refuses `/` without --no-preserve-root, and
            // the jail's root is read-only.
            Kind::FloorRefusal => "touch \"refused-$0\"; rm -rf /".into(),
            Kind::Background => format!("{} & echo started", self.sleep(60)),
            Kind::PrivateTmp => "echo \"$0\" > \"/tmp/$0\"; sleep 0.05; ls -A /tmp".into(),
            Kind::GitShared | Kind::GitSharedIde | Kind::GitOwn => PROTECTED_WRITES.into(),
            Kind::KilledReady | Kind::KilledEarly | Kind::KilledProbing => {
                format!("echo ready; {}; :", self.sleep(60))
            }
        }
    }

    /// The payload's argv.
    pub fn argv(&self) -> Vec<OsString> {
        vec![
            "/bin/sh".into(),
            "-c".into(),
            self.script().into(),
            self.name().into(),
        ]
    }

    /// The workspace directory name.
    pub fn dir_name(&self) -> String {
        self.workspace.dir_name(self.index)
    }

    /// For [`Kind::KilledProbing`]: its own home, below the load's `homes/` (no probe cache).
    pub fn own_home(&self) -> Option<String> {
        (self.kind == Kind::KilledProbing).then(|| format!("h-{:05}", self.index))
    }
}

/// Tries every path a workspace keeps read-only while a command runs (git's, and the placeholder
/// `.git/commondir`; a missing auto-run name at the root is swept after the run instead, which
/// the escape suite's `autorun/` cases judge); prints `WROTE <path>` for each write that worked.
/// A pause first, so jails sharing a workspace overlap and one jail's clean-up can meet
/// another's run.
const PROTECTED_WRITES: &str = "sleep 0.05; \
for p in .git/commondir .git/config .git/hooks/pre-commit; do \
  if (: > \"$p\") 2>/dev/null; then echo \"WROTE $p\"; fi; \
done; \
echo done";

/// SplitMix64: small, fast, and the same sequence for the same seed everywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// How many runs of each kind: each kind's share of `runs`, at least one of each when there is
/// room, the rest ordinary.
pub fn counts(runs: usize) -> Vec<(Kind, usize)> {
    let mut out: Vec<(Kind, usize)> = Kind::WEIGHTS
        .iter()
        .map(|&(k, w)| {
            let share = runs * w as usize / 100;
            let floor = usize::from(runs >= Kind::WEIGHTS.len());
            (k, share.max(floor))
        })
        .collect();
    let assigned: usize = out.iter().map(|(_, n)| n).sum();
    if let Some((_, n)) = out.iter_mut().find(|(k, _)| *k == Kind::Ordinary) {
        if assigned <= runs {
            *n += runs - assigned;
        } else {
            *n = n.saturating_sub(assigned - runs);
        }
    }
    out
}

/// The whole mix for `runs` runs, shuffled by `seed`; `session` is this load's digits.
pub fn build(runs: usize, seed: u64, session: &str) -> Vec<Planned> {
    let mut rng = Rng::new(seed);
    let mut kinds: Vec<Kind> = counts(runs)
        .into_iter()
        .flat_map(|(k, n)| std::iter::repeat_n(k, n))
        .collect();
    // Fisher-Yates.
    for i in (1..kinds.len()).rev() {
        let j = usize::try_from(rng.below(i as u64 + 1)).unwrap_or(0);
        kinds.swap(i, j);
    }
    kinds
        .into_iter()
        .enumerate()
        .map(|(index, kind)| {
            let workspace = match kind {
                Kind::GitShared => Workspace::SharedGit,
                Kind::GitSharedIde => Workspace::SharedGitIde,
                Kind::GitOwn => Workspace::GitOwn,
                Kind::KilledProbing => Workspace::Own,
                Kind::KilledReady | Kind::KilledEarly => {
                    if rng.below(2) == 0 {
                        Workspace::SharedGit
                    } else {
                        Workspace::GitOwn
                    }
                }
                _ => match rng.below(4) {
                    0 | 1 => Workspace::Own,
                    2 => Workspace::SharedGit,
                    _ => Workspace::SharedGitIde,
                },
            };
            Planned {
                index,
                kind,
                workspace,
                marker: format!("{session}{index:05}"),
                kill_after_ms: if kind == Kind::KilledProbing {
                    5 + rng.below(36)
                } else {
                    rng.below(20)
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_and_every_kind_appears() {
        for runs in [Kind::WEIGHTS.len(), 60, 500, 1001] {
            let c = counts(runs);
            assert_eq!(
                c.iter().map(|(_, n)| n).sum::<usize>(),
                runs,
                "{runs}: {c:?}"
            );
            assert!(c.iter().all(|(_, n)| *n >= 1), "{runs}: {c:?}");
        }
        let c = counts(500);
        assert!(c.contains(&(Kind::Timeout, 20)), "{c:?}");
        assert!(c.contains(&(Kind::KilledReady, 25)), "{c:?}");
        assert!(c.contains(&(Kind::KilledProbing, 20)), "{c:?}");
    }

    #[test]
    fn the_same_seed_gives_the_same_mix_and_another_seed_another() {
        let a = build(200, 7, "12345678");
        let b = build(200, 7, "12345678");
        let c = build(200, 8, "12345678");
        let shape = |m: &[Planned]| -> Vec<(Kind, Workspace, u64)> {
            m.iter()
                .map(|p| (p.kind, p.workspace.clone(), p.kill_after_ms))
                .collect()
        };
        assert_eq!(shape(&a), shape(&b));
        assert_ne!(shape(&a), shape(&c));
    }

    #[test]
    fn every_payload_carries_its_marker_and_sleeps_carry_it_too() {
        for p in build(100, 1, "87654321") {
            let argv = p.argv();
            assert_eq!(argv[3], OsString::from(format!("loadjail-{}", p.marker)));
            let script = p.script();
            for (at, _) in script.match_indices("sleep ") {
                let word = script[at + 6..].split([' ', ';']).next().unwrap_or("");
                assert!(
                    word.starts_with("0.05") || word.ends_with(&p.marker),
                    "{}: `sleep {word}` does not carry {}",
                    p.kind.name(),
                    p.marker
                );
            }
        }
    }
}
