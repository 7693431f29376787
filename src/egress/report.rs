//! One proxied connection as the proxy reports it once it ends: what was asked, whether it was
//! allowed (and why not), and how many bytes went each way. The app writes these to the
//! egress log; the proxy itself writes nothing.

use std::time::{Duration, SystemTime};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    /// When the request came.
    pub time: SystemTime,
    pub pane: u32,
    pub thread: Option<String>,
    /// The host as the request named it (a name, or an address).
    pub host: String,
    pub port: u16,
    pub allowed: bool,
    /// Why it was refused, or why an allowed one could not connect.
    pub reason: Option<String>,
    /// Bytes from the pane to the host, and back.
    pub sent: u64,
    pub received: u64,
    pub duration: Duration,
}
