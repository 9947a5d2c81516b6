//! The bench's results as rows, printed as a table, written as JSON and as docs/benchmarks.md.
//!
//! docs/benchmarks.md is shared: the section between `<!-- load:begin -->` and
//! `<!-- load:end -->` belongs to `cargo xtask load` and is carried over byte for byte; everything
//! else is rewritten here.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use cordon_test_support::error::Error;

/// Which table a row belongs to; each names what its ratios are relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    /// Whole-process launch of `/bin/true`; ratios to bubblewrap with cordon's isolation.
    Launch,
    /// `cordon run` and `Launcher::run_prepared` in an empty workspace vs a 100,000-file one.
    RepoSize,
    /// The per-session scan vs `find` with the same predicates.
    Scan,
    /// The same, in CPU time rather than wall-clock time.
    ScanCpu,
    /// In-process steps, in microseconds; ratios are shares of one bubblewrap launch.
    Micro,
    /// The proxy network: each row against the same command in the mode it replaces.
    Proxy,
    /// The copy-on-write layer's workloads: each `--layer` row against the same `--live`.
    Layer,
}

impl Section {
    pub const ALL: [Section; 7] = [
        Section::Launch,
        Section::RepoSize,
        Section::Scan,
        Section::ScanCpu,
        Section::Micro,
        Section::Proxy,
        Section::Layer,
    ];

    fn title(self) -> &'static str {
        match self {
            Section::Launch => "Launch of `/bin/true`, whole process",
            Section::RepoSize => "Flat in repository size",
            Section::Scan => "Per-session scan of 100,000 files",
            Section::ScanCpu => "Per-session scan of 100,000 files, CPU time",
            Section::Micro => "In-process steps",
            Section::Proxy => "Network by destination (`--network proxy`)",
            Section::Layer => "Workloads under the copy-on-write layer (`--layer`)",
        }
    }

    fn ratio_to(self) -> &'static str {
        match self {
            Section::Launch => "ratio to `bwrap (same isolation)`",
            Section::RepoSize => "ratio to the same launcher in the empty workspace",
            Section::Scan => "ratio to `find`",
            Section::ScanCpu => "user and system time of every thread; ratio to `find`'s",
            Section::Micro => "ratio: share of one `bwrap (same isolation)` launch",
            Section::Proxy => {
                "ratio to the row above it: the same command with the network denied (`/bin/true`) or allowed (`curl`)"
            }
            Section::Layer => {
                "ratio to the row above it: the same command written through (`--live`), each mode in a workspace of its own"
            }
        }
    }
}

/// One measured line.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub section: Section,
    pub what: String,
    #[serde(rename = "median_us", serialize_with = "micros")]
    pub median: Duration,
    pub samples: usize,
    /// Median divided by the section's reference median.
    pub ratio: f64,
    /// The ratio must be at most this.
    pub target: Option<f64>,
    /// Where the target comes from.
    pub target_source: Option<&'static str>,
}

fn micros<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1e6 * 10.0).round() / 10.0)
}

impl Row {
    pub fn met(&self) -> Option<bool> {
        self.target.map(|t| self.ratio <= t)
    }

    fn median_text(&self) -> String {
        let us = self.median.as_secs_f64() * 1e6;
        if us < 1000.0 {
            format!("{us:.1} µs")
        } else {
            format!("{:.2} ms", us / 1000.0)
        }
    }

    fn ratio_text(&self) -> String {
        if self.section == Section::Micro {
            format!("{:.3}×", self.ratio)
        } else {
            format!("{:.2}×", self.ratio)
        }
    }

    fn target_text(&self) -> String {
        self.target
            .map_or_else(|| "—".to_owned(), |t| format!("≤ {t:.2}×"))
    }

    fn met_text(&self) -> &'static str {
        match self.met() {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "—",
        }
    }
}

/// What the machine was while measuring.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub date: String,
    pub cpu: String,
    pub cores: usize,
    pub memory: String,
    pub kernel: String,
    pub bwrap: String,
    pub rustc: String,
    pub user: String,
    pub load_before: String,
    pub load_after: String,
}

