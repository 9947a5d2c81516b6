//! docs/credential-stores.md agrees with the plan: a row says "home + mask" exactly when a
//! default home mask covers its path, and names that mask; the stores of its second table (beside
//! programs, inside shown trees) are not readable with the home hidden and masked with it visible.

use std::path::Path;

use cordon_policy::Policy;

#[test]
fn the_survey_names_the_masks_that_cover_its_rows() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/credential-stores.md"),
    )
    .unwrap();
    let mut rows = 0;
    for line in text
        .lines()
        .filter(|l| l.starts_with("| ") && l[2..].starts_with(|c: char| c.is_ascii_digit()))
    {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let path = cells[4]
            .trim_matches('`')
            .trim_start_matches("~/")
            .trim_end_matches('/');
        let kept = cells[5];
        let mask = Policy::HOME_CREDENTIAL_MASKS
            .iter()
            .find(|m| Path::new(path).starts_with(m));
        match mask {
            Some(m) => assert_eq!(kept, format!("home + mask `~/{m}`"), "{line}"),
            None => assert_eq!(kept, "home", "{line}"),
        }
        rows += 1;
    }
    assert!(rows >= 100, "{rows} rows");
}

/// One row of the second table: the store, and what shows its tree.
struct ShownRow {
    id: String,
    store: String,
    shown_by: String,
}

fn shown_rows(text: &str) -> Vec<ShownRow> {
    text.lines()
        .filter(|l| l.starts_with("| S") && l[3..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            ShownRow {
                id: cells[1].to_owned(),
                store: cells[3].trim_matches('`').replacen("~/", "/home/u/", 1),
                shown_by: cells[4].replace('`', "").replace("~/", "/home/u/"),
            }
        })
        .collect()
}

#[test]
fn stores_beside_programs_and_in_shown_trees_stay_unreadable() {
    use cordon_policy::{FakeHost, HomeMode, Invocation, Plan, PolicyBuilder, Profile, Source};

    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/credential-stores.md"),
    )
    .unwrap();
    let rows = shown_rows(&text);
    assert!(rows.len() >= 20, "{} rows", rows.len());
    let mut host = FakeHost::typical().file("/usr/bin/sh", "\u{7f}ELF");
    let mut path: Vec<String> = Vec::new();
    // What must stay readable for the row to prove a mask rather than a hidden tree.
    let mut shown: Vec<String> = Vec::new();
    for r in &rows {
        host = host.file(&r.store, "token");
        if let Some(entry) = r.shown_by.strip_prefix("PATH ") {
            let program = format!("{entry}/prog-{}", r.id);
            host = host.file(&program, "#!/bin/sh\n");
            path.push(entry.to_owned());
            shown.push(program);
        } else if let Some(prefix) = r.shown_by.strip_prefix("interpreter prefix ") {
            let interp = format!("{prefix}/bin/interp");
            host = host
                .symlink(&interp, "/bin/sh")
                .file(
                    &format!("{prefix}/bin/tool-{}", r.id),
                    &format!("#!{interp}\n"),
                )
                .file(&format!("{prefix}/lib/{}", r.id), "");
            path.push(format!("{prefix}/bin"));
            shown.push(format!("{prefix}/lib/{}", r.id));
        } else if let Some(tree) = r.shown_by.strip_prefix("vetted ") {
            let marker = format!("{tree}/marker-{}", r.id);
            host = host.file(&marker, "");
            shown.push(marker);
        } else {
            panic!("{}: unknown shown-by {:?}", r.id, r.shown_by);
        }
    }
    let env = [("PATH", format!("{}:/usr/bin", path.join(":")))];
    let hidden = Plan::resolve(
        &super::shell(),
        &Invocation::at("/home/u/proj").with_host_env(env.clone()),
        &host,
    )
    .unwrap();
    let readable = |plan: &Plan, p: &str| {
        plan.read_only
            .iter()
            .any(|b| Path::new(p).starts_with(&b.dest))
            && !plan
                .masks
                .iter()
                .any(|m| Path::new(p).starts_with(&m.target))
    };
    for s in &shown {
        assert!(
            readable(&hidden, s),
            "{s} should be shown: {:?}",
            hidden.home_trees
        );
    }
    for r in &rows {
        assert!(
            !readable(&hidden, &r.store),
            "{}: {} readable",
            r.id,
            r.store
        );
    }
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_home(HomeMode::Visible, Source::Global("g.toml".into()));
    let visible = Plan::resolve(
        &b.build(),
        &Invocation::at("/home/u/proj").with_host_env(env),
        &host,
    )
    .unwrap();
    for r in &rows {
        assert!(
            visible
                .masks
                .iter()
                .any(|m| Path::new(&r.store).starts_with(&m.target)),
            "{}: {} not masked with the home visible",
            r.id,
            r.store
        );
    }
}
