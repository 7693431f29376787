//! SGR (`CSI … m`): text attributes and colors, in both the `;` and the `:` (ITU T.416) forms.

use super::cell::{Color, Style, StyleFlags, UnderlineStyle};
use super::state::State;

/// `params` as groups (a value and its `:` sub-parameters): vte's `Params`, or the parser's
/// fast path's `Csi`.
pub fn apply<'a>(state: &mut State, params: impl Iterator<Item = &'a [u16]>) {
    let mut style = state.active.cursor.pen.style;
    let mut iter = params;
    let mut any = false;
    while let Some(param) = iter.next() {
        any = true;
        apply_one(&mut style, param, &mut iter);
    }
    if !any {
        style = reset(style);
    }
    state.set_pen(style);
}

/// SGR 0 keeps the hyperlink and the protection: they are not graphic renditions.
fn reset(style: Style) -> Style {
    let mut fresh = Style { hyperlink: style.hyperlink, ..Style::default() };
    fresh.flags.set(StyleFlags::PROTECTED, style.flags.contains(StyleFlags::PROTECTED));
    fresh
}

fn apply_one<'a>(style: &mut Style, param: &[u16], rest: &mut impl Iterator<Item = &'a [u16]>) {
    let flags = &mut style.flags;
    match param[0] {
        0 => *style = reset(*style),
        1 => flags.insert(StyleFlags::BOLD),
        2 => flags.insert(StyleFlags::DIM),
        3 => flags.insert(StyleFlags::ITALIC),
        4 => {
            style.underline = match param.get(1) {
                None | Some(1) => UnderlineStyle::Single,
                Some(0) => UnderlineStyle::None,
                Some(2) => UnderlineStyle::Double,
                Some(3) => UnderlineStyle::Curly,
                Some(4) => UnderlineStyle::Dotted,
                Some(5) => UnderlineStyle::Dashed,
                Some(_) => style.underline,
            }
        }
        5 | 6 => flags.insert(StyleFlags::BLINK),
        7 => flags.insert(StyleFlags::INVERSE),
        8 => flags.insert(StyleFlags::HIDDEN),
        9 => flags.insert(StyleFlags::STRIKE),
        21 => style.underline = UnderlineStyle::Double,
        22 => flags.remove(StyleFlags::BOLD.union(StyleFlags::DIM)),
        23 => flags.remove(StyleFlags::ITALIC),
        24 => style.underline = UnderlineStyle::None,
        25 => flags.remove(StyleFlags::BLINK),
        27 => flags.remove(StyleFlags::INVERSE),
        28 => flags.remove(StyleFlags::HIDDEN),
        29 => flags.remove(StyleFlags::STRIKE),
        p @ 30..=37 => style.fg = Color::Indexed((p - 30) as u8),
        38 => {
            if let Some(color) = extended_color(param, rest) {
                style.fg = color;
            }
        }
        39 => style.fg = Color::Default,
        p @ 40..=47 => style.bg = Color::Indexed((p - 40) as u8),
        48 => {
            if let Some(color) = extended_color(param, rest) {
                style.bg = color;
            }
        }
        49 => style.bg = Color::Default,
        58 => {
            if let Some(color) = extended_color(param, rest) {
                style.underline_color = color;
            }
        }
        59 => style.underline_color = Color::Default,
        p @ 90..=97 => style.fg = Color::Indexed((p - 90 + 8) as u8),
        p @ 100..=107 => style.bg = Color::Indexed((p - 100 + 8) as u8),
        _ => {}
    }
}

/// `38;5;N`, `38;2;R;G;B` (taking the following parameters) or `38:5:N`, `38:2:[CS]:R:G:B`
/// (sub-parameters of this one).
fn extended_color<'a>(param: &[u16], rest: &mut impl Iterator<Item = &'a [u16]>) -> Option<Color> {
    if param.len() > 1 {
        return match param[1] {
            5 => indexed(*param.get(2)?),
            2 => {
                // The colon form may carry a color-space id before the channels.
                let channels = if param.len() >= 6 { &param[3..6] } else { param.get(2..5)? };
                rgb(channels[0], channels[1], channels[2])
            }
            _ => None,
        };
    }
    let mut next = || rest.next().map(|p| p[0]);
    match next()? {
        5 => indexed(next()?),
        2 => {
            let (r, g, b) = (next()?, next()?, next()?);
            rgb(r, g, b)
        }
        _ => None,
    }
}

fn indexed(index: u16) -> Option<Color> {
    u8::try_from(index).ok().map(Color::Indexed)
}

fn rgb(r: u16, g: u16, b: u16) -> Option<Color> {
    Some(Color::Rgb(u8::try_from(r).ok()?, u8::try_from(g).ok()?, u8::try_from(b).ok()?))
}
