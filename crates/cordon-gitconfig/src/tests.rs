#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

const BASE: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";

fn keys(refused: &[Refused]) -> Vec<&str> {
    refused.iter().map(|r| r.key.as_str()).collect()
}

#[test]
fn parses_what_git_writes_and_reads() {
    let text = "# top\n[core]\n\tbare = false ; trailing\n[remote \"origin\"]\n\turl = /srv/a b\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[Branch.Main]\n\tRemote = origin\n[x]\n\tflag\n\tq = \" a\\\"b \\\\ \" # c\n\tlong = one \\\n two\n[s \"with \\\"q\\\" \\\\ \"] k = v\n";
    let e = entries(text).unwrap();
    let shown: Vec<String> = e.iter().map(Entry::shown).collect();
    assert_eq!(
        shown,
        [
            "core.bare=false",
            "remote.origin.url=/srv/a b",
            "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*",
            "branch.main.remote=origin",
            "x.flag",
            "x.q= a\\\"b \\\\ ",
            "x.long=one  two",
            "s.with \"q\" \\ .k=v",
        ]
    );
}

#[test]
fn malformed_texts_are_errors_naming_the_line() {
    for (text, line) in [
        ("[core\n", 1),
        ("x = 1\n", 1),
        ("[a]\n\tv = \"open\n", 2),
        ("[a]\n\tv = bad\\q\n", 2),
        ("[a]\n\t1v = x\n", 2),
        ("[a \"b]\n", 1),
        ("[a]\n\tv = x\0\n", 2),
    ] {
        let err = entries(text).unwrap_err();
        assert_eq!(err.line, line, "{text:?}: {err}");
    }
}

#[test]
fn everyday_changes_are_merged_and_unchanged_lines_kept_byte_for_byte() {
    let jail = format!(
        "{BASE}[user]\n\tname = A U Thor\n\temail = a@example.com\n[remote \"origin\"]\n\turl = /srv/repo.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n[submodule \"lib\"]\n\turl = /srv/lib.git\n\tactive = true\n"
    );
    // Host git added a key meanwhile, with its own formatting.
    let current = format!("{BASE}[gc]\n    auto = 0   # host's\n");
    let m = merge(BASE, &jail, &current).unwrap();
    assert!(m.refused.is_empty(), "{:?}", m.refused);
    assert!(m.text.starts_with(&current), "{}", m.text);
    assert_eq!(entries(&m.text).unwrap().len(), 5 + 8, "{}", m.text);
    assert_eq!(m.applied.len(), 8);
    // What git reads back is what the jail wrote.
    let mut got: Vec<Entry> = entries(&m.text).unwrap();
    got.retain(|e| e.section != "gc");
    assert_eq!(got, entries(&jail).unwrap());
}

