//! Usability rows (controls): a launcher that refuses everything scores zero. A tool that does not
//! work on the host for the column's user is reported unavailable, never ok; one that works on the
//! host but not in the jail is BROKEN.

use std::path::PathBuf;

use super::harness::{Ctx, RunOut};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    let c = Class::Usability;
    vec![
        control(
            "use/shell-basics",
            c,
            "pipes, redirections to /dev/null, globbing, builtins",
            shell,
        ),
        control(
            "use/tmp",
            c,
            "mktemp, mktemp -d, $TMPDIR (or /tmp) writable",
            tmp,
        ),
        control(
            "use/workspace-under-tmp",
            c,
            "a workspace under the host's /tmp stays visible and writable",
            under_tmp,
        ),
        control(
            "use/git-new-repo",
            c,
            "git init, add, commit, log in the workspace",
            git_new,
        ),
        control(
            "use/git-existing-repo",
            c,
            "commit into a repository whose hooks and config are protected",
            git_existing,
        ),
        control(
            "use/git-identity",
            c,
            "with the home hidden, `git commit` takes the host's user.name and user.email, and nothing else of ~/.gitconfig",
            git_identity,
        ),
        control("use/python3", c, "python3 runs a script", python),
        control(
            "use/c-compile",
            c,
            "gcc compiles and runs a C program",
            c_compile,
        ),
        control("use/make", c, "make builds a target from a Makefile", make),
        control(
            "use/cargo",
            c,
            "cargo build --offline of a crate without dependencies",
            cargo,
        ),
        control("use/node", c, "node -e", node),
        control(
            "use/home-toolchains",
            c,
            "with the home hidden: vetted toolchain trees (cargo's registry cache, rustup, pyenv, ~/.local/bin) and a PATH entry are readable and run",
            home_toolchains,
        ),
        control(
            "use/path-programs",
            c,
            "with the home hidden, what PATH entries' programs resolve to runs: a symlinked venv script and its interpreter's prefix, a global npm package, an env-found interpreter's prefix, a program beside a token",
            path_programs,
        ),
        control(
            "use/pipes-socketpair",
            c,
            "os.pipe and socket.socketpair carry data",
            socketpair,
        ),
        control("use/stdin", c, "stdin is passed through", stdin),
        control(
            "use/exit-and-signals",
            c,
            "exit 7 → 7, SIGTERM → 143, missing program → 127",
            exits,
        ),
        control(
            "use/no-litter",
            c,
            "after a run, the workspace holds nothing cordon made (placeholders removed)",
            no_litter,
        ),
        control(
            "use/cache-warm",
            c,
            "a tool's cache under the home directory: written in one run, there in the next, never the host's own",
            cache_warm,
        ),
        control(
            "use/cache-npm",
            c,
            "npm's cache and logs (npm cache verify, npm config get cache) in cordon's private cache",
            cache_npm,
        ),
        control(
            "use/cache-pip",
            c,
            "pip's cache directory is writable (python3 -m pip cache dir) and not the host's",
            cache_pip,
        ),
        control(
            "use/cache-cargo",
            c,
            "cargo build --offline with cordon's own CARGO_HOME: the host's registry read, its lock private",
            cache_cargo,
        ),
        control(
            "use/git-config-steps",
            c,
            "git config user.name, git remote add + fetch, git branch --set-upstream-to, git submodule add of a local repository, git worktree add: reach the repository",
            git_config_steps,
        ),
        control(
            "use/env-grant",
            c,
            "--env KEY=VALUE (CC and RUSTFLAGS included) and --pass-env NAME are visible inside",
            env_grant,
        ),
    ]
}