/// Everything one run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub runs: usize,
    pub scan_rounds: usize,
    pub tree: String,
    pub machine: Machine,
    pub rows: Vec<Row>,
}

impl Report {
    /// The tables as the terminal shows them.
    pub fn print(&self) {
        for section in Section::ALL {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.section == section).collect();
            if rows.is_empty() {
                continue;
            }
            println!("\n{} ({})", section.title(), section.ratio_to());
            println!(
                "  {:<48} {:>10} {:>9} {:>9} {:>5}",
                "what", "median", "ratio", "target", "met?"
            );
            for r in rows {
                println!(
                    "  {:<48} {:>10} {:>9} {:>9} {:>5}",
                    r.what,
                    r.median_text(),
                    r.ratio_text(),
                    r.target_text(),
                    r.met_text().trim_matches('*')
                );
            }
        }
        println!(
            "\nmachine: {} ({} cores), kernel {}, {}; load average {} before, {} after",
            self.machine.cpu,
            self.machine.cores,
            self.machine.kernel,
            self.machine.bwrap,
            self.machine.load_before,
            self.machine.load_after
        );
    }

    pub fn write_json(&self, path: &Path) -> Result<(), Error> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::Bench(format!("cannot encode the report as JSON: {e}")))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| Error::Bench(format!("cannot write {}: {e}", path.display())))
    }

    fn markdown_tables(&self) -> String {
        let mut out = String::new();
        for section in Section::ALL {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.section == section).collect();
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(out, "### {}\n", section.title());
            let _ = writeln!(out, "Medians; {}.\n", section.ratio_to());
            out.push_str("| what | median | ratio | target | met? |\n|---|---:|---:|---:|:---:|\n");
            for r in rows {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    r.what,
                    r.median_text(),
                    r.ratio_text(),
                    r.target_text(),
                    r.met_text()
                );
            }
            out.push('\n');
        }
        out
    }

    /// The generated part of docs/benchmarks.md.
    fn markdown(&self) -> String {
        let m = &self.machine;
        let mut out = String::from("# Benchmarks\n\n");
        out.push_str(&wrap(
            "Everything above the load section is written by `cargo xtask bench` \
             (`tests/bench/`); rerun it to refresh the figures rather than editing them. It \
             measures and reports; it asserts nothing and is not a CI step. `--runs N` sets the \
             samples per row (default 200, a little over a minute once built; the first run also \
             builds cordon and the bench in release mode).",
            "",
            "",
        ));
        out.push('\n');
        out.push_str(&wrap(
            &format!(
                "Measured {} as {} on {} ({} cores, {}), kernel {}, {}, {}. Load average {} \
                 before and {} after the run: other work on the machine is noise in every row \
                 alike, since the rows are interleaved, but it widens every figure.",
                m.date,
                m.user,
                m.cpu,
                m.cores,
                m.memory,
                m.kernel,
                m.bwrap,
                m.rustc,
                m.load_before,
                m.load_after
            ),
            "",
            "",
        ));
        out.push_str("\n## Results\n\n");
        out.push_str(&self.markdown_tables());
        out.push_str(&self.notes());
        out.push_str(&self.method());
        out
    }

    /// Observations that follow from this run's figures.
    fn notes(&self) -> String {
        let scan = |prefix: &str| {
            self.rows
                .iter()
                .find(|r| r.section == Section::Scan && r.what.starts_with(prefix))
                .map(|r| r.median.as_secs_f64())
        };
        let mut out = String::new();
        if let (Some(all), Some(one)) = (scan("cordon-scan ("), scan(ONE_CORE_ROW))
            && one < all * 1.1
        {
            out.push_str(&wrap(
                "The scan took about as long on one core as with every worker: the machine's \
                 other core was busy with other work (see the load average), so this run does not \
                 show what a second free core gains. Its CPU time is the steadier comparison.",
                "",
                "",
            ));
            out.push('\n');
        }
        out
    }

    fn method(&self) -> String {
        let bullets = [
            format!(
                "**Launch.** Each command runs {runs} times (after 10 unrecorded warm-up \
                 rounds), round-robin, so that noise hits every row alike; the median is \
                 reported. `bwrap (same isolation)` is exactly the option list `cordon explain` \
                 prints (every namespace, mount, mask and environment variable, the same seccomp \
                 program on a descriptor) minus cordon's in-jail stage (and so without its \
                 self-check and its Landlock second wall); `bwrap (seed flags)` is the seed \
                 design's command line without seccomp. `cordon run (CLI)` is the binary \
                 `cargo xtask dist` builds (statically linked: a command executes it twice, as \
                 the CLI and the in-jail stage; the CLI forks its session reaper) with a warm probe \
                 cache, as every run after the first; the dynamically linked `cargo build \
                 --release` binary has a row of its own. `cordon serve` is one session of that \
                 binary started before timing: each sample writes one request line \
                 (`[\"/bin/true\"]`) and reads its answer, then pauses 20 ms untimed, in which \
                 the session builds its next jail. The library rows run in this process \
                 (built in release mode) with that static binary as the stage, as a harness \
                 would: one `Launcher`, a plan resolved once, the session prepared once \
                 (`Launcher::prepare`, the walk). `Launcher::run_prepared (library)` is a command \
                 handed to the jail the session built ahead of it (cordon-launch's `warm.rs`): \
                 that jail was built after the previous command returned, and its build is waited \
                 for outside the timed call, as an agent's pause between commands allows, so it \
                 overlaps no other row; the timed call includes building the host-side part of the \
                 next jail. `back to back` times a second `run_prepared` issued as soon as the \
                 first returned, so its jail is still being built: what a harness without pauses \
                 gets. `Launcher::run (library, a jail built per command)` builds and checks a \
                 jail while the caller waits, as `cordon run` does. The targets: 1.15× for the \
                 CLI, 1.05× for the library.",
                runs = self.runs
            ),
            format!(
                "**Flat in repository size.** `cordon run -- /bin/true` and `run_prepared` with \
                 the workspace empty and with a workspace of {tree}, in the same interleaved \
                 rounds as the launch rows (each prepared session walked its own workspace once, \
                 before timing). Every session case has a workspace of its own (an empty one \
                 each, and a second copy of the tree for the library), as a harness's session \
                 has: its jails keep the protected paths' placeholders in it, which a `cordon \
                 run` in the same workspace would find made already. Nothing per command may \
                 walk the tree, so each ratio must stay at most 1.10.",
                tree = self.tree
            ),
            format!(
                "**Scan.** `cordon_scan::scan` of that workspace, in process, against `find ROOT \
                 -xdev \\( -type s -o -type p -o -type b -o -type c -o \\( -type f -links +1 \\) \
                 \\) -print` (output to /dev/null), {scan} rounds, interleaved, after 2 warm-up \
                 rounds, so both read a warm dentry and inode cache (a first scan after a reboot \
                 reads the disk, and is slower for both). Nearly all of either is kernel time: \
                 one `fstatat` per regular file for its link count. The scan does at least what \
                 find does (it also reads the mount table, records every multiply-linked file \
                 and refuses to enter any mount), so the target is 1.00×. It reads directories \
                 on up to 4 worker threads where find uses one; the one-core row pins every \
                 worker to a single CPU to show the walk without that help. The row with deny \
                 globs matches {globs} credential-shaped globs (`**/.env`, `**/*.pem`, …) during \
                 the same walk. `Launcher::prepare` is what a session pays once: the walk of the \
                 plan's writable roots and the refusal if anything was found. The CPU-time table adds up user and system time: find's from \
                 `/proc/PID/schedstat` just before it is reaped, the scan's from \
                 `CLOCK_PROCESS_CPUTIME_ID` around the call (every worker thread counted). Other \
                 work on the machine stretches wall-clock time far more than CPU time, so that \
                 table is the steadier comparison of the work each does.",
                scan = self.scan_rounds,
                globs = super::tree::DENY_GLOBS.len()
            ),
            format!(
                "**In-process steps.** Each is timed in {runs} batches sized to about 100 µs, \
                 median per call, in the release build. `Plan::resolve` resolves the Shell \
                 profile on this host (it canonicalizes paths and looks for every credential \
                 mask); `ChildEnv::build` filters a {env}-variable host environment (toolchain, \
                 locale, desktop, agent sockets, cloud tokens, loader variables); the seccomp row \
                 builds the host's filter spec and compiles it to BPF; `cordon_bwrap::build` \
                 writes the whole argument list for the resolved plan with the stage; the \
                 Seatbelt row generates a macOS profile with 1,000 glob rules on the fake typical \
                 host; the floor row judges one command line of {floor} bytes that it allows \
                 (pipelines, substitutions, `sh -c`, wrappers, a here-document), so it reads all \
                 of it; `Snapshot::check` is the per-command re-check of the scanned root (one \
                 `statx`). None has a target of its own; the ratio is the share of one \
                 bubblewrap launch each costs.",
                runs = self.runs,
                env = super::micro::HOST_ENV_SIZE,
                floor = super::thousands(super::micro::floor_command_len() as u64)
            ),
        ];
        let mut out = String::from("## How it is measured\n\n");
        for b in &bullets {
            out.push_str(&wrap(b, "- ", "  "));
        }
        out.push('\n');
        out
    }

    /// Rewrites docs/benchmarks.md, carrying the load section over byte for byte.
    pub fn write_docs(&self, path: &Path) -> Result<(), Error> {
        let existing = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(Error::Bench(format!("cannot read {}: {e}", path.display()))),
        };
        let load = load_section(&existing).map_err(|why| {
            Error::Bench(format!(
                "{} has a broken load section ({why}); fix its markers by hand, nothing was \
                 written",
                path.display()
            ))
        })?;
        let mut text = self.markdown();
        text.push_str(&load);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        std::fs::write(path, text)
            .map_err(|e| Error::Bench(format!("cannot write {}: {e}", path.display())))
    }
}

