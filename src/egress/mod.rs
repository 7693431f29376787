//! Egress: what a locked thread's network may reach when its `network` is an allow-list. The
//! lock keeps its empty network namespace; the thread's programs reach the outside only through
//! a proxy on paddock's side (HTTP CONNECT and plain-HTTP forwarding), which looks names up
//! itself, lets through only what the thread's rules allow (`rules`), and logs every decision
//! (`report`; the app keeps the log). One proxy per locked pane, on a unix socket of its own: its authority comes from
//! the socket a connection arrives on, never from what the request says.

#[cfg(unix)]
pub mod broker;
#[cfg(unix)]
pub mod proxy;
#[cfg(unix)]
pub mod relay;
pub mod report;
pub mod rules;

#[cfg(unix)]
pub use proxy::{Limits, Owner, Proxy};
pub use report::Connection;
pub use rules::{AllowList, Denied, Rule, RuleError};
