//! Screen rules: text on a pane's screen that means its program waits for a person. Pure: the
//! sampler hands in the screen's rows and the cursor's row; what matched comes back.
//!
//! Three kinds, tried in this order:
//! - **A thread's own** `pulse.needs_you` regular expressions, anywhere on the screen.
//! - **The defaults** ([`DEFAULT_RULES`]): the words of the dialogs of the agent CLIs paddock
//!   is tested with (approval prompts, trust dialogs, login questions), anywhere on the screen,
//!   and a line-oriented `[y/N]` question at the cursor. These TUIs park the cursor at their
//!   input box, away from the question, so a look near the cursor alone misses them.
//! - **A dialog's shape**: a question ("Do you want…?", "Allow…?", "Trust…?") and a numbered
//!   choice list together on a screen that has stopped changing, for dialogs of programs the
//!   table does not know.
//!
//! The screen is read as its rows' text with box-drawing characters taken out (dialogs are
//! drawn in boxes, and a wrapped question continues on the next row inside the box's
//! borders). In the defaults a space stands for any run of white space, line breaks included,
//! so a question a narrow pane wraps still matches.

use regex::{Regex, RegexSet};

/// Where a default rule looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Anywhere on the screen, as soon as it shows: one program's exact words.
    Screen,
    /// The rows from the cursor's up ([`NEAR_ROWS`]): a question that waits where its answer
    /// is typed.
    NearCursor,
}

/// One default rule: which program's which dialog it reads, and its pattern.
#[derive(Clone, Copy, Debug)]
pub struct DefaultRule {
    pub program: &'static str,
    pub dialog: &'static str,
    /// A regular expression in which a space means any white space (line breaks included).
    pub pattern: &'static str,
    pub scope: Scope,
}

const fn rule(
    program: &'static str,
    dialog: &'static str,
    pattern: &'static str,
    scope: Scope,
) -> DefaultRule {
    DefaultRule { program, dialog, pattern, scope }
}

/// The defaults, watched in every pane. Each agent dialog has a test on a screen recorded from
/// the real program (tests/data/recordings/agents, tests/it/agent_screens.rs).
pub const DEFAULT_RULES: &[DefaultRule] = &[
    rule(
        "Claude Code",
        "trust",
        r"Is this a project you created or one you trust\?",
        Scope::Screen,
    ),
    rule(
        "Claude Code, Gemini CLI",
        "trust",
        r"Do you trust the files in this folder\?",
        Scope::Screen,
    ),
    rule(
        "Claude Code",
        "approval",
        r"Do you want to (?:proceed|make this edit|create|allow|run|delete|overwrite|fetch|use)\b[^?\n]{0,80}\?",
        Scope::Screen,
    ),
    rule("Claude Code", "login", r"Select login method", Scope::Screen),
    rule("Claude Code", "onboarding", r"Choose the text style", Scope::Screen),
    rule(
        "Codex",
        "trust",
        r"Trust this folder\?|Do you trust the contents of this directory\?",
        Scope::Screen,
    ),
    rule(
        "Codex",
        "approval",
        r"Would you like to (?:run the following command|make the following edits|grant these permissions|apply)\b[^?\n]{0,40}\?",
        Scope::Screen,
    ),
    rule("Codex", "login", r"Sign in with ChatGPT", Scope::Screen),
    rule(
        "Gemini CLI",
        "approval",
        r"Allow execution of\b[^?\n]{0,80}\?|Apply this change\?|Allow execution\?",
        Scope::Screen,
    ),
    rule("Gemini CLI", "login", r"How would you like to authenticate", Scope::Screen),
    rule("any", "approval", r"Allow (?:this )?(?:command|edit|action)\?", Scope::Screen),
    rule("any", "approval", r"Waiting for (?:your )?approval", Scope::Screen),
    rule("any", "question", r"\[y/N\]|\[Y/n\]|\(y/n\)|\[y/n\]", Scope::NearCursor),
];

/// How many rows, from the cursor's up, a [`Scope::NearCursor`] rule reads.
pub const NEAR_ROWS: usize = 6;

/// A question, for a dialog's shape: a question word, then a question mark on the same line.
const QUESTION: &str = r"\b(?:Do you want|Would you like|Allow|Approve|Trust|Proceed|Continue|Overwrite|Confirm|Are you sure)\b[^?\n]{0,120}\?";
/// Choices, for a dialog's shape: two numbered choices on consecutive lines (either may carry
/// a selection marker). A `[y/N]` counts only at the cursor (the `question` default): one on
/// the screen elsewhere is more often an old question, answered.
const CHOICES: &str = r"(?m)^\s*(?:[❯›>●*]\s*)?1[.)] +\S[^\n]*\n\s*(?:[❯›>●*]\s*)?2[.)] +\S";

/// What a look at the screen found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The text that matched, white space runs made one space, at most [`SHOWN_CHARS`].
    pub text: String,
    /// Whether it counts only on a screen that has stopped changing (a dialog's shape, which
    /// a program's output may show in passing).
    pub when_still: bool,
}

/// At most this many characters of matched text are kept as the reason.
pub const SHOWN_CHARS: usize = 60;

/// One pane's rules, compiled.
#[derive(Debug)]
pub struct Rules {
    own: Vec<Regex>,
    screen: RegexSet,
    screen_each: Vec<Regex>,
    near: Vec<Regex>,
    question: Regex,
    choices: Regex,
}

