//! The classification table itself: plain data, one rule per line, in precedence order.
//!
//! `#[rustfmt::skip]` keeps one rule per line so that a change reads like a firewall change.

use crate::rules::{NameClass, Pattern, Rule};

use NameClass::{AgentSocket, CommandHook, Credential, Desktop, Injection, Loader, Own, Proxy};
use Pattern::{Contains, Name, Prefix, Suffix, Word};

/// The names always passed when the host has them. `LC_*` is passed too (see [`ALLOWLIST_PREFIX`]).
#[rustfmt::skip]
pub const ALLOWLIST: &[&str] = &[
    "PATH", "HOME", "SHELL", "USER", "LOGNAME", "TERM", "TMPDIR", "TMP", "TEMP", "TZ", "PWD",
    "OLDPWD", "LANG", "LANGUAGE", "COLUMNS", "LINES",
];

/// Every host variable whose name starts with this (case-sensitively) is passed, unless an earlier
/// rule claims it: `LC_ALL`, `LC_CTYPE`, … and `LC_TERMINAL`, but not `LC_API_TOKEN`.
pub const ALLOWLIST_PREFIX: &str = "LC_";

const ALLOW_WHY: &str = "fixed allowlist: session, terminal and locale facts most programs need";

const fn allow(name: &'static str) -> Rule {
    Rule {
        class: NameClass::Allowlisted,
        pattern: Pattern::Name(name),
        case_sensitive: true,
        why: ALLOW_WHY,
    }
}

const fn rule(class: NameClass, pattern: Pattern, why: &'static str) -> Rule {
    Rule {
        class,
        pattern,
        case_sensitive: false,
        why,
    }
}

const GLIBC_UNSECURE: &str = "glibc strips it from set-user-ID programs (unsecure-envvars.h): it redirects what libc loads or reads";

