//! Runs `echo hi` in a jail: the smallest program that uses cordon-launch, and its own stage.
//!
//! `cargo run -p cordon-launch --example echo` prints `hi` from inside a bubblewrap jail (or the
//! Landlock backend's) and exits with the jail's status; where no backend proves it enforces,
//! it prints why and exits 126, having run nothing. The program is its own stage: inside the
//! jail the same binary starts again, with the stage's first argument, and checks the jail.
//! It must therefore live outside the workspace (here: `target/`, outside the temporary
//! directory it uses as the workspace).

use std::process::ExitCode;

use cordon_launch::{Forward, Launcher, RunRequest};
use cordon_policy::{Invocation, Plan, Policy, Profile, RealHost};

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    cordon_launch::run_if_stage(&args); // inside the jail: checks it, then becomes `echo`
    match run() {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("echo example: {e}");
            ExitCode::from(cordon_launch::exit_codes::CANNOT_RUN)
        }
    }
}

fn run() -> Result<u8, Box<dyn std::error::Error>> {
    let home = std::env::var_os("HOME");
    let work = std::env::temp_dir().join(format!("cordon-echo-example-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let plan = Plan::resolve(
        &Policy::for_profile(Profile::Shell),
        &Invocation::at(&work),
        &RealHost::new(home.clone()),
    );
    let outcome = plan
        .map_err(Box::<dyn std::error::Error>::from)
        .and_then(|plan| {
            let config = Launcher::default_config(std::env::current_exe()?, home, None);
            let result = Launcher::linux(config).run(&RunRequest {
                plan: &plan,
                argv: &["echo".into(), "hi".into()],
                host_env: &cordon_env::host_snapshot(),
                forward: Forward::ToOwnStdio,
                inherit_stdin: false,
            })?;
            if let Some(why) = &result.refusal {
                eprintln!("refused: {why}");
            }
            Ok(u8::try_from(result.exit_code.clamp(0, 255)).unwrap_or(u8::MAX))
        });
    let _ = std::fs::remove_dir_all(&work);
    outcome
}
