//! `tern` on a pseudo-terminal: keys sent, the screen read back through a terminal
//! emulator, so a snapshot shows what a person would see.
// Each test binary that includes this uses a part of it.
#![allow(dead_code)]

use std::process::Command;
use std::time::Duration;

use expectrl::{Eof, Expect as _, Session};

const ROWS: u16 = 40;
const COLS: u16 = 100;

/// Keys, as a terminal sends them.
pub(crate) const ENTER: &str = "\r";
pub(crate) const DOWN: &str = "\x1b[B";
pub(crate) const SPACE: &str = " ";

/// A `tern` run on a terminal of its own.
pub(crate) struct Terminal {
    session: expectrl::session::OsSession,
    seen: Vec<u8>,
}

impl Terminal {
    /// Starts `tern args` on a 100x40 terminal.
    pub(crate) fn tern(args: &[&str]) -> Self {
        let mut command = Command::new(crate::common::tern_bin());
        command.args(args);
        Self::spawn(command)
    }

    /// Starts `command` (tern, with its arguments and directory) on a 100x40 terminal.
    pub(crate) fn spawn(mut command: Command) -> Self {
        command.env("NO_COLOR", "1").env_remove("TERN_LOG");
        let mut session = Session::spawn(command).expect("tern starts on a pty");
        session
            .get_process_mut()
            .set_window_size(COLS, ROWS)
            .expect("the window is sized");
        // The prompts put the terminal in raw mode for each key and back after it; a key
        // that arrives in between must not be edited or echoed by the line discipline
        // (a backspace would erase nothing and be lost). So the terminal's own mode is
        // non-canonical without echo: the screen shows what tern draws, nothing else.
        quiet(&session);
        session.set_expect_timeout(Some(Duration::from_secs(60)));
        Self {
            session,
            seen: Vec::new(),
        }
    }

    /// Waits until tern has written `text`.
    pub(crate) fn expect(&mut self, text: &str) -> &mut Self {
        let found = self
            .session
            .expect(text)
            .unwrap_or_else(|e| panic!("waiting for {text:?}: {e}\nscreen:\n{}", self.screen()));
        self.seen.extend_from_slice(found.as_bytes());
        self
    }

    /// Types `keys`.
    pub(crate) fn send(&mut self, keys: &str) -> &mut Self {
        self.session.send(keys).expect("keys sent");
        self
    }

    /// Waits for tern to exit; its exit code and the final screen.
    pub(crate) fn finish(self) -> (i32, String) {
        let (code, screen, _) = self.finish_raw();
        (code, screen)
    }

    /// Waits for tern to exit; its exit code, the final screen and every byte it wrote.
    pub(crate) fn finish_raw(mut self) -> (i32, String, Vec<u8>) {
        let rest = self.session.expect(Eof).expect("tern exits");
        self.seen.extend_from_slice(rest.as_bytes());
        let status = format!("{:?}", self.session.get_process().wait());
        let code = status
            .rsplit(", ")
            .next()
            .and_then(|s| s.trim_end_matches(')').parse().ok())
            .unwrap_or(-1);
        (code, self.screen(), self.seen)
    }

    /// The screen as a terminal shows it now, trailing blanks trimmed.
    pub(crate) fn screen(&self) -> String {
        let mut parser = vt100::Parser::new(ROWS, COLS, 0);
        parser.process(&self.seen);
        let contents = parser.screen().contents();
        let lines: Vec<&str> = contents.lines().map(str::trim_end).collect();
        lines.join("\n").trim().to_owned()
    }
}

fn quiet(session: &expectrl::session::OsSession) {
    use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
    use std::os::fd::AsRawFd as _;
    let master = session
        .get_process()
        .get_raw_handle()
        .expect("the pty's handle");
    let mut termios = tcgetattr(master.as_raw_fd()).expect("the pty's mode");
    termios
        .local_flags
        .remove(LocalFlags::ICANON | LocalFlags::ECHO);
    tcsetattr(master.as_raw_fd(), SetArg::TCSANOW, &termios).expect("the pty's mode set");
}
