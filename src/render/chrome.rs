//! The window's chrome as one-row terminals: the tab bar and the pane title strips.
//!
//! Built as terminals so they are drawn and shaped exactly like pane rows (and cached the same
//! way: shaped again only when they change). Pure: names and titles in, a terminal out.

use std::ops::Range;

use crate::term::{TermConfig, TermSize, Terminal};

/// Where each tab's label is in the tab bar (columns), for clicks.
pub type TabSpans = Vec<Range<usize>>;

/// Text with control characters dropped, at most `max` characters: titles come from programs.
pub fn clean(text: &str, max: usize) -> String {
    text.chars().filter(|c| !c.is_control()).take(max).collect()
}

/// `text` in at most `room` columns: whole, or cut with `…` at the end (empty when not even
/// that fits).
fn fit(text: &str, room: usize) -> String {
    if unicode_width::UnicodeWidthStr::width(text) <= room {
        return text.to_owned();
    }
    if room == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > room {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

fn one_row(cols: usize) -> Terminal {
    Terminal::new(TermSize::new(cols, 1), TermConfig { scrollback_lines: 0 })
}

/// One tab as the tab bar shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TabLabel {
    pub name: String,
    /// The SGR color of a dot before the label: its panes' pulse, taken together.
    pub mark: Option<u8>,
}

/// The tab bar: each tab's mark, number and name, the active one in inverse video, the others
/// dim; `note` at the right end (the software-renderer notice). Also where each tab is.
pub fn tab_bar(
    tabs: &[TabLabel],
    active: Option<usize>,
    cols: usize,
    note: Option<&str>,
) -> (Terminal, TabSpans) {
    let mut bar = one_row(cols);
    let mut text = String::from("\x1b[?25l\x1b[?7l");
    let mut spans = Vec::new();
    let mut col = 0;
    for (index, tab) in tabs.iter().enumerate() {
        let label = format!(" {} {} ", index + 1, clean(&tab.name, 30));
        let mut width = unicode_width::UnicodeWidthStr::width(label.as_str());
        if let Some(color) = tab.mark {
            // Outside the label's inverse video, so its color reads the same on every tab.
            text.push_str(&format!("\x1b[{color}m\u{25cf}\x1b[0m"));
            width += 1;
        }
        spans.push(col..col + width);
        col += width + 1;
        let look = if Some(index) == active { "\x1b[7m" } else { "\x1b[2m" };
        text.push_str(&format!("{look}{label}\x1b[0m "));
    }
    if let Some(note) = note {
        let at = cols.saturating_sub(note.len() + 1) + 1;
        text.push_str(&format!("\x1b[1;{at}H\x1b[2m{note} "));
    }
    bar.advance(text.as_bytes());
    (bar, spans)
}

/// What a pane's title strip says.
pub struct Strip<'a> {
    /// The program's name, in bold.
    pub program: &'a str,
    /// The title it set (OSC 0/2).
    pub title: Option<&'a str>,
    /// The directory it reported (OSC 7), dim.
    pub cwd: Option<&'a str>,
    /// In inverse video at the right end: the search field, or how far the view is scrolled.
    pub right: Option<&'a str>,
    /// At the left end: what the pane's lock enforces.
    pub lock: Option<Badge<'a>>,
    /// Before the lock: the pane's pulse (state), and its last minute as a sparkline.
    pub pulse: Option<Badge<'a>>,
    pub spark: Option<&'a str>,
}

/// A word in color at a strip's left end.
#[derive(Clone, Copy, Debug)]
pub struct Badge<'a> {
    pub text: &'a str,
    /// The SGR color of its background (`32` green, `33` yellow, `31` red).
    pub color: u8,
}

/// A minute of activity as block characters, one per second, scaled to its own peak (a floor
/// keeps an idle minute flat).
pub fn sparkline(levels: &[f32], floor: f32) -> String {
    const BLOCKS: [char; 8] = [
        '\u{2581}', '\u{2582}', '\u{2583}', '\u{2584}', '\u{2585}', '\u{2586}', '\u{2587}',
        '\u{2588}',
    ];
    let peak = levels.iter().copied().fold(floor, f32::max);
    levels
        .iter()
        .map(|level| BLOCKS[((level / peak).clamp(0.0, 1.0) * 7.0).round() as usize])
        .collect()
}

/// The search field as the strip shows it.
pub fn search_prompt(query: &str, missing: bool) -> String {
    let missing = if missing { " (not found)" } else { "" };
    format!("find: {}\u{2581}{missing}", clean(query, 60))
}

