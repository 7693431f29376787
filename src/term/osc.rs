//! OSC strings: title, colors, hyperlinks, clipboard, working directory, notifications and
//! prompt marks.
//!
//! Invariant: a clipboard read (OSC 52 with `?`) is never answered here; it becomes an event the
//! app may refuse. Color queries are answered with the same terminator the program used.

use super::colors::{format_color_spec, parse_color_spec, DynamicColor};
use super::events::{PromptMark, TermEvent};
use super::state::State;
use super::styles::Hyperlink;

/// Longest title or notification text kept, in characters.
const MAX_TEXT: usize = 4096;

pub fn dispatch(state: &mut State, params: &[&[u8]], bell_terminated: bool) {
    if std::mem::take(&mut state.discard_next_osc) {
        return;
    }
    let Some((&command, args)) = params.split_first() else {
        return;
    };
    let terminator = if bell_terminated { "\x07" } else { "\x1b\\" };
    match command {
        b"0" | b"2" => set_title(state, Some(joined(args))),
        b"4" => palette(state, args, terminator),
        b"7" => working_directory(state, args),
        b"8" => hyperlink(state, args),
        b"9" => notify_osc9(state, args),
        b"10" | b"11" | b"12" => dynamic_colors(state, command, args, terminator),
        b"52" => clipboard(state, args),
        b"99" => notify_kitty(state, args),
        b"104" => reset_palette(state, args),
        b"110" => state.colors.set_dynamic(DynamicColor::Foreground, None),
        b"111" => state.colors.set_dynamic(DynamicColor::Background, None),
        b"112" => state.colors.set_dynamic(DynamicColor::Cursor, None),
        b"133" => prompt_mark(state, args),
        b"777" => notify_osc777(state, args),
        _ => {}
    }
}

/// The arguments joined back with `;` (titles and URIs may contain it), lossily decoded and cut
/// to a sane length.
fn joined(args: &[&[u8]]) -> String {
    let text = args.iter().map(|a| String::from_utf8_lossy(a)).collect::<Vec<_>>().join(";");
    text.chars().filter(|c| !c.is_control()).take(MAX_TEXT).collect()
}

fn text(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).chars().filter(|c| !c.is_control()).take(MAX_TEXT).collect()
}

fn set_title(state: &mut State, title: Option<String>) {
    let title = title.map(|t| state.redact_text(t));
    state.window.title = title.clone();
    state.outbox.event(TermEvent::Title(title));
}

fn palette(state: &mut State, args: &[&[u8]], terminator: &str) {
    for pair in args.chunks(2) {
        let [index, spec] = pair else { return };
        let Some(index) = std::str::from_utf8(index).ok().and_then(|i| i.parse::<u8>().ok()) else {
            return;
        };
        if *spec == b"?" {
            let color = format_color_spec(state.colors.effective_palette(index));
            state.outbox.reply(format!("\x1b]4;{index};{color}{terminator}").as_bytes());
        } else if let Some(rgb) = std::str::from_utf8(spec).ok().and_then(parse_color_spec) {
            state.colors.set_palette(index, Some(rgb));
        }
    }
}

fn reset_palette(state: &mut State, args: &[&[u8]]) {
    let indices: Vec<u8> =
        args.iter().filter_map(|a| std::str::from_utf8(a).ok()?.parse::<u8>().ok()).collect();
    if args.iter().all(|a| a.is_empty()) {
        state.colors.reset_palette();
    }
    for index in indices {
        state.colors.set_palette(index, None);
    }
}

/// OSC 10/11/12 set or query the dynamic colors; extra arguments address the next ones
/// (`OSC 10;fg;bg`), as in xterm.
fn dynamic_colors(state: &mut State, command: &[u8], args: &[&[u8]], terminator: &str) {
    let first = match command {
        b"10" => 0,
        b"11" => 1,
        _ => 2,
    };
    let slots = [DynamicColor::Foreground, DynamicColor::Background, DynamicColor::Cursor];
    for (offset, spec) in args.iter().enumerate() {
        let Some(&which) = slots.get(first + offset) else {
            return;
        };
        if *spec == b"?" {
            let color = format_color_spec(state.colors.effective_dynamic(which));
            let code = 10 + which as usize;
            state.outbox.reply(format!("\x1b]{code};{color}{terminator}").as_bytes());
        } else if let Some(rgb) = std::str::from_utf8(spec).ok().and_then(parse_color_spec) {
            state.colors.set_dynamic(which, Some(rgb));
        }
    }
}

