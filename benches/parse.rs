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

#[path = "common/streams.rs"]
mod streams;

use streams::{COLS, LINES};
const SCROLLBACK: usize = 10_000;

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
    let streams = streams::all();
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
