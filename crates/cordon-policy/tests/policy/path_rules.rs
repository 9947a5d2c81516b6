//! What a `PATH` entry below a hidden home shows: the entry, its symlinked programs' targets and
//! its scripts' interpreters' prefixes, never a sibling; and the credential configuration masked
//! inside every shown tree.

use std::path::{Path, PathBuf};

use cordon_policy::{FakeHost, Invocation, Plan, PolicyBuilder, Profile, Source};

use super::shell;

const ELF: &str = "\u{7f}ELF\u{2}\u{1}";

fn plan_with_path(host: &FakeHost, path: &str) -> Plan {
    Plan::resolve(
        &shell(),
        &Invocation::at("/home/u/proj").with_host_env([("PATH", format!("{path}:/usr/bin"))]),
        host,
    )
    .unwrap()
}

/// The tree shown at `path` and why, if one is.
fn why(plan: &Plan, path: &str) -> Option<String> {
    plan.home_trees
        .iter()
        .find(|t| t.path == Path::new(path))
        .map(|t| t.why.clone())
}

/// Whether a read-only bind of the plan shows `path` (and no mask hides it).
fn readable(plan: &Plan, path: &str) -> bool {
    let p = Path::new(path);
    plan.read_only.iter().any(|b| p.starts_with(&b.dest))
        && !plan.masks.iter().any(|m| p.starts_with(&m.target))
}

fn masked(plan: &Plan, path: &str) -> bool {
    plan.masks.iter().any(|m| m.target == Path::new(path))
}

#[test]
fn a_path_entry_shows_itself_not_the_tree_beside_it() {
    let host = FakeHost::typical()
        .file("/home/u/.pulumi/bin/pulumi", ELF)
        .file("/home/u/.pulumi/credentials.json", "token")
        .file("/home/u/.fly/bin/flyctl", ELF)
        .file("/home/u/.fly/config.yml", "access_token: x")
        .file("/home/u/.foundry/bin/forge", ELF)
        .file("/home/u/.foundry/keystores/dev", "key");
    let plan = plan_with_path(
        &host,
        "/home/u/.pulumi/bin:/home/u/.fly/bin:/home/u/.foundry/bin",
    );
    for entry in [
        "/home/u/.pulumi/bin",
        "/home/u/.fly/bin",
        "/home/u/.foundry/bin",
    ] {
        assert_eq!(
            why(&plan, entry),
            Some(format!("PATH entry {entry}")),
            "{:?}",
            plan.home_trees
        );
        assert!(readable(&plan, &format!("{entry}/x")));
    }
    for store in [
        "/home/u/.pulumi/credentials.json",
        "/home/u/.fly/config.yml",
        "/home/u/.foundry/keystores/dev",
        "/home/u/.pulumi",
    ] {
        assert!(!readable(&plan, store), "{store}: {:?}", plan.read_only);
    }
}

#[test]
fn a_symlinked_program_shows_its_target_and_not_the_targets_neighbours() {
    let host = FakeHost::typical()
        .dir("/home/u/.local/bin")
        .symlink("/home/u/.local/bin/app", "../../apps/app/bin/app")
        .file("/home/u/apps/app/bin/app", ELF)
        .file("/home/u/apps/app/settings.toml", "token = 1")
        .file("/home/u/apps/other/bin/o", ELF)
        .symlink("/home/u/.local/bin/single", "/home/u/tools/single")
        .file("/home/u/tools/single", ELF)
        .file("/home/u/tools/secret", "");
    let plan = plan_with_path(&host, "/home/u/.local/bin");
    assert_eq!(
        why(&plan, "/home/u/apps/app/bin").as_deref(),
        Some("target of /home/u/.local/bin/app")
    );
    // A target outside a `bin` directory is shown alone.
    assert_eq!(
        why(&plan, "/home/u/tools/single").as_deref(),
        Some("target of /home/u/.local/bin/single")
    );
    for hidden in [
        "/home/u/apps/app/settings.toml",
        "/home/u/apps/other/bin/o",
        "/home/u/tools/secret",
    ] {
        assert!(!readable(&plan, hidden), "{hidden}");
    }
}