/// OSC 8: `8;params;uri` starts a link (the `id=` param joins runs), an empty URI ends it.
fn hyperlink(state: &mut State, args: &[&[u8]]) {
    const MAX_URI: usize = 8192;
    let mut style = state.active.cursor.pen.style;
    let uri = joined_raw(args.get(1..).unwrap_or_default());
    let uri = state.redact_text(uri);
    style.hyperlink = if uri.is_empty() || uri.len() > MAX_URI {
        None
    } else {
        let id = args.first().and_then(|params| {
            String::from_utf8_lossy(params)
                .split(':')
                .find_map(|kv| kv.strip_prefix("id=").map(str::to_owned))
        });
        Some(state.styles.intern_link(Hyperlink { id, uri }))
    };
    state.set_pen(style);
}

fn joined_raw(args: &[&[u8]]) -> String {
    args.iter().map(|a| String::from_utf8_lossy(a)).collect::<Vec<_>>().join(";")
}

/// OSC 52: `52;selection;base64` stores, `52;selection;?` asks to read (never answered here).
fn clipboard(state: &mut State, args: &[&[u8]]) {
    let (Some(selection), Some(payload)) = (args.first(), args.get(1)) else {
        return;
    };
    let selection = String::from_utf8_lossy(selection).into_owned();
    let selection = if selection.is_empty() { "c".to_owned() } else { selection };
    if *payload == b"?" {
        state.outbox.event(TermEvent::ClipboardLoadRequest { selection });
    } else if let Some(data) = decode_base64(payload) {
        // A program with a secret could copy it to the clipboard, past every mask on screen.
        if state.holds_value(&data) {
            state.outbox.event(TermEvent::ClipboardWithheld { selection });
        } else {
            state.outbox.event(TermEvent::ClipboardStore { selection, data });
        }
    }
}

/// OSC 7: `file://host/path`, percent-encoded.
fn working_directory(state: &mut State, args: &[&[u8]]) {
    let uri = joined_raw(args);
    let Some(rest) = uri.strip_prefix("file://") else {
        return;
    };
    let path = rest.find('/').map_or("", |slash| &rest[slash..]);
    let Some(path) = percent_decode(path) else {
        return;
    };
    if path.is_empty() {
        return;
    }
    let path = state.redact_text(path);
    state.window.cwd = Some(path.clone());
    state.outbox.event(TermEvent::WorkingDirectory(path));
}

fn notify_osc9(state: &mut State, args: &[&[u8]]) {
    // `9;4;…` is ConEmu's progress report, not a notification.
    if args.first() == Some(&&b"4"[..]) && args.len() > 1 {
        return;
    }
    let body = joined(args);
    if !body.is_empty() {
        notify(state, None, body);
    }
}

fn notify_osc777(state: &mut State, args: &[&[u8]]) {
    if args.first() != Some(&&b"notify"[..]) {
        return;
    }
    let title = args.get(1).map(|t| text(t)).filter(|t| !t.is_empty());
    let body = joined(args.get(2..).unwrap_or_default());
    notify(state, title, body);
}

/// Raise a notification, with any value in its text starred: in the title, in the body, and
/// running from one into the other (shown as `title: body`).
fn notify(state: &mut State, title: Option<String>, body: String) {
    let title_len = title.as_ref().map_or(0, String::len);
    let whole = format!("{}{body}", title.unwrap_or_default());
    let checked = state.redact_text(whole);
    let mut at = title_len.min(checked.len());
    while !checked.is_char_boundary(at) {
        at -= 1;
    }
    let (title, body) = checked.split_at(at);
    let title = Some(title.to_owned()).filter(|t| !t.is_empty());
    state.outbox.event(TermEvent::Notification { title, body: body.to_owned() });
}

