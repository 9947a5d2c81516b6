//! `power-state`: shutdown, reboot, halt, poweroff, suspend, runlevel changes, kexec, and the
//! same verbs asked of systemd over D-Bus. (Writes to `/proc/sysrq-trigger` are judged with the
//! other write targets in `device`.)

use super::Hit;
use crate::judge::Arg;
use crate::verdict::Rule;

const SYSTEMCTL_VERBS: &[&str] = &[
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "soft-reboot",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "suspend-then-hibernate",
    "sleep",
    "emergency",
    "rescue",
];

const TARGETS: &[&str] = &[
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "soft-reboot",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "suspend-then-hibernate",
    "sleep",
    "emergency",
    "rescue",
    "ctrl-alt-del",
];

const DBUS_METHODS: &[&str] = &[
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "suspend",
    "hibernate",
    "hybridsleep",
    "suspendthenhibernate",
    "sleep",
];

/// systemctl options that take a value as the next argument.
const SYSTEMCTL_VALUE: &[&str] = &[
    "-t",
    "--type",
    "-s",
    "--signal",
    "-p",
    "--property",
    "-H",
    "--host",
    "-M",
    "--machine",
    "--root",
    "-n",
    "--lines",
    "-o",
    "--output",
    "--kill-whom",
    "--kill-value",
    "--job-mode",
    "--state",
    "--what",
    "--boot-loader-entry",
    "--boot-loader-menu",
    "--timestamp",
    "--when",
    "--message",
    "--image",
    "--drop-in",
    "--reboot-argument",
    "--legend",
    "--preset-mode",
];

fn hit(what: &str) -> Option<Hit> {
    Some(Hit::new(
        Rule::PowerState,
        format!("{what} changes the machine's power state"),
    ))
}

/// Power verbs.
pub(crate) fn check(name: &str, args: &[Arg]) -> Option<Hit> {
    let texts: Vec<&str> = args.iter().map(Arg::text).collect();
    let help = texts.iter().any(|t| matches!(*t, "--help" | "--version"));
    match name {
        "shutdown" if texts == ["-c"] || help => None,
        "shutdown" | "reboot" | "halt" | "poweroff" if !help => hit(&format!("`{name}`")),
        "init" | "telinit" => {
            let level = texts.iter().find(|t| !t.starts_with('-'))?;
            if matches!(*level, "0" | "1" | "6" | "s" | "S" | "single" | "emergency") {
                hit(&format!("`{name} {level}`"))
            } else {
                None
            }
        }
        "systemctl" | "loginctl" => {
            let mut ops = Vec::new();
            let mut i = 0;
            while let Some(t) = texts.get(i) {
                i += 1;
                if SYSTEMCTL_VALUE.contains(t) {
                    i += 1;
                } else if !t.starts_with('-') {
                    ops.push(*t);
                }
            }
            let verb = *ops.first()?;
            if SYSTEMCTL_VERBS.contains(&verb) && !help {
                return hit(&format!("`{name} {verb}`"));
            }
            let starts = matches!(
                verb,
                "isolate" | "start" | "restart" | "reload-or-restart" | "try-restart"
            );
            ops[1..]
                .iter()
                .find(|unit| {
                    let unit = unit.strip_suffix(".target").unwrap_or(unit);
                    starts && TARGETS.contains(&unit)
                })
                .and_then(|unit| hit(&format!("`{name} {verb} {unit}`")))
        }
        "kexec"
            if texts
                .iter()
                .any(|t| matches!(*t, "-e" | "--exec" | "-f" | "--force")) =>
        {
            hit("`kexec -e`")
        }
        "busctl" | "dbus-send" | "gdbus" | "qdbus" => {
            let joined = texts.join(" ").to_lowercase();
            let login1 = joined.contains("login1") || joined.contains("systemd1");
            let method = texts.iter().any(|t| {
                let last = t.rsplit(['.', '/', ' ']).next().unwrap_or(t).to_lowercase();
                DBUS_METHODS.contains(&last.as_str())
            });
            if login1 && method {
                hit("a logind power call")
            } else {
                None
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::rule_of;
    use super::*;

    #[test]
    fn power_verbs() {
        for line in [
            "shutdown now",
            "shutdown -h now",
            "shutdown -r +5",
            "reboot",
            "reboot -f",
            "halt",
            "poweroff",
            "init 0",
            "init 6",
            "telinit 0",
            "systemctl poweroff",
            "systemctl reboot",
            "systemctl --force reboot",
            "systemctl -i suspend",
            "systemctl isolate rescue.target",
            "systemctl start poweroff.target",
            "systemctl hibernate",
            "kexec -e",
            "busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager PowerOff b false",
            "dbus-send --system --print-reply --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager.Reboot boolean:true",
        ] {
            assert_eq!(rule_of(line), Some(Rule::PowerState), "{line}");
        }
    }

    #[test]
    fn not_power_verbs() {
        for line in [
            "shutdown -c",
            "reboot --help",
            "systemctl status nginx",
            "systemctl --user restart app",
            "systemctl list-units",
            "init 3",
            "systemctl start docker",
            "loginctl list-sessions",
            "systemctl show -p Id reboot.target",
        ] {
            assert_eq!(rule_of(line), None, "{line}");
        }
    }
}