#[test]
fn a_node_package_target_shows_its_package_and_the_prefix_config_stays_out() {
    let host = FakeHost::typical()
        .symlink(
            "/home/u/.npm-global/bin/tsc",
            "../lib/node_modules/typescript/bin/tsc",
        )
        .file(
            "/home/u/.npm-global/lib/node_modules/typescript/bin/tsc",
            "#!/usr/bin/env node\nrequire('../lib/tsc.js')\n",
        )
        .file(
            "/home/u/.npm-global/lib/node_modules/typescript/lib/tsc.js",
            "",
        )
        .file("/home/u/.npm-global/lib/node_modules/leftpad/index.js", "")
        .file(
            "/home/u/.npm-global/etc/npmrc",
            "//registry.example.com/:_authToken=x",
        )
        .file("/usr/bin/node", ELF);
    let plan = plan_with_path(&host, "/home/u/.npm-global/bin");
    assert_eq!(
        why(&plan, "/home/u/.npm-global/lib/node_modules/typescript").as_deref(),
        Some("target of /home/u/.npm-global/bin/tsc")
    );
    assert!(readable(
        &plan,
        "/home/u/.npm-global/lib/node_modules/typescript/lib/tsc.js"
    ));
    assert!(!readable(&plan, "/home/u/.npm-global/etc/npmrc"));
    assert!(!readable(
        &plan,
        "/home/u/.npm-global/lib/node_modules/leftpad/index.js"
    ));
}

#[test]
fn a_scripts_interpreter_prefix_is_shown_as_named_and_as_resolved() {
    let host = FakeHost::typical()
        .dir("/home/u/.local/bin")
        .symlink("/home/u/.local/bin/tool", "/home/u/.venvs/tool/bin/tool")
        .file(
            "/home/u/.venvs/tool/bin/tool",
            "#!/home/u/.venvs/tool/bin/python -I\nimport tool\n",
        )
        .symlink(
            "/home/u/.venvs/tool/bin/python",
            "/home/u/.python/3.12/bin/python3.12",
        )
        .file(
            "/home/u/.venvs/tool/lib/python3.12/site-packages/tool.py",
            "",
        )
        .file(
            "/home/u/.venvs/tool/pip.conf",
            "index-url = https://u:p@pypi.example.com",
        )
        .file("/home/u/.venvs/other/pip.conf", "")
        .file("/home/u/.python/3.12/bin/python3.12", ELF)
        .file("/home/u/.python/3.12/lib/python3.12/os.py", "");
    let plan = plan_with_path(&host, "/home/u/.local/bin");
    for (tree, reason) in [
        (
            "/home/u/.venvs/tool",
            "interpreter prefix of /home/u/.local/bin/tool",
        ),
        (
            "/home/u/.python/3.12",
            "interpreter prefix of /home/u/.local/bin/tool",
        ),
    ] {
        assert_eq!(
            why(&plan, tree).as_deref(),
            Some(reason),
            "{:?}",
            plan.home_trees
        );
    }
    assert!(readable(
        &plan,
        "/home/u/.venvs/tool/lib/python3.12/site-packages/tool.py"
    ));
    assert!(readable(&plan, "/home/u/.python/3.12/lib/python3.12/os.py"));
    // The shown prefix's pip configuration is masked; the neighbouring venv is not shown.
    assert!(masked(&plan, "/home/u/.venvs/tool/pip.conf"));
    assert!(!readable(&plan, "/home/u/.venvs/tool/pip.conf"));
    assert!(!readable(&plan, "/home/u/.venvs/other/pip.conf"));
}

#[test]
fn an_env_interpreter_is_found_on_path_and_its_prefix_config_masked() {
    let host = FakeHost::typical()
        .file("/home/u/node/v20/bin/node", ELF)
        .symlink(
            "/home/u/node/v20/bin/npm",
            "../lib/node_modules/npm/bin/npm-cli.js",
        )
        .file(
            "/home/u/node/v20/lib/node_modules/npm/bin/npm-cli.js",
            "#!/usr/bin/env node\n",
        )
        .file(
            "/home/u/node/v20/etc/npmrc",
            "//r.example.com/:_authToken=x",
        )
        .file("/home/u/node/v18/bin/node", ELF);
    let plan = plan_with_path(&host, "/home/u/node/v20/bin");
    assert_eq!(
        why(&plan, "/home/u/node/v20").as_deref(),
        Some("interpreter prefix of /home/u/node/v20/bin/npm")
    );
    assert!(masked(&plan, "/home/u/node/v20/etc/npmrc"));
    assert!(!readable(&plan, "/home/u/node/v20/etc/npmrc"));
    assert!(!readable(&plan, "/home/u/node/v18/bin/node"));
}

