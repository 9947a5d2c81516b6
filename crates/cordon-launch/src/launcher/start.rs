//! [`Launcher::start`]: one jail, as the list of the pipeline's phases (`features/mod.rs`).

use cordon_policy::{Plan, Unavailable};

use crate::backend::{Backend, JailSpec, StageCall};
use crate::error::LaunchError;
use crate::features::env::JailEnv;
use crate::features::{self, Arguments, Feature, Host, Run};
use crate::host::supervise::{self, Supervision};
use crate::host::sys;
use crate::launcher::result::refused;
use crate::launcher::seen::Seen;
use crate::launcher::{Jail, Launcher, RunRequest, Start, WAYS_OUT, policy_hash};
use crate::stage::{self, self_check};

impl Launcher {
    /// Everything of [`Launcher::run`] up to and including the spawn. With `awaiting`, the stage
    /// reads the command from a descriptor once its checks pass ([`Jail::command`]), so the jail
    /// can be built before the command is known (warm.rs); `req.argv` is then not used.
    pub(crate) fn start(&self, req: &RunRequest<'_>, awaiting: bool) -> Result<Start, LaunchError> {
        if req.argv.is_empty() && !awaiting {
            return Err(LaunchError::EmptyCommand);
        }
        let plan = self.weak.plan(req.plan);
        let req = &RunRequest {
            plan: &plan,
            ..*req
        };
        let policy_hash = policy_hash(req.plan);
        let env = JailEnv::build(req.plan, req.host_env)?;
        let env_dropped = env.dropped_counts();
        let refuse = |reason: String| {
            Ok(Start::Refused(refused(
                reason,
                policy_hash.clone(),
                env_dropped.clone(),
            )))
        };

        // Planning: the first enforcing backend, then every feature's word.
        let (backend, fallback) =
            match self.enforcing(req, &env, awaiting, &policy_hash, &env_dropped)? {
                Chosen::Backend(backend, fallback) => (backend, fallback),
                Chosen::None(result) => return Ok(Start::Refused(*result)),
            };
        if let Some(refusal) = crate::backend::stage_refusal(backend, req.plan) {
            return refuse(refusal.to_string());
        }
        let (plan, mode_note) = match on_backend(req.plan, backend) {
            Ok(resolved) => resolved,
            Err(refusal) => return refuse(refusal),
        };
        let req = &RunRequest {
            plan: &plan,
            ..*req
        };
        let run = self.run_of(req.plan, backend, awaiting, false)?;
        let (mut features, refusals) = features::for_run(&run);
        if let Some(refusal) = refusals.into_iter().next() {
            return refuse(refusal);
        }

        // Preparing the host (after the probe, so a launcher killed while probing leaves
        // nothing in the workspace) and the backend's arguments.
        let session = crate::host::reaper::session(backend.stage_binary());
        self.weak.session(session);
        let (status_read, status_write) =
            sys::pipe().map_err(LaunchError::io("creating the status pipe"))?;
        let Phases {
            mut host,
            mut args,
            seen,
            command: command_write,
        } = host_and_arguments(&run, &mut features, session, env, Some(status_write))?;
        self.weak.arguments(
            &mut args.check,
            &mut args.env,
            &mut args.timeout,
            req.host_env,
        );
        let inherit = std::mem::take(&mut args.inherit);
        let mut prepared = backend.prepare(
            &JailSpec {
                plan: &host.guarded,
                brokers: &host.brokers,
                env: args.env.vars(),
                stage: StageCall::Check {
                    check: &args.check,
                    argv: req.argv,
                },
                layers: &host.layers,
                granted_sockets: &args.granted_sockets,
            },
            inherit,
        )?;
        std::mem::replace(&mut prepared.startable, Ok(()))?;
        if let Some(tree) = prepared.scratch.take() {
            host.cleanup.tree(tree);
        }

        // Confining and starting.
        let mut warnings = args.env.requested_but_dropped();
        warnings.extend(fallback);
        warnings.extend(mode_note);
        for f in &mut features {
            warnings.extend(f.confine(&mut prepared.command, &mut host.cleanup));
        }
        // Known to the session reaper before it exists: the self-check's path is in the jail's
        // command line until the payload runs.
        host.cleanup
            .mark_jail(args.check.outside.as_os_str().as_encoded_bytes());
        for f in &mut features {
            f.starting()?;
        }
        let running = spawn(
            prepared,
            req,
            args.timeout,
            status_read,
            host.cleanup.session(),
            awaiting,
        )?;
        let started: Result<(), LaunchError> = features
            .iter_mut()
            .try_for_each(|f| f.started(&run, &host, &args));
        let layered = features.iter().any(|f| f.name() == "layer");
        let jail = Jail {
            workspace: if layered {
                run.plan.workspace_mode.name()
            } else {
                "live"
            },
            running,
            command: command_write,
            timeout: args.timeout,
            outside: args.check.outside,
            backend: backend.name(),
            landlock_backend: backend.is_landlock(),
            policy_hash,
            env_dropped,
            warnings,
            seen,
            judge: Box::new(crate::violations::JailRules::new(
                req.plan,
                backend.is_landlock(),
            )),
            features,
            cleanup: host.cleanup,
        };
        if let Err(e) = started {
            jail.discard();
            return Err(e);
        }
        Ok(Start::Jail(jail))
    }

