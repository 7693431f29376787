//! The attach protocol: binary frames between the server and the windows attached to it.
//!
//! A frame is its length (`u32`, little-endian, counting what follows), a kind byte and the
//! kind's fields: integers little-endian, byte strings as a `u32` length and the bytes. The
//! first frame each way is the hello, with the protocol's version; a side that reads another
//! version says so and closes. Snapshots and edits travel as the model's own bytes
//! (`term::Terminal::snapshot`, `term::ReplicaEdits::encode`), which the model checks itself.
//!
//! Reading never trusts a length: a frame over [`MAX_FRAME`] is refused before anything is
//! allocated, and every field is checked against the frame it sits in. Bad bytes are an error,
//! never a panic (a fuzz target, `fuzz/fuzz_targets/wire.rs`, holds it to that).

use std::io::{Read, Write};

use super::protocol::WindowAction;
use crate::vault::handed::{ApprovedProgram, Handed, HandedSecret};
use crate::vault::SecretBytes;

/// The protocol's version. A window and a server of different versions do not talk. Version 2:
/// rows (snapshots, scrollback asked for, starred rows) carry their styles by value. Version
/// 3: a paddock on another host opens threads (`WindowAction::OpenThread`) and sizes the panes
/// it opened (`WindowAction::SizePane`), and is answered `Opened` or `NotOpened`. Version 4:
/// a thread's secrets are handed with it (`Secrets`), `Opened` says which the host withheld,
/// and a program on the host is fingerprinted for an approval (`Program`).
pub const VERSION: u16 = 4;
/// The largest frame either side accepts: room for a snapshot with a long, wide scrollback.
pub const MAX_FRAME: usize = 64 << 20;
/// The largest input frame a server accepts (a paste of this size is already absurd).
pub const MAX_INPUT: usize = 4 << 20;

/// A frame from a window to the server.
#[derive(Clone, Debug, PartialEq)]
pub enum ToServer {
    Hello {
        version: u16,
    },
    /// Bytes for a pane's program, as typed or pasted.
    Input {
        pane: u32,
        bytes: Vec<u8>,
    },
    /// The window leaves; the server keeps running.
    Detach,
    /// The cells the window lays tabs out in: the panes take their sizes from the window
    /// that was active last.
    Area {
        cols: u16,
        rows: u16,
    },
    /// Scrollback rows the window's replica does not hold: up to `count` before line `before`.
    Scrollback {
        pane: u32,
        before: u64,
        count: u32,
    },
    /// What a key binding asks (JSON inside the frame: actions are few and small).
    Act(WindowAction),
    /// (A paddock on another host.) The secrets for the thread its `OpenThread` with the same
    /// `request` opens, sent just before it: values for that one spawn, never stored.
    Secrets {
        request: u32,
        handed: Handed,
    },
}

/// A frame from the server to a window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToWindow {
    Hello {
        version: u16,
        server_pid: u32,
    },
    /// A pane's model as it stands (on attach, or after a resize): a replica starts from it.
    Pane {
        pane: u32,
        snapshot: Vec<u8>,
    },
    /// One chunk a pane's model parsed, with what its redactor did (`ReplicaEdits` bytes).
    Chunk {
        pane: u32,
        masked: bool,
        bytes: Vec<u8>,
        edits: Vec<u8>,
    },
    /// A pane is gone.
    Closed {
        pane: u32,
    },
    /// The tabs, splits and panes' descriptions (`protocol::WindowView` as JSON), whenever
    /// they change.
    View {
        json: Vec<u8>,
    },
    /// Scrollback rows a window asked for (`term::Terminal::scrollback_rows`), from `first`.
    Rows {
        pane: u32,
        first: u64,
        rows: Vec<u8>,
    },
    /// The server will not go on with this window, and why.
    Refused {
        reason: String,
    },
    /// What the window should tell its user: why an action it asked for did not happen.
    Said {
        text: String,
    },
    /// The thread a link asked to open (`WindowAction::OpenThread`) runs in `pane`.
    Opened {
        request: u32,
        pane: u32,
        /// Secrets handed with it that this host withheld from its program, and why.
        withheld: Vec<(String, String)>,
    },
    /// It was not opened, and why (its definition is wrong, or asks what a link may not).
    NotOpened {
        request: u32,
        reason: String,
    },
    /// A program on this host for an approval (`WindowAction::Fingerprint`): its canonical
    /// path and SHA-256, or why it was not found or read.
    Program {
        request: u32,
        found: Result<(String, String), String>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("the connection closed")]
    Closed,
    #[error("cannot read or write a frame: {0}")]
    Io(#[from] std::io::Error),
    #[error("a frame of {0} bytes is larger than allowed")]
    TooLarge(usize),
    #[error("a frame is malformed: {0}")]
    Malformed(&'static str),
    #[error(
        "the other side speaks version {0} of the attach protocol; this paddock speaks {VERSION}"
    )]
    Version(u16),
}

