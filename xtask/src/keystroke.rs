//! Keystroke to screen: a key sent to a terminal running `cat` on an X display, until the
//! pixels it changes are on the root window.
//!
//! The key goes in through XTEST, as xdotool sends it (one connection, so no process start is
//! timed); the clock starts once the X server has the press and release, and stops when a
//! read of the top of the root window (where `cat`'s echo lands) differs from the last one.
//! Each key waits for the screen to settle before the next. The terminal must be the only
//! window, at the top left; it is given the keyboard's focus (there is no window manager).

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat, InputFocus, Window};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// The band read for changes: the first rows of text, where the echo appears.
const BAND_HEIGHT: u16 = 160;
const KEY_PRESS: u8 = 2;
const KEY_RELEASE: u8 = 3;
/// keysym of `x`.
const KEYSYM_X: u32 = 0x78;

/// The latency of each of `keys` keystrokes into the window on `display`, in milliseconds.
pub fn latencies(display: &str, keys: usize) -> Result<Vec<f64>> {
    let (conn, screen) = x11rb::connect(Some(display)).context("cannot connect to X")?;
    let root = conn.setup().roots[screen].root;
    let width = conn.setup().roots[screen].width_in_pixels;
    conn.xtest_get_version(2, 2)?.reply().context("the X server has no XTEST")?;
    let keycode = keycode_of(&conn, KEYSYM_X)?;
    conn.warp_pointer(x11rb::NONE, root, 0, 0, 0, 0, 200, 100)?;
    // With no window manager nothing gives the window focus: give it the keyboard as one
    // would (winit takes keys only while it has focus).
    let window = conn.query_pointer(root)?.reply()?.child;
    if window == x11rb::NONE {
        bail!("no window under the pointer");
    }
    conn.set_input_focus(InputFocus::PARENT, window, x11rb::CURRENT_TIME)?;
    conn.sync()?;
    std::thread::sleep(Duration::from_millis(300));
    let band = |conn: &RustConnection| -> Result<Vec<u8>> {
        Ok(conn.get_image(ImageFormat::Z_PIXMAP, root, 0, 0, width, BAND_HEIGHT, !0)?.reply()?.data)
    };
    let mut shown = band(&conn)?;
    let mut out = Vec::with_capacity(keys);
    for _ in 0..keys {
        press(&conn, root, keycode)?;
        let start = Instant::now();
        loop {
            let now = band(&conn)?;
            if now != shown {
                out.push(start.elapsed().as_secs_f64() * 1000.0);
                break;
            }
            if start.elapsed() > Duration::from_secs(2) {
                bail!("a key changed nothing on screen within 2 s");
            }
        }
        // Let the frame finish (and anything after it), then read the screen as it stands.
        std::thread::sleep(Duration::from_millis(60));
        shown = band(&conn)?;
    }
    Ok(out)
}

fn press(conn: &RustConnection, root: Window, keycode: u8) -> Result<()> {
    for kind in [KEY_PRESS, KEY_RELEASE] {
        conn.xtest_fake_input(kind, keycode, x11rb::CURRENT_TIME, root, 0, 0, 0)?;
    }
    // A round trip: the server has both events when it answers.
    conn.sync()?;
    Ok(())
}

fn keycode_of(conn: &RustConnection, keysym: u32) -> Result<u8> {
    let setup = conn.setup();
    let (min, max) = (setup.min_keycode, setup.max_keycode);
    let map = conn.get_keyboard_mapping(min, max - min + 1)?.reply()?;
    let per = usize::from(map.keysyms_per_keycode).max(1);
    let index = map.keysyms.iter().position(|&k| k == keysym).context("no key for x")?;
    Ok(min + (index / per) as u8)
}
