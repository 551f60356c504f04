//! The exit codes, in one place: the crate docs and `--help` list the same.

/// The command did what it was asked.
pub(crate) const DONE: u8 = 0;
/// The tool ran and reported an error (`isError: true`); its content is printed.
pub(crate) const TOOL_ERROR: u8 = 1;
/// The command line was wrong (a bad flag value, a file it names that cannot be read or
/// written, an argument the tool's schema does not take, a TARGET that is an address
/// without its scheme), or a question had no answer and no terminal to ask on, or the
/// user pressed Ctrl-C at a prompt, or `tern resume` would not trust its file (another
/// user's, writable by others, or a command not confirmed): no answer was sent, and the
/// fix is on the user's side.
pub(crate) const USAGE: u8 = 2;
/// The server refused or failed the request (a JSON-RPC error, a protocol or
/// transport failure, a rejected `requestState`).
pub(crate) const FAILED: u8 = 3;
/// `--state-file`: the call stopped at questions and was saved; `tern resume` goes on.
pub(crate) const PAUSED: u8 = 4;

/// Ctrl-C while waiting on the server (not at a prompt): what a shell reports for a
/// process SIGINT ended.
pub(crate) const INTERRUPTED: u8 = 130;

/// The same, for `--help` (a macro: clap's help texts are joined with `concat!`).
macro_rules! exit_help {
    () => {
        "\
Exit codes:
  0  done
  1  the tool reported an error (isError: true); its content is printed
  2  usage error (a bad flag value, an unreadable file, an argument the tool does
     not take), or a question had no answer and stdin is not a terminal, or
     Ctrl-C at a prompt (no answer sent), or resume refused its state file or
     the command it names was not confirmed
  3  the server refused or failed the request (JSON-RPC error, protocol or
     connection failure, rejected requestState)
  4  paused: --state-file written; continue with `tern resume FILE`
  130  interrupted (Ctrl-C) while waiting on the server"
    };
}
pub(crate) use exit_help;
