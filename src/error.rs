//! The errors users see.

use std::fmt;
use std::path::PathBuf;

use crate::position::PositionError;

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, each with what to do next.
///
/// Every message is one line: every path in it, in a field or in a
/// variant's text, is shown by [`text::path`](crate::text::path), whatever
/// its characters. [`Error::exit_code`] is 2 for bad input (a
/// position, a variant name, an option), 3 for a solve stopped on purpose
/// with its work saved ([`Error::Stopped`]), and 1 for everything else.
#[derive(Debug)]
pub enum Error {
    /// A position string was refused.
    Position(PositionError),
    /// No variant has this name.
    UnknownVariant(String),
    /// Several variant files fit a position: (position, candidate names).
    AmbiguousVariant(String, String),
    /// A variant cannot be built (bad file, no standard start).
    Variant(String),
    /// Bad command-line input that clap cannot see (a conflicting option).
    Usage(String),
    /// A move of a sequence is malformed or not legal in its position.
    IllegalMove {
        /// The 1-based number of the move in its sequence.
        number: usize,
        /// The move as written (clipped when long).
        mv: String,
        /// Why it is refused.
        reason: String,
    },
    /// The variant's database does not exist.
    NotSolved {
        /// The variant.
        variant: String,
        /// Where the database was looked for.
        path: PathBuf,
        /// Why it was not solved on demand, when it was asked for and refused.
        why: Option<String>,
    },
    /// Another process holds the variant's write lock (it is solving it),
    /// and the caller chose not to wait: try again later.
    Busy(String),
    /// The database directory cannot be used as given: it is a file, the
    /// database file in it is a directory, or it cannot be written. The
    /// message names the path and what to do.
    DbPath(String),
    /// The variant is too large to solve as asked.
    TooLarge(String),
    /// A result disagrees with what was known or expected; nothing was written.
    Mismatch(String),
    /// Residues being written as frames that no search leaves: they cannot
    /// be resolved to exact values, or resolve to other counts than the
    /// search's (the text says how, after "has"). Nothing was written; the
    /// writer names the table ([`Error::Mismatch`] for a search's,
    /// [`Error::Corrupt`] for a file's).
    Unresolved(String),
    /// A solve stopped on purpose before the end (asked by `SIGUSR1`, or
    /// a test hook), its search saved in a checkpoint or a mark: not a
    /// failure, and the same command goes on from it. Exit status 3, so a
    /// script can tell it from one.
    Stopped(String),
    /// A database exists but cannot be trusted.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
        /// The variant, to name the command that rebuilds it.
        variant: String,
    },
    /// The workers of a partitioned search could not exchange their
    /// messages: a worker stopped, or a stream did not decode.
    Exchange(String),
    /// SQLite failed while reading or writing a file.
    Sqlite(PathBuf, rusqlite::Error),
    /// The file system failed.
    Io(PathBuf, std::io::Error),
}

impl Error {
    /// [`Error::Busy`] for `variant`, whose write lock another process
    /// holds while it solves it.
    pub(crate) fn solving_elsewhere(variant: &str) -> Error {
        Error::Busy(format!(
            "variant {variant} is being solved by another process: try again when it is done"
        ))
    }

    /// The process exit status for this error: 2 for bad input, 3 for a
    /// solve stopped on purpose with its work saved, 1 otherwise.
    ///
    /// ```
    /// use bishops::Error;
    ///
    /// assert_eq!(Error::Usage("two layouts".into()).exit_code(), 2);
    /// assert_eq!(Error::Stopped("stopped after layer 3".into()).exit_code(), 3);
    /// assert_eq!(Error::Mismatch("counts differ".into()).exit_code(), 1);
    /// ```
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Stopped(_) => 3,
            Error::Position(_)
            | Error::UnknownVariant(_)
            | Error::AmbiguousVariant(..)
            | Error::Variant(_)
            | Error::Usage(_)
            | Error::DbPath(_)
            | Error::IllegalMove { .. } => 2,
            _ => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Position(e) => e.fmt(f),
            Error::Variant(e)
            | Error::Usage(e)
            | Error::DbPath(e)
            | Error::TooLarge(e)
            | Error::Mismatch(e)
            | Error::Stopped(e)
            | Error::Busy(e)
            | Error::Exchange(e) => f.write_str(e),
            Error::IllegalMove { number, mv, reason } => write!(f, "move {number} `{mv}` is refused: {reason}"),
            Error::UnknownVariant(name) => {
                write!(
                    f,
                    "unknown variant `{}`: see `bishops variants`, or name a standard one like `9x6-a1`, `9x6-a2`, `9x6-full`",
                    crate::text::clip(name, 40)
                )
            }
            Error::AmbiguousVariant(position, names) => {
                write!(
                    f,
                    "position `{position}` fits several variants ({names}): choose one with --variant"
                )
            }
            Error::NotSolved { variant, path, why } => {
                write!(
                    f,
                    "variant {variant} is not solved (no {}): run `bishops solve {variant}`",
                    crate::text::path(path)
                )?;
                match why {
                    Some(why) => write!(f, " ({why})"),
                    None => Ok(()),
                }
            }
            Error::Corrupt { path, problem, variant } => write!(
                f,
                "database {} {problem}; it is not trusted: `bishops check {variant}` proves or refutes it, `bishops solve {variant} --force` rebuilds it",
                crate::text::path(path)
            ),
            Error::Unresolved(problem) => write!(f, "the table being written {problem}; nothing written"),
            Error::Sqlite(path, e) => write!(f, "{}: {e}", crate::text::path(path)),
            Error::Io(path, e) => write!(f, "{}: {e}", crate::text::path(path)),
        }
    }
}

