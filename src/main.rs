//! The `bishops` binary: parses the command line and hands it to the library.

use std::io::{self, Write};
use std::process::ExitCode;

use bishops::Error;
use bishops::cli;
use bishops::text::say_line;

/// Run before Rust's runtime puts `/dev/null` in place of a closed stdout:
/// an answer to a closed stdout is then an error, not lost in silence.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static NOTE_STDOUT: extern "C" fn() = cli::note_stdout;

fn main() -> ExitCode {
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(e) => {
            say_line(&e.line());
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    // Interrupted, remove the temporary files being written; without the
    // handlers a run still works, it just may leave them to the next writer.
    // `serve` stops on a signal itself, letting requests in flight finish.
    let serving = matches!(cli.command, cli::Command::Serve(_));
    if !serving && let Err(e) = bishops::cleanup::install_signal_handlers() {
        say_line(&format!(
            "bishops: warning: no signal handlers ({e}); an interrupted solve may leave a temporary file"
        ));
    }
    let mut out = cli::stdout();
    let mut input = io::stdin().lock();
    let result =
        cli::run(cli, &mut input, &mut out).and_then(|()| out.flush().map_err(|e| Error::Io("stdout".into(), e)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stopped early (`| head`) is not an error.
        Err(Error::Io(_, e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            // One line whatever went into it: paths are escaped where
            // they are named, and this catches what was not.
            say_line(&e.line());
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
