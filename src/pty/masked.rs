//! The reader of a pane whose program was given secrets: its output passes through the
//! pane's [`Masker`] before the model sees it. A second thread does the blocking reads, so
//! that a tail held back as a possible value can be passed on when nothing follows in time.

use std::io::Read;
use std::sync::atomic::Ordering;

use crossbeam_channel::RecvTimeoutError;
use zeroize::{Zeroize, Zeroizing};

use super::session::{read_chunk, MaskCounts, Output};
use crate::vault::mask::{Masker, HOLD_DEADLINE};

/// Chunks read and not yet masked: a few, so that the reads run ahead of the parsing.
const READ_AHEAD: usize = 4;
const CHUNK: usize = 64 * 1024;

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
        for (count, now) in counts.iter().zip(masker.counts()) {
            count.store(*now, Ordering::Relaxed);
        }
        if !out.is_empty() {
            output.deliver(&out);
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