    /// The first backend whose probe proved enforcement; else the refusal (or, where the
    /// configuration says `unavailable = "warn"`, the unsandboxed run's result).
    fn enforcing(
        &self,
        req: &RunRequest<'_>,
        env: &JailEnv,
        awaiting: bool,
        policy_hash: &str,
        env_dropped: &std::collections::BTreeMap<String, usize>,
    ) -> Result<Chosen<'_>, LaunchError> {
        let (backend, outcomes) = self.select();
        if let Some(backend) = backend {
            // A backend after the first one enforces: the run says which stronger jail could not
            // start and why, so a harness never believes it got bubblewrap's jail.
            let fallback = outcomes
                .iter()
                .filter(|o| !o.enforcing)
                .map(|o| format!("{}: {}", o.backend, o.detail))
                .collect::<Vec<_>>();
            let note = (!fallback.is_empty()).then(|| {
                format!(
                    "{} enforces because no earlier backend could ({}); `cordon doctor` names the layer that refuses and the change that would let bubblewrap start",
                    backend.name(),
                    fallback.join("; ")
                )
            });
            return Ok(Chosen::Backend(backend, note));
        }
        let detail = outcomes
            .iter()
            .map(|o| format!("{}: {}", o.backend, o.detail))
            .collect::<Vec<_>>()
            .join("; ");
        let (policy_hash, env_dropped) = (policy_hash.to_owned(), env_dropped.clone());
        if req.plan.unavailable == Unavailable::Warn && !awaiting {
            return super::unsandboxed::run(req, env, policy_hash, env_dropped, detail)
                .map(|r| Chosen::None(Box::new(r)));
        }
        Ok(Chosen::None(Box::new(refused(
            format!("no backend enforces the policy on this host ({detail}); {WAYS_OUT}"),
            policy_hash,
            env_dropped,
        ))))
    }

    /// What every feature sees of one run.
    pub(crate) fn run_of<'a>(
        &'a self,
        plan: &'a Plan,
        backend: &'a dyn Backend,
        awaiting: bool,
        dry: bool,
    ) -> Result<Run<'a>, LaunchError> {
        let proxy_rules = if plan.network == cordon_policy::Network::Proxy {
            Some(self.proxy_rules(&plan.network_allow)?)
        } else {
            None
        };
        Ok(Run {
            plan,
            backend,
            awaiting,
            dry,
            proxy_rules,
            layers: self.layers.as_deref(),
        })
    }
}

