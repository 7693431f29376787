//! A pane's reader: the program's output into the pane's model, whose replies go back to the
//! program. A pane whose program was given secrets reads through the pane's [`Masker`] first:
//! a second thread does the blocking reads, so that a tail held back as a possible value can
//! be passed on when nothing follows in time.

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{RecvTimeoutError, Sender};
use zeroize::{Zeroize, Zeroizing};

use super::session::MaskCounts;
use crate::pulse::Activity;
use crate::term::Terminal;
use crate::vault::mask::{Masker, HOLD_DEADLINE};

/// Chunks read and not yet masked: a few, so that the reads run ahead of the parsing.
const READ_AHEAD: usize = 4;
/// The most bytes read at once.
const CHUNK: usize = 64 * 1024;

/// The way back to the program for the model's replies: the pane's input queue, counted.
pub(super) struct Replies {
    pub queue: Sender<Vec<u8>>,
    pub queued_bytes: Arc<AtomicUsize>,
}

/// Where a pane's output goes: its model, which may answer the program, and whoever draws it.
pub(super) struct Output<'a> {
    pub term: &'a Mutex<Terminal>,
    pub replies: &'a Replies,
    pub wake: &'a (dyn Fn() + Send + Sync),
    pub activity: &'a Activity,
}

impl Output<'_> {
    /// Parse `bytes` into the model, send its answers back, and wake the drawer.
    pub fn deliver(&self, bytes: &[u8]) {
        self.deliver_chunk(bytes, false);
    }

    /// [`Output::deliver`] for one output of the pane's masker (`Terminal::advance_masked`).
    pub fn deliver_masked(&self, bytes: &[u8]) {
        self.deliver_chunk(bytes, true);
    }

    fn deliver_chunk(&self, bytes: &[u8], masked: bool) {
        let answer = {
            // A panic elsewhere while holding it leaves a model consistent between chunks.
            let mut term = self.term.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if masked {
                term.advance_masked(bytes);
            } else {
                term.advance(bytes);
            }
            self.activity.output(bytes.len(), term.signals());
            term.take_replies()
        };
        if !answer.is_empty() {
            // A program that asks and does not read its answers loses them, not the pane.
            let len = answer.len();
            self.replies.queued_bytes.fetch_add(len, Ordering::SeqCst);
            if self.replies.queue.try_send(answer).is_err() {
                self.replies.queued_bytes.fetch_sub(len, Ordering::SeqCst);
            }
        }
        (self.wake)();
    }
}

/// The next chunk of the program's output: how many bytes, `None` once it has ended.
pub(super) fn read_chunk(reader: &mut dyn Read, buf: &mut [u8]) -> Option<usize> {
    loop {
        match reader.read(buf) {
            Ok(0) => return None,
            Ok(n) => return Some(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        }
    }
}

pub(super) fn read_output(mut reader: Box<dyn Read + Send>, output: &Output<'_>) {
    let mut buf = vec![0u8; CHUNK];
    while let Some(n) = read_chunk(&mut *reader, &mut buf) {
        output.deliver(&buf[..n]);
    }
    output.activity.ended();
    (output.wake)();
}

pub(super) fn read_masked(
    mut reader: Box<dyn Read + Send>,
    pane: u32,
    mut masker: Masker,
    counts: &MaskCounts,
    output: &Output<'_>,
) {
    let (chunks, read) = crossbeam_channel::bounded::<Zeroizing<Vec<u8>>>(READ_AHEAD);
    let reading = std::thread::Builder::new().name(format!("pane-{pane}-read")).spawn(move || {
        let mut buf = Zeroizing::new(vec![0u8; CHUNK]);
        while let Some(n) = read_chunk(&mut *reader, &mut buf) {
            if chunks.send(Zeroizing::new(buf[..n].to_vec())).is_err() {
                break;
            }
        }
    });
    if reading.is_err() {
        // No thread, no output: the pane shows its program ended (it will, at the hangup).
        output.activity.ended();
        (output.wake)();
        return;
    }
    let mut out = Vec::with_capacity(CHUNK);
    let mut counted = vec![0u64; masker.counts().len()];
    loop {
        let next = if masker.holding() {
            read.recv_timeout(HOLD_DEADLINE)
        } else {
            read.recv().map_err(|_| RecvTimeoutError::Disconnected)
        };
        let ended = match next {
            Ok(chunk) => {
                masker.feed(&chunk, &mut out);
                false
            }
            Err(RecvTimeoutError::Timeout) => {
                masker.flush(&mut out);
                false
            }
            Err(RecvTimeoutError::Disconnected) => {
                masker.flush(&mut out);
                true
            }
        };
        // The model's own check adds to the same counts (`ScreenRedactor`): add, not set.
        for ((count, now), before) in counts.iter().zip(masker.counts()).zip(&mut counted) {
            count.fetch_add(now - *before, Ordering::Relaxed);
            *before = *now;
        }
        if !out.is_empty() {
            output.deliver_masked(&out);
        }
        // What was passed on may hold the start of a value flushed unmasked; wipe it too.
        out.zeroize();
        out.clear();
        if ended {
            break;
        }
    }
    output.activity.ended();
    (output.wake)();
}
