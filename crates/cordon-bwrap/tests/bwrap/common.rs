//! Shared by the integration tests: fixed inputs, and an independent reader of the produced
//! option list that knows each option's arity.

#![allow(dead_code)] // `Step::is_mask` is for the fuzz target bwrap_args, which includes this file

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use cordon_bwrap::{BwrapArgs, Descriptors, Features, Request, build};
use cordon_policy::{FakeHost, Invocation, Plan, Policy, PolicyBuilder, Posture, Profile, Source};

pub const VERSION_080: &str = include_str!("../fixtures/bwrap-0.8.0-version.txt");
pub const HELP_080: &str = include_str!("../fixtures/bwrap-0.8.0-help.txt");

/// The features of the bubblewrap on the development machine.
pub fn features() -> Features {
    Features::parse(VERSION_080, HELP_080)
}

pub fn env() -> BTreeMap<OsString, OsString> {
    BTreeMap::from([
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("HOME".into(), "/home/u".into()),
        ("LANG".into(), "C.UTF-8".into()),
    ])
}

pub fn argv(parts: &[&str]) -> Vec<OsString> {
    parts.iter().map(OsString::from).collect()
}

pub const FDS: Descriptors = Descriptors { seccomp: 4 };

pub fn policy(profile: Profile, posture: Posture) -> Policy {
    let mut b = PolicyBuilder::new(profile);
    b.set_posture(posture, Source::Caller);
    b.build()
}

pub fn plan_at(policy: &Policy, host: &FakeHost, cwd: &str) -> Plan {
    Plan::resolve(policy, &Invocation::at(cwd), host).unwrap()
}

pub fn typical_plan(profile: Profile, posture: Posture) -> Plan {
    plan_at(
        &policy(profile, posture),
        &FakeHost::typical(),
        "/home/u/proj",
    )
}

pub fn build_plan(plan: &Plan, stage: Option<&Path>, cmd: &[OsString]) -> BwrapArgs {
    let features = features();
    let env = env();
    build(&Request {
        plan: &plan.guard(&cordon_policy::FakeHost::typical()),
        brokers: &[],
        features: &features,
        env: &env,
        fds: FDS,
        stage,
        argv: cmd,
    })
    .unwrap()
}

/// One option with its operands, as read back from a flat list.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Step {
    pub flag: String,
    pub operands: Vec<OsString>,
}

impl Step {
    /// The path the step mounts at, if it is a mount step.
    pub fn dest(&self) -> Option<PathBuf> {
        match self.flag.as_str() {
            "--ro-bind" | "--ro-bind-try" | "--bind" | "--symlink" => {
                Some(PathBuf::from(&self.operands[1]))
            }
            "--tmpfs" | "--dev" | "--proc" | "--remount-ro" => {
                Some(PathBuf::from(&self.operands[0]))
            }
            _ => None,
        }
    }

    pub fn is_mask(&self, next: Option<&Step>) -> bool {
        (self.flag == "--ro-bind" && self.operands[0] == "/dev/null")
            || (self.flag == "--tmpfs"
                && next.is_some_and(|n| n.flag == "--remount-ro" && n.operands == self.operands))
    }
}

/// Reads a flat option list back into steps. Panics on an option this crate never emits or an
/// option with too few operands: that would be a change of structure.
pub fn read_options(options: &[OsString]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut i = 0;
    while i < options.len() {
        let flag = options[i]
            .to_str()
            .unwrap_or_else(|| panic!("option position {i} holds a non-UTF-8 argument"))
            .to_owned();
        let arity = match flag.as_str() {
            "--new-session"
            | "--die-with-parent"
            | "--unshare-user"
            | "--disable-userns"
            | "--unshare-pid"
            | "--unshare-ipc"
            | "--unshare-uts"
            | "--unshare-cgroup-try"
            | "--unshare-net"
            | "--clearenv" => 0,
            "--cap-drop" | "--chdir" | "--seccomp" | "--perms" | "--size" | "--tmpfs" | "--dev"
            | "--proc" | "--remount-ro" => 1,
            "--setenv" | "--ro-bind" | "--ro-bind-try" | "--bind" | "--symlink" => 2,
            other => panic!("unexpected option {other:?} at position {i} in {options:?}"),
        };
        assert!(i + arity < options.len(), "{flag} lacks operands");
        steps.push(Step {
            flag,
            operands: options[i + 1..=i + arity].to_vec(),
        });
        i += 1 + arity;
    }
    steps
}

/// The position of the first rendered line equal to `line`, panicking with the whole list when
/// there is none.
pub fn line_of(args: &BwrapArgs, line: &str) -> usize {
    let text = args.render();
    text.lines()
        .position(|l| l == line)
        .unwrap_or_else(|| panic!("no line {line:?} in:\n{text}"))
}