/// `plan` with its workspace mode as it is on `backend` (`WorkspaceMode::on_backend`), and the
/// warning a run that the default left live carries; Err, the refusal, for a layer asked of a
/// backend that makes none.
pub(crate) fn on_backend<'p>(
    plan: &'p Plan,
    backend: &dyn Backend,
) -> Result<(std::borrow::Cow<'p, Plan>, Option<String>), String> {
    let asked = plan.workspace_mode;
    let mode = asked.on_backend(backend.layers(), backend.name())?;
    if mode == asked {
        return Ok((std::borrow::Cow::Borrowed(plan), None));
    }
    let note = (mode == cordon_policy::WorkspaceMode::Live).then(|| {
        format!(
            "the workspace is written live: the {} backend makes no copy-on-write layer, so what the command writes reaches the workspace as it runs",
            backend.name()
        )
    });
    let mut resolved = plan.clone();
    resolved.workspace_mode = mode;
    Ok((std::borrow::Cow::Owned(resolved), note))
}

/// Spawns the prepared jail under supervision (timeout, output cap, the status pipe read).
fn spawn(
    prepared: crate::backend::Prepared,
    req: &RunRequest<'_>,
    timeout: Option<std::time::Duration>,
    status: std::os::fd::OwnedFd,
    session: Option<&'static crate::host::reaper::Session>,
    awaiting: bool,
) -> Result<supervise::Running, LaunchError> {
    supervise::spawn(
        prepared.command,
        Supervision {
            timeout,
            output_cap: req.plan.limits.output_cap_bytes,
            forward: req.forward,
            status: Some(status),
            inherit_stdin: req.inherit_stdin,
            hold: prepared.hold,
            session,
            from_long_lived_thread: awaiting,
            supervisor: prepared.supervisor,
        },
    )
    .map_err(LaunchError::io("starting the jail"))
}

/// The backend a run uses, or the result of a run that needs none (refused, or unsandboxed
/// where the configuration says so).
enum Chosen<'a> {
    /// The backend, and why earlier ones were passed over (a warning for the result).
    Backend(&'a dyn Backend, Option<String>),
    None(Box<crate::launcher::RunResult>),
}

/// What preparing the host and the backend's arguments gave one jail.
pub(crate) struct Phases {
    pub(crate) host: Host,
    pub(crate) args: Arguments,
    /// For a jail built ahead: what its guard read, looked at again when a command claims it.
    pub(crate) seen: Option<Seen>,
    /// For a jail built ahead: the launcher's end of its command channel.
    pub(crate) command: Option<std::os::fd::OwnedFd>,
}

/// Preparing the host and the backend's arguments, for a run and for `cordon explain` alike
/// (`run.dry`: nothing made, descriptors shown as `-1`), so what explain prints is what a run
/// hands the backend. `status` is the write end of the stage's status pipe (none when dry).
pub(crate) fn host_and_arguments(
    run: &Run<'_>,
    features: &mut [Box<dyn Feature>],
    session: Option<&'static crate::host::reaper::Session>,
    env: JailEnv,
    status: Option<std::os::fd::OwnedFd>,
) -> Result<Phases, LaunchError> {
    let mut host = crate::features::autorun::guard(run, session);
    // Taken right after the guard, as close to its reads as a cold run's mounts.
    let seen = (run.awaiting && !run.dry).then(|| Seen::of(run.plan));
    for f in features.iter_mut() {
        f.prepare_host(run, &mut host)?;
    }
    let mut check = self_check(&host.guarded, status.as_ref().map_or(-1, sys::raw));
    // What the stage's confinement check expects (a layer sets its own operand).
    check.layer = if run.backend.runs_stage_in_place() {
        stage::LayerOperand::InPlace
    } else {
        stage::LayerOperand::Live
    };
    let mut args = Arguments {
        check,
        inherit: status.into_iter().collect(),
        env,
        timeout: None,
        granted_sockets: Vec::new(),
    };
    let command = if run.awaiting {
        args.channel(run.dry, "the command channel", |c| &mut c.command_fd)?
    } else {
        None
    };
    for f in features.iter_mut() {
        f.arguments(run, &host, &mut args)?;
    }
    Ok(Phases {
        host,
        args,
        seen,
        command,
    })
}
