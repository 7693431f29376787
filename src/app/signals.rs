//! Signals as channel messages: SIGTERM, SIGINT and SIGHUP ask the instance to stop; SIGCHLD
//! says a pane's program may have ended.
//!
//! The signals are blocked in every thread (so [`SignalListener::start`] must run before any
//! other thread is spawned) and one thread takes them with `sigwait`: no handler runs inside
//! arbitrary code, and no global state is needed. SIGPIPE is blocked too, so a write to a
//! closed pipe or socket is an `EPIPE` error for the thread that made it, while its disposition
//! is reset to the default that panes' programs inherit (`yes | head` must end `yes` quietly).
//! portable-pty clears the signal mask in the child before it runs the program.

use crossbeam_channel::Receiver;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// SIGTERM, SIGINT or SIGHUP: stop the instance.
    Stop(i32),
    /// SIGCHLD: a child changed state.
    Child,
}

pub struct SignalListener {
    signals: Receiver<Signal>,
}

impl SignalListener {
    /// Block the signals in this thread (and so in every thread it spawns later) and start the
    /// thread that receives them.
    pub fn start() -> std::io::Result<SignalListener> {
        let waited = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGCHLD];
        // SAFETY: sigset_t is plain data; sigemptyset and sigaddset initialise and fill it.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe {
            libc::sigemptyset(&mut set);
            for signal in waited.iter().chain(&[libc::SIGPIPE]) {
                libc::sigaddset(&mut set, *signal);
            }
        }
        // SAFETY: a valid set; the old mask is not needed.
        let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc));
        }
        // SAFETY: setting the default disposition of SIGPIPE; it stays blocked in our threads.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
        let mut wait_set: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe {
            libc::sigemptyset(&mut wait_set);
            for signal in waited {
                libc::sigaddset(&mut wait_set, signal);
            }
        }
        let (sender, signals) = crossbeam_channel::unbounded();
        std::thread::Builder::new().name("signals".into()).spawn(move || loop {
            let mut signal = 0;
            // SAFETY: a valid, initialised set and an out-pointer.
            if unsafe { libc::sigwait(&wait_set, &mut signal) } != 0 {
                continue;
            }
            let message = match signal {
                libc::SIGCHLD => Signal::Child,
                other => Signal::Stop(other),
            };
            if sender.send(message).is_err() {
                return;
            }
        })?;
        Ok(SignalListener { signals })
    }

    pub fn receiver(&self) -> &Receiver<Signal> {
        &self.signals
    }
}
