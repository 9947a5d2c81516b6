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
    /// Without a network namespace: the proxy's listener on the host's loopback, which the
    /// backend's supervisor lets the jail (and only among host sockets this one) reach.
    on_host: Option<std::net::TcpListener>,
    proxy: Option<JailProxy>,
}

/// Planning: a `proxy` network needs a backend whose jail has a network namespace of its own.
pub(crate) fn plan(run: &Run<'_>, refusals: &mut Vec<String>) -> Option<Box<dyn Feature>> {
    if run.plan.network != cordon_policy::Network::Proxy {
        return None;
    }
    if !run.backend.bridges_proxy() && !run.backend.proxies_from_host() {
        refusals.push(format!(
            "network mode \"proxy\" needs a jail with a network namespace of its own (bubblewrap) or a supervisor that judges addresses (landlock); the {} backend shares the host's network unjudged: use --backend bwrap, or network mode \"deny\"",
            run.backend.name()
        ));
        return None;
    }
    let rules = run.proxy_rules.clone()?;
    Some(Box::new(Network {
        rules,
        channel: None,
        on_host: None,
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
        if run.backend.bridges_proxy() {
            self.channel = args.channel(run.dry, "the proxy channel", |c| &mut c.proxy_fd)?;
            for (name, value) in super::proxy::env_vars() {
                args.env.set(name, &value, EnvSource::Proxy);
            }
            return Ok(());
        }
        let what = "listening for the jail's proxy on the host's loopback";
        let listener =
            std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(LaunchError::io(what))?;
        let port = listener.local_addr().map_err(LaunchError::io(what))?.port();
        args.granted_sockets
            .push(socket_inode(&listener).map_err(LaunchError::io(what))?);
        for (name, value) in super::proxy::env_vars_at(port) {
            args.env.set(name, &value, EnvSource::Proxy);
        }
        self.on_host = Some(listener);
        Ok(())
    }

    /// The proxy waits for the stage's listener from before the spawn: a spawn that fails
    /// drops it, which ends its thread.
    fn starting(&mut self) -> Result<(), LaunchError> {
        if let Some(listener) = self.on_host.take() {
            self.proxy = Some(
                super::proxy::start_on(Arc::clone(&self.rules), listener)
                    .map_err(LaunchError::io("starting the jail's proxy"))?,
            );
        }
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

/// The inode of a socket (what the kernel's tables name it by).
fn socket_inode(listener: &std::net::TcpListener) -> std::io::Result<u64> {
    use std::os::fd::AsFd;
    Ok(rustix::fs::fstat(listener.as_fd())?.st_ino)
}
