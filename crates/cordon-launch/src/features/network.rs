//! The `proxy` network's part in a run (the bridge and the server are `proxy.rs`): planning
//! refuses a backend that cannot bridge a proxy into its jail; the arguments give the stage
//! the channel it sends its listener on and point every tool at the proxy; the proxy starts
//! right before the jail and ends with it, and what it saw joins the result.
//!
//! Recovery: nothing of it outlives the launcher (the listener lives in the jail's network
//! namespace and in the launcher's descriptor table only).

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;

use super::env::EnvSource;
use super::proxy::{JailProxy, Rules};
use super::{Arguments, Feature, Host, Outcome, Run};
use crate::error::LaunchError;

struct Network {
    rules: Arc<Rules>,
    channel: Option<OwnedFd>,
    proxy: Option<JailProxy>,
}

/// Planning: a `proxy` network needs a backend whose jail has a network namespace of its own.
pub(crate) fn plan(run: &Run<'_>, refusals: &mut Vec<String>) -> Option<Box<dyn Feature>> {
    if run.plan.network != cordon_policy::Network::Proxy {
        return None;
    }
    if !run.backend.bridges_proxy() {
        refusals.push(format!(
            "network mode \"proxy\" needs a jail with a network namespace of its own (bubblewrap); the {} backend shares the host's network, where a proxy port would be reachable by every process of the host: use --backend bwrap, or network mode \"deny\"",
            run.backend.name()
        ));
        return None;
    }
    let rules = run.proxy_rules.clone()?;
    Some(Box::new(Network {
        rules,
        channel: None,
        proxy: None,
    }))
}

impl Feature for Network {
    fn name(&self) -> &'static str {
        "proxy"
    }

    /// The proxy's bridge: the stage sends its listener on this socket, and the proxy
    /// variables point every tool at it; the host's own are never passed.
    fn arguments(
        &mut self,
        run: &Run<'_>,
        _host: &Host,
        args: &mut Arguments,
    ) -> Result<(), LaunchError> {
        self.channel = args.channel(run.dry, "the proxy channel", |c| &mut c.proxy_fd)?;
        for (name, value) in super::proxy::env_vars() {
            args.env.set(name, &value, EnvSource::Proxy);
        }
        Ok(())
    }

    /// The proxy waits for the stage's listener from before the spawn: a spawn that fails
    /// drops it, which ends its thread.
    fn starting(&mut self) -> Result<(), LaunchError> {
        if let Some(channel) = self.channel.take() {
            self.proxy = Some(
                super::proxy::start(Arc::clone(&self.rules), channel)
                    .map_err(LaunchError::io("starting the jail's proxy"))?,
            );
        }
        Ok(())
    }

    fn after(&mut self, _writable: &[PathBuf], outcome: &mut Outcome) {
        outcome.network = self.proxy.take().map(JailProxy::finish);
    }
}