#[test]
fn every_command_running_key_is_refused_and_named() {
    let planted = [
        ("core", None, "fsmonitor", "/tmp/x"),
        ("core", None, "hooksPath", "/tmp/h"),
        ("core", None, "pager", "x"),
        ("core", None, "editor", "x"),
        ("core", None, "sshCommand", "x"),
        ("core", None, "askPass", "x"),
        ("core", None, "gitProxy", "x"),
        ("core", None, "worktree", "/"),
        ("core", None, "attributesFile", "/tmp/a"),
        ("sequence", None, "editor", "x"),
        ("pager", None, "log", "x"),
        ("alias", None, "st", "!x"),
        ("filter", Some("f"), "clean", "x"),
        ("filter", Some("f"), "process", "x"),
        ("diff", None, "external", "x"),
        ("diff", Some("d"), "textconv", "x"),
        ("diff", Some("d"), "command", "x"),
        ("merge", Some("m"), "driver", "x"),
        ("include", None, "path", "/tmp/c"),
        ("includeIf", Some("gitdir:/"), "path", "/tmp/c"),
        ("credential", None, "helper", "x"),
        ("credential", Some("https://example.com"), "helper", "x"),
        ("gpg", None, "program", "x"),
        ("gpg", Some("ssh"), "program", "x"),
        ("uploadpack", None, "packObjectsHook", "x"),
        ("receive", None, "procReceiveRefs", "x"),
        ("remote", Some("o"), "uploadpack", "x"),
        ("remote", Some("o"), "receivepack", "x"),
        ("remote", Some("o"), "proxy", "http://example.invalid"),
        ("remote", Some("o"), "vcs", "x"),
        ("url", Some("ext::sh -c x"), "insteadOf", "https://"),
        (
            "url",
            Some("https://example.invalid/"),
            "pushInsteadOf",
            "https://",
        ),
        ("protocol", Some("ext"), "allow", "always"),
        ("protocol", None, "allow", "always"),
        ("http", None, "proxy", "http://example.invalid"),
        ("http", Some("https://example.com"), "sslVerify", "false"),
        ("trace2", None, "eventTarget", "/tmp/t"),
        ("extensions", None, "worktreeConfig", "true"),
        ("difftool", Some("t"), "cmd", "x"),
        ("mergetool", Some("t"), "cmd", "x"),
        ("interactive", None, "diffFilter", "x"),
        ("lfs", None, "url", "x"),
        ("safe", None, "directory", "*"),
        ("core", None, "somethingnew", "x"),
        ("newsection", None, "key", "x"),
    ];
    let mut jail = BASE.to_owned();
    for (s, sub, n, v) in planted {
        match sub {
            Some(sub) => jail.push_str(&format!("[{s} \"{sub}\"]\n\t{n} = {v}\n")),
            None => jail.push_str(&format!("[{s}]\n\t{n} = {v}\n")),
        }
    }
    // Value checks of allowed keys.
    jail.push_str("[remote \"evil\"]\n\turl = ext::sh -c x\n[submodule \"s\"]\n\tupdate = !sh -c x\n\turl = -uhello\n");
    let m = merge(BASE, &jail, BASE).unwrap();
    assert_eq!(m.text, BASE, "nothing may reach the configuration");
    assert!(m.applied.is_empty());
    assert_eq!(m.refused.len(), planted.len() + 3, "{:?}", keys(&m.refused));
    assert!(keys(&m.refused).contains(&"core.fsmonitor"));
    assert!(keys(&m.refused).contains(&"url.ext::sh -c x.insteadof"));
    assert!(keys(&m.refused).contains(&"submodule.s.update"));
    let fsmonitor = m
        .refused
        .iter()
        .find(|r| r.key == "core.fsmonitor")
        .unwrap();
    assert!(
        fsmonitor.reason.contains("git status"),
        "{}",
        fsmonitor.reason
    );
}

#[test]
fn removing_a_refused_key_is_refused_too_and_an_allowed_one_applies() {
    let base = format!("{BASE}[core]\n\thooksPath = /safe/hooks\n[user]\n\tname = old\n");
    let jail = format!("{BASE}[user]\n\tname = new\n");
    let m = merge(&base, &jail, &base).unwrap();
    assert_eq!(keys(&m.refused), ["core.hookspath"]);
    assert_eq!(m.refused[0].change, ChangeKind::Removed);
    let e = entries(&m.text).unwrap();
    assert!(e.iter().any(|e| e.key() == "core.hookspath"));
    assert!(e.iter().any(|e| e.shown() == "user.name=new"));
    assert!(!e.iter().any(|e| e.shown() == "user.name=old"));
}

#[test]
fn a_jail_copy_that_does_not_parse_merges_nothing() {
    let err = merge(BASE, "[core\n", BASE).unwrap_err();
    assert!(err.to_string().contains("jail's copy"), "{err}");
}