/// The classification table, in precedence order: the first matching rule decides.
#[rustfmt::skip]
pub static RULES: &[Rule] = &[
    // The fixed allowlist. Listed first so that `PWD` and `OLDPWD` pass although they contain the
    // credential word `PWD` (as in `MYSQL_PWD`).
    allow("PATH"),
    allow("HOME"),
    allow("SHELL"),
    allow("USER"),
    allow("LOGNAME"),
    allow("TERM"),
    allow("TMPDIR"),
    allow("TMP"),
    allow("TEMP"),
    allow("TZ"),
    allow("PWD"),
    allow("OLDPWD"),
    allow("LANG"),
    allow("LANGUAGE"),
    allow("COLUMNS"),
    allow("LINES"),
    // cordon's own.
    rule(Own, Prefix("CORDON_"), "cordon's own variables steer the launcher and the stage inside the jail"),
    // Dynamic loader and libc.
    rule(Loader, Prefix("LD_"), "dynamic loader (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, …) loads code into every program"),
    rule(Loader, Prefix("DYLD_"), "macOS dyld's counterpart of LD_*"),
    rule(Loader, Name("GCONV_PATH"), "iconv loads shared objects from this path"),
    rule(Loader, Name("GLIBC_TUNABLES"), "parsed by the loader before main; exploited against set-user-ID programs (CVE-2023-4911)"),
    rule(Loader, Prefix("MALLOC_"), "allocator options: MALLOC_TRACE writes a named file, MALLOC_CONF can turn on profile dumps"),
    rule(Loader, Name("HOSTALIASES"), GLIBC_UNSECURE),
    rule(Loader, Name("LOCALDOMAIN"), GLIBC_UNSECURE),
    rule(Loader, Name("RES_OPTIONS"), GLIBC_UNSECURE),
    rule(Loader, Name("RESOLV_HOST_CONF"), GLIBC_UNSECURE),
    rule(Loader, Name("NLSPATH"), GLIBC_UNSECURE),
    rule(Loader, Name("LOCPATH"), GLIBC_UNSECURE),
    rule(Loader, Name("GETCONF_DIR"), GLIBC_UNSECURE),
    rule(Loader, Name("NIS_PATH"), GLIBC_UNSECURE),
    rule(Loader, Name("TZDIR"), GLIBC_UNSECURE),
    // Shells.
    rule(Injection, Name("BASH_ENV"), "bash sources this file before every non-interactive script"),
    rule(Injection, Name("ENV"), "sh, dash and ksh (and bash in POSIX mode) source this file at start-up"),
    rule(Injection, Prefix("BASH_FUNC_"), "exported bash functions: a function named like a command replaces it"),
    rule(Injection, Name("PROMPT_COMMAND"), "bash runs it before every prompt"),
    rule(Injection, Name("PS0"), "prompt strings undergo command substitution"),
    rule(Injection, Name("PS1"), "prompt strings undergo command substitution"),
    rule(Injection, Name("PS2"), "prompt strings undergo command substitution"),
    rule(Injection, Name("PS3"), "prompt strings undergo command substitution"),
    rule(Injection, Name("PS4"), "expanded, with command substitution, before every traced command"),
    rule(Injection, Name("SHELLOPTS"), "turns on bash options (xtrace, …) in every bash"),
    rule(Injection, Name("BASHOPTS"), "turns on bash options in every bash"),
    rule(Injection, Name("ZDOTDIR"), "zsh sources .zshenv from this directory at every start"),
    rule(Injection, Name("FPATH"), "ksh and zsh autoload functions from these directories"),
    // Language runtimes.
    rule(Injection, Name("PYTHONSTARTUP"), "Python runs this file at interactive start-up"),
    rule(Injection, Name("PYTHONPATH"), "prepends module directories: a module named like a standard one replaces it"),
    rule(Injection, Name("PYTHONHOME"), "replaces the standard library"),
    rule(Injection, Name("PYTHONINSPECT"), "drops into an interactive prompt after the script"),
    rule(Injection, Name("PYTHONUSERBASE"), "user site-packages, including usercustomize, imported at start-up"),
    rule(Injection, Name("PYTHONBREAKPOINT"), "imports and calls the named callable at breakpoint()"),
    rule(Injection, Name("PYTHONWARNINGS"), "warning filters import the named category's module at start-up"),
    rule(Injection, Name("NODE_OPTIONS"), "--require / --import load code into every node process"),
    rule(Injection, Name("NODE_PATH"), "module search path"),
    rule(Injection, Name("NODE_REPL_EXTERNAL_MODULE"), "node loads this module instead of the REPL"),
    rule(Injection, Name("PERL5OPT"), "command-line options (-M loads a module) for every perl"),
    rule(Injection, Name("PERL5LIB"), "module search path"),
    rule(Injection, Name("PERLLIB"), "module search path"),
    rule(Injection, Name("PERL5DB"), "code run as the debugger"),
    rule(Injection, Name("RUBYOPT"), "command-line options (-r loads a library) for every ruby"),
    rule(Injection, Name("RUBYLIB"), "library search path"),
    rule(Injection, Name("JAVA_TOOL_OPTIONS"), "JVM options (-javaagent loads code) for every JVM"),
    rule(Injection, Name("_JAVA_OPTIONS"), "JVM options (-javaagent loads code) for every JVM"),
    rule(Injection, Name("JDK_JAVA_OPTIONS"), "JVM options (-javaagent loads code) for the java launcher"),
    rule(Injection, Name("JAVA_OPTS"), "start-up scripts pass it to the JVM (-javaagent loads code)"),
    rule(Injection, Name("MAVEN_OPTS"), "mvn passes it to the JVM (-javaagent loads code)"),
    rule(Injection, Name("GRADLE_OPTS"), "gradle passes it to the JVM (-javaagent loads code)"),
    rule(Injection, Name("CLASSPATH"), "class search path, the JVM's PYTHONPATH"),
    rule(Injection, Name("DOTNET_STARTUP_HOOKS"), ".NET loads and runs these assemblies before Main"),
    rule(Injection, Name("CORECLR_ENABLE_PROFILING"), ".NET loads the profiler named by CORECLR_PROFILER*"),
    rule(Injection, Prefix("CORECLR_PROFILER"), ".NET loads this native profiler library"),
    rule(Injection, Prefix("LUA_INIT"), "lua runs this code (or @file) at start-up"),
    rule(Injection, Prefix("LUA_PATH"), "module search path"),
    rule(Injection, Prefix("LUA_CPATH"), "native module search path"),
    rule(Injection, Name("PHPRC"), "php.ini location; auto_prepend_file runs code before every script"),
    rule(Injection, Name("PHP_INI_SCAN_DIR"), "extra php.ini files; auto_prepend_file runs code"),
    rule(Injection, Name("VIMINIT"), "vim runs these ex commands (:! included) at start-up"),
    rule(Injection, Name("GVIMINIT"), "gvim runs these ex commands at start-up"),
    rule(Injection, Name("EXINIT"), "vi/ex run these commands at start-up"),
    rule(Injection, Name("LESSOPEN"), "less runs it as an input pre-processor on every file"),
    rule(Injection, Name("LESSCLOSE"), "less runs it after every file"),
    rule(Injection, Name("RUSTC_WRAPPER"), "cargo runs it in place of every rustc"),
    rule(Injection, Name("RUSTC_WORKSPACE_WRAPPER"), "cargo runs it in place of rustc for workspace members"),
    rule(Injection, Name("CARGO_BUILD_RUSTC_WRAPPER"), "cargo runs it in place of every rustc"),
    // git configuration that runs commands on ordinary invocations.
    rule(Injection, Prefix("GIT_CONFIG"), "GIT_CONFIG_*, GIT_CONFIG_PARAMETERS: configuration (core.fsmonitor, core.hooksPath, core.pager, aliases) that runs commands on ordinary git invocations"),
    rule(Injection, Name("GIT_EXEC_PATH"), "git runs its sub-commands from this directory"),
    rule(Injection, Name("GIT_TEMPLATE_DIR"), "hooks copied into every new repository"),
    rule(Injection, Name("GIT_DIR"), "git reads this repository's configuration (core.fsmonitor, aliases, hooks) instead of the workspace's"),
    rule(Injection, Name("GIT_COMMON_DIR"), "git reads the shared configuration and hooks from this directory"),
    // Relocated configuration: every tool that follows the XDG base directories reads its
    // configuration (git's global config, Neovim's init.lua, fish's config) from here.
    rule(Injection, Name("XDG_CONFIG_HOME"), "relocates every XDG tool's configuration: git's global config (core.fsmonitor, aliases), Neovim's init.lua, fish's config.fish all run code"),
    rule(Injection, Name("XDG_CONFIG_DIRS"), "extra XDG configuration directories, read the same way"),
    // Build tools: flags that name a program, a shell, or a file of build code.
    rule(Injection, Name("MAKEFLAGS"), "make reads options and variable assignments (SHELL=, CC=) from it in every make"),
    rule(Injection, Name("MFLAGS"), "make's older flags variable, read the same way"),
    rule(Injection, Name("GNUMAKEFLAGS"), "GNU make's flags variable"),
    rule(Injection, Name("MAKEFILES"), "make reads these makefiles (recipes run commands) before any other"),
    rule(Injection, Name("CC"), "the C compiler make, cmake, cargo's cc crate and configure scripts run"),
    rule(Injection, Name("CXX"), "the C++ compiler build tools run"),
    rule(Injection, Name("CPP"), "the C preprocessor build tools run"),
    rule(Injection, Name("LD"), "the linker build tools run"),
    rule(Injection, Name("AR"), "the archiver build tools run"),
    rule(Injection, Name("AS"), "the assembler build tools run"),
    rule(Injection, Name("CMAKE_TOOLCHAIN_FILE"), "cmake runs this file of CMake code at configure time"),
    rule(Injection, Suffix("_COMPILER_LAUNCHER"), "cmake runs this program in front of every compiler (CMAKE_C_COMPILER_LAUNCHER, …)"),
    rule(Injection, Name("CCACHE_PREFIX"), "ccache runs this program in front of every compiler"),
    rule(Injection, Name("CCACHE_PREFIX_CPP"), "ccache runs this program in front of every preprocessor"),
    rule(Injection, Name("RUSTC"), "cargo runs this program as rustc"),
    rule(Injection, Name("RUSTDOC"), "cargo runs this program as rustdoc"),
    rule(Injection, Name("CARGO_BUILD_RUSTC"), "cargo runs this program as rustc"),
    rule(Injection, Name("CARGO_BUILD_RUSTDOC"), "cargo runs this program as rustdoc"),
    rule(Injection, Name("CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER"), "cargo runs it in place of rustc for workspace members"),
    rule(Injection, Name("RUSTFLAGS"), "rustc flags: -C linker= names a program run on every link"),
    rule(Injection, Name("CARGO_ENCODED_RUSTFLAGS"), "rustc flags, as RUSTFLAGS"),
    rule(Injection, Name("RUSTDOCFLAGS"), "rustdoc flags: --runtool names a program run for every doctest"),
    rule(Injection, Suffix("_RUNNER"), "cargo runs tests and binaries through it (CARGO_TARGET_<triple>_RUNNER)"),
    rule(Injection, Suffix("_LINKER"), "cargo links with it (CARGO_TARGET_<triple>_LINKER)"),
    rule(Injection, Name("GOFLAGS"), "go passes these flags to every command: -toolexec and -exec name programs it runs"),
    rule(Injection, Name("GOENV"), "go reads its settings (GOFLAGS among them) from this file"),
    // Package managers.
    rule(Injection, Prefix("NPM_CONFIG_"), "npm (and pnpm) read every setting from npm_config_*: script-shell, userconfig, globalconfig, node-options and onload-script name programs or code"),
    rule(Injection, Prefix("YARN_"), "yarn reads every setting from YARN_*: yarnPath runs a JavaScript file, plugins load code"),
    rule(Injection, Name("BUNDLE_GEMFILE"), "bundler evaluates this Gemfile, which is Ruby code"),
    rule(Injection, Name("RUBYGEMS_GEMDEPS"), "rubygems loads this Gemfile (Ruby code) at every ruby start"),
    rule(Injection, Name("GEMRC"), "gem reads its configuration from this file"),
    rule(Injection, Name("R_PROFILE"), "R runs this file of R code at start-up"),
    rule(Injection, Name("R_PROFILE_USER"), "R runs this file of R code at start-up"),
    rule(Injection, Name("R_ENVIRON"), "R reads start-up settings (R_PROFILE_USER among them) from this file"),
    rule(Injection, Name("R_ENVIRON_USER"), "R reads start-up settings from this file"),
    rule(Injection, Name("HGRCPATH"), "Mercurial reads configuration (hooks run commands) from these files"),
    rule(Injection, Name("EMACSLOADPATH"), "Emacs loads libraries from these directories"),
    // Other tools that run a program named in the environment.
    rule(Injection, Name("TAR_OPTIONS"), "tar reads options from it: --to-command, --use-compress-program and --checkpoint-action=exec run programs"),
    rule(Injection, Name("RSYNC_RSH"), "rsync runs this remote shell"),
    rule(Injection, Name("RSYNC_CONNECT_PROG"), "rsync runs this program to connect"),
    rule(Injection, Name("WGETRC"), "wget reads its configuration (use_askpass names a program) from this file"),
    rule(CommandHook, Name("SYSTEMD_EDITOR"), "editor systemctl edit runs"),
    rule(CommandHook, Name("SYSTEMD_PAGER"), "pager systemd tools run"),
    rule(CommandHook, Name("SVN_EDITOR"), "editor Subversion runs"),
    rule(CommandHook, Name("CVS_RSH"), "remote shell CVS runs"),
    rule(CommandHook, Name("CVSEDITOR"), "editor CVS runs"),
    rule(CommandHook, Name("HGEDITOR"), "editor Mercurial runs"),
    // Commands a tool runs for one action; host values tend to point at host-side helpers.
    rule(CommandHook, Name("GIT_SSH"), "git's ssh transport program"),
    rule(CommandHook, Name("GIT_SSH_COMMAND"), "git's ssh transport command"),
    rule(CommandHook, Name("GIT_PROXY_COMMAND"), "git's git:// transport command"),
    rule(CommandHook, Name("GIT_ASKPASS"), "password prompt; host values are often IDE helpers that hand out credentials"),
    rule(CommandHook, Prefix("SSH_ASKPASS"), "password prompt (and SSH_ASKPASS_REQUIRE forcing it)"),
    rule(CommandHook, Name("SUDO_ASKPASS"), "password prompt"),
    rule(CommandHook, Name("GIT_EXTERNAL_DIFF"), "git runs it for every diff"),
    rule(CommandHook, Name("GIT_EDITOR"), "editor; host values such as `code --wait` talk to a program outside the jail"),
    rule(CommandHook, Name("GIT_SEQUENCE_EDITOR"), "editor for interactive rebase"),
    rule(CommandHook, Name("GIT_PAGER"), "pager"),
    rule(CommandHook, Name("EDITOR"), "editor; host values such as `code --wait` talk to a program outside the jail"),
    rule(CommandHook, Name("VISUAL"), "editor"),
    rule(CommandHook, Name("PAGER"), "pager"),
    rule(CommandHook, Name("MANPAGER"), "pager for man"),
    rule(CommandHook, Name("BROWSER"), "browser command (Python's webbrowser, xdg-open, …)"),
    // Proxies.
    rule(Proxy, Suffix("PROXY"), "HTTP_PROXY, https_proxy, ALL_PROXY, NO_PROXY, GOPROXY, …: proxy URLs carry credentials and a route around a denied network"),
    rule(Proxy, Name("SOCKS_SERVER"), "SOCKS proxy"),
    rule(Proxy, Name("SOCKS5_SERVER"), "SOCKS proxy"),
    // Agents and control sockets.
    rule(AgentSocket, Name("SSH_AUTH_SOCK"), "ssh-agent: signs with the user's keys"),
    rule(AgentSocket, Name("SSH_AGENT_PID"), "ssh-agent's process"),
    rule(AgentSocket, Name("GPG_AGENT_INFO"), "gpg-agent: decrypts and signs with the user's keys"),
    rule(AgentSocket, Name("GNOME_KEYRING_CONTROL"), "the desktop keyring"),
    rule(AgentSocket, Name("KRB5CCNAME"), "Kerberos ticket cache"),
    rule(AgentSocket, Name("KRB5_KTNAME"), "Kerberos keytab"),
    rule(AgentSocket, Name("DOCKER_HOST"), "Docker daemon: root on the host"),
    rule(AgentSocket, Name("CONTAINER_HOST"), "Podman service"),
    rule(AgentSocket, Name("TMUX"), "tmux server: send-keys types into panes outside the jail"),
    rule(AgentSocket, Name("TMUX_PANE"), "tmux pane of the launcher"),
    rule(AgentSocket, Name("STY"), "GNU screen session"),
    rule(AgentSocket, Name("NVIM"), "Neovim RPC socket: runs commands in the host editor"),
    rule(AgentSocket, Name("NVIM_LISTEN_ADDRESS"), "Neovim RPC socket"),
    rule(AgentSocket, Name("KITTY_LISTEN_ON"), "kitty remote control: opens windows running commands"),
    rule(AgentSocket, Prefix("VSCODE_IPC_HOOK"), "VS Code IPC: opens terminals in the IDE"),
    rule(AgentSocket, Prefix("VSCODE_GIT_"), "VS Code's git askpass IPC, which hands out credentials"),
    // Desktop session.
    rule(Desktop, Name("DBUS_SESSION_BUS_ADDRESS"), "session bus: systemd --user and portals start programs outside the jail"),
    rule(Desktop, Name("DBUS_SYSTEM_BUS_ADDRESS"), "system bus"),
    rule(Desktop, Name("DISPLAY"), "X11: reads and injects keystrokes in every window"),
    rule(Desktop, Name("XAUTHORITY"), "X11 authorisation cookies"),
    rule(Desktop, Name("ICEAUTHORITY"), "ICE/session-manager authorisation cookies"),
    rule(Desktop, Name("SESSION_MANAGER"), "X session manager socket"),
    rule(Desktop, Name("WAYLAND_DISPLAY"), "Wayland compositor socket"),
    rule(Desktop, Name("WAYLAND_SOCKET"), "inherited Wayland connection"),
    rule(Desktop, Name("XDG_RUNTIME_DIR"), "per-user runtime directory holding the bus, Wayland, audio and agent sockets"),
    rule(Desktop, Name("SWAYSOCK"), "sway IPC: runs commands"),
    rule(Desktop, Name("I3SOCK"), "i3 IPC: runs commands"),
    rule(Desktop, Name("PULSE_SERVER"), "audio server"),
    rule(Desktop, Name("PIPEWIRE_REMOTE"), "audio/video server (screen capture)"),
    // The credential heuristic. A false positive costs the caller an explicit `set`; a false
    // negative leaks a secret. So the common words match anywhere in the name.
    rule(Credential, Contains("KEY"), "API_KEY, AWS_SECRET_ACCESS_KEY, SSH_KEY, SIGNING_KEY, …"),
    rule(Credential, Contains("TOKEN"), "GITHUB_TOKEN, HF_TOKEN, AWS_SESSION_TOKEN, …"),
    rule(Credential, Contains("SECRET"), "CLIENT_SECRET, JWT_SECRET, …"),
    rule(Credential, Contains("PASS"), "PASSWORD, PASSWD, PASSPHRASE, DB_PASS, …"),
    rule(Credential, Contains("PWD"), "MYSQL_PWD, DB_PWD (PWD and OLDPWD themselves are allowlisted)"),
    rule(Credential, Contains("CRED"), "CREDENTIALS, CREDS, GOOGLE_APPLICATION_CREDENTIALS, …"),
    rule(Credential, Contains("AUTH"), "AUTH, OAUTH, AUTHORIZATION, NPM_CONFIG__AUTH (also GIT_AUTHOR_*: set those explicitly)"),
    rule(Credential, Contains("PRIVATE"), "private keys and private URLs"),
    rule(Credential, Contains("SESSION"), "session identifiers"),
    rule(Credential, Contains("COOKIE"), "cookies and cookie secrets"),
    rule(Credential, Contains("SIGNATURE"), "request signatures"),
    rule(Credential, Contains("BEARER"), "bearer tokens"),
    rule(Credential, Contains("JWT"), "JSON Web Tokens"),
    rule(Credential, Contains("CONNECTION_STRING"), "connection strings embed account keys and passwords"),
    rule(Credential, Contains("DATABASE_URL"), "database URLs embed passwords"),
    rule(Credential, Contains("KUBECONFIG"), "points at cluster credentials"),
    rule(Credential, Contains("NETRC"), "points at a file of passwords"),
    // Short words that would match far too much as parts of other words.
    rule(Credential, Word("PAT"), "personal access token (GH_PAT); a word, not part of PATH"),
    rule(Credential, Word("PW"), "password (DB_PW)"),
    rule(Credential, Word("PIN"), "PIN codes; a word, not part of SPINNER"),
    rule(Credential, Word("OTP"), "one-time-password seeds"),
    rule(Credential, Word("PSK"), "pre-shared keys"),
    rule(Credential, Word("DSN"), "SENTRY_DSN and other DSNs embed keys"),
    // The locale wildcard, last, so that every rule above claims its names first.
    Rule {
        class: NameClass::Allowlisted,
        pattern: Prefix(ALLOWLIST_PREFIX),
        case_sensitive: true,
        why: "fixed allowlist: locale categories (LC_ALL, LC_CTYPE, …)",
    },
];
