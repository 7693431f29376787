//! What the model tells the outside world: reply bytes for the program, and events for the app.
//!
//! The model writes nowhere itself. Replies (DA, DSR, DECRQM, XTVERSION, color queries) queue
//! here for the pane's writer; events (bell, title, clipboard, notifications, prompt marks,
//! working directory) queue for the app and the activity pulse. Both queues are bounded so that
//! a hostile stream cannot grow them without limit between two drains.

/// OSC 133 semantic prompt marks, as shells with integration emit them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptMark {
    /// `A`: a prompt starts.
    PromptStart,
    /// `B`: the prompt ends and the user's command starts.
    CommandStart,
    /// `C`: the command was entered and its output starts.
    CommandExecuted,
    /// `D[;code]`: the command finished.
    CommandFinished { exit_code: Option<i32> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TermEvent {
    /// BEL outside an escape sequence.
    Bell,
    /// OSC 0/2 (or a pop from the title stack). `None` means "back to the default title".
    Title(Option<String>),
    /// OSC 52 write: put `data` on the clipboard named by `selection` (`c`, `p`, `s`, …).
    ClipboardStore { selection: String, data: Vec<u8> },
    /// OSC 52 write whose payload holds one of the pane's secrets: not carried out.
    ClipboardWithheld { selection: String },
    /// OSC 52 read request. Never answered by the model: the app may ask the user.
    ClipboardLoadRequest { selection: String },
    /// OSC 9, OSC 777;notify, OSC 99 desktop notifications.
    Notification { title: Option<String>, body: String },
    /// OSC 133 prompt marks.
    Prompt(PromptMark),
    /// OSC 7: the program's working directory (a path, percent-decoded).
    WorkingDirectory(String),
}

/// Most reply bytes kept between drains; later replies are dropped (and counted).
const MAX_REPLY_BYTES: usize = 64 * 1024;
/// Most events kept between drains.
const MAX_EVENTS: usize = 1024;

/// Running counts of what asks for a person, kept apart from the event queue (which the app
/// drains) so that the activity pulse can read them at any time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signals {
    /// BELs outside escape sequences.
    pub bells: u64,
    /// Desktop notifications (OSC 9, 777, 99), and the latest one's text.
    pub notifications: u64,
    pub last_notification: Option<String>,
    /// Times a shell came back to its prompt after a command (OSC 133 `D`, or `A` after `C`).
    pub prompts: u64,
    /// A command was entered (`C`) and its prompt has not come back yet.
    command_running: bool,
}

#[derive(Debug, Default)]
pub struct Outbox {
    replies: Vec<u8>,
    events: Vec<TermEvent>,
    dropped: u64,
    signals: Signals,
}

impl Outbox {
    pub fn reply(&mut self, bytes: &[u8]) {
        if self.replies.len() + bytes.len() <= MAX_REPLY_BYTES {
            self.replies.extend_from_slice(bytes);
        } else {
            self.dropped += 1;
        }
    }

    pub fn event(&mut self, event: TermEvent) {
        let signals = &mut self.signals;
        match &event {
            TermEvent::Bell => signals.bells += 1,
            TermEvent::Notification { title, body } => {
                signals.notifications += 1;
                let text = match title {
                    Some(title) if !body.is_empty() => format!("{title}: {body}"),
                    Some(title) => title.clone(),
                    None => body.clone(),
                };
                signals.last_notification = Some(text);
            }
            TermEvent::Prompt(PromptMark::CommandExecuted) => signals.command_running = true,
            TermEvent::Prompt(PromptMark::CommandFinished { .. } | PromptMark::PromptStart)
                if signals.command_running =>
            {
                signals.command_running = false;
                signals.prompts += 1;
            }
            _ => {}
        }
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        } else {
            self.dropped += 1;
        }
    }

    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.replies)
    }

    pub fn take_events(&mut self) -> Vec<TermEvent> {
        std::mem::take(&mut self.events)
    }

    pub fn signals(&self) -> &Signals {
        &self.signals
    }

    /// Replies and events dropped because a queue was full, since the terminal started.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}
