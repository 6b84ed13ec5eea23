//! Writers taking turns: the [`WriteLock`] of one variant in one database
//! directory, and the sweep that removes what killed writers left behind
//! (their temporary files and lock files) once no live writer owns it.

use std::fs;
use std::path::{Path, PathBuf};

use super::names::{check_dir, lock_path, lock_variant, not_a_database, path, temp_variant};
use crate::cleanup::{Pending, is_abandoned};
use crate::error::{Error, Result};
use crate::files::{self, Kind, Links, OpenError};

/// The right to write the database of one variant into one directory: while
/// a `WriteLock` is held, no other process that asks for one gets it. Taking
/// it also checks that the directory can be written (before any search
/// starts) and removes temporary files that killed writers left behind.
///
/// It is an exclusive `flock` on `.NAME.sqlite.lock` in the directory, which
/// the kernel releases when its holder dies; the holder removes the file
/// when done.
#[derive(Debug)]
pub struct WriteLock {
    file: fs::File,
    path: PathBuf,
    _pending: Pending,
}

impl WriteLock {
    /// Takes the lock of `variant` in `dir`, creating the directory if need
    /// be; when another process holds it, calls `waiting` once and waits.
    ///
    /// # Errors
    ///
    /// [`Error::DbPath`] naming `dir` (or the file) when the directory is a
    /// file or cannot be made or written, when the database path holds
    /// anything but a regular file or a link to one, or when the lock file's
    /// path holds anything but a regular file.
    pub fn acquire(dir: &Path, variant: &str, waiting: &mut dyn FnMut()) -> Result<WriteLock> {
        let lock = WriteLock::take(dir, variant, Some(waiting))?.expect("a blocking take always locks");
        sweep(dir, variant);
        Ok(lock)
    }

    /// Takes the lock of `variant` in `dir` if no other process holds it,
    /// as [`acquire`](Self::acquire) does; `None` when one does.
    ///
    /// # Errors
    ///
    /// As [`acquire`](Self::acquire).
    pub fn try_acquire(dir: &Path, variant: &str) -> Result<Option<WriteLock>> {
        let lock = WriteLock::take(dir, variant, None)?;
        if lock.is_some() {
            sweep(dir, variant);
        }
        Ok(lock)
    }

    /// Takes the lock when `waiting` is given (calling it before waiting),
    /// tries it and returns `None` when busy when not.
    fn take(dir: &Path, variant: &str, mut waiting: Option<&mut dyn FnMut()>) -> Result<Option<WriteLock>> {
        let path = prepare(dir, variant)?;
        let mut said = false;
        loop {
            let file = open_lock_file(dir, &path)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => {
                    let Some(waiting) = waiting.as_mut() else {
                        return Ok(None);
                    };
                    if !said {
                        waiting();
                        said = true;
                    }
                    file.lock().map_err(|e| Error::Io(path.clone(), e))?;
                }
                Err(fs::TryLockError::Error(e)) => return Err(Error::Io(path, e)),
            }
            // The holder removes the file before it lets go: what was locked
            // must still be the file at the path, or the lock is worthless.
            if same_file(&file, &path) {
                let pending = Pending::register(&path);
                return Ok(Some(WriteLock {
                    file,
                    path,
                    _pending: pending,
                }));
            }
        }
    }
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        // Removed while still held, so no one can lock a file that is gone.
        let _ = fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// The error for a database directory `dir` that cannot be written.
fn unwritable(dir: &Path, e: std::io::Error) -> Error {
    Error::DbPath(format!(
        "database directory `{}` cannot be written ({e}): give --db a directory you can write",
        crate::text::path(dir)
    ))
}

/// Makes sure `dir` is a directory (creating it) and that the database of
/// `variant` in it is nothing or a regular file (or a link to one), and
/// returns the path of its lock file.
fn prepare(dir: &Path, variant: &str) -> Result<PathBuf> {
    check_dir(dir)?;
    fs::create_dir_all(dir).map_err(|e| unwritable(dir, e))?;
    // A link to a database may still be read: only a write refuses it.
    let dest = path(dir, variant);
    if let Ok(meta) = fs::metadata(&dest)
        && Kind::of(&meta) != Kind::Regular
    {
        return Err(not_a_database(&dest, Kind::of(&meta), variant));
    }
    Ok(lock_path(dir, variant))
}

/// Opens (creating it) the lock file at `path` in `dir`, only if it is a
/// regular file.
fn open_lock_file(dir: &Path, path: &Path) -> Result<fs::File> {
    files::open_regular(
        path,
        fs::OpenOptions::new().create(true).truncate(false).write(true),
        Links::Refuse,
    )
    .map_err(|e| match e {
        OpenError::NotRegular(kind) => Error::DbPath(format!(
            "`{}` is {kind}, not a lock file: move it away",
            crate::text::path(path)
        )),
        OpenError::Io(e) => unwritable(dir, e),
    })
}

/// Whether `file` is the file at `path`.
fn same_file(file: &fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Removes what no live writer owns in `dir`: the temporary database files
/// of `own` (whose lock the caller holds), and the temporary files and lock
/// files of every variant whose lock is free; a temporary file only when
/// its process is gone ([`is_abandoned`]). A process killed while solving
/// leaves such files.
fn sweep(dir: &Path, own: &str) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(variant) = temp_variant(name) {
            if !is_abandoned(name) {
                continue;
            }
            if variant == own {
                let _ = fs::remove_file(entry.path());
            } else if let Ok(Some(_lock)) = WriteLock::take(dir, variant, None) {
                let _ = fs::remove_file(entry.path());
            }
        } else if let Some(variant) = lock_variant(name).filter(|&v| v != own) {
            // Taken and let go at once: a free lock's file is removed.
            let _ = WriteLock::take(dir, variant, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_and_a_busy_one_is_not_taken() {
        let dir = std::env::temp_dir().join(format!("bishops-lock-{}", std::process::id()));
        let first = WriteLock::acquire(&dir, "5x4", &mut || panic!("nobody holds it")).unwrap();
        assert!(lock_path(&dir, "5x4").exists());
        assert!(WriteLock::take(&dir, "5x4", None).unwrap().is_none());
        assert!(WriteLock::take(&dir, "7x4", None).unwrap().is_some());
        drop(first);
        assert!(!lock_path(&dir, "5x4").exists(), "the holder removes its lock file");
        assert!(WriteLock::take(&dir, "5x4", None).unwrap().is_some());
        fs::remove_dir_all(&dir).unwrap();
    }
}
