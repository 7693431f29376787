//! CSI sequences: cursor motion, editing, erasing, modes, device queries.

use super::cell::StyleFlags;
use super::cursor::CursorShape;
use super::erase::Erase;
use super::modes::{Modes, MouseEncoding, MouseTracking};
use super::sgr;
use super::state::{AltScreenMode, State};

/// The next parameter, with `default` standing in for a missing or zero value.
fn next_or<'a>(params: &mut impl Iterator<Item = &'a [u16]>, default: u16) -> u16 {
    match params.next() {
        Some(&[value, ..]) if value != 0 => value,
        _ => default,
    }
}

/// `params`: a CSI sequence's parameters as groups (a value and its `:` sub-parameters), from
/// vte's `Params` or the parser's fast path's `Csi`.
pub fn dispatch<'a, I>(state: &mut State, params: I, intermediates: &[u8], action: char)
where
    I: Iterator<Item = &'a [u16]>,
{
    let mut args = params;
    let n = |args: &mut I| next_or(args, 1) as usize;
    match (action, intermediates) {
        ('@', []) => state.insert_blank(n(&mut args)),
        ('A', []) => state.move_up(n(&mut args)),
        ('B' | 'e', []) => state.move_down(n(&mut args)),
        ('C' | 'a', []) => state.move_forward(n(&mut args)),
        ('D', []) => state.move_backward(n(&mut args)),
        ('E', []) => {
            state.move_down(n(&mut args));
            state.carriage_return();
        }
        ('F', []) => {
            state.move_up(n(&mut args));
            state.carriage_return();
        }
        ('G' | '`', []) => state.goto_col(n(&mut args) - 1),
        ('H' | 'f', []) => {
            let row = n(&mut args) - 1;
            let col = n(&mut args) - 1;
            state.goto(row, col);
        }
        ('I', []) => state.forward_tabs(n(&mut args)),
        ('J', []) => state.erase_in_display(next_or(&mut args, 0), Erase::All),
        ('J', [b'?']) => state.erase_in_display(next_or(&mut args, 0), Erase::Unprotected),
        ('K', []) => state.erase_in_line(next_or(&mut args, 0), Erase::All),
        ('K', [b'?']) => state.erase_in_line(next_or(&mut args, 0), Erase::Unprotected),
        ('L', []) => state.insert_lines(n(&mut args)),
        ('M', []) => state.delete_lines(n(&mut args)),
        ('P', []) => state.delete_chars(n(&mut args)),
        ('S', []) => state.scroll_up(n(&mut args)),
        ('T', []) => state.scroll_down(n(&mut args)),
        ('X', []) => state.erase_chars(n(&mut args)),
        ('Z', []) => state.back_tab(n(&mut args)),
        ('b', []) => state.repeat_last(n(&mut args)),
        ('c', []) if next_or(&mut args, 0) == 0 => primary_device_attributes(state),
        ('c', [b'>']) if next_or(&mut args, 0) == 0 => {
            let version = env!("CARGO_PKG_VERSION_MAJOR").parse::<u32>().unwrap_or(0) * 10_000
                + env!("CARGO_PKG_VERSION_MINOR").parse::<u32>().unwrap_or(0) * 100
                + env!("CARGO_PKG_VERSION_PATCH").parse::<u32>().unwrap_or(0);
            state.outbox.reply(format!("\x1b[>1;{version};0c").as_bytes());
        }
        ('d', []) => state.goto_row(n(&mut args) - 1),
        ('g', []) => match next_or(&mut args, 0) {
            0 => state.tabs.set(state.active.cursor.col, false),
            3 => state.tabs.clear_all(),
            _ => {}
        },
        ('h', []) => args.for_each(|p| set_ansi_mode(state, p[0], true)),
        ('l', []) => args.for_each(|p| set_ansi_mode(state, p[0], false)),
        ('h', [b'?']) => args.for_each(|p| set_private_mode(state, p[0], true)),
        ('l', [b'?']) => args.for_each(|p| set_private_mode(state, p[0], false)),
        ('m', []) => sgr::apply(state, args),
        ('n', []) => device_status(state, next_or(&mut args, 0)),
        ('p', [b'$']) => {
            let mode = next_or(&mut args, 0);
            let value = ansi_mode_value(state, mode);
            state.outbox.reply(format!("\x1b[{mode};{value}$y").as_bytes());
        }
        ('p', [b'?', b'$']) => {
            let mode = next_or(&mut args, 0);
            let value = private_mode_value(state, mode);
            state.outbox.reply(format!("\x1b[?{mode};{value}$y").as_bytes());
        }
        ('q', [b' ']) => set_cursor_style(state, next_or(&mut args, 0)),
        ('q', [b'"']) => {
            // DECSCA: 1 protects what is printed next from DECSED/DECSEL; 0 and 2 do not.
            let mut style = state.active.cursor.pen.style;
            style.flags.set(StyleFlags::PROTECTED, next_or(&mut args, 0) == 1);
            state.set_pen(style);
        }
        ('q', [b'>']) if next_or(&mut args, 0) == 0 => {
            let reply = format!("\x1bP>|paddock {}\x1b\\", env!("CARGO_PKG_VERSION"));
            state.outbox.reply(reply.as_bytes());
        }
        ('r', []) => {
            let top = n(&mut args);
            let bottom = args.next().map(|p| p[0] as usize).filter(|&b| b != 0);
            state.set_region(top, bottom);
        }
        ('s', []) => state.save_cursor(),
        ('u', []) => state.restore_cursor(),
        ('t', []) => window_op(state, next_or(&mut args, 0)),
        _ => {}
    }
}