impl Error {
    /// The one line the binary prints for this error on stderr:
    /// `bishops: error: …`, or `bishops: stopped …` for a stop asked for,
    /// which is not a failure.
    ///
    /// ```
    /// use bishops::Error;
    ///
    /// assert_eq!(Error::Usage("two layouts".into()).line(), "bishops: error: two layouts");
    /// assert_eq!(Error::Stopped("stopped after layer 3".into()).line(), "bishops: stopped after layer 3");
    /// ```
    pub fn line(&self) -> String {
        let message = crate::text::one_line(&self.to_string());
        match self {
            Error::Stopped(_) => format!("bishops: {message}"),
            _ => format!("bishops: error: {message}"),
        }
    }

    /// Whether the fault is the caller's (bad input) rather than this
    /// machine's: what a server answers 4xx rather than 5xx. A database
    /// directory that cannot be used is the user's to fix on the command
    /// line, but a server's own fault.
    pub fn is_bad_input(&self) -> bool {
        self.exit_code() == 2 && !matches!(self, Error::DbPath(_))
    }

    /// The message for someone who is not on this machine, such as a web
    /// client: the same one line, with no path of this machine in it. What
    /// only the operator can act on (a file system error, a database
    /// directory that cannot be used) says so and no more; the full
    /// message belongs in the operator's log.
    pub fn public_message(&self) -> String {
        match self {
            Error::NotSolved { variant, why, .. } => {
                let why = why.as_ref().map_or(String::new(), |w| format!(" ({w})"));
                format!("variant {variant} is not solved: run `bishops solve {variant}`{why}")
            }
            Error::Corrupt { problem, variant, .. } => format!(
                "the database of {variant} {problem}; it is not trusted: `bishops check {variant}` proves or refutes it, `bishops solve {variant} --force` rebuilds it"
            ),
            // The file's name is the client's business, its directory not.
            Error::DbPath(message) => without_directories(message),
            Error::Sqlite(..) | Error::Io(..) => {
                "the server could not read or write a file: see the server's log".into()
            }
            _ => self.to_string(),
        }
    }
}

/// `message` with each path quoted in backticks cut to its last part.
fn without_directories(message: &str) -> String {
    let mut out = String::new();
    for (i, piece) in message.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        // Odd pieces are inside backticks.
        match std::path::Path::new(piece).file_name() {
            Some(name) if i % 2 == 1 && piece.contains('/') => out.push_str(&name.to_string_lossy()),
            _ => out.push_str(piece),
        }
    }
    out
}

impl std::error::Error for Error {}

impl From<PositionError> for Error {
    fn from(e: PositionError) -> Error {
        Error::Position(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_messages_name_no_directory() {
        let e = Error::DbPath(
            "`/srv/data/db/5x4.sqlite` is a directory where the database of 5x4 belongs: run `bishops solve 5x4`"
                .into(),
        );
        assert_eq!(
            e.public_message(),
            "`5x4.sqlite` is a directory where the database of 5x4 belongs: run `bishops solve 5x4`"
        );
        let e = Error::NotSolved {
            variant: "9x8".into(),
            path: "/srv/data/db/9x8.sqlite".into(),
            why: None,
        };
        assert!(!e.public_message().contains("/srv"), "{}", e.public_message());
        let e = Error::Io("/srv/data/db/x".into(), std::io::Error::other("boom"));
        assert!(!e.public_message().contains("/srv"));
    }
}
