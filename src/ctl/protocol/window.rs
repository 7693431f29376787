//! What travels between the server and an attached window besides the panes' bytes: the view a
//! window draws (tabs, splits, and each pane's strip) and the actions its keys ask for.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{InstanceInfo, SplitDirection};

/// What an attached window draws besides its panes' screens: the server's tabs and splits,
/// each pane as `paddock ls` describes it, and what its title strip shows (the app's
/// `PaneLook`: pulse, lock and notes in the app's own types, which this layer does not know).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowView {
    pub layout: crate::mux::LayoutInfo,
    pub instance: InstanceInfo,
    /// By pane id.
    #[serde(default)]
    pub looks: BTreeMap<u32, serde_json::Value>,
    /// How often a control request moved the server's focus: a window that sees it change
    /// takes that focus (`paddock ctl focus` moves every window's).
    #[serde(default)]
    pub focus_moves: u64,
    /// Set only in the last view of a server that ends with its first program
    /// (`--exit-with-child`): that program's exit code, which the window exits with too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<u8>,
}

/// What a window's keys ask of the server, for the pane the window has focused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum WindowAction {
    /// A tab with the user's shell; opened from a locked pane, it is locked the same way.
    NewTab {
        from: Option<u32>,
    },
    Split {
        pane: u32,
        direction: SplitDirection,
    },
    Close {
        pane: u32,
    },
    /// The window moved its focus here: the server's focus (and `paddock ls`) follows the
    /// window that was active last.
    Focus {
        pane: u32,
    },
    Zoom {
        pane: u32,
    },
    /// Move a divider of `pane`'s tab (`Mux::set_divider_ratio`).
    Divider {
        pane: u32,
        index: usize,
        ratio: f32,
    },
    Restart {
        pane: u32,
    },
    /// Mute it, or unmute it.
    ToggleMute {
        pane: u32,
    },
    AllowHost {
        pane: u32,
    },
    ApproveProgram {
        pane: u32,
    },
    /// (A paddock on another host, through `paddock server --stdio`.) Open `thread`, one
    /// thread as the configuration writes it (RON), in a tab of its own, its pane sized
    /// `cols`×`rows` by the link whatever the layout; answered `Opened` or `NotOpened` with
    /// `request`.
    OpenThread {
        request: u32,
        thread: String,
        cols: u16,
        rows: u16,
    },
    /// (A paddock on another host, for `paddock vault approve --host`.) Find `program` on this
    /// host (a path, or a name on this server's PATH); answered `Program` with `request`.
    Fingerprint {
        request: u32,
        program: String,
    },
    /// (A paddock on another host.) Close the pane its `OpenThread` with `request` opened,
    /// whichever connection brought it: that paddock gave up waiting for the answer.
    CloseOpened {
        request: u32,
    },
    /// Size a pane the link opened (its pane on the link's side changed size).
    SizePane {
        pane: u32,
        cols: u16,
        rows: u16,
    },
}