mod kind {
    pub const HELLO: u8 = 1;
    pub const INPUT: u8 = 2;
    pub const DETACH: u8 = 3;
    pub const AREA: u8 = 4;
    pub const SCROLLBACK: u8 = 5;
    pub const ACT: u8 = 6;
    pub const SECRETS: u8 = 7;
    pub const PANE: u8 = 64;
    pub const CHUNK: u8 = 65;
    pub const CLOSED: u8 = 66;
    pub const REFUSED: u8 = 67;
    pub const VIEW: u8 = 68;
    pub const ROWS: u8 = 69;
    pub const SAID: u8 = 70;
    pub const OPENED: u8 = 71;
    pub const NOT_OPENED: u8 = 72;
    pub const PROGRAM: u8 = 73;
}

/// A frame being written: its length is filled in at the end.
struct Out(Vec<u8>);

impl Out {
    fn new(kind: u8, capacity: usize) -> Out {
        let mut bytes = Vec::with_capacity(5 + capacity);
        bytes.extend_from_slice(&[0, 0, 0, 0, kind]);
        Out(bytes)
    }
    fn u16(mut self, value: u16) -> Out {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }
    fn u64(mut self, value: u64) -> Out {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }
    fn u32(mut self, value: u32) -> Out {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }
    fn bytes(mut self, value: &[u8]) -> Out {
        self = self.u32(value.len() as u32);
        self.0.extend_from_slice(value);
        self
    }
    fn text(self, value: &str) -> Out {
        self.bytes(value.as_bytes())
    }
    fn pairs(mut self, pairs: &[(String, String)]) -> Out {
        self = self.u32(pairs.len() as u32);
        for (a, b) in pairs {
            self = self.text(a).text(b);
        }
        self
    }
    fn done(mut self) -> Vec<u8> {
        let len = (self.0.len() - 4) as u32;
        self.0[..4].copy_from_slice(&len.to_le_bytes());
        self.0
    }
}

/// A frame's fields being read.
struct In<'a>(&'a [u8]);

impl<'a> In<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.0.len() < n {
            return Err(WireError::Malformed("a field runs past the frame's end"));
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(taken)
    }
    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_le_bytes([self.u8()?, self.u8()?]))
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, WireError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }
    fn bytes(&mut self) -> Result<Vec<u8>, WireError> {
        let len = self.u32()? as usize;
        Ok(self.take(len)?.to_vec())
    }
    fn text(&mut self) -> Result<String, WireError> {
        Ok(String::from_utf8_lossy(&self.bytes()?).into_owned())
    }
    /// A count of items that follow, each at least `least` bytes: one the frame cannot hold is
    /// refused before anything is read.
    fn count(&mut self, least: usize) -> Result<usize, WireError> {
        let count = self.u32()? as usize;
        if count.saturating_mul(least) > self.0.len() {
            return Err(WireError::Malformed("a count past the frame's end"));
        }
        Ok(count)
    }
    fn pairs(&mut self) -> Result<Vec<(String, String)>, WireError> {
        let count = self.count(8)?;
        (0..count).map(|_| Ok((self.text()?, self.text()?))).collect()
    }
    /// Secrets handed with a thread: each value read straight into locked memory, the
    /// frame's copy being the reader's buffer.
    fn handed(&mut self) -> Result<Handed, WireError> {
        let host = self.text()?;
        let mut secrets = Vec::new();
        for _ in 0..self.count(12)? {
            let name = self.text()?;
            let len = self.u32()? as usize;
            let value = SecretBytes::new(self.take(len)?);
            let mut approved = Vec::new();
            for _ in 0..self.count(12)? {
                let (path, sha256, approved_at) = (self.text()?, self.text()?, self.text()?);
                approved.push(ApprovedProgram { path, sha256, approved_at });
            }
            secrets.push(HandedSecret { name, value, approved });
        }
        Ok(Handed { host, secrets, withheld: self.pairs()? })
    }
    fn end(&self) -> Result<(), WireError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(WireError::Malformed("bytes after the frame's last field"))
        }
    }
}

