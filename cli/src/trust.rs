//! How far `tern resume` trusts a state file: as far as its owner. The file names the
//! server to reach, and for a stdio target the command to run, so a file someone else
//! owns or can write is refused, and the command it names is shown, then run only with
//! `--yes` or the user's yes on the terminal.
//!
//! Both refusals exit 2, as a usage error does: nothing was sent to any server (3 is for
//! what a server or the connection did), and the user fixes it on their side: the file's
//! owner or mode, or a `--yes`, like an answer that was missing.

use std::io::IsTerminal as _;
use std::path::Path;

use console::Term;
use dialoguer::Confirm;
use dialoguer::theme::SimpleTheme;

use crate::connect::Target;
use crate::error::{CliError, Result};
use crate::safe;

/// The text of the state file at `path`, read only when it is the user's own and nobody
/// else can write it. The checks look at the file opened, not at the path again, so
/// the file cannot be swapped between the check and the read.
pub(crate) fn read_own(path: &Path) -> Result<String> {
    let failed = |source| CliError::File {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(failed)?;
    #[cfg(unix)]
    check_owner_and_mode(path, &file.metadata().map_err(failed)?)?;
    crate::files::read_text_from(file, crate::files::MAX_FILE_BYTES).map_err(failed)
}

/// Refuses a file of another user, or one its group or everyone can write: whoever can
/// write it chooses what `tern resume` runs.
#[cfg(unix)]
fn check_owner_and_mode(path: &Path, metadata: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::MetadataExt as _;
    let me = nix::unistd::geteuid().as_raw();
    let shown = safe::line(&path.display().to_string()).into_owned();
    if metadata.uid() != me {
        return Err(CliError::usage(format!(
            "{shown}: the state file belongs to uid {}, not to you (uid {me}), and it names \
             the server tern reaches or the command it runs; tern resumes only a file of \
             your own. If you trust what it holds, make it yours: chown {me} {shown}",
            metadata.uid()
        )));
    }
    let mode = metadata.mode();
    let writers = match (mode & 0o020 != 0, mode & 0o002 != 0) {
        (false, false) => return Ok(()),
        (true, false) => "its group",
        (false, true) => "everyone",
        (true, true) => "its group and everyone",
    };
    Err(CliError::usage(format!(
        "{shown}: the state file can be written by {writers} (mode {:03o}), and whoever \
         writes it chooses the server tern reaches or the command it runs. Make it yours \
         alone: chmod 600 {shown}",
        mode & 0o777
    )))
}

/// Before `tern resume` starts the server a state file names: a command (not a URL) is
/// shown on stderr, then run only with `yes` (`--yes`) or the user's yes on the
/// terminal (the default is no); without a terminal, refused.
/// A URL target is shown when a credential (`--token`, `--oauth`) is to be sent to it:
/// the file, not the command line, chose where it goes.
pub(crate) fn confirm_command(
    path: &Path,
    target: &str,
    yes: bool,
    credential: Option<&str>,
) -> Result<()> {
    let Target::Command(words) = Target::parse(target)? else {
        if let Some(credential) = credential {
            let file = safe::line(&path.display().to_string()).into_owned();
            eprintln!(
                "{file} resumes against {}; {credential} is sent there",
                safe::line(target)
            );
        }
        return Ok(());
    };
    // The words as they will run, quoted where a word needs it: the word boundaries are
    // what the program sees.
    let command =
        shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| target.to_owned());
    let file = safe::line(&path.display().to_string()).into_owned();
    eprintln!(
        "{file} starts its server with this command:\n  {}",
        safe::line(&command)
    );
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(CliError::usage(format!(
            "{file}: not resumed: the command it names runs only when confirmed, and stdin \
             is not a terminal to ask on; give --yes if you trust it"
        )));
    }
    let run = crate::form::prompting(|| {
        Confirm::with_theme(&SimpleTheme)
            .with_prompt("Run it?")
            .default(false)
            .interact_on(&Term::stderr())
            .map_err(CliError::from)
    })?;
    if run {
        Ok(())
    } else {
        Err(CliError::usage(format!(
            "{file}: not resumed: the command was not confirmed"
        )))
    }
}