const fn control(
    id: &'static str,
    class: Class,
    about: &'static str,
    run: fn(&Ctx<'_>) -> Outcome,
) -> Case {
    Case::attack(id, class, about, run).not_in_mutants()
}

fn expect(ctx: &Ctx<'_>, out: &RunOut, want: &str) -> Outcome {
    let works = out.code == Some(0) && out.out.contains(want);
    ctx.control(out, works, format!("expected {want:?}"))
}

fn shell(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.sh(
        "echo hello | tr a-z A-Z > up.txt; cat < up.txt; echo x > /dev/null; cat /dev/null >&2; \
         ls /usr > /dev/null 2>&1 && set -- *.txt && echo \"glob $1\"; test -w /dev/null && echo devnull-ok; \
         printf '%s\\n' b a | sort | head -1; cat /proc/sys/kernel/ostype",
    );
    let ok = ["HELLO", "glob up.txt", "devnull-ok", "Linux"]
        .iter()
        .all(|w| out.out.contains(w));
    ctx.control(
        &out,
        ok && out.code == Some(0),
        "pipes, redirections, globbing",
    )
}

fn tmp(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.sh(
        "f=$(mktemp) && echo data > \"$f\" && cat \"$f\" && d=$(mktemp -d) && touch \"$d/x\" && \
         echo > \"${TMPDIR:-/tmp}/plain\" && echo tmp-ok",
    );
    expect(ctx, &out, "tmp-ok")
}

fn under_tmp(ctx: &Ctx<'_>) -> Outcome {
    let ws = PathBuf::from(format!("/tmp/cordon-escape-ws-{}", ctx.token));
    let made = std::fs::create_dir_all(&ws)
        .and_then(|()| std::os::unix::fs::chown(&ws, Some(ctx.ids.uid), Some(ctx.ids.gid)));
    if let Err(e) = made {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let out = ctx
        .cordon()
        .cwd(&ws)
        .args([
            std::ffi::OsString::from("--cwd"),
            ws.clone().into_os_string(),
        ])
        .payload(["/bin/sh", "-c", "echo inside > made && cat made && ls /tmp"])
        .run();
    let seen = std::fs::read_to_string(ws.join("made")).is_ok_and(|t| t == "inside\n");
    let _ = std::fs::remove_dir_all(&ws);
    ctx.control(
        &out,
        seen && out.code == Some(0),
        "file written in a /tmp workspace seen on the host",
    )
}

fn git_new(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.sh(
        "git init -q . && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m one && \
         echo x > f && git add f && git -c user.name=a -c user.email=a@b commit -qm two && \
         echo \"commits $(git log --oneline | wc -l)\"",
    );
    expect(ctx, &out, "commits 2")
}

fn git_existing(ctx: &Ctx<'_>) -> Outcome {
    if let Err(e) = super::protected::make_repo(ctx) {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let out = ctx.sh(
        "echo change >> README && git add README && git -c user.name=a -c user.email=a@b commit -qm two && \
         git status --short && git checkout -q -b topic && echo \"commits $(git log --oneline | wc -l)\"",
    );
    expect(ctx, &out, "commits 2")
}

fn git_identity(ctx: &Ctx<'_>) -> Outcome {
    if ctx.column.minimal() {
        return Outcome::new(
            Verdict::Unavailable,
            "the minimal posture gives no git identity (its home is unchanged by the allowlist)",
        );
    }
    let config = format!(
        "[user]\n\tname = Escape Tester\n\temail = tester@example.invalid\n\
         [credential]\n\thelper = store\n[url \"https://{}@example.invalid/\"]\n\tinsteadOf = https://example.invalid/\n",
        ctx.marker()
    );
    if let Err(e) = ctx
        .plant(&ctx.home.join(".gitconfig"), &config)
        .and_then(|()| ctx.scratch().map(drop))
    {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    // In scratch/, which exists: the Landlock backend cannot create `.git` directly in the
    // workspace root.
    let out = ctx.sh(
        "cd scratch && git init -q repo && cd repo && git commit -q --allow-empty -m one && \
         git log -1 --format='who %an <%ae>'; git config --global --list 2>&1; cat ~/.gitconfig 2>&1; true",
    );
    let works = out.code == Some(0)
        && out
            .out
            .contains("who Escape Tester <tester@example.invalid>")
        && !out.all().contains(&ctx.marker());
    ctx.control(
        &out,
        works,
        "the identity, and no other line of ~/.gitconfig",
    )
}

fn python(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.py("import json, sqlite3\nprint('sum', sum(range(10)), json.dumps([1]))\n");
    expect(ctx, &out, "sum 45 [1]")
}

/// Unavailable unless `probe` works on the host for the column's user.
fn needs(ctx: &Ctx<'_>, tool: &str, probe: &[&str], env: &[(&str, &str)]) -> Option<Outcome> {
    (!ctx.on_host(probe, env)).then(|| {
        Outcome::new(
            Verdict::Unavailable,
            format!("{tool} does not work on the host for uid {}", ctx.ids.uid),
        )
    })
}

fn c_compile(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = needs(ctx, "gcc", &["gcc", "--version"], &[]) {
        return o;
    }
    if let Err(e) = ctx.file(
        "hello.c",
        "#include <stdio.h>\nint main(void){puts(\"hello from c\");return 0;}\n",
    ) {
        return Outcome::new(Verdict::Inconclusive, e);
    }
    let out = ctx.sh("gcc -O1 -o hello hello.c && ./hello");
    expect(ctx, &out, "hello from c")
}

fn make(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = needs(ctx, "make", &["make", "--version"], &[]) {
        return o;
    }
    if let Err(e) = ctx.file(
        "Makefile",
        "out.txt: in.txt\n\tcp in.txt out.txt\n\techo made-it\n",
    ) {
        return Outcome::new(Verdict::Inconclusive, e);
    }
    let out = ctx.sh("echo data > in.txt && make && cat out.txt");
    expect(ctx, &out, "made-it")
}

/// The host's cargo and rustup homes (of the user running the suite).
fn toolchain_homes() -> Option<(PathBuf, PathBuf)> {
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let cargo = std::env::var_os("CARGO_HOME").map_or_else(|| home.join(".cargo"), PathBuf::from);
    let rustup =
        std::env::var_os("RUSTUP_HOME").map_or_else(|| home.join(".rustup"), PathBuf::from);
    (cargo.join("bin/cargo").exists() && rustup.is_dir()).then_some((cargo, rustup))
}

fn cargo(ctx: &Ctx<'_>) -> Outcome {
    let Some((cargo_home, rustup_home)) = toolchain_homes() else {
        return Outcome::new(Verdict::Unavailable, "no rustup toolchain on the host");
    };
    // A home with the toolchain trees linked in, as a real user's would have them (the minimal
    // posture binds ~/.cargo and ~/.rustup of the home it is given).
    let _ = std::fs::remove_dir_all(ctx.home.join(".cargo"));
    for (link, target) in [(".cargo", &cargo_home), (".rustup", &rustup_home)] {
        let l = ctx.home.join(link);
        if std::os::unix::fs::symlink(target, &l).is_err() || ctx.own(&l).is_err() {
            return Outcome::new(Verdict::Inconclusive, "harness: cannot link the toolchain");
        }
    }
    let path = format!(
        "{}:{}",
        ctx.home.join(".cargo/bin").display(),
        super::harness::STD_PATH
    );
    let cargo_target = ctx.work.join("cargo-home");
    let cargo_home_s = cargo_target.display().to_string();
    let probe_env = [
        ("PATH", path.as_str()),
        ("CARGO_HOME", cargo_home_s.as_str()),
    ];
    if !ctx.on_host(&["cargo", "--version"], &probe_env) {
        return Outcome::new(
            Verdict::Unavailable,
            format!(
                "cargo does not work on the host for uid {} (its toolchain under {} is not readable)",
                ctx.ids.uid,
                rustup_home.display()
            ),
        );
    }
    let files = [
        (
            "tiny/Cargo.toml",
            "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        ),
        (
            "tiny/src/main.rs",
            "fn main() { println!(\"hello from cargo\"); }\n",
        ),
    ];
    for (rel, text) in files {
        if let Err(e) = ctx.file(rel, text) {
            return Outcome::new(Verdict::Inconclusive, e);
        }
    }
    let out = ctx
        .cordon()
        .path(&path)
        .args(["--env", &format!("CARGO_HOME={cargo_home_s}")])
        .sh("cd tiny && cargo build --offline -q && ./target/debug/tiny")
        .run();
    expect(ctx, &out, "hello from cargo")
}

fn node(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = needs(ctx, "node", &["node", "-e", "0"], &[]) {
        return o;
    }
    let out = ctx.sh("node -e 'console.log(\"node says\", 6 * 7)'");
    expect(ctx, &out, "node says 42")
}

/// The allowlist is not too strict: what a toolchain needs from the home is there, read-only.
fn home_toolchains(ctx: &Ctx<'_>) -> Outcome {
    // The minimal posture binds only its own list (~/.rustup, ~/.cargo, ~/.pyenv, ~/.nvm).
    let mut trees = vec![
        ".cargo/registry/cache/index.crates.io/tiny-0.1.0.crate",
        ".cargo/bin/cargo-tiny",
        ".rustup/toolchains/stable/lib/rustlib/manifest",
        ".pyenv/versions/3.0/bin/python-tiny",
    ];
    if !ctx.column.minimal() {
        trees.extend([
            ".local/bin/pipx-tiny",
            "go/pkg/mod/cache/download/tiny.info",
            ".tools/bin/tiny-tool",
        ]);
    }
    for t in &trees {
        let script = format!("#!/bin/sh\necho ran-{}\n", t.replace('/', "_"));
        if let Err(e) = ctx.plant(&ctx.home.join(t), &script) {
            return Outcome::new(Verdict::Inconclusive, e);
        }
        let _ = std::fs::set_permissions(
            ctx.home.join(t),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        );
    }
    let path = format!(
        "{}:{}",
        ctx.home.join(".tools/bin").display(),
        super::harness::STD_PATH
    );
    let list = trees
        .iter()
        // The real home by its path: under the Landlock backend `HOME` names the workspace's
        // private home, where the vetted trees are not (docs/home.md).
        .map(|t| format!("\"{}/{t}\"", ctx.home.display()))
        .collect::<Vec<_>>()
        .join(" ");
    let out = ctx
        .cordon()
        .path(&path)
        .sh(&format!("for f in {list}; do \"$f\"; done; echo done"))
        .run();
    let missing: Vec<String> = trees
        .iter()
        .map(|t| format!("ran-{}", t.replace('/', "_")))
        .filter(|m| !out.out.contains(m.as_str()))
        .collect();
    ctx.control(
        &out,
        out.code == Some(0) && missing.is_empty(),
        format!("{} tree(s) planted; not run: {missing:?}", trees.len()),
    )
}

fn path_programs(ctx: &Ctx<'_>) -> Outcome {
    if ctx.column.minimal() {
        return Outcome::new(
            Verdict::Unavailable,
            "the minimal posture shows only its own trees, not what PATH entries need",
        );
    }
    let h = ctx.home.display().to_string();
    // (home-relative path, contents, or `->target` for a symlink)
    let files: Vec<(String, String)> = vec![
        // A pipx-style app: a link into a virtual environment whose script's interpreter is the
        // environment's own, reading a file of the environment.
        (".venvs/tool/bin/interp".into(), "->/bin/sh".into()),
        (
            ".venvs/tool/bin/tool".into(),
            format!(
                "#!{h}/.venvs/tool/bin/interp
cat {h}/.venvs/tool/lib/data-venv
"
            ),
        ),
        (
            ".venvs/tool/lib/data-venv".into(),
            "ran-venv
"
            .into(),
        ),
        (
            ".local/bin/tool".into(),
            format!("->{h}/.venvs/tool/bin/tool"),
        ),
        // A global npm prefix: a link into its package, which reads a file of the package.
        (
            ".npm-global/bin/hello".into(),
            "->../lib/node_modules/hello/bin/hello".into(),
        ),
        (
            ".npm-global/lib/node_modules/hello/bin/hello".into(),
            format!(
                "#!/bin/sh
cat {h}/.npm-global/lib/node_modules/hello/lib/data-npm
"
            ),
        ),
        (
            ".npm-global/lib/node_modules/hello/lib/data-npm".into(),
            "ran-npm
"
            .into(),
        ),
        // An interpreter found by `env` on PATH, whose prefix holds what the script reads.
        ("lang/v1/bin/interp".into(), "->/bin/sh".into()),
        (
            "lang/v1/bin/run".into(),
            format!(
                "#!/usr/bin/env interp
cat {h}/lang/v1/share/data-lang
"
            ),
        ),
        (
            "lang/v1/share/data-lang".into(),
            "ran-lang
"
            .into(),
        ),
        // A program beside a token.
        (
            ".pulumi/bin/pulumi".into(),
            "#!/bin/sh
echo ran-pulumi
"
            .into(),
        ),
    ];
    for (rel, what) in &files {
        let path = ctx.home.join(rel);
        let made = match what.strip_prefix("->") {
            Some(target) => std::fs::create_dir_all(path.parent().unwrap_or(&ctx.home))
                .and_then(|()| std::os::unix::fs::symlink(target, &path))
                .map_err(|e| format!("cannot link {}: {e}", path.display()))
                .and_then(|()| ctx.own(&path)),
            None => ctx.plant(&path, what).and_then(|()| {
                std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                    .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
            }),
        };
        if let Err(e) = made {
            return Outcome::new(Verdict::Inconclusive, e);
        }
    }
    let path = format!(
        "{h}/lang/v1/bin:{h}/.local/bin:{h}/.npm-global/bin:{h}/.pulumi/bin:{}",
        super::harness::STD_PATH
    );
    let out = ctx
        .cordon()
        .path(&path)
        .sh("tool; hello; run; pulumi; echo done")
        .run();
    let missing: Vec<&str> = ["ran-venv", "ran-npm", "ran-lang", "ran-pulumi"]
        .into_iter()
        .filter(|m| !out.out.contains(m))
        .collect();
    ctx.control(
        &out,
        out.code == Some(0) && missing.is_empty(),
        format!("not run: {missing:?}"),
    )
}

fn socketpair(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.py("import os, socket\n\
         a, b = socket.socketpair(); a.sendall(b'pair'); print(b.recv(4).decode())\n\
         r, w = os.pipe(); os.write(w, b'pipe'); print(os.read(r, 4).decode())\n");
    let ok = out.out.contains("pair") && out.out.contains("pipe") && out.code == Some(0);
    ctx.control(&out, ok, "socketpair and pipe")
}

fn stdin(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.cordon().stdin(b"through the jail\n").sh("cat").run();
    expect(ctx, &out, "through the jail")
}

fn exits(ctx: &Ctx<'_>) -> Outcome {
    let a = ctx.sh("exit 7");
    let b = ctx.sh("kill -TERM $$");
    let c = ctx.cordon().payload(["/nonexistent/program"]).run();
    let ok = a.code == Some(7) && b.code == Some(143) && c.code == Some(127);
    let detail = format!(
        "exit 7 → {:?}; SIGTERM → {:?}; missing → {:?}",
        a.code, b.code, c.code
    );
    ctx.control(&a, ok, detail)
}

fn env_grant(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx
        .cordon()
        .env("ESCAPE_VISIBLE", "passed-value")
        .args([
            "--env",
            &format!("GREETING=hello {}", ctx.token),
            "--pass-env",
            "ESCAPE_VISIBLE",
            // The harness's call (docs/cli.md, "Explicit grants"): they act only in the jail.
            "--env",
            "CC=cc-granted",
            "--env",
            "RUSTFLAGS=-Copt-level=0",
        ])
        .sh("env")
        .run();
    let ok = out.out.contains(&format!("GREETING=hello {}", ctx.token))
        && out.out.contains("ESCAPE_VISIBLE=passed-value")
        && out.out.contains("CC=cc-granted")
        && out.out.contains("RUSTFLAGS=-Copt-level=0");
    ctx.control(
        &out,
        ok,
        "explicit values (CC and RUSTFLAGS included) and passed name visible",
    )
}

fn no_litter(ctx: &Ctx<'_>) -> Outcome {
    if let Err(e) = super::protected::make_repo(ctx) {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let list = |dir: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        // The canary is the harness's own (planted beforehand in the landlock columns).
        names.retain(|n| n != "escape-canary");
        names.sort();
        names
    };
    let before = (list(&ctx.work), list(&ctx.work.join(".git")));
    let out = ctx.sh("ls -a; ls .git");
    let _ = std::fs::remove_file(ctx.canary_path());
    let after = (list(&ctx.work), list(&ctx.work.join(".git")));
    let clean = before == after;
    ctx.control(
        &out,
        clean && out.code == Some(0),
        format!("workspace before {before:?}, after {after:?}"),
    )
}

/// The host's own cache below the case's home, as the tools would default to it.
fn host_cache(ctx: &Ctx<'_>, rel: &str) -> PathBuf {
    ctx.home.join(".cache").join(rel)
}

/// Whether `dir` on the host holds anything.
fn holds_anything(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some())
}

fn cache_warm(ctx: &Ctx<'_>) -> Outcome {
    // The host posture in every column: the minimal posture keeps no state between runs.
    let write = ctx
        .cordon()
        .no_posture()
        .sh("g=${GOCACHE:-$HOME/.cache/go-build}; x=${XDG_CACHE_HOME:-$HOME/.cache}; \
             mkdir -p \"$g\" \"$x/tool\" && echo warm > \"$g/entry\" && echo xdg > \"$x/tool/state\" && echo wrote")
        .run();
    if !write.out.contains("wrote") {
        return ctx.control(&write, false, "the first run could not write its cache");
    }
    let read = ctx
        .cordon()
        .no_posture()
        .sh("cat \"${GOCACHE:-$HOME/.cache/go-build}/entry\" \"${XDG_CACHE_HOME:-$HOME/.cache}/tool/state\"")
        .run();
    let jailed = !ctx.column.unjailed();
    // In a jail the host's own Go cache (below the case's home) is never the one written.
    let host_clean = !jailed || !holds_anything(&host_cache(ctx, "go-build"));
    ctx.control(
        &read,
        read.code == Some(0) && read.out.contains("warm\nxdg") && host_clean,
        format!(
            "second run saw {:?}; host cache untouched: {host_clean}",
            read.out.trim()
        ),
    )
}

fn cache_npm(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = needs(ctx, "npm", &["npm", "--version"], &[]) {
        return o;
    }
    let out = ctx
        .cordon()
        .no_posture()
        .sh("npm cache verify >/dev/null && echo \"cache $(npm config get cache)\"")
        .run();
    let jailed = !ctx.column.unjailed();
    let host_clean = !jailed || !ctx.home.join(".npm").exists();
    let private = !jailed
        || !out
            .out
            .contains(&format!("cache {}", ctx.home.join(".npm").display()));
    ctx.control(
        &out,
        out.code == Some(0) && out.out.contains("cache /") && host_clean && private,
        format!("{}; ~/.npm untouched: {host_clean}", out.out.trim()),
    )
}

fn cache_pip(ctx: &Ctx<'_>) -> Outcome {
    let py = ctx.python();
    if let Some(o) = needs(ctx, "pip", &[py.as_str(), "-m", "pip", "--version"], &[]) {
        return o;
    }
    let out = ctx
        .cordon()
        .no_posture()
        .sh(&format!(
            "d=$({py} -m pip cache dir) && mkdir -p \"$d\" && touch \"$d/probe\" && echo \"pip $d\""
        ))
        .run();
    let jailed = !ctx.column.unjailed();
    let host_clean = !jailed || !host_cache(ctx, "pip").exists();
    ctx.control(
        &out,
        out.code == Some(0) && out.out.contains("pip /") && host_clean,
        format!("{}; host pip cache untouched: {host_clean}", out.out.trim()),
    )
}

fn cache_cargo(ctx: &Ctx<'_>) -> Outcome {
    let Some((cargo_home, rustup_home)) = toolchain_homes() else {
        return Outcome::new(Verdict::Unavailable, "no rustup toolchain on the host");
    };
    let _ = std::fs::remove_dir_all(ctx.home.join(".cargo"));
    for (link, target) in [(".cargo", &cargo_home), (".rustup", &rustup_home)] {
        let l = ctx.home.join(link);
        if std::os::unix::fs::symlink(target, &l).is_err() || ctx.own(&l).is_err() {
            return Outcome::new(Verdict::Inconclusive, "harness: cannot link the toolchain");
        }
    }
    let path = format!(
        "{}:{}",
        ctx.home.join(".cargo/bin").display(),
        super::harness::STD_PATH
    );
    if !ctx.on_host(&["cargo", "--version"], &[("PATH", path.as_str())]) {
        return Outcome::new(
            Verdict::Unavailable,
            format!("cargo does not work on the host for uid {}", ctx.ids.uid),
        );
    }
    let files = [
        (
            "tiny/Cargo.toml",
            "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        ),
        (
            "tiny/src/main.rs",
            "fn main() { println!(\"hello from cargo\"); }\n",
        ),
    ];
    for (rel, text) in files {
        if let Err(e) = ctx.file(rel, text) {
            return Outcome::new(Verdict::Inconclusive, e);
        }
    }
    // No CARGO_HOME from the caller: cordon's own (its lock and database private).
    let out = ctx
        .cordon()
        .no_posture()
        .path(&path)
        .sh("cd tiny && cargo build --offline -q && ./target/debug/tiny && echo \"home ${CARGO_HOME:-none}\"")
        .run();
    let jailed = !ctx.column.unjailed();
    let private = !jailed || !out.out.contains("home none");
    ctx.control(
        &out,
        out.code == Some(0) && out.out.contains("hello from cargo") && private,
        out.out.trim().to_string(),
    )
}

fn git_config_steps(ctx: &Ctx<'_>) -> Outcome {
    if let Err(e) = super::protected::make_repo(ctx) {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let upstream = ctx.work.join("upstream");
    let made = std::fs::create_dir_all(&upstream)
        .map_err(|e| e.to_string())
        .and_then(|()| super::protected::make_repo_at(ctx, &upstream));
    if let Err(e) = made {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let up = super::harness::qp(&upstream);
    let out = ctx.sh(&format!(
        "set -e; g='git -c user.name=t -c user.email=t@example.invalid'; \
         git config user.name 'In The Jail'; git remote add origin {up}; git fetch -q origin; \
         b=$(git symbolic-ref --short HEAD); git branch -q --set-upstream-to=origin/$b; \
         $g -c protocol.file.allow=always submodule add -q file://{up} lib; $g commit -qm lib; \
         git worktree add -q wt -b topic; echo steps-done"
    ));
    let host = |dir: &std::path::Path, key: &str| {
        super::protected::host_git_get(ctx, dir, key).unwrap_or_default()
    };
    let up_s = upstream.display().to_string();
    let reached = host(&ctx.work, "user.name") == "In The Jail"
        && host(&ctx.work, "remote.origin.url") == up_s
        && host(&ctx.work, "submodule.lib.url") == format!("file://{up_s}")
        // The plain registration `git submodule add` wrote stays in the work tree.
        && std::fs::read_to_string(ctx.work.join(".gitmodules"))
            .is_ok_and(|t| t.contains("path = lib"))
        && ctx.work.join("wt/.git").is_file()
        && super::protected::host_git_get(
            ctx,
            &ctx.work.join("wt"),
            "core.repositoryformatversion",
        )
        .is_some();
    ctx.control(
        &out,
        out.code == Some(0) && out.out.contains("steps-done") && reached,
        format!(
            "steps ran: {}; reached the host's repository: {reached}",
            out.out.contains("steps-done")
        ),
    )
}