#[test]
fn values_that_need_quoting_round_trip() {
    for v in [
        " lead",
        "trail ",
        "a#b",
        "a;b",
        "q\"uote",
        "back\\slash",
        "tab\there",
        "new\nline",
        "",
    ] {
        let jail = format!("{BASE}[user]\n\tname = {}\n", {
            let mut q = String::from("\"");
            for c in v.chars() {
                match c {
                    '"' => q.push_str("\\\""),
                    '\\' => q.push_str("\\\\"),
                    '\n' => q.push_str("\\n"),
                    '\t' => q.push_str("\\t"),
                    c => q.push(c),
                }
            }
            q.push('"');
            q
        });
        let m = merge(BASE, &jail, BASE).unwrap();
        let back = entries(&m.text).unwrap();
        assert_eq!(
            back.last().unwrap().value.as_deref(),
            Some(v),
            "{v:?}: {}",
            m.text
        );
    }
}

#[test]
fn an_addition_after_a_trailing_continuation_keeps_the_value_it_follows() {
    // Found by the fuzzer: the new section must not become part of the value above it.
    let current = "[cor]\n\tbare = false\\\n";
    let m = merge(
        current,
        "[cor]\n\tbare = false\n[user]\n\tname = n\n",
        current,
    )
    .unwrap();
    let e = entries(&m.text).unwrap();
    assert_eq!(e[0].shown(), "cor.bare=false");
    assert_eq!(e[1].shown(), "user.name=n");
}

#[test]
fn sanitize_keeps_a_header_whose_inline_variable_it_drops() {
    // Found by the fuzzer: the variables after the header still have their section.
    let (clean, refused) = sanitize("[core]r\n\tbare = false\n").unwrap();
    assert_eq!(keys(&refused), ["core.r"]);
    assert_eq!(entries(&clean).unwrap()[0].key(), "core.bare");
}

#[test]
fn sanitize_drops_every_refused_key_of_a_new_submodule_config() {
    let text = "[core]\n\trepositoryformatversion = 0\n\tworktree = ../../../sub\n\tfsmonitor = /tmp/evil\n[remote \"origin\"]\n\turl = /srv/lib.git\n[alias] st = !evil\n";
    let (clean, refused) = sanitize(text).unwrap();
    assert_eq!(
        keys(&refused),
        ["core.worktree", "core.fsmonitor", "alias.st"]
    );
    let left: Vec<String> = entries(&clean).unwrap().iter().map(Entry::key).collect();
    assert_eq!(left, ["core.repositoryformatversion", "remote.origin.url"]);
}

mod properties {
    use proptest::prelude::*;

    use crate::{entries, merge, sanitize};

    proptest! {
        #[test]
        fn no_text_panics_and_a_merge_output_parses(
            base in "(\\[[a-z]{1,4}( \"[a-z \\\\\"]{0,4}\")?\\]\n|\t[a-z]{1,6} = [ -~]{0,12}\n|#[ -~]{0,8}\n){0,6}",
            jail in "(\\[[a-z]{1,4}( \"[a-z \\\\\"]{0,4}\")?\\]\n|\t[a-z]{1,6} = [ -~]{0,12}\n|#[ -~]{0,8}\n){0,8}",
            noise in "[ -~\n\t]{0,40}",
        ) {
            let _ = entries(&noise);
            let _ = sanitize(&noise);
            let _ = merge(&base, &noise, &base);
            if let Ok(m) = merge(&base, &jail, &base) {
                prop_assert!(entries(&m.text).is_ok(), "{}", m.text);
            }
        }
    }
}

#[test]
fn plain_gitmodules_are_registrations_only() {
    use crate::plain_gitmodules;
    let plain = "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = ../lib.git\n\tbranch = main\n";
    assert!(plain_gitmodules(plain));
    assert!(plain_gitmodules(""));
    for not in [
        "[submodule \"lib\"]\n\tpath = vendor/lib\n\tupdate = !touch pwned\n",
        "[submodule \"lib\"]\n\tpath = ../outside\n",
        "[submodule \"lib\"]\n\tpath = -oops\n",
        "[submodule \"lib\"]\n\tpath = /abs\n",
        "[core]\n\tfsmonitor = x\n",
        "[submodule]\n\tpath = lib\n",
        "[submodule \"lib\"\n",
    ] {
        assert!(!plain_gitmodules(not), "{not:?}");
    }
}
