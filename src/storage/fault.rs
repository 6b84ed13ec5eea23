//! Why something read from a database is not believed: SQLite could not
//! read it, or it was read and is wrong. The steps of opening a file and
//! reading a block return a [`Fault`]; the open [`Database`](crate::storage::Database)
//! (or the opening) turns it into an error that names the file.

/// Why what was read from a database is not believed.
#[derive(Debug)]
pub(super) enum Fault {
    /// SQLite failed to read it.
    Read(rusqlite::Error),
    /// It was read, and is wrong: what is wrong, worded to follow the file's
    /// name ("is truncated…") or, for a block, to follow "has".
    Wrong(String),
}

impl From<rusqlite::Error> for Fault {
    fn from(e: rusqlite::Error) -> Fault {
        Fault::Read(e)
    }
}

/// A step that reads from a database and checks what it read.
pub(super) type Checked<T> = std::result::Result<T, Fault>;

/// The one row a query asks for, or a fault naming what is missing.
pub(super) trait RowOr<T> {
    /// The row; [`Fault::Wrong`] saying `missing` when there is none.
    fn row_or(self, missing: &str) -> Checked<T>;
}

impl<T> RowOr<T> for rusqlite::Result<T> {
    fn row_or(self, missing: &str) -> Checked<T> {
        use rusqlite::OptionalExtension;
        self.optional()?.ok_or_else(|| Fault::Wrong(missing.into()))
    }
}
