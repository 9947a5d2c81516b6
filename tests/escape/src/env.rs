//! Class 4: the environment. cordon itself is given hostile variables; the jail must not see them.

use super::harness::{Ctx, RunOut, cut, qp};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    let c = Class::Environment;
    vec![
        Case::attack(
            "env/credential-names",
            c,
            "*TOKEN*, *KEY*, *SECRET*, *PASSW*, *CREDENTIAL*, *AUTH* … in cordon's environment stay out",
            credential_names,
        ),
        Case::attack(
            "env/credential-pass-env",
            c,
            "the same names requested with --pass-env are still not passed",
            credential_pass,
        ),
        Case::attack(
            "env/loader-and-injection",
            c,
            "LD_PRELOAD, LD_AUDIT, BASH_ENV, ENV, NODE_OPTIONS, PYTHONSTARTUP/PYTHONPATH, PERL5OPT … inherited",
            injection,
        ),
        Case::attack(
            "env/agents-and-proxies",
            c,
            "SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR, DISPLAY, proxies, DOCKER_HOST inherited",
            agents,
        ),
        Case::attack(
            "env/ungranted-names",
            c,
            "an ordinary host variable that was not granted stays out; the granted one is the only addition",
            ungranted,
        ),
        Case::attack(
            "env/reserved-explicit",
            c,
            "--env LD_PRELOAD=…, GLIBC_TUNABLES=…, CORDON_*=… (what acts before the jail holds or on cordon itself) are refused with 125 and nothing runs",
            reserved,
        )
        .not_in_mutants(),
        Case::attack(
            "env/proc-environ",
            c,
            "read /proc/<pid>/environ of every visible process; pid 1 is not a host process",
            proc_environ,
        ),
    ]
}

const CREDENTIAL_NAMES: &[&str] = &[
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "MY_SERVICE_SECRET",
    "DB_PASSWORD",
    "PGPASSWORD",
    "MYSQL_PWD",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "NPM_AUTH",
    "CARGO_REGISTRY_TOKEN",
    "VAULT_TOKEN",
    "SLACK_BOT_TOKEN",
    "PRIVATE_KEY",
    "API_KEY",
    "Github_Token",
];

fn with_env<'c, 'a>(
    mut run: super::harness::Run<'c, 'a>,
    names: &[&str],
    value: &str,
) -> super::harness::Run<'c, 'a> {
    for n in names {
        run = run.env(n, value);
    }
    run
}

fn env_leak(ctx: &Ctx<'_>, out: &RunOut, needle: &str, names: &[&str]) -> Outcome {
    let text = out.all();
    let names_seen: Vec<&&str> = names
        .iter()
        .filter(|n| out.out.lines().any(|l| l.starts_with(&format!("{n}="))))
        .collect();
    ctx.judge(
        out,
        text.contains(needle) || !names_seen.is_empty(),
        format!("names seen inside: {names_seen:?}"),
    )
}

fn credential_names(ctx: &Ctx<'_>) -> Outcome {
    let value = ctx.marker();
    let out = with_env(ctx.cordon(), CREDENTIAL_NAMES, &value)
        .steps(&["env", "cat /proc/self/environ | tr '\\0' '\\n'"])
        .run();
    env_leak(ctx, &out, &value, CREDENTIAL_NAMES)
}

fn credential_pass(ctx: &Ctx<'_>) -> Outcome {
    let value = ctx.marker();
    let mut run = with_env(ctx.cordon(), CREDENTIAL_NAMES, &value);
    for n in CREDENTIAL_NAMES {
        run = run.args(["--pass-env", n]);
    }
    let out = run.sh("env").run();
    env_leak(ctx, &out, &value, CREDENTIAL_NAMES)
}