/// OSC 99 (kitty): `99;metadata;payload`. Metadata: `p=title` (or `body`) says which part the
/// payload is, `e=1` that it is base64, `d=0` that more chunks follow (with the same `i=`): a
/// notification is raised, and checked, whole, once its last chunk arrived.
fn notify_kitty(state: &mut State, args: &[&[u8]]) {
    let metadata = args.first().map(|m| String::from_utf8_lossy(m).into_owned());
    let meta = |key: &str| {
        metadata.as_deref().and_then(|m| {
            m.split(':').find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=').map(str::to_owned))
        })
    };
    let mut payload = joined(args.get(1..).unwrap_or_default());
    // What a notification shows (and what is checked) is the decoded text.
    if meta("e").as_deref() == Some("1") {
        let raw = joined_raw(args.get(1..).unwrap_or_default());
        payload = decode_base64(raw.as_bytes()).map(|d| text(&d)).unwrap_or_default();
    }
    let id = meta("i");
    let mut pending = match state.kitty_notification.take() {
        Some(pending) if pending.id == id => pending,
        _ => KittyNotification { id, ..Default::default() },
    };
    let part =
        if meta("p").as_deref() == Some("title") { &mut pending.title } else { &mut pending.body };
    let room = MAX_TEXT.saturating_sub(part.chars().count());
    part.extend(payload.chars().take(room));
    if meta("d").as_deref() == Some("0") {
        state.kitty_notification = Some(pending);
        return;
    }
    let title = Some(pending.title).filter(|t| !t.is_empty());
    notify(state, title, pending.body);
}

/// An OSC 99 notification whose chunks are still arriving.
#[derive(Debug, Default)]
pub struct KittyNotification {
    id: Option<String>,
    title: String,
    body: String,
}

impl KittyNotification {
    pub(super) fn parts(&self) -> (Option<&str>, &str, &str) {
        (self.id.as_deref(), &self.title, &self.body)
    }

    pub(super) fn from_parts(id: Option<String>, title: String, body: String) -> Self {
        KittyNotification { id, title, body }
    }
}

fn prompt_mark(state: &mut State, args: &[&[u8]]) {
    let Some(kind) = args.first() else { return };
    let mark = match kind.first() {
        Some(b'A') => PromptMark::PromptStart,
        Some(b'B') => PromptMark::CommandStart,
        Some(b'C') => PromptMark::CommandExecuted,
        Some(b'D') => {
            let exit_code = args
                .get(1)
                .and_then(|code| std::str::from_utf8(code).ok())
                .and_then(|code| code.parse().ok());
            PromptMark::CommandFinished { exit_code }
        }
        _ => return,
    };
    state.outbox.event(TermEvent::Prompt(mark));
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Standard base64 with optional padding; `None` on any other byte.
fn decode_base64(input: &[u8]) -> Option<Vec<u8>> {
    fn value(byte: u8) -> Option<u32> {
        Some(match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let input = input.strip_suffix(b"==").or_else(|| input.strip_suffix(b"=")).unwrap_or(input);
    let mut out = Vec::with_capacity(input.len() * 3 / 4);
    for chunk in input.chunks(4) {
        let mut acc = 0u32;
        for &byte in chunk {
            acc = (acc << 6) | value(byte)?;
        }
        let bits = chunk.len() * 6;
        acc <<= 24 - bits;
        let bytes = acc.to_be_bytes();
        match chunk.len() {
            4 => out.extend_from_slice(&bytes[1..4]),
            3 => out.extend_from_slice(&bytes[1..3]),
            2 => out.push(bytes[1]),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_known_values() {
        assert_eq!(decode_base64(b"aGVsbG8="), Some(b"hello".to_vec()));
        assert_eq!(decode_base64(b"aGk="), Some(b"hi".to_vec()));
        assert_eq!(decode_base64(b"YWJj"), Some(b"abc".to_vec()));
        assert_eq!(decode_base64(b""), Some(vec![]));
        assert_eq!(decode_base64(b"a"), None);
        assert_eq!(decode_base64(b"a$=="), None);
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("/home/a%20b").as_deref(), Some("/home/a b"));
        assert_eq!(percent_decode("/bad%zz"), None);
        assert_eq!(percent_decode("/cut%2"), None);
    }
}
