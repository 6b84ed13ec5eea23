//! A long write committed as it goes, so that one stopped resumes where
//! its last commit left it ([`Resumable`]).

use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::error::{Error, Result};

/// How a resumable write commits: a write of a two-bit table resolved
/// into frames (hours on the largest boards) that is stopped, killed or
/// runs out of disk goes on, the next time, from its last commit instead
/// of from its first white set ([`WriteOptions::resumable`](super::WriteOptions::resumable)).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Resumable {
    /// The least time between two commits (each syncs the file).
    pub interval: Duration,
    /// A test hook: stop with [`Error::Stopped`] right after this many
    /// commits.
    pub stop_after: Option<u64>,
    /// A test hook: kill the process (SIGKILL) at this commit, inside its
    /// transaction, before it commits: a write killed with its rollback
    /// journal beside it.
    pub kill_at: Option<u64>,
}

impl Resumable {
    /// A commit a minute or so, and no stop.
    pub const DEFAULT: Resumable = Resumable {
        interval: DEFAULT_INTERVAL,
        stop_after: None,
        kill_at: None,
    };
}

impl Default for Resumable {
    fn default() -> Resumable {
        Resumable::DEFAULT
    }
}

/// The default time between two commits of a resumable write: what a stop
/// loses at most, against a sync a minute.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

/// The commits of one resumable write on `conn`, which it keeps inside a
/// transaction from [`Commits::begin`] on: each ends it durably and opens
/// the next.
pub(super) struct Commits<'c> {
    conn: &'c Connection,
    how: Resumable,
    last: Instant,
    made: u64,
}

impl<'c> Commits<'c> {
    /// Opens the first transaction on `conn`.
    pub(super) fn begin(conn: &'c Connection, how: Resumable) -> rusqlite::Result<Commits<'c>> {
        conn.execute_batch("BEGIN")?;
        Ok(Commits {
            conn,
            how,
            last: Instant::now(),
            made: 0,
        })
    }

    /// Whether a commit is due: the interval has passed since the last.
    pub(super) fn due(&self) -> bool {
        self.last.elapsed() >= self.how.interval
    }

    /// Commits what was written and opens the next transaction; stops with
    /// [`Error::Stopped`] where the test hook asks.
    pub(super) fn commit(&mut self) -> Result<()> {
        let sql = |e| Error::Sqlite("the database being written".into(), e);
        if self.how.kill_at == Some(self.made + 1) {
            // SAFETY: raising a signal has no precondition; this one ends
            // the process here.
            unsafe { libc::raise(libc::SIGKILL) };
        }
        self.conn.execute_batch("COMMIT; BEGIN").map_err(sql)?;
        self.last = Instant::now();
        self.made += 1;
        if self.how.stop_after == Some(self.made) {
            return Err(Error::Stopped(format!(
                "the write stopped after {} commits, as asked; it goes on from there",
                self.made
            )));
        }
        Ok(())
    }

    /// Commits the last transaction: the write is whole.
    pub(super) fn finish(self) -> rusqlite::Result<()> {
        self.conn.execute_batch("COMMIT")
    }
}
