//! `paddock replay` beside a program that feeds the same bytes to alacritty_terminal 0.26 (as
//! Alacritty drives it) and one that feeds them to vte's parser alone: whole processes, from
//! start to exit, each reading a 16 MiB file of one of the five generated streams
//! (`common/streams.rs`) into a 200x50 screen with a 10,000-line scrollback, in alternating
//! rounds on the same machine; medians. `cargo xtask bench-replay` runs it.
//!
//! The two feeders are this program again (`--feed alacritty|vte FILE`), so all three read
//! the same file the same way and differ only in what parses it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use alacritty_terminal::event::{Event, EventListener};
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::test::TermSize as AlacrittySize;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi;

#[path = "common/streams.rs"]
mod streams;

use streams::{COLS, LINES};

const SCROLLBACK: usize = 10_000;
const FILE_BYTES: usize = 16 << 20;
const ROUNDS: usize = 5;
const CHUNK: usize = 64 << 10;

#[derive(Clone, Copy)]
struct NoEvents;

impl EventListener for NoEvents {
    fn send_event(&self, _event: Event) {}
}

struct Discard;

impl vte::Perform for Discard {}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, peer, file] = &args[..] {
        if flag == "--feed" {
            return feed(peer, Path::new(file));
        }
    }
    // `cargo bench` passes `--bench`; anything else is not for this program.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-replay");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let files: Vec<(&str, PathBuf)> = streams::all()
        .into_iter()
        .map(|(name, bytes)| {
            let path = dir.join(format!("{name}.bin"));
            let mut data = Vec::with_capacity(FILE_BYTES + bytes.len());
            while data.len() < FILE_BYTES {
                data.extend_from_slice(&bytes);
            }
            data.truncate(FILE_BYTES);
            std::fs::write(&path, &data).expect("stream file");
            (name, path)
        })
        .collect();
    let paddock = env!("CARGO_BIN_EXE_paddock");
    let me = std::env::current_exe().expect("this program");
    let size = format!("{COLS}x{LINES}");
    let scrollback = SCROLLBACK.to_string();
    let mut times: Vec<[Vec<Duration>; 3]> = files.iter().map(|_| Default::default()).collect();
    for _ in 0..ROUNDS {
        for ((_, path), times) in files.iter().zip(&mut times) {
            let file = path.to_str().expect("path");
            times[0].push(run(Command::new(paddock).args([
                "replay",
                file,
                "--size",
                &size,
                "--scrollback",
                &scrollback,
            ])));
            times[1].push(run(Command::new(&me).args(["--feed", "alacritty", file])));
            times[2].push(run(Command::new(&me).args(["--feed", "vte", file])));
        }
    }
    println!(
        "| stream (16 MiB) | paddock replay MiB/s | alacritty_terminal MiB/s | ratio | vte alone MiB/s |"
    );
    println!("| --- | ---: | ---: | ---: | ---: |");
    let mib = FILE_BYTES as f64 / (1024.0 * 1024.0);
    for ((name, _), times) in files.iter().zip(&mut times) {
        let [ours, theirs, floor] = times.each_mut().map(|t| mib / median(t).as_secs_f64());
        println!("| {name} | {ours:.1} | {theirs:.1} | {:.2}x | {floor:.1} |", ours / theirs);
    }
    println!("(medians of {ROUNDS} alternating runs of each, whole processes)");
}

fn run(command: &mut Command) -> Duration {
    let start = Instant::now();
    let status = command.stdout(Stdio::null()).status().expect("start");
    let took = start.elapsed();
    assert!(status.success(), "{command:?}: {status}");
    took
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The feeders: the file in 64 KiB pieces, as a PTY reader hands them over.
fn feed(peer: &str, file: &Path) {
    let bytes = std::fs::read(file).expect("stream file");
    match peer {
        "alacritty" => {
            let config = Config { scrolling_history: SCROLLBACK, ..Default::default() };
            let mut term = Term::new(config, &AlacrittySize::new(COLS, LINES), NoEvents);
            let mut parser: ansi::Processor = ansi::Processor::new();
            for chunk in bytes.chunks(CHUNK) {
                parser.advance(&mut term, chunk);
            }
            // Something of the result, so that none of the work can be left out.
            println!("{}", term.grid().total_lines());
        }
        _ => {
            let mut parser = vte::Parser::new();
            for chunk in bytes.chunks(CHUNK) {
                parser.advance(&mut Discard, chunk);
            }
            println!("{}", std::hint::black_box(&parser) as *const _ as usize % 2);
        }
    }
}
