//! A layered jail's list (`build_layered`): the same jail but for the four differences it
//! documents, and nothing a layer is not for.

use std::path::{Path, PathBuf};

use cordon_bwrap::{BwrapError, LayerRoot, Request, build_layered};
use cordon_policy::{FakeHost, Posture, Profile};

use crate::common::{FDS, argv, build_plan, env, features, typical_plan};

fn layered(layers: &[LayerRoot], stage: Option<&Path>) -> Result<Vec<String>, BwrapError> {
    let plan = typical_plan(Profile::Shell, Posture::Host);
    let (features, env) = (features(), env());
    let cmd = argv(&["/bin/true"]);
    build_layered(
        &Request {
            plan: &plan.guard(&FakeHost::typical()),
            brokers: &[],
            features: &features,
            env: &env,
            fds: FDS,
            stage,
            argv: &cmd,
        },
        layers,
    )
    .map(|a| a.render().lines().map(str::to_owned).collect())
}

fn workspace_layer() -> LayerRoot {
    LayerRoot {
        root: PathBuf::from("/home/u/proj"),
        dir: PathBuf::from("/home/u/.cache/cordon/layers/k/r/0"),
    }
}

#[test]
fn a_layered_list_differs_from_the_live_one_only_where_the_layer_needs_it() {
    let stage = Path::new("/usr/bin/cordon");
    let plan = typical_plan(Profile::Shell, Posture::Host);
    let live: Vec<String> = build_plan(&plan, Some(stage), &argv(&["/bin/true"]))
        .render()
        .lines()
        .map(str::to_owned)
        .collect();
    let layer = layered(&[workspace_layer()], Some(stage)).unwrap();

    let only_live: Vec<&String> = live.iter().filter(|l| !layer.contains(l)).collect();
    let only_layer: Vec<&String> = layer.iter().filter(|l| !live.contains(l)).collect();
    assert_eq!(only_live, ["--disable-userns", "--seccomp 4"]);
    assert_eq!(
        only_layer,
        [
            "--uid 0",
            "--gid 0",
            "--cap-add CAP_SYS_ADMIN",
            "--cap-add CAP_DAC_OVERRIDE",
            "--cap-add CAP_FOWNER",
            "--cap-add CAP_CHOWN",
            "--cap-add CAP_FSETID",
            "--cap-add CAP_SETFCAP",
            "--bind /home/u/.cache/cordon/layers/k/r/0 /run/cordon/layer/0",
            "--ro-bind /home/u/proj /run/cordon/lower/0",
        ]
    );
    // The writable root and what lies below it are still bubblewrap's: the stage carries them
    // over onto the overlay.
    assert!(layer.contains(&"--bind /home/u/proj /home/u/proj".to_owned()));
    assert!(
        layer
            .iter()
            .any(|l| l.starts_with("--ro-bind /home/u/proj/.git/hooks"))
    );
    // The capabilities are added after all are dropped, never before.
    let drop = layer.iter().position(|l| l == "--cap-drop ALL").unwrap();
    let add = layer
        .iter()
        .position(|l| l.starts_with("--cap-add"))
        .unwrap();
    assert!(drop < add);
}

#[test]
fn a_layer_over_a_path_that_is_not_a_writable_root_or_without_a_stage_is_refused() {
    let stage = Path::new("/usr/bin/cordon");
    let outside = LayerRoot {
        root: PathBuf::from("/etc"),
        dir: PathBuf::from("/home/u/.cache/cordon/layers/k/r/0"),
    };
    let err = layered(&[outside], Some(stage)).unwrap_err();
    assert!(err.to_string().contains("/etc"), "{err}");
    let err = layered(&[workspace_layer()], None).unwrap_err();
    assert!(matches!(err, BwrapError::LayerNotARoot { .. }), "{err}");
    let relative = LayerRoot {
        root: PathBuf::from("/home/u/proj"),
        dir: PathBuf::from("layers/0"),
    };
    assert!(matches!(
        layered(&[relative], Some(stage)).unwrap_err(),
        BwrapError::NotCanonical { .. }
    ));
}

#[test]
fn no_layer_is_the_live_list() {
    let stage = Path::new("/usr/bin/cordon");
    let plan = typical_plan(Profile::Shell, Posture::Host);
    let live = build_plan(&plan, Some(stage), &argv(&["/bin/true"])).render();
    assert_eq!(layered(&[], Some(stage)).unwrap().join("\n"), live);
}
