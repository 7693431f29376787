//! The configuration file as written: every field optional, unknown fields refused. Nothing is
//! checked here beyond RON's types; `validate` turns this into a [`super::Config`] and says
//! what is wrong, where.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Deserialize)]
#[serde(rename = "Config")]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub font: Option<RawFont>,
    pub theme: Option<RawTheme>,
    pub scrollback: Option<usize>,
    pub padding: Option<u32>,
    pub desktop_notifications: Option<bool>,
    pub pulse_rate: Option<u32>,
    pub pulse_glow: Option<bool>,
    pub keys: Option<BTreeMap<String, String>>,
    pub threads: Option<Vec<RawThread>>,
    pub proxy_hosts: Option<BTreeMap<String, String>>,
    pub hosts: Option<BTreeMap<String, RawHost>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename = "Host")]
#[serde(deny_unknown_fields)]
pub struct RawHost {
    pub destination: Option<String>,
    pub paddock_path: Option<String>,
    pub ssh_options: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename = "Font")]
#[serde(deny_unknown_fields)]
pub struct RawFont {
    pub family: Option<String>,
    pub size: Option<f32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename = "Theme")]
#[serde(deny_unknown_fields)]
pub struct RawTheme {
    pub foreground: Option<String>,
    pub background: Option<String>,
    pub cursor: Option<String>,
    pub selection: Option<String>,
    pub palette: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(rename = "Thread")]
#[serde(deny_unknown_fields)]
pub struct RawThread {
    pub name: Option<String>,
    pub command: Option<Vec<String>>,
    pub cwd: Option<String>,
    pub env: Option<BTreeMap<String, String>>,
    pub env_pass: Option<Vec<String>>,
    #[serde(skip_serializing)]
    pub place: Option<RawPlace>,
    pub lock: Option<RawLock>,
    pub unlocked: Option<bool>,
    pub secrets: Option<Vec<RawSecret>>,
    pub pulse: Option<RawPulse>,
    pub limits: Option<RawLimits>,
    pub clipboard: Option<super::ClipboardRule>,
    pub worktree: Option<RawWorktree>,
    /// Run on another host (a name in `hosts`, else what ssh is given): this paddock keeps
    /// only where its pane goes; the rest is that host's to check.
    #[serde(skip_serializing)]
    pub host: Option<String>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename = "Worktree")]
#[serde(deny_unknown_fields)]
pub struct RawWorktree {
    pub repo: Option<String>,
    pub branch: Option<String>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename = "Place")]
pub enum RawPlace {
    Tab,
    RightOf(String),
    Below(String),
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(rename = "Lock")]
#[serde(deny_unknown_fields)]
pub struct RawLock {
    pub write: Option<Vec<String>>,
    pub read: Option<Vec<String>>,
    pub protect: Option<Vec<String>>,
    pub network: Option<RawNetwork>,
    pub sockets: Option<Vec<String>>,
    pub allow_broad_write: Option<bool>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename = "Network")]
pub enum RawNetwork {
    Off,
    On,
    Allow(Vec<String>),
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(rename = "Secret")]
#[serde(deny_unknown_fields)]
pub struct RawSecret {
    pub name: Option<String>,
    pub env: Option<String>,
    pub pin: Option<String>,
    pub broker: Option<RawBroker>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(rename = "Broker")]
#[serde(deny_unknown_fields)]
pub struct RawBroker {
    pub hosts: Option<Vec<String>>,
    pub headers: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(rename = "Limits")]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub memory: Option<String>,
    pub cpu: Option<f32>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(rename = "Pulse")]
#[serde(deny_unknown_fields)]
pub struct RawPulse {
    pub busy_cpu: Option<f32>,
    pub quiet_after: Option<u32>,
    pub needs_you: Option<Vec<String>>,
}
