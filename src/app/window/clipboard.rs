//! The system clipboard (arboard), and on Linux the primary selection too.
//!
//! A missing clipboard (no X11 server reachable for it, a Wayland session without XWayland) is
//! said once on stderr; copying and pasting then do nothing, and nothing else breaks.

/// Which of the system's clipboards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Board {
    /// What Ctrl+Shift+C/V and OSC 52 `c` use.
    Clipboard,
    /// The X11/Wayland primary selection: set by selecting, pasted with the middle button.
    Primary,
}

impl Board {
    /// The board an OSC 52 write names: the primary selection, or the clipboard.
    pub fn of(primary: bool) -> Board {
        if primary {
            Board::Primary
        } else {
            Board::Clipboard
        }
    }
}

pub struct Clipboard {
    inner: Option<arboard::Clipboard>,
    complained: bool,
}

impl Clipboard {
    pub fn new() -> Clipboard {
        Clipboard { inner: None, complained: false }
    }

    /// Opened on first use: a window that never copies never connects to it.
    fn board(&mut self) -> Option<&mut arboard::Clipboard> {
        if self.inner.is_none() {
            match arboard::Clipboard::new() {
                Ok(board) => self.inner = Some(board),
                Err(e) => self.complain(&e),
            }
        }
        self.inner.as_mut()
    }

    fn complain(&mut self, error: &arboard::Error) {
        if !self.complained {
            self.complained = true;
            eprintln!("paddock: the clipboard is not available: {error}");
        }
    }

    pub fn set(&mut self, board: Board, text: String) {
        let Some(inner) = self.board() else {
            return;
        };
        let result = match board {
            Board::Clipboard => inner.set_text(text),
            Board::Primary => set_primary(inner, text),
        };
        if let Err(e) = result {
            self.complain(&e);
        }
    }

    pub fn get(&mut self, board: Board) -> Option<String> {
        let inner = self.board()?;
        let result = match board {
            Board::Clipboard => inner.get_text(),
            Board::Primary => get_primary(inner),
        };
        match result {
            Ok(text) => Some(text),
            // Nothing on it, or not text: nothing to paste, nothing to say.
            Err(arboard::Error::ContentNotAvailable) => None,
            Err(e) => {
                self.complain(&e);
                None
            }
        }
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
fn set_primary(board: &mut arboard::Clipboard, text: String) -> Result<(), arboard::Error> {
    use arboard::{LinuxClipboardKind, SetExtLinux};
    board.set().clipboard(LinuxClipboardKind::Primary).text(text)
}

#[cfg(all(unix, not(target_os = "macos")))]
fn get_primary(board: &mut arboard::Clipboard) -> Result<String, arboard::Error> {
    use arboard::{GetExtLinux, LinuxClipboardKind};
    board.get().clipboard(LinuxClipboardKind::Primary).text()
}

/// Other systems have no primary selection: selecting leaves the clipboard alone there.
#[cfg(not(all(unix, not(target_os = "macos"))))]
fn set_primary(_: &mut arboard::Clipboard, _: String) -> Result<(), arboard::Error> {
    Ok(())
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
fn get_primary(_: &mut arboard::Clipboard) -> Result<String, arboard::Error> {
    Err(arboard::Error::ContentNotAvailable)
}
