//! The server-and-replica differential test: the generated streams run through a pane's model
//! (the server, whose model checks for values) and through a replica that a window would keep,
//! attached at a random point (inside an escape sequence as often as not), fed the same chunks
//! and what the server's redactor did, and attached again after every resize, as a window is.
//! After every step the two must be equal: cell by cell on screen, and byte for byte in a
//! snapshot of everything the replica holds.

use std::ops::Range;

use paddock::term::{Redactor, ReplicaEdits, TermConfig, TermSize, Terminal};

use crate::generated::{Generator, Rng};
use crate::snapshot::{of_paddock, report};

/// The values the server's model stars (the vault's redactor in a real pane).
struct Values;

const VALUES: [&[u8]; 2] = [b"SECRET", b"sk-ant-0123"];

impl Redactor for Values {
    fn find(&mut self, text: &[u8], found: &mut Vec<Range<usize>>) {
        for value in VALUES {
            let mut at = 0;
            while let Some(n) = text[at..].windows(value.len()).position(|w| w == value) {
                found.push(at + n..at + n + value.len());
                at += n + 1;
            }
        }
    }
    fn longest(&self) -> usize {
        11
    }
    fn line_ends(&self) -> usize {
        0
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

/// Ways a value reaches a screen that no single stretch of the stream shows whole.
const DRAWN: &[&str] = &[
    "\x1b[1;5HRET\x1b[1;1HSEC",
    "SECXX\x08\x08RET",
    "sk-ant-\x1b[s0123\x1b[u",
    "\x1b]2;title SECRET\x07",
    "\x1b]8;;https://h/sk-ant-0123\x07link\x1b]8;;\x07",
    "SE\x1b[1mCRET\x1b[m",
    "\x1b[?1049hSEC\x1b[3DSECRET\x1b[?1049l",
];

fn attach(server: &Terminal, rng: &mut Rng) -> Terminal {
    let rows = rng.below(40) as usize;
    let (mut replica, redacted) = Terminal::restore(&server.snapshot(rows)).expect("restores");
    assert!(redacted);
    replica.replay_checks();
    replica
}

fn check(server: &Terminal, replica: &Terminal, seed: u64, step: usize) {
    let (ours, theirs) = (of_paddock(replica), of_paddock(server));
    assert!(
        ours == theirs,
        "seed {seed} step {step}: replica / server\n{}",
        report(&ours, &theirs)
    );
    assert_eq!(replica.title(), server.title(), "seed {seed} step {step}");
    let held = replica.scrollback_len();
    let (a, b) = (replica.snapshot(held), server.snapshot(held));
    let at = a.iter().zip(&b).position(|(x, y)| x != y);
    assert!(
        at.is_none() && a.len() == b.len(),
        "seed {seed} step {step}: snapshots part at {at:?} of {}/{}: {:?} / {:?}",
        a.len(),
        b.len(),
        &a[at.unwrap_or(0).saturating_sub(40)..a.len().min(at.unwrap_or(0) + 40)],
        &b[at.unwrap_or(0).saturating_sub(40)..b.len().min(at.unwrap_or(0) + 40)]
    );
}

#[test]
fn a_replica_follows_the_server_through_generated_streams() {
    for seed in 0..60u64 {
        let mut rng = Rng::new(seed ^ 0x5eed);
        let mut ops = Generator::new(seed).ops(250);
        for _ in 0..8 {
            let at = rng.below(ops.len() as u64) as usize;
            ops.insert(at, rng.pick(DRAWN).to_owned());
        }
        let stream = ops.concat().into_bytes();
        let (cols, lines) = (12 + (seed as usize * 7) % 60, 3 + (seed as usize * 3) % 15);
        let mut server =
            Terminal::new(TermSize::new(cols, lines), TermConfig { scrollback_lines: 200 });
        server.set_redactor(Box::new(Values));
        let mut replica = None;
        let mut at = 0;
        let mut step = 0;
        while at < stream.len() {
            let end = (at + 1 + rng.below(48) as usize).min(stream.len());
            let chunk = &stream[at..end];
            at = end;
            step += 1;
            if replica.is_none() && rng.below(12) == 0 {
                replica = Some(attach(&server, &mut rng));
            }
            let masked = rng.below(2) == 0;
            if masked {
                server.advance_masked(chunk);
            } else {
                server.advance(chunk);
            }
            let edits = server.replica_edits();
            let Some(copy) = replica.as_mut() else { continue };
            let edits = ReplicaEdits::decode(&edits.encode()).expect("edits decode");
            if let Err(e) = copy.advance_replica(chunk, masked, &edits) {
                panic!("seed {seed} step {step}: {e}");
            }
            check(&server, copy, seed, step);
            if rng.below(30) == 0 {
                let size = TermSize::new(5 + rng.below(70) as usize, 2 + rng.below(20) as usize);
                server.resize(size);
                replica = Some(attach(&server, &mut rng));
                check(&server, replica.as_ref().expect("attached"), seed, step);
            }
        }
        let replica = replica.unwrap_or_else(|| attach(&server, &mut rng));
        check(&server, &replica, seed, step);
        let shown = replica.screen_text() + replica.title().unwrap_or_default();
        assert!(!shown.contains("SECRET") && !shown.contains("sk-ant-0123"), "seed {seed}");
    }
}

/// What a follower of a replica was told, as a server's windows would be sent it.
enum Told {
    Chunk { bytes: Vec<u8>, masked: bool, edits: Vec<u8> },
    Snapshot(Vec<u8>),
}

struct Relay(std::sync::Arc<std::sync::Mutex<Vec<Told>>>);

impl paddock::term::Follower for Relay {
    fn parsed(&mut self, bytes: &[u8], masked: bool, term: &Terminal) {
        let edits = term.replica_edits().encode();
        self.0.lock().unwrap().push(Told::Chunk { bytes: bytes.to_vec(), masked, edits });
    }
    fn restarted(&mut self, term: &Terminal) {
        self.0.lock().unwrap().push(Told::Snapshot(term.snapshot(term.scrollback_len())));
    }
}

/// A remote pane seen through two servers: the pane's own (which checks for values), a
/// replica on the server a link keeps (followed, as its pane's model, by that server's
/// windows), and a window's replica of that one. The window's must equal the pane's after
/// every step, starred rows included, and restarts (a resize's new snapshot) pass through.
#[test]
fn a_replica_of_a_replica_follows_the_pane() {
    for seed in 0..30u64 {
        let mut rng = Rng::new(seed ^ 0xc4a1);
        let mut ops = Generator::new(seed).ops(200);
        for _ in 0..8 {
            let at = rng.below(ops.len() as u64) as usize;
            ops.insert(at, rng.pick(DRAWN).to_owned());
        }
        let stream = ops.concat().into_bytes();
        let (cols, lines) = (12 + (seed as usize * 7) % 60, 3 + (seed as usize * 3) % 15);
        let mut pane =
            Terminal::new(TermSize::new(cols, lines), TermConfig { scrollback_lines: 200 });
        pane.set_redactor(Box::new(Values));
        let told = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut link = attach(&pane, &mut rng);
        link.set_follower(Some(Box::new(Relay(told.clone()))));
        let (mut window, _) =
            Terminal::restore(&link.snapshot(link.scrollback_len())).expect("restores");
        window.replay_checks();
        let (mut at, mut step) = (0, 0);
        while at < stream.len() {
            let end = (at + 1 + rng.below(48) as usize).min(stream.len());
            let chunk = &stream[at..end];
            (at, step) = (end, step + 1);
            let masked = rng.below(2) == 0;
            if masked {
                pane.advance_masked(chunk);
            } else {
                pane.advance(chunk);
            }
            let edits = ReplicaEdits::decode(&pane.replica_edits().encode()).expect("edits");
            link.advance_replica(chunk, masked, &edits).expect("the link's replica follows");
            if rng.below(30) == 0 {
                // A resize on the pane's server: the link is sent a fresh snapshot.
                pane.resize(TermSize::new(5 + rng.below(70) as usize, 2 + rng.below(20) as usize));
                let (fresh, _) = Terminal::restore(&pane.snapshot(40)).expect("restores");
                let mut fresh = fresh;
                fresh.replay_checks();
                link.replace_with(fresh);
            }
            for message in told.lock().unwrap().drain(..) {
                match message {
                    Told::Chunk { bytes, masked, edits } => {
                        let edits = ReplicaEdits::decode(&edits).expect("edits");
                        if let Err(e) = window.advance_replica(&bytes, masked, &edits) {
                            panic!("seed {seed} step {step}: {e}");
                        }
                    }
                    Told::Snapshot(bytes) => {
                        (window, _) = Terminal::restore(&bytes).expect("restores");
                        window.replay_checks();
                    }
                }
            }
            let (ours, theirs) = (of_paddock(&window), of_paddock(&pane));
            assert!(ours == theirs, "seed {seed} step {step}:\n{}", report(&ours, &theirs));
        }
        let shown = window.screen_text() + window.title().unwrap_or_default();
        assert!(!shown.contains("SECRET") && !shown.contains("sk-ant-0123"), "seed {seed}");
    }
}
