//! `recursive-delete` (`rm`, `find -delete`, `find -exec`, `rsync --delete`) and
//! `recursive-permissions-root` (`chmod`, `chown`, `chgrp`, `chattr`, `setfacl`).

use super::{Ctx, Hit, has_flag, operands};
use crate::judge::Arg;
use crate::paths::{deletion_danger, permission_danger, resolve};
use crate::verdict::Rule;

/// The first reading of `arg` whose recursive deletion is refused, with the reason.
fn dangerous_target(arg: &Arg, ctx: &Ctx<'_>) -> Option<String> {
    arg.readings.iter().find_map(|reading| {
        let resolved = resolve(reading, ctx.paths)?;
        let why = deletion_danger(&resolved, ctx.paths)?;
        Some(format!("recursive deletion of `{reading}`: {why}"))
    })
}

/// `rm -r` (any spelling: `-rf`, `-fR`, `-r -f`, `--recursive`, options after operands).
pub(crate) fn rm(args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    if !has_flag(args, "rR", &["recursive"]) {
        return None;
    }
    operands(args)
        .into_iter()
        .find_map(|a| dangerous_target(a, ctx))
        .map(|why| Hit::new(Rule::RecursiveDelete, why))
}

/// `rimraf PATH…` (npm): always recursive.
pub(crate) fn rimraf(args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    operands(args)
        .into_iter()
        .find_map(|a| dangerous_target(a, ctx))
        .map(|why| Hit::new(Rule::RecursiveDelete, why))
}

/// Recursive-delete calls of interpreter one-liners, with a literal path:
/// `shutil.rmtree('/')`, `FileUtils.rm_rf("~")`, `fs.rmSync('/', {recursive: true})`,
/// `rmtree(os.path.expanduser('~'))`.
pub(crate) fn interpreter(args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    const CALLS: &[&str] = &[
        "rmtree(",
        "rm_rf(",
        "rm_r(",
        "remove_dir_all(",
        "rmsync(",
        "rimraf(",
        "rimraf.sync(",
        "fs.rm(",
        "remove_tree(",
        "rmdir_p(",
    ];
    for code in args.iter().flat_map(|a| a.readings.iter()) {
        // ASCII lower-casing keeps byte offsets, so the literal is taken from the original.
        let lower = code.to_ascii_lowercase();
        for call in CALLS {
            for (at, _) in lower.match_indices(call) {
                let mut rest = code[at + call.len()..].trim_start();
                for wrapper in [
                    "os.path.expanduser(",
                    "path.expanduser(",
                    "File.expand_path(",
                ] {
                    rest = rest.strip_prefix(wrapper).unwrap_or(rest).trim_start();
                }
                let Some(quote) = rest
                    .chars()
                    .next()
                    .filter(|q| matches!(q, '\'' | '"' | '`'))
                else {
                    continue;
                };
                let Some(literal) = rest[1..].split(quote).next() else {
                    continue;
                };
                let target = Arg::plain(literal.to_owned());
                if let Some(why) = dangerous_target(&target, ctx) {
                    return Some(Hit::new(
                        Rule::RecursiveDelete,
                        format!("`{}` {why}", call.trim_end_matches('(')),
                    ));
                }
            }
        }
    }
    None
}

/// Predicates that narrow what `find` acts on, so `find ~ -name '*.pyc' -delete` is a cleanup and
/// not a wipe. `-type` alone does not narrow enough.
const FILTERS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-size",
    "-user",
    "-uid",
    "-group",
    "-gid",
    "-perm",
    "-inum",
    "-samefile",
    "-links",
    "-used",
    "-empty",
    "-nouser",
    "-nogroup",
    "-newer",
    "-anewer",
    "-cnewer",
    "-context",
];

/// Predicates that take one value.
const WITH_VALUE: &[&str] = &[
    "-maxdepth",
    "-mindepth",
    "-type",
    "-xtype",
    "-fstype",
    "-printf",
    "-fprint",
    "-fprint0",
    "-fls",
    "-regextype",
    "-D",
    "-files0-from",
];