#[test]
fn an_interpreter_in_a_shared_directory_shows_its_own_file_only() {
    let host = FakeHost::typical()
        .file("/home/u/.local/bin/python3", ELF)
        .file("/home/u/scripts/bin/job", "#!/home/u/.local/bin/python3\n")
        .file("/home/u/.local/share/keyrings/login.keyring", "");
    let plan = plan_with_path(&host, "/home/u/scripts/bin");
    assert!(
        why(&plan, "/home/u/.local").is_none(),
        "{:?}",
        plan.home_trees
    );
    assert!(!readable(
        &plan,
        "/home/u/.local/share/keyrings/login.keyring"
    ));
}

#[test]
fn stores_inside_vetted_trees_are_masked() {
    let host = FakeHost::typical()
        .file("/home/u/.nvm/versions/node/v20.11.0/etc/npmrc", "")
        .file("/home/u/.nvm/versions/node/v20.11.0/bin/node", ELF)
        .file("/home/u/.pyenv/versions/3.12.1/pip.conf", "")
        .file("/home/u/miniconda3/.condarc", "")
        .file("/home/u/miniconda3/envs/ml/.condarc", "")
        .dir("/home/u/.bun/install/global")
        .file("/home/u/.bun/install/global/.npmrc", "");
    let plan = plan_with_path(&host, "/home/u/.nvm/versions/node/v20.11.0/bin");
    for store in [
        "/home/u/.nvm/versions/node/v20.11.0/etc/npmrc",
        "/home/u/.pyenv/versions/3.12.1/pip.conf",
        "/home/u/miniconda3/.condarc",
        "/home/u/miniconda3/envs/ml/.condarc",
        "/home/u/.bun/install/global/.npmrc",
    ] {
        assert!(masked(&plan, store), "{store}: {:?}", plan.masks);
        assert!(!readable(&plan, store), "{store}");
    }
    assert!(readable(
        &plan,
        "/home/u/.nvm/versions/node/v20.11.0/bin/node"
    ));
}

#[test]
fn with_the_home_visible_the_same_stores_are_masked() {
    let host = FakeHost::typical()
        .file("/home/u/.pulumi/bin/pulumi", ELF)
        .file("/home/u/.pulumi/credentials.json", "")
        .file("/home/u/.npm-global/bin/x", ELF)
        .file("/home/u/.npm-global/etc/npmrc", "")
        .file("/home/u/.nvm/versions/node/v20.11.0/etc/npmrc", "");
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_home(
        cordon_policy::HomeMode::Visible,
        Source::Global("g.toml".into()),
    );
    let plan = Plan::resolve(
        &b.build(),
        &Invocation::at("/home/u/proj")
            .with_host_env([("PATH", "/home/u/.pulumi/bin:/home/u/.npm-global/bin")]),
        &host,
    )
    .unwrap();
    for store in [
        "/home/u/.pulumi/credentials.json",
        "/home/u/.npm-global/etc/npmrc",
        "/home/u/.nvm/versions/node/v20.11.0/etc/npmrc",
    ] {
        assert!(masked(&plan, store), "{store}: {:?}", plan.masks);
    }
}

#[test]
fn the_walk_is_bounded_per_entry() {
    let mut host = FakeHost::typical().file("/home/u/far/bin/x", ELF);
    for i in 0..300 {
        host = host.file(&format!("/home/u/many/bin/p{i:03}"), ELF);
    }
    // The 301st program in name order is not looked at.
    let host = host.symlink("/home/u/many/bin/z-last", "/home/u/far/bin/x");
    let plan = plan_with_path(&host, "/home/u/many/bin");
    assert!(why(&plan, "/home/u/many/bin").is_some());
    assert!(
        why(&plan, "/home/u/far/bin").is_none(),
        "{:?}",
        plan.home_trees
    );
    // Within the bound, the same link is followed.
    let host = FakeHost::typical()
        .file("/home/u/far/bin/x", ELF)
        .symlink("/home/u/many/bin/z-last", "/home/u/far/bin/x");
    let plan = plan_with_path(&host, "/home/u/many/bin");
    assert!(why(&plan, "/home/u/far/bin").is_some());
    let _ = PathBuf::new();
}

