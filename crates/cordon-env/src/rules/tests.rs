use super::*;
use crate::table::{ALLOWLIST, RULES};
use Pattern::{Contains, Name, Prefix, Suffix, Word};

#[test]
fn case_insensitive_rules_are_stored_in_upper_case() {
    for rule in RULES.iter().filter(|r| !r.case_sensitive) {
        let text = match rule.pattern {
            Name(t) | Prefix(t) | Suffix(t) | Contains(t) | Word(t) => t,
        };
        assert_eq!(text, text.to_ascii_uppercase(), "{rule}");
    }
}

#[test]
fn every_allowlisted_name_has_a_rule_and_classifies_as_allowlisted() {
    for name in ALLOWLIST {
        assert_eq!(classify(name), Some(NameClass::Allowlisted), "{name}");
    }
    let table: Vec<&str> = RULES
        .iter()
        .filter_map(|r| match (r.class, r.pattern) {
            (NameClass::Allowlisted, Name(t)) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(table, ALLOWLIST);
}

#[test]
fn allowlist_is_case_sensitive() {
    assert_eq!(classify("path"), None);
    assert_eq!(classify("Home"), None);
    assert_eq!(classify("lc_all"), None);
}

#[test]
fn locale_wildcard_passes_categories_but_not_credentials_or_families() {
    for name in [
        "LC_ALL",
        "LC_CTYPE",
        "LC_MESSAGES",
        "LC_TERMINAL",
        "LC_TERMINAL_VERSION",
    ] {
        assert_eq!(classify(name), Some(NameClass::Allowlisted), "{name}");
    }
    assert_eq!(classify("LC_API_TOKEN"), Some(NameClass::Credential));
    assert_eq!(classify("LC_SECRET"), Some(NameClass::Credential));
    assert_eq!(classify("LC_PROXY"), Some(NameClass::Proxy));
}

#[test]
fn pwd_is_allowlisted_but_credential_pwd_is_not() {
    assert_eq!(classify("PWD"), Some(NameClass::Allowlisted));
    assert_eq!(classify("OLDPWD"), Some(NameClass::Allowlisted));
    assert!(!reads_as_credential("PWD"));
    assert!(!reads_as_credential("OLDPWD"));
    assert_eq!(classify("MYSQL_PWD"), Some(NameClass::Credential));
    assert!(reads_as_credential("MYSQL_PWD"));
    assert!(reads_as_credential("pwd"));
}

#[test]
fn loader_family() {
    for name in [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "ld_preload",
        "DYLD_INSERT_LIBRARIES",
        "GCONV_PATH",
        "GLIBC_TUNABLES",
        "MALLOC_TRACE",
        "MALLOC_CONF",
        "HOSTALIASES",
        "LOCALDOMAIN",
        "RES_OPTIONS",
        "NLSPATH",
        "LOCPATH",
    ] {
        assert_eq!(classify(name), Some(NameClass::Loader), "{name}");
    }
    assert_eq!(classify("LDFLAGS"), None);
}

#[test]
fn injection_family() {
    for name in [
        "BASH_ENV",
        "ENV",
        "BASH_FUNC_ls%%",
        "PROMPT_COMMAND",
        "PS4",
        "SHELLOPTS",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "GIT_CONFIG",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "GIT_CONFIG_PARAMETERS",
        "GIT_EXEC_PATH",
        "GIT_TEMPLATE_DIR",
        "LESSOPEN",
        "RUSTC_WRAPPER",
    ] {
        assert_eq!(classify(name), Some(NameClass::Injection), "{name}");
    }
    assert_eq!(classify("PYTHONUNBUFFERED"), None);
    assert_eq!(classify("PYTHONDONTWRITEBYTECODE"), None);
    assert_eq!(classify("ENVIRONMENT"), None);
}

#[test]
fn command_hook_family() {
    for name in [
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "SSH_ASKPASS_REQUIRE",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "GIT_PAGER",
        "GIT_EDITOR",
    ] {
        assert_eq!(classify(name), Some(NameClass::CommandHook), "{name}");
    }
    assert_eq!(classify("GIT_TERMINAL_PROMPT"), None);
}

#[test]
fn proxy_family_in_both_cases() {
    for name in [
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
    ] {
        assert_eq!(classify(name), Some(NameClass::Proxy), "{name}");
    }
}

#[test]
fn agent_socket_family() {
    for name in [
        "SSH_AUTH_SOCK",
        "GPG_AGENT_INFO",
        "SSH_AGENT_PID",
        "DOCKER_HOST",
        "TMUX",
        "KRB5CCNAME",
    ] {
        assert_eq!(classify(name), Some(NameClass::AgentSocket), "{name}");
    }
}

#[test]
fn desktop_family() {
    for name in [
        "DBUS_SESSION_BUS_ADDRESS",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XDG_RUNTIME_DIR",
        "XAUTHORITY",
    ] {
        assert_eq!(classify(name), Some(NameClass::Desktop), "{name}");
    }
}

#[test]
fn credential_words_match_anywhere_and_in_any_case() {
    for name in [
        "OPENAI_API_KEY",
        "apikey",
        "GITHUB_TOKEN",
        "gh_token",
        "MyTokenValue",
        "CLIENT_SECRET",
        "DB_PASSWORD",
        "SMTP_PASSWD",
        "GPG_PASSPHRASE",
        "AWS_SHARED_CREDENTIALS_FILE",
        "OAUTH_CLIENT",
        "SSH_PRIVATE",
        "SESSION_ID",
        "COOKIE_JAR",
        "AWS_SIGNATURE",
        "BEARER",
        "DATABASE_URL",
        "AZURE_STORAGE_CONNECTION_STRING",
        "KUBECONFIG",
    ] {
        assert!(reads_as_credential(name), "{name}");
        assert_eq!(classify(name), Some(NameClass::Credential), "{name}");
    }
}

#[test]
fn short_credential_words_match_only_as_words() {
    for name in [
        "GH_PAT",
        "pat",
        "PAT2",
        "ghPat",
        "DB_PW",
        "SIM_PIN",
        "OTP_SEED",
        "WIFI_PSK",
        "SENTRY_DSN",
    ] {
        assert!(reads_as_credential(name), "{name}");
    }
    for name in [
        "PATH_EXTRA",
        "MANPATH",
        "SPINNER",
        "PING_HOST",
        "POWER",
        "FOOTPRINT",
    ] {
        assert!(!reads_as_credential(name), "{name}");
    }
}

#[test]
fn ordinary_names_are_unclassified() {
    for name in [
        "CARGO_TERM_COLOR",
        "RUST_BACKTRACE",
        "RUST_LOG",
        "CI",
        "NO_COLOR",
        "SSL_CERT_FILE",
        "NODE_EXTRA_CA_CERTS",
        "OPENAI_API_BASE",
        "EMAIL",
        "HOSTNAME",
        // Toolchain locations a user's host may need passed; a workspace's own
        // `.cargo/config.toml` carries the same power as a relocated CARGO_HOME.
        "CARGO_HOME",
        "GOROOT",
        "CARGO_TARGET_DIR",
        "GOPATH",
        "MAKELEVEL",
    ] {
        assert_eq!(classify(name), None, "{name}");
    }
}

#[test]
fn variables_that_make_a_tool_run_a_program_are_injections() {
    // The survey of #20: build tools, package managers, version control, runtimes, editors.
    for name in [
        "MAKEFLAGS",
        "MFLAGS",
        "GNUMAKEFLAGS",
        "MAKEFILES",
        "CC",
        "CXX",
        "CMAKE_TOOLCHAIN_FILE",
        "CMAKE_C_COMPILER_LAUNCHER",
        "CCACHE_PREFIX",
        "RUSTC",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER",
        "GOFLAGS",
        "GOENV",
        "npm_config_script_shell",
        "NPM_CONFIG_USERCONFIG",
        "npm_config_globalconfig",
        "YARN_YARN_PATH",
        "BUNDLE_GEMFILE",
        "RUBYGEMS_GEMDEPS",
        "R_PROFILE_USER",
        "HGRCPATH",
        "GIT_DIR",
        "XDG_CONFIG_HOME",
        "TAR_OPTIONS",
        "RSYNC_RSH",
        "WGETRC",
        "EMACSLOADPATH",
    ] {
        assert_eq!(classify(name), Some(NameClass::Injection), "{name}");
    }
    for name in ["SYSTEMD_EDITOR", "SVN_EDITOR", "CVS_RSH", "HGEDITOR"] {
        assert_eq!(classify(name), Some(NameClass::CommandHook), "{name}");
    }
}

#[test]
fn words_split_on_separators_digits_and_case_changes() {
    let w: Vec<&str> = words("ghPat_TOKEN2x-y.zZ").collect();
    assert_eq!(w, ["ghPat", "gh", "Pat", "TOKEN", "x", "y", "zZ", "z", "Z"]);
    assert_eq!(words("").count(), 0);
    assert_eq!(words("é_PAT").collect::<Vec<_>>(), ["PAT"]);
}