/// `find ROOTS… EXPR`: refused when it deletes a protected root unfiltered; returns the commands
/// of `-exec`/`-execdir`/`-ok`, `{}` standing for the roots when unfiltered, for the judge.
pub(crate) fn find(args: &[Arg], ctx: &Ctx<'_>) -> (Option<Hit>, Vec<Vec<Arg>>) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.text() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let mut roots: Vec<&Arg> = Vec::new();
    while let Some(a) = args.get(i) {
        let t = a.text();
        if t.starts_with('-') || t == "(" || t == "!" || t == "," {
            break;
        }
        roots.push(a);
        i += 1;
    }
    let mut deleting = false;
    let mut filtered = false;
    let mut mindepth = 0u32;
    let mut execs: Vec<Vec<Arg>> = Vec::new();
    while let Some(a) = args.get(i) {
        let t = a.text();
        i += 1;
        match t {
            "-delete" => deleting = true,
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let mut cmd = Vec::new();
                while let Some(a) = args.get(i) {
                    i += 1;
                    if a.text() == ";" || a.text() == "+" {
                        break;
                    }
                    cmd.push(a.clone());
                }
                execs.push(cmd);
            }
            "-mindepth" => {
                mindepth = args.get(i).and_then(|v| v.text().parse().ok()).unwrap_or(0);
                i += 1;
            }
            _ if FILTERS.contains(&t) || t.starts_with("-newer") => {
                filtered = true;
                if !matches!(t, "-empty" | "-nouser" | "-nogroup") {
                    i += 1;
                }
            }
            _ if WITH_VALUE.contains(&t) => i += 1,
            _ => {}
        }
    }
    let dot = Arg::plain(".".to_owned());
    if roots.is_empty() {
        roots.push(&dot);
    }
    // With -mindepth 1 the roots themselves stay: what goes is everything in them.
    let targets: Vec<Arg> = roots
        .iter()
        .map(|r| Arg {
            readings: r
                .readings
                .iter()
                .map(|t| {
                    if mindepth >= 1 {
                        format!("{}/*", t.trim_end_matches('/'))
                    } else {
                        t.clone()
                    }
                })
                .collect(),
            looks_up_protected: false,
        })
        .collect();
    if deleting && !filtered {
        for t in &targets {
            if let Some(why) = dangerous_target(t, ctx) {
                return (
                    Some(Hit::new(
                        Rule::RecursiveDelete,
                        format!("find -delete: {why}"),
                    )),
                    execs,
                );
            }
        }
    }
    if !filtered {
        let root_readings: Vec<String> = roots.iter().flat_map(|r| r.readings.clone()).collect();
        for cmd in &mut execs {
            for a in cmd.iter_mut() {
                if a.readings.iter().any(|r| r.contains("{}")) {
                    a.readings = a
                        .readings
                        .iter()
                        .flat_map(|r| root_readings.iter().map(move |root| r.replace("{}", root)))
                        .collect();
                }
            }
        }
    }
    (None, execs)
}

/// Long rsync options that take their value as the next argument when written without `=`.
const RSYNC_VALUE: &[&str] = &[
    "--exclude",
    "--include",
    "--filter",
    "--files-from",
    "--exclude-from",
    "--include-from",
    "--partial-dir",
    "--temp-dir",
    "--backup-dir",
    "--compare-dest",
    "--copy-dest",
    "--link-dest",
    "--log-file",
    "--chmod",
    "--chown",
    "--usermap",
    "--groupmap",
    "--timeout",
    "--bwlimit",
    "--max-size",
    "--min-size",
    "--port",
    "--password-file",
    "--suffix",
    "--out-format",
    "--info",
    "--debug",
    "--iconv",
    "--rsh",
    "--rsync-path",
    "--sockopts",
    "--contimeout",
    "--modify-window",
];

/// `rsync --delete SRC DEST` empties DEST of what SRC lacks: an empty SRC wipes DEST.
pub(crate) fn rsync(args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    let deleting = args.iter().any(|a| {
        a.readings
            .iter()
            .any(|r| r.starts_with("--del") || r == "--remove-source-files")
    });
    if !deleting {
        return None;
    }
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text();
        i += 1;
        let takes_value = RSYNC_VALUE.contains(&t)
            || (t.len() == 2 && t.starts_with('-') && "efTBM".contains(&t[1..]));
        if takes_value {
            i += 1;
        } else if !t.starts_with('-') {
            operands.push(a);
        }
    }
    if operands.len() < 2 {
        return None;
    }
    let dest = operands.last()?;
    if dest.text().contains(':') {
        return None;
    }
    dangerous_target(dest, ctx).map(|why| {
        Hit::new(
            Rule::RecursiveDelete,
            format!("rsync --delete into it: {why}"),
        )
    })
}