#[test]
fn nothing_a_jail_wrote_steers_the_walk() {
    // Everything under /home/u/proj (the workspace, writable) may have been written by an
    // earlier jailed command; /home/u/.tea holds a secret beside a program.
    let host = FakeHost::typical()
        .file("/home/u/.tea/bin/x", ELF)
        .file("/home/u/.tea/secret", "token")
        .file("/home/u/.config/tea/config.yml", "token")
        // A link and a `#!` line planted in a workspace PATH entry.
        .symlink("/home/u/proj/bin/x", "/home/u/.config/tea/config.yml")
        .file("/home/u/proj/bin/s", "#!/home/u/.tea/bin/x\n")
        // The host's own link into the workspace, where a planted link goes on.
        .symlink("/home/u/.local/bin/tool", "/home/u/proj/tool")
        .symlink("/home/u/proj/tool", "/home/u/.tea/bin/x")
        // The host's own link through a directory link into the workspace.
        .symlink("/home/u/.local/bin/t2", "/home/u/.vlink/x/bin/x")
        .symlink("/home/u/.vlink", "/home/u/proj/v")
        .symlink("/home/u/proj/v/x", "/home/u/.tea")
        // The host's own script whose `env` interpreter a planted link answers first.
        .file("/home/u/.local/bin/envy", "#!/usr/bin/env node\n")
        .symlink("/home/u/proj/bin/node", "/home/u/.tea/bin/x");
    let plan = plan_with_path(&host, "/home/u/proj/bin:/home/u/.local/bin");
    for t in &plan.home_trees {
        assert!(
            !t.path.starts_with("/home/u/.tea") && !t.path.starts_with("/home/u/.config"),
            "{t:?}"
        );
    }
    for secret in [
        "/home/u/.tea/secret",
        "/home/u/.config/tea/config.yml",
        "/home/u/.tea/bin/x",
    ] {
        assert!(!readable(&plan, secret), "{secret}");
    }
    // The same host links, outside the workspace, are followed.
    let host = FakeHost::typical()
        .file("/home/u/.tea/bin/x", ELF)
        .symlink("/home/u/.local/bin/tool", "/home/u/.tea/bin/x");
    let plan = plan_with_path(&host, "/home/u/.local/bin");
    assert!(
        why(&plan, "/home/u/.tea/bin").is_some(),
        "{:?}",
        plan.home_trees
    );
}

#[test]
fn an_fnm_multishell_entry_shows_the_node_installation_it_links_to() {
    let inst = "/home/u/.local/share/fnm/node-versions/v20.11.0/installation";
    let host = FakeHost::typical()
        .symlink("/home/u/.local/state/fnm_multishells/7_1", inst)
        .file(&format!("{inst}/bin/node"), ELF)
        .symlink(
            &format!("{inst}/bin/npm"),
            "../lib/node_modules/npm/bin/npm-cli.js",
        )
        .file(
            &format!("{inst}/lib/node_modules/npm/bin/npm-cli.js"),
            "#!/usr/bin/env node\n",
        )
        .file(
            &format!("{inst}/etc/npmrc"),
            "//r.example.com/:_authToken=x",
        )
        .file(
            "/home/u/.local/share/fnm/node-versions/v18.0.0/installation/bin/node",
            ELF,
        );
    let plan = plan_with_path(&host, "/home/u/.local/state/fnm_multishells/7_1/bin");
    assert!(
        why(&plan, inst).is_some_and(|w| w.starts_with("interpreter prefix of")),
        "{:?}",
        plan.home_trees
    );
    assert!(readable(
        &plan,
        &format!("{inst}/lib/node_modules/npm/bin/npm-cli.js")
    ));
    assert!(masked(&plan, &format!("{inst}/etc/npmrc")));
    assert!(!readable(&plan, &format!("{inst}/etc/npmrc")));
    assert!(!readable(
        &plan,
        "/home/u/.local/share/fnm/node-versions/v18.0.0/installation/bin/node"
    ));
    // The multishell link is recreated in the private home, so the PATH entry still leads there.
    assert!(
        plan.symlinks
            .iter()
            .any(|s| s.link == Path::new("/home/u/.local/state/fnm_multishells/7_1")),
        "{:?}",
        plan.symlinks
    );
}
