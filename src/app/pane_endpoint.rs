//! A locked pane's own control endpoint. The instance's control socket is out of every lock's
//! reach (it can open, change and restart panes); a locked agent still needs to say "I need
//! you" (`paddock ctl notify` from its hook) and to read its own pulse. So each locked pane (on
//! Linux) gets a socket of its own, given to it as $PADDOCK_SOCKET and let through its lock,
//! whose calls may speak only of that pane: `notify` for it, and `ls` answered with it alone.
//! Authority comes from the socket a request arrives on (`ctl::Scope`), never from what the
//! request says.

use std::path::PathBuf;

use crate::mux::PaneId;

#[cfg(unix)]
use crate::ctl::protocol::{ErrorCode, Reply, Request};

/// Where locked panes' endpoints are made, and where their calls go.
#[derive(Clone, Debug)]
pub struct PaneEndpoints {
    dir: PathBuf,
    #[cfg(target_os = "linux")]
    calls: crossbeam_channel::Sender<crate::ctl::Call>,
}

/// A pane's listening endpoint; it stops listening and goes when dropped.
#[cfg(unix)]
pub type Endpoint = crate::ctl::ControlServer;
#[cfg(not(unix))]
pub enum Endpoint {}

impl PaneEndpoints {
    /// Endpoints in `dir` (made private on first use), their calls to `calls`.
    #[cfg(unix)]
    pub fn new(dir: PathBuf, calls: crossbeam_channel::Sender<crate::ctl::Call>) -> PaneEndpoints {
        #[cfg(target_os = "linux")]
        return PaneEndpoints { dir, calls };
        #[cfg(not(target_os = "linux"))]
        {
            drop(calls);
            PaneEndpoints { dir }
        }
    }

    /// The endpoint of `pane` and its path; `serial` keeps a restarted pane's new endpoint apart
    /// from its old one's. `None` where locks cannot let it through yet (macOS, Windows).
    #[cfg(target_os = "linux")]
    pub fn open(&self, pane: PaneId, serial: u64) -> Result<Option<(Endpoint, PathBuf)>, String> {
        crate::ctl::prepare_socket_dir(&self.dir).map_err(|e| e.to_string())?;
        let PaneId(pane) = pane;
        let path = self.dir.join(format!("{}-{pane}-{serial}.sock", std::process::id()));
        let scope = crate::ctl::Scope::Pane(pane);
        let server =
            Endpoint::bind_scoped(&path, scope, self.calls.clone()).map_err(|e| e.to_string())?;
        Ok(Some((server, path)))
    }

    /// A socket for `pane`'s proxy beside its endpoint, and its path. `None` where locks
    /// cannot reach one yet (macOS, Windows).
    #[cfg(target_os = "linux")]
    pub fn bind_egress(
        &self,
        pane: PaneId,
        serial: u64,
    ) -> Result<Option<(std::os::unix::net::UnixListener, PathBuf)>, String> {
        crate::ctl::prepare_socket_dir(&self.dir).map_err(|e| e.to_string())?;
        let PaneId(pane) = pane;
        let path = self.dir.join(format!("{}-{pane}-{serial}-egress.sock", std::process::id()));
        let listener = std::os::unix::net::UnixListener::bind(&path)
            .map_err(|e| format!("cannot make {}: {e}", path.display()))?;
        Ok(Some((listener, path)))
    }

    #[cfg(all(unix, not(target_os = "linux")))]
    pub fn bind_egress(
        &self,
        _pane: PaneId,
        _serial: u64,
    ) -> Result<Option<(std::os::unix::net::UnixListener, PathBuf)>, String> {
        Ok(None)
    }

    #[cfg(not(target_os = "linux"))]
    pub fn open(&self, _pane: PaneId, _serial: u64) -> Result<Option<(Endpoint, PathBuf)>, String> {
        let _ = &self.dir;
        Ok(None)
    }
}

#[cfg(unix)]
/// Whether pane `own`'s endpoint may ask `request`: `notify` for that pane, `ls`; nothing else
/// (the refusal to send back).
pub fn allowed(own: PaneId, request: &Request) -> Result<(), Refused> {
    let PaneId(own) = own;
    let message = match request {
        Request::Notify { pane, .. } if *pane == own => return Ok(()),
        Request::Ls => return Ok(()),
        Request::Notify { pane, .. } => {
            format!("pane {own}'s endpoint speaks only of pane {own}, not of pane {pane}")
        }
        _ => format!(
            "a locked pane may only notify and read its own pulse (`paddock ctl notify`, \
             `paddock ls`); pane {own}'s endpoint refuses anything else"
        ),
    };
    Err(Refused(message))
}

/// A request a pane's endpoint refuses, and why.
#[cfg(unix)]
#[derive(Debug)]
pub struct Refused(pub String);

#[cfg(unix)]
impl Refused {
    pub fn reply(self) -> Reply {
        Reply::error(ErrorCode::Refused, self.0)
    }
}

/// An `ls` reply as pane `own` may see it: its own pane only.
#[cfg(unix)]
pub fn own_view(PaneId(own): PaneId, reply: &mut Reply) {
    if let Some(instance) = &mut reply.instance {
        instance.panes.retain(|pane| pane.id == own);
        instance.config_problems = None;
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_panes_endpoint_may_notify_for_itself_and_list_only() {
        let notify = |pane| Request::Notify { pane, text: "waiting".into() };
        assert!(allowed(PaneId(3), &notify(3)).is_ok());
        assert!(allowed(PaneId(3), &Request::Ls).is_ok());
        let other = allowed(PaneId(3), &notify(4)).expect_err("another pane");
        assert!(other.0.contains("not of pane 4"));
        let refused = [
            Request::New { thread: None, cwd: None, command: vec![] },
            Request::Restart { pane: 3 },
            Request::NextWaiting,
            Request::Mute { pane: 3 },
            Request::Unmute { pane: 3 },
            Request::Reconnect { host: "box".into() },
            Request::Send { pane: 3, text: Some("x".into()), keys: None },
            Request::Close { pane: 3 },
            Request::Stop,
        ];
        for request in refused {
            let reply = allowed(PaneId(3), &request).expect_err("refused").reply();
            assert_eq!(reply.error.expect("error").code, ErrorCode::Refused, "{request:?}");
        }
    }
}