pub fn primary_device_attributes(state: &mut State) {
    // VT220 with ANSI color: what xterm-compatible programs look for.
    state.outbox.reply(b"\x1b[?62;22c");
}

fn device_status(state: &mut State, query: u16) {
    match query {
        5 => state.outbox.reply(b"\x1b[0n"),
        6 => {
            let cursor = state.active.cursor;
            let row = if state.mode(Modes::ORIGIN) {
                cursor.row.saturating_sub(state.region.start)
            } else {
                cursor.row
            };
            state.outbox.reply(format!("\x1b[{};{}R", row + 1, cursor.col + 1).as_bytes());
        }
        _ => {}
    }
}

fn window_op(state: &mut State, op: u16) {
    match op {
        18 => {
            let reply = format!("\x1b[8;{};{}t", state.lines(), state.cols());
            state.outbox.reply(reply.as_bytes());
        }
        // A bounded stack: a program that only pushes must not grow it forever.
        22 if state.window.title_stack.len() < 64 => {
            state.window.title_stack.push(state.window.title.clone());
        }
        23 => {
            if let Some(title) = state.window.title_stack.pop() {
                state.window.title = title.clone();
                state.outbox.event(super::events::TermEvent::Title(title));
            }
        }
        _ => {}
    }
}

fn set_cursor_style(state: &mut State, ps: u16) {
    state.window.cursor_shape = match ps {
        0 => None,
        1 | 2 => Some((CursorShape::Block, ps == 1)),
        3 | 4 => Some((CursorShape::Underline, ps == 3)),
        5 | 6 => Some((CursorShape::Beam, ps == 5)),
        _ => return,
    };
}

fn set_ansi_mode(state: &mut State, mode: u16, on: bool) {
    match mode {
        4 => state.modes.flags.set(Modes::INSERT, on),
        20 => state.modes.flags.set(Modes::LINEFEED_NEWLINE, on),
        _ => {}
    }
}

fn set_private_mode(state: &mut State, mode: u16, on: bool) {
    let flag = match mode {
        1 => Modes::APP_CURSOR,
        3 => return state.column_mode_switch(),
        5 => Modes::REVERSE_VIDEO,
        6 => {
            state.modes.flags.set(Modes::ORIGIN, on);
            return state.goto(0, 0);
        }
        7 => Modes::AUTOWRAP,
        12 => Modes::BLINKING_CURSOR,
        25 => Modes::SHOW_CURSOR,
        47 | 1047 | 1049 => {
            let how = match mode {
                47 => AltScreenMode::Plain,
                1047 => AltScreenMode::ClearOnExit,
                _ => AltScreenMode::SaveCursor,
            };
            return if on { state.enter_alt_screen(how) } else { state.leave_alt_screen(how) };
        }
        1048 => return if on { state.save_cursor() } else { state.restore_cursor() },
        1000 | 1002 | 1003 => {
            let tracking = match mode {
                1000 => MouseTracking::Clicks,
                1002 => MouseTracking::Drag,
                _ => MouseTracking::Motion,
            };
            if on {
                state.modes.mouse = tracking;
            } else if state.modes.mouse == tracking {
                state.modes.mouse = MouseTracking::Off;
            }
            return;
        }
        1005 | 1006 => {
            let encoding = if mode == 1005 { MouseEncoding::Utf8 } else { MouseEncoding::Sgr };
            if on {
                state.modes.mouse_encoding = encoding;
            } else if state.modes.mouse_encoding == encoding {
                state.modes.mouse_encoding = MouseEncoding::X10;
            }
            return;
        }
        1004 => Modes::FOCUS_EVENTS,
        1007 => Modes::ALTERNATE_SCROLL,
        1042 => Modes::URGENCY_HINTS,
        2004 => Modes::BRACKETED_PASTE,
        2026 => Modes::SYNCHRONIZED_OUTPUT,
        _ => return,
    };
    state.modes.flags.set(flag, on);
}

/// DECRQM answer values: 0 not recognized, 1 set, 2 reset.
fn flag_value(on: bool) -> u8 {
    if on {
        1
    } else {
        2
    }
}

fn ansi_mode_value(state: &State, mode: u16) -> u8 {
    match mode {
        4 => flag_value(state.mode(Modes::INSERT)),
        20 => flag_value(state.mode(Modes::LINEFEED_NEWLINE)),
        _ => 0,
    }
}

fn private_mode_value(state: &State, mode: u16) -> u8 {
    let flag = match mode {
        1 => Modes::APP_CURSOR,
        3 => return 2,
        5 => Modes::REVERSE_VIDEO,
        6 => Modes::ORIGIN,
        7 => Modes::AUTOWRAP,
        12 => Modes::BLINKING_CURSOR,
        25 => Modes::SHOW_CURSOR,
        47 | 1047 | 1049 => Modes::ALT_SCREEN,
        1000 => return flag_value(state.modes.mouse == MouseTracking::Clicks),
        1002 => return flag_value(state.modes.mouse == MouseTracking::Drag),
        1003 => return flag_value(state.modes.mouse == MouseTracking::Motion),
        1005 => return flag_value(state.modes.mouse_encoding == MouseEncoding::Utf8),
        1006 => return flag_value(state.modes.mouse_encoding == MouseEncoding::Sgr),
        1004 => Modes::FOCUS_EVENTS,
        1007 => Modes::ALTERNATE_SCROLL,
        1042 => Modes::URGENCY_HINTS,
        2004 => Modes::BRACKETED_PASTE,
        2026 => Modes::SYNCHRONIZED_OUTPUT,
        _ => return 0,
    };
    flag_value(state.mode(flag))
}