/// A pane's title strip: its pulse and lock badges, program, title and directory; something at
/// the right end, which may cover the program, title and directory but never the badges.
pub fn title_strip(strip: &Strip<'_>, cols: usize) -> Terminal {
    let width = |text: &str| unicode_width::UnicodeWidthStr::width(text);
    let mut row = one_row(cols);
    let mut text = String::from("\x1b[?25l\x1b[?7l");
    // Columns the badges take.
    let mut badges = 0;
    if let Some(badge) = strip.pulse {
        let shown = clean(badge.text, 60);
        badges += width(&shown) + 2;
        text.push_str(&format!("\x1b[30;{}m {shown} \x1b[0m", badge.color + 10));
    }
    if let Some(spark) = strip.spark {
        // In the pulse badge's color.
        let color = strip.pulse.map_or(37, |b| b.color);
        let shown = clean(spark, 60);
        badges += width(&shown) + 1;
        text.push_str(&format!("\x1b[{color}m{shown}\x1b[0m "));
    }
    if let Some(badge) = strip.lock {
        // Black on the badge's color.
        let background = badge.color + 10;
        let shown = clean(badge.text, 60);
        badges += width(&shown) + 2;
        text.push_str(&format!("\x1b[30;{background}m {shown} \x1b[0m"));
    }
    text.push_str(&format!("\x1b[1m {}\x1b[0m", clean(strip.program, 40)));
    if let Some(title) = strip.title.filter(|t| !t.is_empty()) {
        text.push_str(&format!("  {}", clean(title, 80)));
    }
    if let Some(cwd) = strip.cwd {
        text.push_str(&format!("  \x1b[2m{}\x1b[0m", clean(cwd, 120)));
    }
    if let Some(right) = strip.right {
        // Printed where it fits at the right edge, over the program, title and directory, cut
        // short where it would reach the badges (a lock's badge is always read whole).
        let room = cols.saturating_sub(badges + 2);
        let right = fit(&format!(" {} ", clean(right, 100)), room);
        if !right.is_empty() {
            let at = cols.saturating_sub(width(&right) + 1) + 1;
            text.push_str(&format!("\x1b[1;{at}H\x1b[7m{right}\x1b[0m"));
        }
    }
    row.advance(text.as_bytes());
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tab_bar_numbers_tabs_and_knows_where_each_is() {
        let tab = |name: &str, mark| TabLabel { name: name.to_owned(), mark };
        let tabs = [tab("agent", None), tab("vim\x1b[31m", Some(31))];
        let (bar, spans) = tab_bar(&tabs, Some(1), 40, Some("note"));
        let text = crate::term::row_text(&bar.rows()[0]);
        assert_eq!(text, " 1 agent  \u{25cf} 2 vim[31m              note");
        assert_eq!(spans, [0..9, 10..22]);
        // The mark starts the active tab's span, so a click on it picks the tab.
        assert_eq!(bar.rows()[0].cells()[10].ch(), '\u{25cf}');
    }

    #[test]
    fn the_strip_shows_program_title_directory_and_the_right_part() {
        let strip = Strip {
            program: "bash",
            title: Some("build"),
            cwd: Some("/work"),
            right: Some(&search_prompt("needle", true)),
            lock: None,
            pulse: None,
            spark: None,
        };
        let row = title_strip(&strip, 60);
        let text = crate::term::row_text(&row.rows()[0]);
        assert!(text.starts_with(" bash  build  /work"), "{text:?}");
        let badge = Badge { text: "Locked (files + network)", color: 32 };
        let locked = title_strip(&Strip { lock: Some(badge), ..strip }, 80);
        let text = crate::term::row_text(&locked.rows()[0]);
        assert!(text.starts_with(" Locked (files + network)  bash  build"), "{text:?}");
        assert!(text.ends_with("find: needle\u{2581} (not found)"), "{text:?}");
        let pulse = Badge { text: "NEEDS YOU: bell", color: 31 };
        let busy = title_strip(
            &Strip { pulse: Some(pulse), spark: Some("\u{2581}\u{2588}"), ..strip },
            80,
        );
        let text = crate::term::row_text(&busy.rows()[0]);
        assert!(text.starts_with(" NEEDS YOU: bell \u{2581}\u{2588}  bash"), "{text:?}");
        // Too narrow: the right part takes what the badges leave, nothing panics.
        let narrow = title_strip(&strip, 5);
        assert_eq!(narrow.size().cols, 5);
        // A long note never covers the lock's badge: it is cut short instead.
        let note = "refused example.com:80 (Ctrl+Shift+N allows)";
        let badge = Badge { text: "Locked (files; allow-listed network)", color: 32 };
        let crowded = title_strip(&Strip { lock: Some(badge), right: Some(note), ..strip }, 60);
        let text = crate::term::row_text(&crowded.rows()[0]);
        assert!(text.starts_with(" Locked (files; allow-listed network) "), "{text:?}");
        assert!(text.contains(" refused example") && text.contains('…'), "{text:?}");
        let tiny = title_strip(&Strip { lock: Some(badge), right: Some(note), ..strip }, 20);
        let text = crate::term::row_text(&tiny.rows()[0]);
        assert!(text.starts_with(" Locked (files; all"), "the badge first: {text:?}");
    }
}
