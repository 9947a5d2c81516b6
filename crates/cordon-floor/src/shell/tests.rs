use super::*;

fn words(s: &Simple) -> Vec<String> {
    s.words
        .iter()
        .map(|w| w.static_text().unwrap_or_else(|| "<dyn>".into()))
        .collect()
}

fn simples(script: &Script) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for p in &script.pipelines {
        for c in &p.commands {
            match c {
                Command::Simple(s) => out.push(words(s)),
                Command::Group { body, .. } => out.extend(simples(body)),
                Command::Function { body, .. } => {
                    if let Command::Group { body, .. } = body.as_ref() {
                        out.extend(simples(body));
                    }
                }
                Command::TooDeep => out.push(vec!["<too deep>".into()]),
            }
        }
    }
    out
}

#[test]
fn quoting_and_operators() {
    let s = parse(r#"echo 'a b' "c d" e\ f; rm -rf "/" && ls || true | cat"#);
    assert_eq!(
        simples(&s),
        vec![
            vec!["echo", "a b", "c d", "e f"],
            vec!["rm", "-rf", "/"],
            vec!["ls"],
            vec!["true"],
            vec!["cat"],
        ]
    );
}

#[test]
fn compound_commands_read_as_their_simple_commands() {
    let s = parse("if [ -d x ]; then rm -rf x; else echo no; fi; for f in a b; do echo $f; done");
    let all = simples(&s);
    assert!(
        all.contains(&vec!["rm".into(), "-rf".into(), "x".into()]),
        "{all:?}"
    );
    assert!(all.contains(&vec!["echo".into(), "no".into()]), "{all:?}");
}

#[test]
fn functions_and_groups() {
    let s = parse(":(){ :|:& };:");
    let Command::Function { name, body } = &s.pipelines[0].commands[0] else {
        panic!("{s:?}");
    };
    assert_eq!(name, ":");
    let Command::Group { body, .. } = body.as_ref() else {
        panic!("{body:?}");
    };
    assert!(body.pipelines[0].background);
    assert_eq!(body.pipelines[0].commands.len(), 2);
}

#[test]
fn substitutions_are_parsed() {
    let s = parse("echo $(rm -rf /) `reboot` <(cat x)");
    let Command::Simple(simple) = &s.pipelines[0].commands[0] else {
        panic!();
    };
    let substs = simple
        .words
        .iter()
        .flat_map(|w| w.segs.iter())
        .filter(|s| matches!(s, Seg::Subst(_)))
        .count();
    assert_eq!(substs, 3);
}

#[test]
fn heredocs_and_herestrings() {
    let s = parse("bash <<EOF\nrm -rf /\nEOF\necho after");
    let Command::Simple(simple) = &s.pipelines[0].commands[0] else {
        panic!();
    };
    let body = simple.redirects[0]
        .body
        .as_ref()
        .and_then(Word::static_text);
    assert_eq!(body.as_deref(), Some("rm -rf /\n"));
    assert_eq!(
        simples(&s).last(),
        Some(&vec!["echo".to_owned(), "after".to_owned()])
    );
    let s = parse("bash <<< 'reboot'");
    let Command::Simple(simple) = &s.pipelines[0].commands[0] else {
        panic!();
    };
    assert_eq!(
        simple.redirects[0]
            .body
            .as_ref()
            .and_then(Word::static_text)
            .as_deref(),
        Some("reboot")
    );
}

#[test]
fn ansi_c_quoting() {
    let s = parse(r"$'\x72\x6d' -rf $'\057'");
    assert_eq!(simples(&s), vec![vec!["rm", "-rf", "/"]]);
}

#[test]
fn parameter_defaults() {
    let s = parse("rm -rf ${X:-/}");
    let Command::Simple(simple) = &s.pipelines[0].commands[0] else {
        panic!();
    };
    assert!(matches!(
        &simple.words[2].segs[0],
        Seg::Var {
            op: VarOp::Default(_),
            ..
        }
    ));
}

#[test]
fn assignments() {
    let s = parse("X=/ Y=\"a b\" cmd; Z=1");
    let Command::Simple(simple) = &s.pipelines[0].commands[0] else {
        panic!();
    };
    assert_eq!(simple.assignments.len(), 2);
    assert_eq!(words(simple), vec!["cmd"]);
}

#[test]
fn never_fails_and_nesting_is_capped() {
    for text in [
        "'unterminated",
        "\"open $(",
        "))))",
        "((((",
        "${",
        "`",
        "<<",
        "case x in a) rm;; esac",
        "a=(1 2 3)",
    ] {
        let _ = parse(text);
    }
    let deep = "$(".repeat(200) + &")".repeat(200);
    let s = parse(&format!("echo {deep}"));
    let text = format!("{s:?}");
    assert!(text.contains("TooDeep"));
    let deep = "(".repeat(200) + "rm -rf /" + &")".repeat(200);
    assert!(format!("{:?}", parse(&deep)).contains("TooDeep"));
}

#[test]
fn single_simple() {
    assert!(parse("cargo test --all").is_single_simple());
    assert!(parse("make > log").is_single_simple());
    assert!(!parse("a; b").is_single_simple());
    assert!(!parse("a | b").is_single_simple());
    assert!(!parse("echo $(x)").is_single_simple());
    assert!(!parse("(a)").is_single_simple());
    assert!(!parse("cat <<E\nx\nE").is_single_simple());
}
