//! The files of a database directory and what may stand at their paths:
//! the database of each variant (`NAME.sqlite`), the temporary file a
//! writer fills (`.NAME.sqlite.tmp-PID`), the partial file a resumable
//! write fills (`.NAME.sqlite.partial`) and the lock writers take turns on
//! (`.NAME.sqlite.lock`); telling those names and bishops databases from
//! anything else; and refusing a directory, a link, a FIFO, a device or a
//! socket where a write would destroy it.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::schema::read_meta;
use crate::error::{Error, Result};
use crate::files::{self, Kind, Links};

/// Where the database of `variant` lives in `dir`.
pub fn path(dir: &Path, variant: &str) -> PathBuf {
    dir.join(format!("{variant}.sqlite"))
}

/// The temporary file a process writes the database of `variant` into
/// before renaming it into place: `.NAME.sqlite.tmp-PID`.
pub(super) fn temp_path(dir: &Path, variant: &str, pid: u32) -> PathBuf {
    dir.join(format!(".{variant}.sqlite.tmp-{pid}"))
}

/// The variant whose temporary database file is named `name`, if it is one.
pub(super) fn temp_variant(name: &str) -> Option<&str> {
    let (stem, pid) = name.strip_prefix('.')?.rsplit_once(".sqlite.tmp-")?;
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then_some(stem)
}

/// The file a resumable write of the database of `variant` fills
/// (`.NAME.sqlite.partial`): committed as it goes, kept when the write
/// stops, renamed into place when it is complete and checked.
pub fn partial_path(dir: &Path, variant: &str) -> PathBuf {
    dir.join(format!(".{variant}.sqlite.partial"))
}

/// The files of a resumable write of `variant` in `dir`: the partial
/// database and the rollback journal SQLite keeps beside it while a
/// transaction is open (left by a write killed inside one, and rolled back
/// by the next that opens the file: never to be removed alone).
pub fn partial_files(dir: &Path, variant: &str) -> [PathBuf; 2] {
    let partial = partial_path(dir, variant);
    let mut journal = partial.clone().into_os_string();
    journal.push("-journal");
    [partial, journal.into()]
}

/// The variant whose partial database (or its journal) is named `name`,
/// if it is one.
fn partial_variant(name: &str) -> Option<&str> {
    let stem = name.strip_prefix('.')?;
    stem.strip_suffix(".sqlite.partial")
        .or_else(|| stem.strip_suffix(".sqlite.partial-journal"))
}

/// The lock file that writers of `variant` in `dir` take turns on.
pub(super) fn lock_path(dir: &Path, variant: &str) -> PathBuf {
    dir.join(format!(".{variant}.sqlite.lock"))
}

/// The variant whose lock file is named `name`, if it is one.
pub(super) fn lock_variant(name: &str) -> Option<&str> {
    name.strip_prefix('.')?.strip_suffix(".sqlite.lock")
}

/// Whether `name` is a name this module gives a file of a database
/// directory: a database (`NAME.sqlite`), a lock, a temporary file or a
/// resumable write's partial file and its journal.
///
/// ```
/// use bishops::storage::is_own_name;
/// assert!(is_own_name("7x6.sqlite") && is_own_name(".7x6.sqlite.lock") && is_own_name(".7x6.sqlite.tmp-12"));
/// assert!(is_own_name(".7x6.sqlite.partial") && is_own_name(".7x6.sqlite.partial-journal"));
/// assert!(!is_own_name("7x6.csv"));
/// ```
pub fn is_own_name(name: &str) -> bool {
    name.ends_with(".sqlite")
        || lock_variant(name).is_some()
        || temp_variant(name).is_some()
        || partial_variant(name).is_some()
}

/// Whether `file` is a bishops database of any variant or version: an
/// SQLite file whose `meta` table says `format = 'bishops'`. Only a regular
/// file is opened ([`files::open_regular`]), and nothing beside it.
pub fn is_database(file: &Path) -> bool {
    use std::io::Read;
    let Ok(mut opened) = files::open_regular(file, fs::OpenOptions::new().read(true), Links::Follow) else {
        return false;
    };
    let mut magic = [0u8; 16];
    if opened.read_exact(&mut magic).is_err() || &magic != b"SQLite format 3\0" {
        return false;
    }
    drop(opened);
    open_read_only(file).is_ok_and(|conn| read_meta(&conn, "format").ok().flatten().as_deref() == Some("bishops"))
}

