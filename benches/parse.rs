//! Parse throughput: the same generated streams through paddock's model and alacritty_terminal's
//! `Term`, in the same run, plus vte's parser with a do-nothing handler (the floor both stand
//! on), and paddock with a pane's masker (five secrets) in front. `cargo xtask bench` runs this
//! and prints the table with ratios.

use std::hint::black_box;

use alacritty_terminal::event::{Event, EventListener};
use alacritty_terminal::term::test::TermSize as AlacrittySize;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use paddock::term::{TermConfig, TermSize, Terminal};
use paddock::vault::mask::{Masker, ScreenRedactor};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

const COLS: usize = 200;
const LINES: usize = 50;
const SCROLLBACK: usize = 10_000;

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
fn dense_sgr() -> Vec<u8> {
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
fn plain_text() -> Vec<u8> {
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
fn unicode() -> Vec<u8> {
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
fn cursor_motion() -> Vec<u8> {
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
fn agent_tui() -> Vec<u8> {
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

#[derive(Clone, Copy)]
struct NoEvents;

impl EventListener for NoEvents {
    fn send_event(&self, _event: Event) {}
}

fn paddock_parse(bytes: &[u8]) -> Terminal {
    feed(
        Terminal::new(TermSize::new(COLS, LINES), TermConfig { scrollback_lines: SCROLLBACK }),
        bytes,
    )
}

/// paddock's model with its parser's fast path off: every byte through vte, as before it.
fn paddock_vte_only_parse(bytes: &[u8]) -> Terminal {
    let term =
        Terminal::new(TermSize::new(COLS, LINES), TermConfig { scrollback_lines: SCROLLBACK });
    feed(term.without_fast_path(), bytes)
}

fn feed(mut term: Terminal, bytes: &[u8]) -> Terminal {
    // A PTY reader hands over chunks of this size.
    for chunk in bytes.chunks(64 * 1024) {
        term.advance(chunk);
    }
    term
}

/// Five secrets a thread might be given, none of which the streams hold: the masking cost every
/// byte of a pane with secrets pays.
fn five_secrets() -> Vec<paddock::vault::SecretBytes> {
    [
        "sk-ant-api03-Zq3vR8xYt2LmN0pQwErTyUiOpAsDfGhJkL",
        "ghp_4f8Kq2LmNx9Pz7RtYw3VbC6DhJ1sG5aE0uIo",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-2048-1024-QwErTyUiOpAsDfGh",
        "postgres://app:s3cr3t-p4ss@db.internal:5432/app",
    ]
    .iter()
    .map(|v| paddock::vault::SecretBytes::new(v.as_bytes()))
    .collect()
}

/// `paddock_parse` with the pane's masker in front and the model's own check behind it, as a
/// pane with five secrets reads.
fn paddock_masked_parse(bytes: &[u8]) -> Terminal {
    masked_parse(bytes, true)
}

/// The stream masker alone, without the model's check: what each of the two costs.
fn paddock_stream_masked_parse(bytes: &[u8]) -> Terminal {
    masked_parse(bytes, false)
}

fn masked_parse(bytes: &[u8], model_check: bool) -> Terminal {
    let mut term =
        Terminal::new(TermSize::new(COLS, LINES), TermConfig { scrollback_lines: SCROLLBACK });
    if model_check {
        let counts: Arc<[AtomicU64]> = (0..5).map(|_| AtomicU64::new(0)).collect();
        let redactor = ScreenRedactor::new(&five_secrets(), counts).expect("secrets");
        term.set_redactor(Box::new(redactor));
    }
    let mut masker = Masker::new(five_secrets()).expect("secrets");
    let mut out = Vec::with_capacity(64 * 1024);
    for chunk in bytes.chunks(64 * 1024) {
        masker.feed(chunk, &mut out);
        term.advance_masked(&out);
        out.clear();
    }
    masker.flush(&mut out);
    term.advance_masked(&out);
    term
}

fn alacritty_parse(bytes: &[u8]) -> Term<NoEvents> {
    let config = Config { scrolling_history: SCROLLBACK, ..Default::default() };
    let mut term = Term::new(config, &AlacrittySize::new(COLS, LINES), NoEvents);
    let mut parser: ansi::Processor = ansi::Processor::new();
    for chunk in bytes.chunks(64 * 1024) {
        parser.advance(&mut term, chunk);
    }
    term
}

/// The parser alone, with a handler that does nothing: the floor both models stand on.
struct Discard;

impl vte::Perform for Discard {}

fn vte_floor(bytes: &[u8]) -> vte::Parser {
    let mut parser = vte::Parser::new();
    for chunk in bytes.chunks(64 * 1024) {
        parser.advance(&mut Discard, chunk);
    }
    parser
}

fn bench(c: &mut Criterion) {
    let streams: [(&str, Vec<u8>); 5] = [
        ("dense_sgr", dense_sgr()),
        ("plain_text", plain_text()),
        ("unicode", unicode()),
        ("cursor_motion", cursor_motion()),
        ("agent_tui", agent_tui()),
    ];
    for (name, bytes) in &streams {
        let mut group = c.benchmark_group(*name);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.sample_size(20);
        group.bench_function("paddock", |b| b.iter(|| black_box(paddock_parse(black_box(bytes)))));
        group.bench_function("paddock_vte_only", |b| {
            b.iter(|| black_box(paddock_vte_only_parse(black_box(bytes))))
        });
        group.bench_function("paddock_masked", |b| {
            b.iter(|| black_box(paddock_masked_parse(black_box(bytes))))
        });
        group.bench_function("paddock_stream_masked", |b| {
            b.iter(|| black_box(paddock_stream_masked_parse(black_box(bytes))))
        });
        group.bench_function("alacritty", |b| {
            b.iter(|| black_box(alacritty_parse(black_box(bytes))))
        });
        group.bench_function("vte_floor", |b| b.iter(|| black_box(vte_floor(black_box(bytes)))));
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
