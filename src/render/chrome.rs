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
    /// The configured thread the pane runs: first, in bold, always shown.
    pub name: Option<&'a str>,
    /// The program's name: first and in bold when the pane runs no configured thread.
    pub program: &'a str,
    /// The title it set (OSC 0/2).
    pub title: Option<&'a str>,
    /// The directory it reported (OSC 7), dim.
    pub cwd: Option<&'a str>,
    /// In inverse video at the right end: the search field, or how far the view is scrolled.
    pub right: Option<&'a str>,
    /// After the name: what the pane's lock enforces.
    pub lock: Option<Badge<'a>>,
    /// Before the lock: the pane's pulse (state), and its last minute as a sparkline.
    pub pulse: Option<Badge<'a>>,
    pub spark: Option<&'a str>,
}

/// A word in color after a strip's name.
#[derive(Clone, Copy, Debug)]
pub struct Badge<'a> {
    pub text: &'a str,
    /// One symbol that stands for it where the strip is too narrow for the text.
    pub short: &'a str,
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

/// A pane's title strip: its name (the thread, else the program), its pulse and lock badges,
/// the program, title and directory; something at the right end, which may cover the program,
/// title and directory but never the name or the badges. Where the name and the whole badges
/// do not fit, the badges shorten to their symbols (and the sparkline goes); text that does not
/// fit ends in `…`.
pub fn title_strip(strip: &Strip<'_>, cols: usize) -> Terminal {
    let width = |text: &str| unicode_width::UnicodeWidthStr::width(text);
    let mut row = one_row(cols);
    let lead = fit(&clean(strip.name.unwrap_or(strip.program), 40), cols.saturating_sub(1));
    let badges = [strip.pulse, strip.lock];
    let spark = strip.spark.map(|spark| clean(spark, 60));
    // The name, then each badge after a space, the sparkline after the pulse's.
    let whole = 1
        + width(&lead)
        + badges.iter().flatten().map(|b| width(&clean(b.text, 60)) + 3).sum::<usize>()
        + spark.as_ref().map_or(0, |s| width(s) + 1);
    let short = whole > cols;
    let mut text = format!("\x1b[?25l\x1b[?7l\x1b[1m {lead}\x1b[0m");
    let mut used = 1 + width(&lead);
    for (index, badge) in badges.iter().enumerate() {
        let Some(badge) = badge else { continue };
        let shown = clean(if short { badge.short } else { badge.text }, 60);
        if used + width(&shown) + 3 > cols {
            // Not even the symbols fit beside the name.
            break;
        }
        // Black on the badge's color.
        text.push_str(&format!(" \x1b[30;{}m {shown} \x1b[0m", badge.color + 10));
        used += width(&shown) + 3;
        if let (0, false, Some(spark)) = (index, short, &spark) {
            // In the pulse badge's color.
            text.push_str(&format!(" \x1b[{}m{spark}\x1b[0m", badge.color));
            used += width(spark) + 1;
        }
    }
    if spark.is_some() && strip.pulse.is_none() && !short {
        let spark = spark.as_deref().unwrap_or_default();
        text.push_str(&format!(" \x1b[37m{spark}\x1b[0m"));
        used += width(spark) + 1;
    }
    // What may be covered or cut: from here on.
    let fixed = used.min(cols);
    let mut rest = String::new();
    if strip.name.is_some() && !strip.program.is_empty() {
        rest.push_str(&format!("  {}", clean(strip.program, 40)));
    }
    if let Some(title) = strip.title.filter(|t| !t.is_empty()) {
        rest.push_str(&format!("  {}", clean(title, 80)));
    }
    let cwd = strip.cwd.map(|cwd| format!("  {}", clean(cwd, 120)));
    let room = cols.saturating_sub(fixed);
    let rest_shown = fit(&rest, room);
    text.push_str(&rest_shown);
    let left = room.saturating_sub(width(&rest_shown));
    if let Some(cwd) = cwd.filter(|_| width(&rest_shown) == width(&rest)) {
        text.push_str(&format!("\x1b[2m{}\x1b[0m", fit(&cwd, left)));
    }
    if let Some(right) = strip.right {
        // Printed where it fits at the right edge, over the program, title and directory, cut
        // short where it would reach the name or the badges (read whole, or as symbols).
        let room = cols.saturating_sub(fixed + 1);
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
            name: None,
            program: "bash",
            title: Some("build"),
            cwd: Some("/work"),
            right: Some(&search_prompt("needle", true)),
            lock: None,
            pulse: None,
            spark: None,
        };
        let shown =
            |strip: &Strip<'_>, cols| crate::term::row_text(&title_strip(strip, cols).rows()[0]);
        let text = shown(&strip, 60);
        assert!(text.starts_with(" bash  build  /work"), "{text:?}");
        let badge = Badge { text: "Locked (files + network)", short: "L", color: 32 };
        let text = shown(&Strip { lock: Some(badge), ..strip }, 80);
        assert!(text.starts_with(" bash  Locked (files + network)   build"), "{text:?}");
        assert!(text.ends_with("find: needle\u{2581} (not found)"), "{text:?}");
        let pulse = Badge { text: "NEEDS YOU: bell", short: "!", color: 31 };
        let busy = Strip { pulse: Some(pulse), spark: Some("\u{2581}\u{2588}"), ..strip };
        let text = shown(&busy, 80);
        assert!(text.starts_with(" bash  NEEDS YOU: bell  \u{2581}\u{2588}  build"), "{text:?}");
        // Too narrow: the right part takes what the name leaves, nothing panics.
        assert_eq!(title_strip(&strip, 5).size().cols, 5);
        // A long note never covers the lock's badge: it is cut short instead.
        let note = "refused example.com:80 (Ctrl+Shift+N allows)";
        let badge = Badge { text: "Locked (files; allow-listed network)", short: "L", color: 32 };
        let text = shown(&Strip { lock: Some(badge), right: Some(note), ..strip }, 70);
        assert!(text.starts_with(" bash  Locked (files; allow-listed network) "), "{text:?}");
        assert!(text.contains(" refused example") && text.contains('…'), "{text:?}");
    }

    #[test]
    fn a_narrow_strip_names_the_thread_first_and_shortens_the_badges() {
        let pulse = Badge { text: "NEEDS YOU: Do you want to", short: "!", color: 31 };
        let lock = Badge { text: "Locked (files + network)", short: "L", color: 32 };
        let strip = Strip {
            name: Some("review"),
            program: "claude",
            title: Some("Fix the parser"),
            cwd: Some("/work/paddock"),
            right: None,
            lock: Some(lock),
            pulse: Some(pulse),
            spark: Some("\u{2581}\u{2588}\u{2585}"),
        };
        let shown =
            |strip: &Strip<'_>, cols| crate::term::row_text(&title_strip(strip, cols).rows()[0]);
        // Wide: the name, the whole badges, the sparkline, then the program, title and folder.
        let text = shown(&strip, 120);
        assert!(
            text.starts_with(
                " review  NEEDS YOU: Do you want to  \u{2581}\u{2588}\u{2585}  Locked (files + \
                 network)   claude  Fix the parser  /work/paddock"
            ),
            "{text:?}"
        );
        // 30 columns: the name whole, the badges as symbols in their colors, the rest cut.
        let row = title_strip(&strip, 30);
        let text = crate::term::row_text(&row.rows()[0]);
        assert!(text.starts_with(" review  !   L   claude  Fix "), "{text:?}");
        assert!(text.trim_end().ends_with('…'), "{text:?}");
        let bang = row.rows()[0].cells()[9];
        assert_eq!(bang.ch(), '!');
        // The right part never covers the name or the symbols.
        let note = Strip { right: Some("config changed: Ctrl+Shift+R restarts"), ..strip };
        let text = shown(&note, 30);
        assert!(text.starts_with(" review  !   L  "), "{text:?}");
        // Narrower than the name and a symbol: the name, and `…` for what does not fit; the
        // name cut only when it alone does not fit.
        assert_eq!(shown(&strip, 10).trim_end(), " review  …");
        assert_eq!(shown(&strip, 6).trim_end(), " revi…");
    }
}