fn injection(ctx: &Ctx<'_>) -> Outcome {
    // Every injector writes a marker file into the workspace when it takes effect.
    if let Err(e) = ctx.scratch() {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let hit = |what: &str| ctx.work.join("scratch").join(format!("injected-{what}"));
    let sh = ctx.outside.join("inject.sh");
    let js = ctx.outside.join("inject.js");
    let pydir = ctx.outside.join("py");
    let pl = ctx.outside.join("Inject.pm");
    let files = [
        (sh.clone(), format!("echo bash > {}\n", qp(&hit("bash")))),
        (
            js.clone(),
            format!(
                "require('fs').writeFileSync({:?}, 'node');\n",
                hit("node").display().to_string()
            ),
        ),
        (
            pydir.join("sitecustomize.py"),
            format!(
                "open({:?}, 'w').write('python')\n",
                hit("python").display().to_string()
            ),
        ),
        (
            pydir.join("startup.py"),
            format!(
                "open({:?}, 'w').write('pystartup')\n",
                hit("pystartup").display().to_string()
            ),
        ),
        (
            pl.clone(),
            format!(
                "package Inject; open(my $f, '>', '{}'); 1;\n",
                hit("perl").display()
            ),
        ),
    ];
    for (p, content) in &files {
        if let Err(e) = ctx.plant(p, content) {
            return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
        }
    }
    let names = [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "BASH_ENV",
        "ENV",
        "NODE_OPTIONS",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "PROMPT_COMMAND",
        "GCONV_PATH",
        "GIT_CONFIG_PARAMETERS",
    ];
    let out = ctx
        .cordon()
        .env("LD_PRELOAD", &format!("/nonexistent-{}.so", ctx.token))
        .env("LD_LIBRARY_PATH", &ctx.outside.display().to_string())
        .env("LD_AUDIT", &format!("/nonexistent-{}.so", ctx.token))
        .env("BASH_ENV", &sh.display().to_string())
        .env("ENV", &sh.display().to_string())
        .env("NODE_OPTIONS", &format!("--require {}", js.display()))
        .env("PYTHONPATH", &pydir.display().to_string())
        .env(
            "PYTHONSTARTUP",
            &pydir.join("startup.py").display().to_string(),
        )
        .env("PERL5OPT", "-MInject")
        .env("PERL5LIB", &ctx.outside.display().to_string())
        .env("RUBYOPT", "-rinject")
        .env("PROMPT_COMMAND", "touch scratch/injected-prompt")
        .env("GCONV_PATH", &ctx.outside.display().to_string())
        .env(
            "GIT_CONFIG_PARAMETERS",
            "'core.pager'='touch scratch/injected-git'",
        )
        .steps(&[
            "env",
            "bash -c true",
            "sh -i -c true </dev/null 2>/dev/null",
            "command -v node >/dev/null && node -e 0",
            "python3 -c 0",
            "python3 -i </dev/null 2>/dev/null",
            "perl -e 1 2>/dev/null",
        ])
        .run();
    let injected: Vec<String> = ["bash", "node", "python", "pystartup", "perl"]
        .iter()
        .filter(|w| hit(w).exists())
        .map(|w| (*w).to_owned())
        .collect();
    let names_seen: Vec<&&str> = names
        .iter()
        .filter(|n| out.out.lines().any(|l| l.starts_with(&format!("{n}="))))
        .collect();
    ctx.judge(
        &out,
        !injected.is_empty() || !names_seen.is_empty(),
        format!("names seen: {names_seen:?}; injections that ran: {injected:?}"),
    )
}

fn agents(ctx: &Ctx<'_>) -> Outcome {
    let names = [
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "GPG_AGENT_INFO",
        "DBUS_SESSION_BUS_ADDRESS",
        "XDG_RUNTIME_DIR",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XAUTHORITY",
        "http_proxy",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "no_proxy",
        "DOCKER_HOST",
        "KRB5CCNAME",
        "TMUX",
        "VSCODE_IPC_HOOK_CLI",
    ];
    let value = format!("/run/user/0/agent-{}", ctx.token);
    let out = with_env(ctx.cordon(), &names, &value).sh("env").run();
    env_leak(ctx, &out, &ctx.token, &names)
}

fn ungranted(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx
        .cordon()
        .env("ESCAPE_GRANTED", "granted-value")
        .env("ESCAPE_NOT_GRANTED", &ctx.token)
        .args(["--pass-env", "ESCAPE_GRANTED"])
        .sh("env")
        .run();
    let granted = out.out.contains("ESCAPE_GRANTED=granted-value");
    let leaked = out.out.contains(&ctx.token) || out.out.contains("HOSTENV-");
    let o = ctx.judge(
        &out,
        leaked,
        format!("ungranted seen: {leaked}; granted seen: {granted}"),
    );
    if o.verdict == Verdict::Blocked && !granted {
        return Outcome::new(
            Verdict::Inconclusive,
            "the granted variable was not visible either: the case proves nothing",
        );
    }
    o
}

fn reserved(ctx: &Ctx<'_>) -> Outcome {
    let live = ctx.sh("true");
    if !ctx.canary() {
        return ctx.judge(&live, false, "control run");
    }
    let mut ran = Vec::new();
    let mut codes = Vec::new();
    for (i, kv) in [
        "LD_PRELOAD=/tmp/x.so",
        "LD_LIBRARY_PATH=/tmp",
        "LD_AUDIT=/tmp/x.so",
        "GLIBC_TUNABLES=glibc.malloc.check=3",
        "GCONV_PATH=/tmp",
        "CORDON_MUTANT=no-seccomp",
        "cordon_anything=1",
    ]
    .iter()
    .enumerate()
    {
        let marker = ctx.work.join(format!("ran-{i}"));
        let out = ctx
            .cordon()
            .args(["--env", kv])
            .payload(["/bin/sh", "-c", &format!("touch {}", qp(&marker))])
            .run();
        codes.push(format!("{kv}: {:?}", out.code));
        if marker.exists() || out.code != Some(125) {
            ran.push(format!(
                "{kv} (exit {:?}, ran {})",
                out.code,
                marker.exists()
            ));
        }
    }
    ctx.judge(
        &live,
        !ran.is_empty(),
        if ran.is_empty() {
            "every reserved name refused with 125, nothing ran".into()
        } else {
            format!("not refused: {ran:?}")
        },
    )
}

fn proc_environ(ctx: &Ctx<'_>) -> Outcome {
    // Every environment is read, but only lines with the launcher's marker leave the payload
    // (without a jail these are the host's real processes: their variables stay in them).
    let out = ctx.sh_steps(&[
        "for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' < \"$e\" 2>/dev/null | grep -F HOSTENV-; done",
        "echo \"pid1=$(tr '\\0' ' ' < /proc/1/cmdline)\"",
    ]);
    let host_mark = format!("HOSTENV-{}", ctx.token);
    let pid1 = out
        .out
        .lines()
        .find_map(|l| l.strip_prefix("pid1="))
        .unwrap_or("")
        .to_owned();
    // Under Landlock there is no PID namespace: host processes stay visible (a documented limit,
    // judged by proc/host-pids-invisible); here only their environment must stay unreadable.
    let host_pid1 = !ctx.column.landlock() && !pid1.contains("bwrap");
    ctx.judge(
        &out,
        out.all().contains(&host_mark) || host_pid1,
        format!(
            "launcher's environment seen: {}; pid 1 is {:?}",
            out.all().contains(&host_mark),
            cut(&pid1, 60)
        ),
    )
}