impl ToServer {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            ToServer::Hello { version } => Out::new(kind::HELLO, 2).u16(*version).done(),
            ToServer::Input { pane, bytes } => {
                Out::new(kind::INPUT, 8 + bytes.len()).u32(*pane).bytes(bytes).done()
            }
            ToServer::Detach => Out::new(kind::DETACH, 0).done(),
            ToServer::Area { cols, rows } => Out::new(kind::AREA, 4).u16(*cols).u16(*rows).done(),
            ToServer::Scrollback { pane, before, count } => {
                Out::new(kind::SCROLLBACK, 16).u32(*pane).u64(*before).u32(*count).done()
            }
            ToServer::Act(action) => {
                // Serializing plain data cannot fail.
                let json = serde_json::to_vec(action).unwrap_or_default();
                Out::new(kind::ACT, 4 + json.len()).bytes(&json).done()
            }
            ToServer::Secrets { request, handed } => {
                let mut out = Out::new(kind::SECRETS, 256).u32(*request).text(&handed.host);
                out = out.u32(handed.secrets.len() as u32);
                for secret in &handed.secrets {
                    out = out.text(&secret.name).bytes(&secret.value);
                    out = out.u32(secret.approved.len() as u32);
                    for program in &secret.approved {
                        out = out.text(&program.path).text(&program.sha256);
                        out = out.text(&program.approved_at);
                    }
                }
                out.pairs(&handed.withheld).done()
            }
        }
    }

    /// A frame's kind and fields (what follows its length).
    pub fn decode(frame: &[u8]) -> Result<ToServer, WireError> {
        let mut r = In(frame);
        let decoded = match r.u8()? {
            kind::HELLO => ToServer::Hello { version: r.u16()? },
            kind::INPUT => {
                let pane = r.u32()?;
                let bytes = r.bytes()?;
                if bytes.len() > MAX_INPUT {
                    return Err(WireError::TooLarge(bytes.len()));
                }
                ToServer::Input { pane, bytes }
            }
            kind::DETACH => ToServer::Detach,
            kind::AREA => ToServer::Area { cols: r.u16()?, rows: r.u16()? },
            kind::SCROLLBACK => {
                ToServer::Scrollback { pane: r.u32()?, before: r.u64()?, count: r.u32()? }
            }
            kind::ACT => {
                let action = serde_json::from_slice(&r.bytes()?)
                    .map_err(|_| WireError::Malformed("an action that cannot be read"))?;
                ToServer::Act(action)
            }
            kind::SECRETS => ToServer::Secrets { request: r.u32()?, handed: r.handed()? },
            _ => return Err(WireError::Malformed("an unknown kind of frame")),
        };
        r.end()?;
        Ok(decoded)
    }
}

