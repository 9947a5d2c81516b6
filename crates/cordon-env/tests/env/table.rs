//! Snapshots of the classification table and of what it says about the names people ask about,
//! so that a reviewer reads a change to either the way they would read a firewall change.

use std::fmt::Write as _;

use cordon_env::{RULES, classify, matching_rule, reads_as_credential};

/// Every rule, in precedence order: pattern, class, case sensitivity, reason.
#[test]
fn classification_table() {
    let mut table = String::new();
    for rule in RULES {
        let case = if rule.case_sensitive {
            "exact case"
        } else {
            "any case"
        };
        writeln!(
            table,
            "{:<32} {:<20} {:<10} {}",
            rule.pattern.to_string(),
            rule.class.as_str(),
            case,
            rule.why
        )
        .unwrap();
    }
    insta::assert_snapshot!(table);
}

/// Names from the design, the brief and common harness practice → the class that decides them,
/// whether they read as a credential, and the rule that matched.
#[test]
fn classification_of_listed_names() {
    let names = [
        // The allowlist and its neighbours.
        "PATH",
        "HOME",
        "SHELL",
        "USER",
        "LOGNAME",
        "TERM",
        "TMPDIR",
        "TMP",
        "TEMP",
        "TZ",
        "PWD",
        "OLDPWD",
        "LANG",
        "LANGUAGE",
        "COLUMNS",
        "LINES",
        "LC_ALL",
        "LC_CTYPE",
        "LC_MESSAGES",
        "LC_TERMINAL",
        "LC_API_TOKEN",
        "path",
        "lc_all",
        // Dynamic loader.
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "ld_preload",
        "DYLD_INSERT_LIBRARIES",
        "GCONV_PATH",
        "GLIBC_TUNABLES",
        "MALLOC_CHECK_",
        "MALLOC_TRACE",
        "HOSTALIASES",
        "LOCALDOMAIN",
        "RES_OPTIONS",
        "NLSPATH",
        "LOCPATH",
        "TZDIR",
        // Language injection.
        "BASH_ENV",
        "ENV",
        "BASH_FUNC_ls%%",
        "PROMPT_COMMAND",
        "PS1",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "ZDOTDIR",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "PYTHONWARNINGS",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "NODE_OPTIONS",
        "NODE_PATH",
        "NODE_ENV",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "JAVA_HOME",
        "CLASSPATH",
        "DOTNET_STARTUP_HOOKS",
        "LESSOPEN",
        "RUSTC_WRAPPER",
        "RUSTFLAGS",
        // git.
        "GIT_CONFIG",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "GIT_CONFIG_VALUE_0",
        "GIT_CONFIG_PARAMETERS",
        "GIT_EXEC_PATH",
        "GIT_TEMPLATE_DIR",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "GIT_PAGER",
        "GIT_EDITOR",
        "GIT_TERMINAL_PROMPT",
        "GIT_AUTHOR_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_DIR",
        // Command hooks.
        "EDITOR",
        "VISUAL",
        "PAGER",
        "BROWSER",
        // Proxies.
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "FTP_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        "ftp_proxy",
        "GOPROXY",
        // Agents and control sockets.
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "GPG_AGENT_INFO",
        "KRB5CCNAME",
        "DOCKER_HOST",
        "TMUX",
        "VSCODE_IPC_HOOK_CLI",
        // Desktop.
        "DBUS_SESSION_BUS_ADDRESS",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XDG_RUNTIME_DIR",
        "XAUTHORITY",
        "XDG_SESSION_TYPE",
        "XDG_CONFIG_HOME",
        // Credentials, and names that look close but are not.
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GH_PAT",
        "NPM_TOKEN",
        "HF_TOKEN",
        "CLIENT_SECRET",
        "DB_PASSWORD",
        "PGPASSWORD",
        "MYSQL_PWD",
        "GPG_PASSPHRASE",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "NPM_CONFIG__AUTH",
        "HTTP_AUTHORIZATION",
        "SSH_PRIVATE_KEY",
        "SESSION_SECRET",
        "COOKIE_SECRET",
        "AWS_SIGNATURE",
        "BEARER",
        "DATABASE_URL",
        "SENTRY_DSN",
        "KUBECONFIG",
        "AZURE_STORAGE_CONNECTION_STRING",
        "OPENAI_API_BASE",
        "SSL_CERT_FILE",
        "NODE_EXTRA_CA_CERTS",
        "REQUESTS_CA_BUNDLE",
        "MANPATH",
        "SPINNER",
        "CARGO_TERM_COLOR",
        "RUST_LOG",
        "RUST_BACKTRACE",
        "CI",
        "NO_COLOR",
    ];
    let mut out = String::new();
    for name in names {
        let class = classify(name).map_or("-", |c| c.as_str());
        let credential = if reads_as_credential(name) {
            "credential"
        } else {
            ""
        };
        let rule = matching_rule(name).map_or(String::from("-"), |r| r.pattern.to_string());
        writeln!(out, "{name:<32} {class:<20} {credential:<10} {rule}").unwrap();
    }
    insta::assert_snapshot!(out);
}
