//! paddock: a GPU-rendered terminal multiplexer for running coding agents side by side.
//!
//! The library holds the parts with small, documented APIs; `main.rs` is thin glue:
//! - [`term`]: the terminal model (bytes in, screen out), pure and IO-free;
//! - [`replay`]: feed a recorded byte stream to the model and print the screen;
//! - [`mux`]: tabs and split trees of panes, focus and zoom, layout in cells (pure);
//! - [`input`]: keys and pastes to bytes, as xterm sends them (pure);
//! - [`view`]: a pane's scroll position, selection, search and held clipboard write (pure);
//! - [`pty`]: panes that run real programs in PTYs, feeding a terminal model;
//! - [`config`]: the RON configuration file, checked into a `Config` with precise diagnostics;
//! - [`render`]: the GPU pipeline (wgpu, glyphon) and the pure scene it draws;
//! - [`ctl`]: the control socket, its protocol and `paddock ls`;
//! - [`sandbox`]: the folder and network lock (Linux namespaces, Landlock, seccomp and the
//!   socket gate; macOS Seatbelt);
//! - [`egress`]: a locked thread's network allow-list: its rules, and the proxy (Unix) it
//!   goes through, which reports each connection;
//! - [`vault`]: secrets in the OS keychain, pins, masking and the audit log;
//! - [`pulse`]: what each pane's program is doing (CPU, output, needs you);
//! - [`app`]: where they meet: the workspace, the headless instance and the window.

pub mod app;
pub mod cgroup;
pub mod config;
pub mod ctl;
pub mod egress;
pub mod hook;
pub mod input;
pub mod mux;
pub mod pty;
pub mod pulse;
pub mod render;
pub mod replay;
pub mod sandbox;
pub mod term;
pub mod vault;
pub mod view;
