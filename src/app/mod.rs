//! Where the subsystems meet: the multiplexer model, the panes' PTY sessions, their locks,
//! secrets and pulse, and the control socket. [`Workspace`] carries out control requests on
//! the panes; a [`server::Server`] (Unix) is one running instance around it, which
//! [`headless`] runs without a window until it is stopped and [`window`] drives from a winit
//! window drawn with wgpu. [`lock`] turns a thread's
//! configured lock into what the kernel is asked to enforce.

#[cfg(unix)]
pub mod attach;
#[cfg(unix)]
mod broker;
#[cfg(unix)]
pub mod egress;
mod git_watch;
pub mod lock;
mod pane_endpoint;
mod pulse;
mod secrets;
mod workspace;
pub mod worktree;
mod worktree_check;
pub mod worktree_git;

#[cfg(unix)]
pub mod headless;
#[cfg(unix)]
pub mod host_link;
#[cfg(unix)]
pub mod launch;
#[cfg(unix)]
mod linked;
#[cfg(unix)]
pub mod lost;
#[cfg(unix)]
pub mod remote_threads;
#[cfg(unix)]
pub mod server;
#[cfg(unix)]
mod signals;
mod split_lock;
#[cfg(unix)]
pub mod window;

pub use pane_endpoint::PaneEndpoints;
pub use workspace::{ChangedLook, LockLook, Outcome, PaneLook, Shown, Workspace, WorkspaceOptions};
