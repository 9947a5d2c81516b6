//! A small test runner that speaks enough of libtest's command line and output for `cargo test`,
//! cargo-nextest and whatever reads their logs: filters (`NAME…`, `--exact`, `--skip`),
//! `--list` (`--format terse` too), one `test NAME ... ok|FAILED` line per test and a closing
//! `test result: ok|FAILED. N passed; M failed; …` line, exit status 101 when a test failed.
//!
//! Tests run one after the other on the main thread, each in its own `catch_unwind`: they count
//! and end this process's children (bubblewrap, waiting jails), which a test running on another
//! thread would disturb. `--test-threads` is accepted and ignored for that reason; the output is
//! never captured (`--nocapture` is the only behaviour).

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

/// One test: its name (`module::function`) and its body, which fails by panicking.
pub struct Test {
    pub name: &'static str,
    pub run: fn(),
}

/// What the command line asks for.
#[derive(Default)]
struct Options {
    filters: Vec<String>,
    skip: Vec<String>,
    exact: bool,
    list: bool,
    terse: bool,
    /// `--ignored`: only the ignored tests, and none is.
    only_ignored: bool,
}

/// libtest's options that take a value, and those that do not; both are accepted, and only
/// those read in [`parse`] change anything.
const WITH_VALUE: &[&str] = &[
    "--test-threads",
    "--color",
    "--format",
    "--logfile",
    "--shuffle-seed",
    "-Z",
];
const FLAGS: &[&str] = &[
    "--nocapture",
    "--no-capture",
    "--show-output",
    "--include-ignored",
    "--quiet",
    "-q",
    "--shuffle",
    "--force-run-in-process",
    "--test",
    "--report-time",
    "--ensure-time",
];

const USAGE: &str = "usage: launch [FILTER…] [--exact] [--skip PATTERN]… [--list [--format terse]] \
                     [--ignored] [--nocapture] [--test-threads N]";

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag {
            "--exact" => o.exact = true,
            "--list" => o.list = true,
            "--ignored" => o.only_ignored = true,
            "--skip" => o.skip.push(value()?),
            "--format" => o.terse = value()? == "terse",
            "-h" | "--help" => return Err(USAGE.to_owned()),
            f if WITH_VALUE.contains(&f) => {
                value()?;
            }
            f if FLAGS.contains(&f) => {}
            f if f.starts_with('-') => return Err(format!("unknown option {f}\n{USAGE}")),
            _ => o.filters.push(arg.clone()),
        }
    }
    Ok(o)
}

impl Options {
    fn matches(&self, pattern: &str, name: &str) -> bool {
        if self.exact {
            name == pattern
        } else {
            name.contains(pattern)
        }
    }

    fn selects(&self, name: &str) -> bool {
        !self.only_ignored
            && (self.filters.is_empty() || self.filters.iter().any(|f| self.matches(f, name)))
            && !self.skip.iter().any(|s| self.matches(s, name))
    }
}

/// Runs the tests `args` (the command line after the program's name) selects, as libtest would.
pub fn run(tests: &[Test], args: &[String]) -> ExitCode {
    let options = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let selected: Vec<&Test> = tests.iter().filter(|t| options.selects(t.name)).collect();
    if options.list {
        for t in &selected {
            println!("{}: test", t.name);
        }
        if !options.terse {
            println!("\n{} tests, 0 benchmarks", selected.len());
        }
        return ExitCode::SUCCESS;
    }

    let started = Instant::now();
    let plural = if selected.len() == 1 { "" } else { "s" };
    println!("\nrunning {} test{plural}", selected.len());
    let mut failed = Vec::new();
    for t in &selected {
        print!("test {} ... ", t.name);
        let _ = std::io::stdout().flush();
        // Output of the test itself (a panic's message included) goes to the terminal as it
        // happens, so the verdict is printed on a line of its own.
        let outcome = std::panic::catch_unwind(t.run);
        let _ = std::io::stderr().flush();
        if outcome.is_ok() {
            println!("ok");
        } else {
            println!("\ntest {} ... FAILED", t.name);
            failed.push(t.name);
        }
    }
    if !failed.is_empty() {
        println!("\nfailures:");
        for name in &failed {
            println!("    {name}");
        }
    }
    let verdict = if failed.is_empty() { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {verdict}. {} passed; {} failed; 0 ignored; 0 measured; {} filtered out; finished in {:.2}s\n",
        selected.len() - failed.len(),
        failed.len(),
        tests.len() - selected.len(),
        started.elapsed().as_secs_f64()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(101)
    }
}