/// Recursive permission or ownership changes of `/` or a system tree.
pub(crate) fn permissions(name: &str, args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    if !has_flag(args, "R", &["recursive"]) {
        return None;
    }
    operands(args).into_iter().find_map(|a| {
        a.readings.iter().find_map(|reading| {
            let resolved = resolve(reading, ctx.paths)?;
            let why = permission_danger(&resolved)?;
            Some(Hit::new(
                Rule::RecursivePermissionsRoot,
                format!("recursive `{name}` of `{reading}`: {why}"),
            ))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{args, rule_of, with_ctx};
    use super::*;

    #[test]
    fn rm_of_root_home_and_system_directories_in_any_spelling() {
        for line in [
            "rm -rf /",
            "rm -fr /",
            "rm -r -f /",
            "rm -Rf /",
            "rm --recursive --force /",
            "rm -rf --no-preserve-root /",
            "rm / -rf",
            "rm -rf -- /",
            "rm -rfv /usr",
            "rm -rf ~",
            "rm -rf $HOME",
            "rm -rf /home/u",
            "rm -rf /etc/",
            "rm -rf /*",
            "rm -rf ~/*",
            "rm -r /var",
            "rm --recur /boot",
            "srm -r /",
        ] {
            assert_eq!(rule_of(line), Some(Rule::RecursiveDelete), "{line}");
        }
    }

    #[test]
    fn rimraf_is_always_recursive() {
        assert_eq!(rule_of("rimraf /"), Some(Rule::RecursiveDelete));
        assert_eq!(rule_of("rimraf --glob ~/*"), Some(Rule::RecursiveDelete));
        assert_eq!(rule_of("rimraf dist"), None);
    }

    #[test]
    fn rm_of_everything_else() {
        for line in [
            "rm -rf ./build",
            "rm -rf build/",
            "rm -f /",
            "rm /etc/passwd",
            "rm -rf /tmp/x",
            "rm -rf ~/.cache/pip",
            "rm -- -rf /x",
            "rm -rf node_modules target",
            "rm -rf /tmp/*",
        ] {
            assert_eq!(rule_of(line), None, "{line}");
        }
    }

    #[test]
    fn interpreter_one_liners() {
        with_ctx(|ctx| {
            for code in [
                "import shutil; shutil.rmtree('/')",
                "require 'fileutils'; FileUtils.rm_rf(\"~\")",
                "require('fs').rmSync('/', {recursive: true})",
                "import shutil, os; shutil.rmtree(os.path.expanduser('~'))",
                "import shutil; shutil.rmtree('/Users')",
            ] {
                let a = [Arg::plain(code.to_owned())];
                assert_eq!(
                    interpreter(&a, ctx).map(|h| h.rule),
                    Some(Rule::RecursiveDelete),
                    "{code}"
                );
            }
            for code in [
                "import shutil; shutil.rmtree('build')",
                "import shutil; shutil.rmtree(path)",
                "require('fs').rmSync('dist', {recursive: true, force: true})",
            ] {
                let a = [Arg::plain(code.to_owned())];
                assert_eq!(interpreter(&a, ctx), None, "{code}");
            }
        });
    }

    #[test]
    fn find_deletes_and_execs() {
        with_ctx(|ctx| {
            let (hit, _) = find(&args("/ -delete"), ctx);
            assert_eq!(hit.map(|h| h.rule), Some(Rule::RecursiveDelete));
            let (hit, _) = find(&args("~ -mindepth 1 -delete"), ctx);
            assert!(hit.is_some());
            let (hit, _) = find(&args(". -delete"), ctx);
            assert!(hit.is_none());
            let (hit, _) = find(&args("~ -name *.pyc -delete"), ctx);
            assert!(hit.is_none());
            let (hit, _) = find(&args("/tmp -mindepth 1 -delete"), ctx);
            assert!(hit.is_none());
            let (_, execs) = find(&args("/ -exec rm -rf {} ;"), ctx);
            assert_eq!(execs[0][2].text(), "/");
            let (_, execs) = find(&args(". -name x -exec rm -rf {} +"), ctx);
            assert_eq!(execs[0][2].text(), "{}");
        });
    }

    #[test]
    fn rsync_delete_into_a_protected_directory() {
        assert_eq!(
            rule_of("rsync -a --delete empty/ /"),
            Some(Rule::RecursiveDelete)
        );
        assert_eq!(
            rule_of("rsync -a --delete empty/ ~/"),
            Some(Rule::RecursiveDelete)
        );
        assert_eq!(rule_of("rsync -av --delete src/ dest/"), None);
        assert_eq!(rule_of("rsync -av src/ /"), None);
        assert_eq!(rule_of("rsync -a --delete ./ host:/"), None);
    }

    #[test]
    fn permission_changes() {
        for line in [
            "chmod -R 777 /",
            "chown -R u:u /",
            "chgrp -R staff /usr",
            "chmod --recursive 000 /etc",
            "setfacl -R -m u:x:rwx /",
            "chattr -R +i /",
            "chmod -Rv 755 /*",
        ] {
            assert_eq!(
                rule_of(line),
                Some(Rule::RecursivePermissionsRoot),
                "{line}"
            );
        }
        for line in [
            "chmod -R 755 ./scripts",
            "chown -R u ~",
            "chmod 755 /",
            "chmod -R u+w /opt/app",
            "chmod +x run.sh",
        ] {
            assert_eq!(rule_of(line), None, "{line}");
        }
    }
}
