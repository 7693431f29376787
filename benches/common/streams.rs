//! The five generated streams the parse benchmarks feed (`parse.rs`, `replay.rs`): the same
//! bytes on every run, for a 200x50 screen.

pub const COLS: usize = 200;
pub const LINES: usize = 50;

/// Each stream by name, in the order the tables list them.
pub fn all() -> [(&'static str, Vec<u8>); 5] {
    [
        ("dense_sgr", dense_sgr()),
        ("plain_text", plain_text()),
        ("unicode", unicode()),
        ("cursor_motion", cursor_motion()),
        ("agent_tui", agent_tui()),
    ]
}

/// xorshift: the streams are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Every cell of a 200x50 screen with its own truecolor foreground and background and
/// attributes, redrawn 8 times.
pub fn dense_sgr() -> Vec<u8> {
    let mut rng = Rng(1);
    let mut out = String::new();
    for _ in 0..8 {
        out.push_str("\x1b[H");
        for row in 0..LINES {
            out.push_str(&format!("\x1b[{};1H", row + 1));
            for _ in 0..COLS {
                let (r, g, b) = (rng.below(256), rng.below(256), rng.below(256));
                let attr = ["1", "3", "4", "7", "2", "9"][rng.below(6) as usize];
                out.push_str(&format!("\x1b[{attr};38;2;{r};{g};{b};48;2;{b};{r};{g}m"));
                out.push((b'a' + rng.below(26) as u8) as char);
            }
        }
        out.push_str("\x1b[0m");
    }
    out.into_bytes()
}

/// Lines of plain ASCII, as a build log: mostly text, scrolling all the time.
pub fn plain_text() -> Vec<u8> {
    let mut rng = Rng(2);
    let words = [
        "compiling",
        "paddock",
        "v0.1.0",
        "(/work/main)",
        "warning:",
        "unused",
        "variable",
        "finished",
        "target(s)",
        "in",
        "0.42s",
        "running",
        "tests",
        "ok",
        "test",
        "result:",
    ];
    let mut out = String::new();
    while out.len() < 4 << 20 {
        let len = 20 + rng.below(150) as usize;
        let mut line = String::new();
        while line.len() < len {
            line.push_str(words[rng.below(words.len() as u64) as usize]);
            line.push(' ');
        }
        out.push_str(line.trim_end());
        out.push_str("\r\n");
    }
    out.into_bytes()
}

/// CJK, emoji and combining marks, wrapping and scrolling.
pub fn unicode() -> Vec<u8> {
    let mut rng = Rng(3);
    let pieces = [
        "你好世界",
        "日本語のテキスト",
        "🎉🚀",
        "e\u{301}",
        "한국어",
        "ｗｉｄｅ",
        "a\u{300}\u{302}",
        "ascii ",
    ];
    let mut out = String::new();
    while out.len() < 2 << 20 {
        for _ in 0..10 {
            out.push_str(pieces[rng.below(pieces.len() as u64) as usize]);
        }
        out.push_str("\r\n");
    }
    out.into_bytes()
}

/// Random cursor positioning with short writes, as full-screen TUIs do.
pub fn cursor_motion() -> Vec<u8> {
    let mut rng = Rng(4);
    let mut out = String::new();
    while out.len() < 2 << 20 {
        let (row, col) = (1 + rng.below(LINES as u64), 1 + rng.below(COLS as u64));
        out.push_str(&format!("\x1b[{row};{col}H"));
        match rng.below(4) {
            0 => out.push_str("\x1b[K"),
            1 => out.push_str(&format!("\x1b[{}A\x1b[{}C", rng.below(5), rng.below(5))),
            _ => {}
        }
        out.push_str(["x", "ab", "hello", "│", "─"][rng.below(5) as usize]);
    }
    out.into_bytes()
}

/// An agent's TUI: synchronized full redraws with a spinner, colored log lines, a box and a
/// status line.
pub fn agent_tui() -> Vec<u8> {
    let spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    let mut out = String::new();
    let mut frame = 0;
    while out.len() < 4 << 20 {
        out.push_str("\x1b[?2026h\x1b[H");
        for row in 0..LINES - 4 {
            let level = ["\x1b[32mINFO\x1b[0m", "\x1b[33mWARN\x1b[0m", "\x1b[2mDEBUG\x1b[0m"]
                [(row + frame) % 3];
            out.push_str(&format!(
                "\x1b[{};1H\x1b[2K{level} \x1b[38;5;245m{:>6}\x1b[0m edited src/term/state.rs: {} lines, \x1b[1mtool call\x1b[0m ok",
                row + 1,
                frame * 10 + row,
                row * 7 + frame
            ));
        }
        out.push_str(&format!(
            "\x1b[{};1H\x1b[38;2;120;120;255m╭{}╮\x1b[0m",
            LINES - 3,
            "─".repeat(COLS - 2)
        ));
        out.push_str(&format!(
            "\x1b[{};1H\x1b[38;2;120;120;255m│\x1b[0m {} Thinking… \x1b[2m(esc to interrupt)\x1b[0m\x1b[{};{}H\x1b[38;2;120;120;255m│\x1b[0m",
            LINES - 2, spinner[frame % spinner.len()], LINES - 2, COLS
        ));
        out.push_str(&format!(
            "\x1b[{};1H\x1b[38;2;120;120;255m╰{}╯\x1b[0m",
            LINES - 1,
            "─".repeat(COLS - 2)
        ));
        out.push_str(&format!(
            "\x1b[{};1H\x1b[7m agent-1 \x1b[0m tokens: {} \x1b[?2026l",
            LINES,
            frame * 31
        ));
        frame += 1;
    }
    out.into_bytes()
}
