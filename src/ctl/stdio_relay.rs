//! `paddock server --stdio`: the attach protocol carried over standard input and output.
//!
//! A paddock on another host runs `ssh -T HOST paddock server --stdio` and speaks the attach
//! protocol to it as a window speaks it to the attach socket. This side only checks who
//! listens on the socket (as a window does) and moves bytes both ways; the hellos, versions
//! and frames are the two ends' business. Either side ending ends the relay: standard input
//! closing (the connection dropped) is passed on as the socket's end of writing, so the
//! server lets the link go and its panes run on.

use std::fs::File;
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::net::Shutdown;
use std::os::fd::FromRawFd;
use std::path::Path;

use super::attach::{connect_checked, AttachError};

/// The line the relay writes before the server's first byte. What a remote login's start-up
/// files print to standard output comes before it, and the linking paddock skips that (and
/// shows it when the line never comes) instead of reading it as frames.
pub const PREAMBLE: &[u8] = b"\npaddock-stdio\n";

/// Relay standard input to the attach socket at `attach` and its answers to standard output,
/// until either side ends.
pub fn relay(attach: &Path) -> Result<(), AttachError> {
    let stream = connect_checked(attach)?;
    let to_server = stream
        .try_clone()
        .map_err(|source| AttachError::Connect { path: attach.to_owned(), source })?;
    // Plain descriptors, not `Stdin`/`Stdout`: standard output's line buffer would hold
    // frames back.
    // SAFETY: descriptors 0 and 1 are this process's for its whole life; ManuallyDrop keeps
    // them open when these go.
    let (mut input, mut output) = unsafe {
        (ManuallyDrop::new(File::from_raw_fd(0)), ManuallyDrop::new(File::from_raw_fd(1)))
    };
    let _ = output.write_all(PREAMBLE);
    std::thread::Builder::new()
        .name("stdio-to-server".into())
        .spawn(move || {
            // An error here is the connection dropping, like its end.
            let _ = pass_on(&mut *input, &mut &to_server);
            let _ = to_server.shutdown(Shutdown::Write);
        })
        .map_err(|source| AttachError::Connect { path: attach.to_owned(), source })?;
    // Ends when the server closes, or when standard output is gone (ssh's end of the
    // connection closed): either way there is no one left to relay to.
    let _ = pass_on(&mut &stream, &mut *output);
    Ok(())
}

/// Copy until the end of `from`, each read written on at once. Not `io::copy`: between a pipe
/// and a socket it splices, and a splice was seen to sit on a frame until a signal broke it.
fn pass_on(from: &mut impl Read, to: &mut impl Write) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..n])?;
    }
}