impl ToWindow {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            ToWindow::Hello { version, server_pid } => {
                Out::new(kind::HELLO, 6).u16(*version).u32(*server_pid).done()
            }
            ToWindow::Pane { pane, snapshot } => {
                Out::new(kind::PANE, 8 + snapshot.len()).u32(*pane).bytes(snapshot).done()
            }
            ToWindow::Chunk { pane, masked, bytes, edits } => {
                let mut out = Out::new(kind::CHUNK, 13 + bytes.len() + edits.len()).u32(*pane);
                out.0.push(u8::from(*masked));
                out.bytes(bytes).bytes(edits).done()
            }
            ToWindow::Closed { pane } => Out::new(kind::CLOSED, 4).u32(*pane).done(),
            ToWindow::View { json } => Out::new(kind::VIEW, 4 + json.len()).bytes(json).done(),
            ToWindow::Rows { pane, first, rows } => {
                Out::new(kind::ROWS, 16 + rows.len()).u32(*pane).u64(*first).bytes(rows).done()
            }
            ToWindow::Refused { reason } => {
                Out::new(kind::REFUSED, 4 + reason.len()).bytes(reason.as_bytes()).done()
            }
            ToWindow::Said { text } => {
                Out::new(kind::SAID, 4 + text.len()).bytes(text.as_bytes()).done()
            }
            ToWindow::Opened { request, pane, withheld } => {
                Out::new(kind::OPENED, 12).u32(*request).u32(*pane).pairs(withheld).done()
            }
            ToWindow::NotOpened { request, reason } => Out::new(kind::NOT_OPENED, 8 + reason.len())
                .u32(*request)
                .bytes(reason.as_bytes())
                .done(),
            ToWindow::Program { request, found } => {
                let out = Out::new(kind::PROGRAM, 128).u32(*request);
                match found {
                    Ok((path, sha256)) => out.u16(1).text(path).text(sha256).done(),
                    Err(why) => out.u16(0).text(why).done(),
                }
            }
        }
    }

    pub fn decode(frame: &[u8]) -> Result<ToWindow, WireError> {
        let mut r = In(frame);
        let decoded = match r.u8()? {
            kind::HELLO => ToWindow::Hello { version: r.u16()?, server_pid: r.u32()? },
            kind::PANE => ToWindow::Pane { pane: r.u32()?, snapshot: r.bytes()? },
            kind::CHUNK => {
                let pane = r.u32()?;
                let masked = match r.u8()? {
                    0 => false,
                    1 => true,
                    _ => return Err(WireError::Malformed("a flag that is neither 0 nor 1")),
                };
                ToWindow::Chunk { pane, masked, bytes: r.bytes()?, edits: r.bytes()? }
            }
            kind::CLOSED => ToWindow::Closed { pane: r.u32()? },
            kind::VIEW => ToWindow::View { json: r.bytes()? },
            kind::ROWS => ToWindow::Rows { pane: r.u32()?, first: r.u64()?, rows: r.bytes()? },
            kind::REFUSED => {
                let reason = String::from_utf8_lossy(&r.bytes()?).into_owned();
                ToWindow::Refused { reason }
            }
            kind::SAID => {
                ToWindow::Said { text: String::from_utf8_lossy(&r.bytes()?).into_owned() }
            }
            kind::OPENED => {
                ToWindow::Opened { request: r.u32()?, pane: r.u32()?, withheld: r.pairs()? }
            }
            kind::NOT_OPENED => {
                let request = r.u32()?;
                let reason = String::from_utf8_lossy(&r.bytes()?).into_owned();
                ToWindow::NotOpened { request, reason }
            }
            kind::PROGRAM => {
                let request = r.u32()?;
                let found = match r.u16()? {
                    1 => Ok((r.text()?, r.text()?)),
                    0 => Err(r.text()?),
                    _ => return Err(WireError::Malformed("a flag that is neither 0 nor 1")),
                };
                ToWindow::Program { request, found }
            }
            _ => return Err(WireError::Malformed("an unknown kind of frame")),
        };
        r.end()?;
        Ok(decoded)
    }
}

/// Read one frame (kind and fields) of at most `most` bytes; `buf` is reused.
pub fn read_frame<'b>(
    from: &mut impl Read,
    most: usize,
    buf: &'b mut Vec<u8>,
) -> Result<&'b [u8], WireError> {
    let mut len = [0u8; 4];
    match from.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(WireError::Closed),
        // Between frames, a reset is the other side closing with something this side sent
        // still unread (a server that ends as its window says its size): closed all the same,
        // after every frame it sent was read.
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Err(WireError::Closed),
        Err(e) => return Err(e.into()),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > most.min(MAX_FRAME) {
        return Err(WireError::TooLarge(len));
    }
    if len == 0 {
        return Err(WireError::Malformed("an empty frame"));
    }
    buf.clear();
    buf.resize(len, 0);
    from.read_exact(buf)?;
    Ok(buf)
}

/// Write encoded frames.
pub fn write_frames(to: &mut impl Write, frames: &[&[u8]]) -> Result<(), WireError> {
    for frame in frames {
        to.write_all(frame)?;
    }
    to.flush()?;
    Ok(())
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