/// Wraps `text` at 100 columns, the first line after `first`, the others after `rest`.
fn wrap(text: &str, first: &str, rest: &str) -> String {
    const WIDTH: usize = 100;
    let mut out = String::new();
    let mut line = first.to_owned();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_owned();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The scan row whose workers are pinned to one CPU.
pub const ONE_CORE_ROW: &str = "cordon-scan, every worker on one core";

pub const LOAD_BEGIN: &str = "<!-- load:begin -->";
pub const LOAD_END: &str = "<!-- load:end -->";

/// The load section of `text`, markers included, exactly as it is; empty markers when absent.
fn load_section(text: &str) -> Result<String, &'static str> {
    match (text.find(LOAD_BEGIN), text.find(LOAD_END)) {
        (None, None) => Ok(format!("{LOAD_BEGIN}\n{LOAD_END}\n")),
        (Some(begin), Some(end)) if begin < end => {
            let end = end + LOAD_END.len();
            // Keep the line break after the end marker, if any, so the section is untouched.
            let end = if text[end..].starts_with('\n') {
                end + 1
            } else {
                end
            };
            Ok(text[begin..end].to_owned())
        }
        (Some(_), None) => Err("a begin marker without an end marker"),
        (None, Some(_)) => Err("an end marker without a begin marker"),
        (Some(_), Some(_)) => Err("the end marker comes before the begin marker"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        let row = |section, what: &str, us: u64, ratio, target| Row {
            section,
            what: what.to_owned(),
            median: Duration::from_micros(us),
            samples: 5,
            ratio,
            target,
            target_source: target.map(|_| "test"),
        };
        Report {
            runs: 5,
            scan_rounds: 5,
            tree: "3 files".into(),
            machine: Machine {
                date: "2000-01-01".into(),
                cpu: "cpu".into(),
                cores: 2,
                memory: "1 GiB RAM".into(),
                kernel: "6.0".into(),
                bwrap: "bubblewrap 0.8.0".into(),
                rustc: "rustc".into(),
                user: "root".into(),
                load_before: "0 0 0".into(),
                load_after: "0 0 0".into(),
            },
            rows: vec![
                row(Section::Launch, "bwrap (same isolation)", 5000, 1.0, None),
                row(Section::Launch, "cordon run (CLI)", 6000, 1.2, Some(1.15)),
                row(Section::Scan, "cordon-scan", 90_000, 0.9, Some(1.0)),
                row(Section::Micro, "Snapshot::check", 1, 0.0002, None),
            ],
        }
    }

    #[test]
    fn tables_say_whether_each_target_is_met() {
        let text = sample().markdown();
        assert!(
            text.contains("| cordon run (CLI) | 6.00 ms | 1.20× | ≤ 1.15× | **no** |"),
            "{text}"
        );
        assert!(
            text.contains("| cordon-scan | 90.00 ms | 0.90× | ≤ 1.00× | yes |"),
            "{text}"
        );
        assert!(
            text.contains("| Snapshot::check | 1.0 µs | 0.000× | — | — |"),
            "{text}"
        );
        // Two scan rows alike: the note says the second core was busy.
        let mut report = sample();
        assert!(report.notes().is_empty());
        report.rows.push(Row {
            section: Section::Scan,
            what: "cordon-scan (3 entries)".into(),
            ..report.rows[2].clone()
        });
        report.rows.push(Row {
            what: ONE_CORE_ROW.into(),
            ..report.rows[2].clone()
        });
        assert!(
            report.notes().contains("other core was busy"),
            "{}",
            report.notes()
        );
        report.rows.last_mut().unwrap().median = Duration::from_micros(180_000);
        assert!(report.notes().is_empty());
        // No row, no table.
        assert!(
            !sample()
                .markdown_tables()
                .contains(Section::RepoSize.title())
        );
        assert!(sample().markdown_tables().contains(Section::Scan.title()));
    }

    #[test]
    fn docs_and_json_are_written_and_the_load_section_survives() {
        let dir = std::env::temp_dir().join(format!("cordon-bench-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let docs = dir.join("benchmarks.md");
        let load = "<!-- load:begin -->\nload text, not ours\n\n<!-- load:end -->\n";
        std::fs::write(&docs, format!("# old\n\n{load}")).unwrap();
        let report = sample();
        report.write_docs(&docs).unwrap();
        report.write_docs(&docs).unwrap();
        let text = std::fs::read_to_string(&docs).unwrap();
        assert!(text.starts_with("# Benchmarks\n"));
        assert!(text.ends_with(load), "{text}");
        assert_eq!(text.matches(LOAD_BEGIN).count(), 1);

        let json = dir.join("bench.json");
        report.write_json(&json).unwrap();
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(value["rows"][1]["median_us"], 6000.0);
        assert_eq!(value["rows"][1]["section"], "launch");
        assert_eq!(value["rows"][1]["target"], 1.15);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn prose_wraps_at_100_columns_without_losing_words() {
        let text = "word ".repeat(60);
        let wrapped = wrap(&text, "- ", "  ");
        assert!(
            wrapped.lines().all(|l| l.chars().count() <= 100),
            "{wrapped}"
        );
        assert!(wrapped.starts_with("- word"));
        assert!(wrapped.lines().skip(1).all(|l| l.starts_with("  word")));
        assert_eq!(
            wrapped.split_whitespace().filter(|w| *w == "word").count(),
            60
        );
    }

    #[test]
    fn the_load_section_is_carried_over_byte_for_byte() {
        let section = "<!-- load:begin -->\n## Load\n\n| a | b |\n|---|---|\n  trailing  \n<!-- load:end -->\n";
        let text = format!("# old bench text\n\nold numbers\n\n{section}");
        assert_eq!(load_section(&text).unwrap(), section);
        // Without a trailing newline after the end marker.
        let bare = section.trim_end_matches('\n');
        assert_eq!(load_section(&format!("x\n{bare}")).unwrap(), bare);
        // Absent: empty markers for the other engineer to fill.
        assert_eq!(
            load_section("# nothing yet\n").unwrap(),
            "<!-- load:begin -->\n<!-- load:end -->\n"
        );
        assert!(load_section("<!-- load:begin -->\nhalf").is_err());
        assert!(load_section("<!-- load:end -->\n<!-- load:begin -->\n").is_err());
    }
}