/// Opens the SQLite file at `path` read-only and immutable: SQLite then
/// opens that one file and nothing beside it (no `-journal` to roll back,
/// no `-wal` or `-shm`), where a FIFO would make it wait forever, and takes
/// no lock. A database is never changed in place once written (a new one
/// is renamed over it), so nothing is missed by not watching for changes.
/// (A file in WAL mode, which this program never writes, is read without
/// its log; what the log held is then missing, and the checks find it.)
///
/// The query planner keeps the plan each statement was prepared with
/// (its stability guarantee): without it, SQLite prepares a statement
/// again whenever a value bound to a range in it changes, which a lookup
/// of the frame covering a white set (`first_white <= ?`) did at every
/// step, a parse and a plan for each frame read.
pub(super) fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        immutable_uri(path),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(conn)
}

/// The `file:` URI of `path` with `immutable=1`: every byte but letters,
/// digits and `/._-~` percent-encoded, and an absolute path after an empty
/// authority, so that one starting `//` is not read as a host.
fn immutable_uri(path: &Path) -> String {
    use std::fmt::Write;
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    let mut uri = String::from(if bytes.starts_with(b"/") { "file://" } else { "file:" });
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            uri.push(char::from(b));
        } else {
            let _ = write!(uri, "%{b:02X}");
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Refuses a database directory that exists but is not a directory.
///
/// # Errors
///
/// [`Error::DbPath`] naming `dir` as given.
pub fn check_dir(dir: &Path) -> Result<()> {
    match fs::metadata(dir).map(|m| Kind::of(&m)) {
        Ok(Kind::Directory) | Err(_) => Ok(()),
        Ok(kind) => Err(Error::DbPath(format!(
            "database directory `{}` is {}, not a directory: give --db a directory",
            crate::text::path(dir),
            if kind == Kind::Regular {
                "a file".to_owned()
            } else {
                kind.to_string()
            }
        ))),
    }
}

/// The error for something of `kind` where the database of `variant`
/// belongs: a directory, a symbolic link that a write would replace, a FIFO,
/// a device, a socket.
pub(super) fn not_a_database(dest: &Path, kind: Kind, variant: &str) -> Error {
    Error::DbPath(match kind {
        Kind::Directory => format!(
            "`{}` is a directory where the database of {variant} belongs: move it away, then run `bishops solve {variant}`",
            crate::text::path(dest)
        ),
        Kind::Symlink => format!(
            "`{}` is a symbolic link, which writing the database of {variant} would replace: move it away, or solve into the directory it points to",
            crate::text::path(dest)
        ),
        _ => format!(
            "`{}` is {kind}, not a database file: move it away, then run `bishops solve {variant}`",
            crate::text::path(dest)
        ),
    })
}

/// Refuses to write the database of `variant` into `dir` when its path
/// holds what a write would destroy and this program did not make: a
/// directory, a symbolic link, a FIFO, a device, a socket. A regular file
/// is a database, replaced only when it cannot be trusted or `--force` asks.
///
/// # Errors
///
/// [`Error::DbPath`] naming the path and what it is.
pub fn check_destination(dir: &Path, variant: &str) -> Result<()> {
    let dest = path(dir, variant);
    match fs::symlink_metadata(&dest) {
        Ok(meta) if Kind::of(&meta) != Kind::Regular => Err(not_a_database(&dest, Kind::of(&meta), variant)),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::Io(dest, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_recognised_and_nothing_else() {
        assert_eq!(temp_variant(".9x8.sqlite.tmp-123"), Some("9x8"));
        assert_eq!(
            temp_path(Path::new("d"), "5x4-full", 7)
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(temp_variant),
            Some("5x4-full")
        );
        for name in [
            "9x8.sqlite",
            ".9x8.sqlite.lock",
            ".9x8.sqlite.tmp-",
            ".9x8.sqlite.tmp-1x",
            ".out.csv.tmp-5",
        ] {
            assert_eq!(temp_variant(name), None, "{name}");
        }
    }

    #[test]
    fn a_path_is_its_own_uri_whatever_its_characters() {
        assert_eq!(
            immutable_uri(Path::new("db/5x4.sqlite")),
            "file:db/5x4.sqlite?immutable=1"
        );
        assert_eq!(
            immutable_uri(Path::new("//srv/a b?#%/é.sqlite")),
            "file:////srv/a%20b%3F%23%25/%C3%A9.sqlite?immutable=1"
        );
    }
}