impl Rules {
    /// The defaults, after a thread's `own` rules.
    pub fn new(own: Vec<Regex>) -> Rules {
        let compile = |pattern: &str| pattern.replace(' ', r"\s+");
        let of = |scope| DEFAULT_RULES.iter().filter(move |r| r.scope == scope);
        let screen: Vec<String> = of(Scope::Screen).map(|r| compile(r.pattern)).collect();
        // The table is tested (every pattern compiles), so these cannot fail at run time.
        let regex = |p: &str| Regex::new(p).unwrap_or_else(|e| unreachable!("{p}: {e}"));
        Rules {
            own,
            screen: RegexSet::new(&screen).unwrap_or_else(|e| unreachable!("{e}")),
            screen_each: screen.iter().map(|p| regex(p)).collect(),
            near: of(Scope::NearCursor).map(|r| regex(&compile(r.pattern))).collect(),
            question: regex(QUESTION),
            choices: regex(CHOICES),
        }
    }

    /// The first rule that matches a screen of `rows` (their text) with the cursor on
    /// `cursor_row`.
    pub fn find(&self, rows: &[String], cursor_row: usize) -> Option<Found> {
        let screen = readable(rows);
        let at_once = |text: &str| Some(Found { text: shown(text), when_still: false });
        if let Some(found) = self.own.iter().find_map(|rule| rule.find(&screen)) {
            return at_once(found.as_str());
        }
        if let Some(index) = self.screen.matches(&screen).iter().next() {
            return self.screen_each[index].find(&screen).and_then(|found| at_once(found.as_str()));
        }
        let end = (cursor_row + 1).min(rows.len());
        let near = readable(&rows[end.saturating_sub(NEAR_ROWS)..end]);
        if let Some(found) = self.near.iter().find_map(|rule| rule.find(&near)) {
            return at_once(found.as_str());
        }
        self.shape(&screen)
    }

    /// Whether a screen of `rows` has a dialog's shape (whatever program drew it).
    pub fn dialog_shape(&self, rows: &[String]) -> Option<Found> {
        self.shape(&readable(rows))
    }

    fn shape(&self, screen: &str) -> Option<Found> {
        let question = self.question.find(screen)?;
        self.choices
            .is_match(screen)
            .then(|| Found { text: shown(question.as_str()), when_still: true })
    }
}

/// Rows as one text, one line each, with box-drawing characters made spaces and every line's
/// ends trimmed.
fn readable(rows: &[String]) -> String {
    let mut text = String::with_capacity(rows.iter().map(String::len).sum::<usize>() + rows.len());
    for row in rows {
        let line: String = row.chars().map(|c| if is_box_drawing(c) { ' ' } else { c }).collect();
        text.push_str(line.trim());
        text.push('\n');
    }
    text
}

/// Box-drawing characters (U+2500–U+257F) and the ASCII bar that stands in for them.
fn is_box_drawing(c: char) -> bool {
    matches!(c, '\u{2500}'..='\u{257F}' | '|')
}

/// `text` with runs of white space made one space and controls left out, at most
/// [`SHOWN_CHARS`] characters.
fn shown(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    words.join(" ").chars().filter(|c| !c.is_control()).take(SHOWN_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    fn find(text: &str) -> Option<Found> {
        let rows = rows(text);
        Rules::new(Vec::new()).find(&rows, rows.len().saturating_sub(1))
    }

    #[test]
    fn every_default_compiles_and_a_space_matches_a_wrapped_line() {
        for rule in DEFAULT_RULES {
            assert!(Regex::new(&rule.pattern.replace(' ', r"\s+")).is_ok(), "{}", rule.pattern);
        }
        let wrapped =
            "│ Quick safety check: Is this a project you created or one │\n│ you trust? (Like │";
        let found = find(wrapped).expect("found across the wrap");
        assert_eq!(found.text, "Is this a project you created or one you trust?");
        assert!(!found.when_still);
    }

    #[test]
    fn a_question_far_from_the_cursor_is_found_but_y_n_only_near_it() {
        let mut screen = vec!["Do you want to proceed?".to_owned()];
        screen.extend((0..20).map(|_| String::new()));
        screen.push("> ".into());
        let rules = Rules::new(Vec::new());
        assert_eq!(rules.find(&screen, 21).map(|f| f.text), Some("Do you want to proceed?".into()));
        let mut old = vec!["Overwrite? [y/N] y".to_owned()];
        old.extend((0..20).map(|_| "done".to_owned()));
        assert_eq!(rules.find(&old, 20), None, "an answered y/N long scrolled up");
        old.push("Continue? [Y/n] ".into());
        assert_eq!(rules.find(&old, 21).map(|f| f.text), Some("[Y/n]".into()));
    }

    #[test]
    fn a_dialogs_shape_needs_a_question_and_choices_and_a_still_screen() {
        let dialog = "╭────╮\n│ Should I reformat src/? Approve the plan? │\n│ ❯ 1. Approve │\n│   2. Reject │";
        let found = find(dialog).expect("a dialog's shape");
        assert_eq!(found.text, "Approve the plan?");
        assert!(found.when_still);
        assert_eq!(find("Tips:\n1. Create GEMINI.md files\n2. /help for more"), None);
        assert_eq!(find("Allow me to explain?\nnothing to choose"), None);
    }

    #[test]
    fn a_threads_own_rule_comes_first_and_the_reason_is_short_and_flat() {
        let own = vec![Regex::new(r"Apply these changes\? \(y/n\)").expect("regex")];
        let rows = rows("Do you want to proceed?\nApply these changes? (y/n)");
        let found = Rules::new(own).find(&rows, 1).expect("found");
        assert_eq!(found.text, "Apply these changes? (y/n)");
        let long = format!("Do you want to create {}x?", "a".repeat(70));
        assert_eq!(find(&long).expect("found").text.chars().count(), SHOWN_CHARS);
    }
}
