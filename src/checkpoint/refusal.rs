//! Why a checkpoint is not resumed from: a [`Refusal`], which only the note
//! the user reads ("checkpoint `…` is of format 4, not 5: an older bishops
//! wrote it; ignoring it and searching class a1 from the start") turns
//! into words.

use std::fmt;

use crate::files::Kind;

/// Why a checkpoint is not resumed from. Its [`Display`](fmt::Display) is
/// worded to follow the file's name.
#[derive(Debug)]
pub enum Refusal {
    /// The system could not read it.
    Unreadable(std::io::Error),
    /// Something other than a regular file is at its name.
    NotRegular(Kind),
    /// It does not start as a checkpoint does.
    NotACheckpoint,
    /// Its header line is not a checkpoint's header.
    UnreadableHeader(serde_json::Error),
    /// It is of another format than this program's (`want`).
    Format {
        /// The format its header gives.
        found: u32,
        /// This program's.
        want: u32,
    },
    /// The seal of its header line does not hold: the header was changed.
    HeaderChecksum,
    /// The checksum of its payload does not hold: the payload was changed.
    Checksum,
    /// It is another solve's.
    OtherSolve {
        /// The header's field: `method`, `variant`, `start`, `class` or
        /// `legal positions`.
        field: &'static str,
        /// What the header gives.
        found: String,
        /// What this solve has.
        want: String,
    },
    /// It is one worker's share of a partitioned search, read by a search
    /// of a whole class.
    WorkerShare,
    /// It is not a worker's share, read by a worker of a partitioned search.
    NotAShare,
    /// It is the share of another rank, or of a search over another number
    /// of ranks.
    OtherRank {
        /// The rank and the number of ranks its header gives.
        found: (usize, usize),
        /// This worker's.
        want: (usize, usize),
    },
    /// It is a share that starts elsewhere in the class.
    OtherRange {
        /// The first position (or cell) of its share.
        found: u64,
        /// This worker's.
        want: u64,
    },
    /// The file is not as long as its header says.
    Length {
        /// Its length in bytes after the header.
        bytes: u64,
        /// The bytes its table and summary take.
        want: u64,
    },
    /// What it holds disagrees with its own header, or is no state a
    /// search can be in ([`check`](super::check)): how.
    Inconsistent(String),
}

impl Refusal {
    /// The refusal of a state that breaks what a search keeps, saying how.
    pub(super) fn inconsistent(how: impl Into<String>) -> Refusal {
        Refusal::Inconsistent(how.into())
    }
}

impl From<std::io::Error> for Refusal {
    fn from(e: std::io::Error) -> Refusal {
        Refusal::Unreadable(e)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Unreadable(e) => write!(f, "cannot be read ({e})"),
            Refusal::NotRegular(kind) => write!(f, "is {kind}, not a checkpoint"),
            Refusal::NotACheckpoint => write!(f, "is not a checkpoint"),
            Refusal::UnreadableHeader(e) => write!(f, "has an unreadable header ({e})"),
            Refusal::Format { found, want } => write!(
                f,
                "is of format {found}, not {want}: {} bishops wrote it",
                if found < want { "an older" } else { "a newer" }
            ),
            Refusal::HeaderChecksum => write!(f, "fails its header checksum"),
            Refusal::Checksum => write!(f, "fails its checksum"),
            Refusal::OtherSolve { field, found, want } => write!(f, "is for {field} {found}, not {want}"),
            Refusal::WorkerShare => write!(f, "is one worker's share of a partitioned search"),
            Refusal::NotAShare => write!(f, "is not a worker's share"),
            Refusal::OtherRank { found, want } => write!(
                f,
                "is the share of rank {} of {}, not of rank {} of {}",
                found.0, found.1, want.0, want.1
            ),
            Refusal::OtherRange { found, want } => write!(f, "starts at position {found}, not {want}"),
            Refusal::Length { bytes, want } => write!(f, "is {bytes} bytes long after its header, not {want}"),
            Refusal::Inconsistent(how) => f.write_str(how),
        }
    }
}

/// The reason an I/O or JSON error gives is part of the message, so it is
/// not given again as a source.
impl std::error::Error for Refusal {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_what_was_refused_and_why() {
        let cases = [
            (
                Refusal::Format { found: 4, want: 5 },
                "is of format 4, not 5: an older bishops wrote it",
            ),
            (
                Refusal::Format { found: 6, want: 5 },
                "is of format 6, not 5: a newer bishops wrote it",
            ),
            (
                Refusal::OtherSolve {
                    field: "variant",
                    found: "7x6".into(),
                    want: "9x6".into(),
                },
                "is for variant 7x6, not 9x6",
            ),
            (
                Refusal::OtherRank {
                    found: (1, 2),
                    want: (1, 3),
                },
                "is the share of rank 1 of 2, not of rank 1 of 3",
            ),
            (
                Refusal::Length { bytes: 10, want: 24 },
                "is 10 bytes long after its header, not 24",
            ),
            (Refusal::Checksum, "fails its checksum"),
        ];
        for (refusal, said) in cases {
            assert_eq!(refusal.to_string(), said);
        }
    }
}
