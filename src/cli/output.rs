//! How commands write: to stdout, JSON documents, optional numbers,
//! progress bars.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::remoteness::Remoteness;

/// The error of a failed write to the command's output.
pub fn stdout_error(e: io::Error) -> Error {
    Error::Io(PathBuf::from("stdout"), e)
}

/// Whether stdout (descriptor 1) was closed when the process started, as
/// [`note_stdout`] saw it.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Notes whether stdout is closed, for [`stdout`] to refuse writes to it.
///
/// The binary runs this before Rust's runtime starts, from `.init_array`:
/// the runtime puts `/dev/null` in place of a closed descriptor 1, after
/// which an answer written there vanishes without an error, so only a look
/// before it can tell `>&-` from `> /dev/null`.
pub extern "C" fn note_stdout() {
    // SAFETY: F_GETFD reads the flags of a descriptor number, open or not.
    if unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) } == -1 {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// The process's stdout, where the binary has commands write their
/// answers: every write fails when stdout was closed at the start
/// ([`note_stdout`]), and otherwise fails as the system says (a full disk,
/// a reader that is gone). A failed write is an error of the command
/// (`stdout_error`); the binary ends a command whose reader stopped
/// reading (`| head`) quietly.
pub struct Stdout {
    out: io::StdoutLock<'static>,
    closed: bool,
}

/// The process's [`Stdout`].
pub fn stdout() -> Stdout {
    Stdout {
        out: io::stdout().lock(),
        closed: STDOUT_CLOSED.load(Ordering::Relaxed),
    }
}

impl Stdout {
    /// The error of a write to a stdout that was closed.
    fn closed() -> io::Error {
        io::Error::other("it is closed, so the answer cannot be written")
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Err(Stdout::closed());
        }
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Writes `text` to the command's output.
pub fn write_text(out: &mut dyn Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes()).map_err(stdout_error)
}

/// Writes `value` as one pretty JSON document and a newline.
pub fn write_json(out: &mut dyn Write, value: &impl Serialize) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(|e| stdout_error(e.into()))?;
    writeln!(out).map_err(stdout_error)
}

/// For a log line of long work: `, about N min left` at the rate so far
/// when `done` of `total` is at least a percent, else nothing (too early
/// for an estimate worth reading).
pub fn time_left(elapsed_seconds: f64, done: u64, total: u64) -> String {
    if done > 0 && done.saturating_mul(100) >= total {
        left(elapsed_seconds / done as f64 * total.saturating_sub(done) as f64)
    } else {
        String::new()
    }
}

/// `, about N min left`, or `, about N s left` under a minute, or `, under
/// a second left`, for an estimate of `seconds`.
pub fn left(seconds: f64) -> String {
    if seconds < 1.0 {
        ", under a second left".to_owned()
    } else if seconds < 60.0 {
        format!(", about {seconds:.0} s left")
    } else {
        format!(", about {:.0} min left", seconds / 60.0)
    }
}

/// `rows` (the header first) as aligned columns, each as wide as its widest
/// cell, however large the numbers: a column marked in `right` aligned to
/// the right, the others to the left, two spaces between, and the last
/// one unpadded.
pub fn columns(rows: &[Vec<String>], right: &[bool]) -> String {
    let count = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..count)
        .map(|k| {
            rows.iter()
                .filter_map(|r| r.get(k))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for row in rows {
        let mut line = String::new();
        for (k, cell) in row.iter().enumerate() {
            if k > 0 {
                line.push_str("  ");
            }
            let width = if k + 1 == row.len() { 0 } else { widths[k] };
            if right.get(k).copied().unwrap_or(false) {
                line += &format!("{cell:>width$}");
            } else {
                line += &format!("{cell:<width$}");
            }
        }
        text += line.trim_end();
        text.push('\n');
    }
    text
}

/// A number, or `-` when there is none.
pub fn shown(value: Option<impl ToString>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// A remoteness, or `-` when unreachable.
pub fn show(remoteness: Option<Remoteness>) -> String {
    shown(remoteness)
}

/// A progress bar on stderr, drawn only when stderr is a terminal.
pub fn progress_bar(len: Option<u64>) -> ProgressBar {
    let bar = match len {
        Some(len) => ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr()).with_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        ),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
            .with_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template")),
    };
    if !io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_stdout_takes_nothing() {
        let mut out = Stdout {
            out: io::stdout().lock(),
            closed: true,
        };
        let e = write_text(&mut out, "answer\n").unwrap_err();
        assert_eq!(e.to_string(), "stdout: it is closed, so the answer cannot be written");
        assert!(out.flush().is_ok(), "nothing was taken to flush");
    }

    #[test]
    fn columns_stay_aligned_for_the_largest_numbers() {
        let rows: Vec<Vec<String>> = [
            ["variant", "legal (board)", "start"],
            ["5x4", "100", "5_4_a1-a3_e1-e3"],
            ["12x10", "1745937339612467287401", "12_10_…"],
        ]
        .iter()
        .map(|r| r.map(str::to_owned).to_vec())
        .collect();
        let text = columns(&rows, &[false, true, false]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "5x4                         100  5_4_a1-a3_e1-e3");
        assert_eq!(lines[2], "12x10    1745937339612467287401  12_10_…");
        // Each number ends where its header does.
        let end = |line: &str, word: &str| line.find(word).unwrap() + word.len();
        assert_eq!(end(lines[0], "(board)"), end(lines[1], "100"));
        assert_eq!(end(lines[0], "(board)"), end(lines[2], "401"));
    }

    #[test]
    fn the_time_left_is_told_in_seconds_under_a_minute() {
        assert_eq!(left(301.0), ", about 5 min left");
        assert_eq!(left(42.4), ", about 42 s left");
        assert_eq!(left(0.3), ", under a second left");
        assert_eq!(time_left(30.0, 50, 100), ", about 30 s left");
    }
}
