//! Solved databases: one SQLite file per variant.
//!
//! A database is written whole into a temporary file beside its final name,
//! in one transaction, synced, and renamed into place, so a crash leaves
//! either the old file or the new one, never half of one. Writers of one
//! variant in one directory take turns ([`WriteLock`]), and the next writer
//! removes what a killed one left behind.
//!
//! Nothing in a file is believed before it is checked. Opening checks the
//! file's length, format and hash versions, variant and start, a checksum of
//! the whole header (the `meta` table and the `classes` rows), every count,
//! histogram and hardest position for consistency, and that the metadata
//! repeats what the tables say (the start's and the goal's remoteness are
//! looked up). Every block of a table (the positions of one white set) has
//! its own checksum, verified each time it is read, so a lookup checks what
//! it reads at the cost of one block; [`Database::verify`] reads everything
//! and recomputes every count. The schema (see `SCHEMA` and `docs/database.md`) is
//! meant to be read by people with `sqlite3` as well as by this program.

use std::cell::RefCell;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rayon::prelude::*;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::cleanup::Pending;
use crate::error::{Error, Result};
use crate::files::{self, Kind, Links, OpenError};
use crate::index::{binomial, colex_rank, colex_unrank, rank_within};
use crate::remoteness::{Cell, Remoteness};
use crate::rules::{Part, safe_cells};
use crate::solver::exact;
use crate::solver::twobit::{Mod3Table, Residues, TwoBitSolution};
use crate::solver::{ClassStats, ClassTable, HARDEST, Solution};
use crate::symmetry::Mirror;
use crate::text::clip;
use crate::tight::{Subsets, TightIndex};
use crate::variant::ClassSpec;
use crate::variant::Variant;

/// The version of the database layout; a file of another version is refused
/// (and `solve` rebuilds it). Version 2 added the per-block checksums and
/// the header checksum; version 3 stores a mirrored class as a reference to
/// class 0, without rows or blocks of its own, and adds the `residues`
/// layout of the two-bit search; version 4 gives a mirrored class its
/// source's checksum in every layout, since every read of it is a checked
/// read of the source (version 3 checksummed its derived cells, which cost
/// more than the rest of writing 11x8).
pub const FORMAT_VERSION: u32 = 4;

/// The tables of a database.
pub const SCHEMA: &str = "
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE classes (
    class          INTEGER PRIMARY KEY, -- 0: squares of a1 (row + column even), 1: of a2
    squares        INTEGER NOT NULL,    -- n, squares in the class
    white          INTEGER NOT NULL,    -- w, white bishops in the class
    black          INTEGER NOT NULL,    -- b, black bishops in the class
    hash_size      INTEGER NOT NULL,    -- R(n, w, b)
    start_hash     INTEGER NOT NULL,
    goal_hash      INTEGER NOT NULL,
    legal          INTEGER NOT NULL,    -- legal positions
    reachable      INTEGER NOT NULL,    -- legal positions that reach the goal
    max_remoteness INTEGER,             -- NULL when none does
    histogram      TEXT NOT NULL,       -- JSON array: positions per remoteness
    hardest        TEXT NOT NULL,       -- JSON array: hashes of the hardest positions
    mirrored       INTEGER NOT NULL,    -- 1: the left-right mirror image of class 0, with no rows or
                                        -- blocks of its own: look up the mirrored position in class 0
    checksum       TEXT NOT NULL        -- FNV-1a 64 of the remoteness bytes in hash order, hex;
                                        -- residues layout: of the block checksums in white order;
                                        -- a mirrored class: its source's
);
CREATE TABLE positions (
    class      INTEGER NOT NULL,
    hash       INTEGER NOT NULL,        -- the public hash of the class part
    remoteness INTEGER,                 -- NULL: legal but unreachable
    PRIMARY KEY (class, hash)
) WITHOUT ROWID;
CREATE TABLE row_checksums (
    class    INTEGER NOT NULL,
    white    INTEGER NOT NULL,          -- colex rank of a white set: hash / C(n - w, b)
    checksum INTEGER NOT NULL,          -- block checksum of its rows' remoteness bytes
    PRIMARY KEY (class, white)
) WITHOUT ROWID;
CREATE TABLE blocks (
    class    INTEGER NOT NULL,
    white    INTEGER NOT NULL,          -- colex rank of the white set: hash / C(n - w, b)
    data     BLOB NOT NULL,             -- a byte per legal black set beside it, in colex order
                                        -- among the safe cells: remoteness, or 254 unreachable;
                                        -- residues layout: 2 bits per black set, 4 a byte from
                                        -- the low bits: remoteness mod 3, or 3 unreachable
    checksum INTEGER NOT NULL,          -- block checksum of data
    PRIMARY KEY (class, white)
);
";

/// How a database holds its tables: `meta.layout`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A row of `positions` per legal position: easy to read with `sqlite3`.
    Rows,
    /// A row of `blocks` per white set, a byte per position: about one byte
    /// per legal position on disk, for large boards.
    Blocks,
    /// A row of `blocks` per white set, two bits per position holding the
    /// remoteness mod 3, as the two-bit search leaves it
    /// ([`twobit`](crate::solver::twobit)): a quarter of a byte per legal
    /// position, for boards too large for a byte. Exact remoteness is found
    /// by descending to the goal through neighbours one less mod 3.
    Residues,
}

impl Layout {
    /// The layout for `solution`: rows while every class has at most
    /// [`ROWS_MAX_LEGAL`] legal positions, blocks beyond.
    pub fn for_solution(solution: &Solution) -> Layout {
        if solution.classes.iter().all(|c| c.stats.legal <= ROWS_MAX_LEGAL) {
            Layout::Rows
        } else {
            Layout::Blocks
        }
    }

    /// The name the file gives it in `meta.layout`.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Rows => "rows",
            Layout::Blocks => "blocks",
            Layout::Residues => "residues",
        }
    }
}

/// The most legal positions per class stored as one row each.
pub const ROWS_MAX_LEGAL: u64 = 1_000_000;

/// Where the database of `variant` lives in `dir`.
pub fn path(dir: &Path, variant: &str) -> PathBuf {
    dir.join(format!("{variant}.sqlite"))
}

/// The temporary file a process writes the database of `variant` into
/// before renaming it into place: `.NAME.sqlite.tmp-PID`.
fn temp_path(dir: &Path, variant: &str, pid: u32) -> PathBuf {
    dir.join(format!(".{variant}.sqlite.tmp-{pid}"))
}

/// The variant whose temporary database file is named `name`, if it is one.
fn temp_variant(name: &str) -> Option<&str> {
    let (stem, pid) = name.strip_prefix('.')?.rsplit_once(".sqlite.tmp-")?;
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then_some(stem)
}

/// The lock file that writers of `variant` in `dir` take turns on.
fn lock_path(dir: &Path, variant: &str) -> PathBuf {
    dir.join(format!(".{variant}.sqlite.lock"))
}

/// The variant whose lock file is named `name`, if it is one.
fn lock_variant(name: &str) -> Option<&str> {
    name.strip_prefix('.')?.strip_suffix(".sqlite.lock")
}

/// Whether `name` is a name this module gives a file of a database
/// directory: a database (`NAME.sqlite`), a lock or a temporary file.
///
/// ```
/// use bishops::storage::is_own_name;
/// assert!(is_own_name("7x6.sqlite") && is_own_name(".7x6.sqlite.lock") && is_own_name(".7x6.sqlite.tmp-12"));
/// assert!(!is_own_name("7x6.csv"));
/// ```
pub fn is_own_name(name: &str) -> bool {
    name.ends_with(".sqlite") || lock_variant(name).is_some() || temp_variant(name).is_some()
}

/// Whether `file` is a bishops database of any variant or version: an
/// SQLite file whose `meta` table says `format = 'bishops'`. Only a regular
/// file is opened ([`files::open_regular`]).
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
    Connection::open_with_flags(file, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .is_ok_and(|conn| read_meta(&conn, "format").ok().flatten().as_deref() == Some("bishops"))
}

/// A running FNV-1a 64 checksum of a class's cells in hash order (which is
/// tight-index order): cheap, and enough to tell a damaged or edited table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Checksum(u64);

impl Default for Checksum {
    fn default() -> Checksum {
        Checksum(0xcbf2_9ce4_8422_2325)
    }
}

impl Checksum {
    /// Adds cells.
    pub fn add(&mut self, cells: &[u8]) {
        for &byte in cells {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The checksum as 16 hex digits.
    pub fn hex(self) -> String {
        format!("{:016x}", self.0)
    }

    /// The checksum as SQLite stores an integer: the same 64 bits, signed.
    pub fn signed(self) -> i64 {
        self.0 as i64
    }
}

/// The checksum of one block: FNV-1a 64 of the class number (one byte), the
/// white set's colex rank (eight bytes, little-endian) and the block's cells,
/// so that a block moved to another white set fails too.
///
/// ```
/// let a = bishops::storage::block_checksum(0, 3, &[1, 2, 254]);
/// assert_ne!(a, bishops::storage::block_checksum(0, 4, &[1, 2, 254]));
/// assert_ne!(a, bishops::storage::block_checksum(0, 3, &[1, 2, 253]));
/// ```
pub fn block_checksum(class: usize, white: u64, cells: &[u8]) -> Checksum {
    let mut checksum = Checksum::default();
    checksum.add(&[class as u8]);
    checksum.add(&white.to_le_bytes());
    checksum.add(cells);
    checksum
}

/// The checksum of a file's header: FNV-1a 64 over every `meta` entry but
/// `header_checksum` (in key order, key and value each followed by a 0 byte)
/// and then every `classes` row (in class order, each column as text
/// followed by a 0 byte, NULL as `NULL`).
fn header_checksum(conn: &Connection) -> rusqlite::Result<String> {
    let mut checksum = Checksum::default();
    let mut add = |value: ValueRef<'_>| {
        let text = match value {
            ValueRef::Null => "NULL".to_owned(),
            ValueRef::Integer(i) => i.to_string(),
            ValueRef::Real(r) => r.to_string(),
            ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
        };
        checksum.add(text.as_bytes());
        checksum.add(&[0]);
    };
    for sql in [
        "SELECT key, value FROM meta WHERE key <> 'header_checksum' ORDER BY key",
        "SELECT * FROM classes ORDER BY class",
    ] {
        let mut st = conn.prepare(sql)?;
        let columns = st.column_count();
        let mut rows = st.query([])?;
        while let Some(row) = rows.next()? {
            for i in 0..columns {
                add(row.get_ref(i)?);
            }
        }
    }
    Ok(checksum.hex())
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
            dir.display(),
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
fn not_a_database(dest: &Path, kind: Kind, variant: &str) -> Error {
    Error::DbPath(match kind {
        Kind::Directory => format!(
            "`{}` is a directory where the database of {variant} belongs: move it away, then run `bishops solve {variant}`",
            dest.display()
        ),
        Kind::Symlink => format!(
            "`{}` is a symbolic link, which writing the database of {variant} would replace: move it away, or solve into the directory it points to",
            dest.display()
        ),
        _ => format!(
            "`{}` is {kind}, not a database file: move it away, then run `bishops solve {variant}`",
            dest.display()
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
        let unwritable = |e: std::io::Error| {
            Error::DbPath(format!(
                "database directory `{}` cannot be written ({e}): give --db a directory you can write",
                dir.display()
            ))
        };
        check_dir(dir)?;
        fs::create_dir_all(dir).map_err(unwritable)?;
        // A link to a database may still be read: only a write refuses it.
        let dest = path(dir, variant);
        if let Ok(meta) = fs::metadata(&dest)
            && Kind::of(&meta) != Kind::Regular
        {
            return Err(not_a_database(&dest, Kind::of(&meta), variant));
        }
        let path = lock_path(dir, variant);
        let mut said = false;
        loop {
            let file = files::open_regular(
                &path,
                fs::OpenOptions::new().create(true).truncate(false).write(true),
                Links::Refuse,
            )
            .map_err(|e| match e {
                OpenError::NotRegular(kind) => {
                    Error::DbPath(format!("`{}` is {kind}, not a lock file: move it away", path.display()))
                }
                OpenError::Io(e) => unwritable(e),
            })?;
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
/// files of every variant whose lock is free. A process killed while
/// solving leaves such files.
fn sweep(dir: &Path, own: &str) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(variant) = temp_variant(name) {
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

/// Writes the database of `variant` into `dir`, atomically, and returns its
/// path. The caller should hold the variant's [`WriteLock`].
///
/// # Errors
///
/// When the directory cannot be made or the file cannot be written; no file
/// of the final name is touched then.
pub fn write(dir: &Path, variant: &Variant, solution: &Solution) -> Result<PathBuf> {
    write_with(dir, variant, solution, Layout::for_solution(solution))
}

/// [`write()`] with a chosen layout.
///
/// # Errors
///
/// As [`write()`].
pub fn write_with(dir: &Path, variant: &Variant, solution: &Solution, layout: Layout) -> Result<PathBuf> {
    if layout == Layout::Residues {
        return Err(Error::Usage(
            "the residues layout holds tables of the two-bit search: solve with --method two-bit".into(),
        ));
    }
    write_atomically(dir, variant, &Solved::Bytes(solution), layout)
}

/// Writes a variant solved by the two-bit search ([`Layout::Residues`]),
/// as [`write()`] does: atomically, replacing an older file.
///
/// # Errors
///
/// As [`write()`].
pub fn write_two_bit(dir: &Path, variant: &Variant, solution: &TwoBitSolution) -> Result<PathBuf> {
    write_atomically(dir, variant, &Solved::TwoBit(solution), Layout::Residues)
}

/// A solved variant as the writer takes it, from either search.
enum Solved<'a> {
    Bytes(&'a Solution),
    TwoBit(&'a TwoBitSolution),
}

impl Solved<'_> {
    fn stats(&self, k: usize) -> &ClassStats {
        match self {
            Solved::Bytes(s) => &s.classes[k].stats,
            Solved::TwoBit(s) => &s.classes[k].stats,
        }
    }

    fn is_mirrored(&self, k: usize) -> bool {
        match self {
            Solved::Bytes(s) => s.classes[k].is_mirrored(),
            Solved::TwoBit(s) => matches!(s.classes[k].residues, Residues::Mirrored { .. }),
        }
    }

    fn elapsed(&self) -> std::time::Duration {
        match self {
            Solved::Bytes(s) => s.elapsed,
            Solved::TwoBit(s) => s.elapsed,
        }
    }

    /// The remoteness of the class part `hash` of class `k`.
    ///
    /// # Errors
    ///
    /// [`Error::Mismatch`] when a two-bit table fails a descent: no search
    /// leaves such a table, and nothing is written from it.
    fn remoteness(&self, spec: &ClassSpec, k: usize, hash: u64) -> Result<Option<Remoteness>> {
        match self {
            Solved::Bytes(s) => Ok(s.cell(k, hash).remoteness()),
            Solved::TwoBit(s) => s
                .descend(k, spec, spec.index.unrank(hash))
                .map(|d| d.map(|d| d.remoteness))
                .map_err(|e| Error::Mismatch(format!("the two-bit search left a table that fails a descent: {e}"))),
        }
    }
}

/// Writes `solved` into a temporary file in `dir` and renames it over the
/// variant's database: over nothing or a regular file, never over what
/// [`check_destination`] refuses.
fn write_atomically(dir: &Path, variant: &Variant, solved: &Solved<'_>, layout: Layout) -> Result<PathBuf> {
    check_dir(dir)?;
    fs::create_dir_all(dir).map_err(|e| Error::Io(dir.to_path_buf(), e))?;
    check_destination(dir, variant.name())?;
    let dest = path(dir, variant.name());
    let tmp = temp_path(dir, variant.name(), std::process::id());
    let _pending = Pending::register(&tmp);
    let result = write_file(&tmp, variant, solved, layout).and_then(|()| {
        // Looked at again: the write may have taken hours.
        check_destination(dir, variant.name())?;
        fs::rename(&tmp, &dest).map_err(|e| Error::Io(dest.clone(), e))?;
        // Make the rename itself durable.
        files::sync_dir(dir);
        Ok(())
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map(|()| dest)
}

/// Block checksums of the two-bit tables are computed this many white sets
/// at a time, in parallel, and then written in order.
const PACK_BATCH: u64 = 1 << 14;

/// The packed two-bit block (see [`pack`]) of each white set in `range` of
/// the searched class `k`, with its checksum; empty blocks are left out.
fn residue_blocks(solution: &TwoBitSolution, k: usize, range: std::ops::Range<u64>) -> Vec<(u64, Vec<u8>, Checksum)> {
    let class = &solution.classes[k];
    let Residues::Searched(table) = &class.residues else {
        unreachable!("only a searched class has blocks of its own")
    };
    range
        .into_par_iter()
        .filter_map(|r| {
            let block = class.index.block(r);
            if block.is_empty() {
                return None;
            }
            let packed = table.pack_range(block);
            let checksum = block_checksum(class.class.index(), r, &packed);
            Some((r, packed, checksum))
        })
        .collect()
}

/// The code of an unreachable position in a packed two-bit block.
const UNREACHABLE_CODE: u8 = 3;

/// Packs two-bit codes (0 to 2: remoteness mod 3; 3: unreachable) four to a
/// byte, the first in the low bits; the last byte is padded with 3.
///
/// ```
/// assert_eq!(bishops::storage::pack([0u8, 1, 2, 3, 1].into_iter()), [0b11_10_01_00, 0b11_11_11_01]);
/// ```
pub fn pack(codes: impl Iterator<Item = u8>) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(codes.size_hint().0.div_ceil(4));
    let (mut byte, mut filled) = (0u8, 0);
    for code in codes {
        byte |= (code & 3) << (2 * filled);
        filled += 1;
        if filled == 4 {
            bytes.push(byte);
            (byte, filled) = (0, 0);
        }
    }
    if filled > 0 {
        bytes.push(byte | (0xff << (2 * filled)));
    }
    bytes
}

/// The `len` codes packed in `bytes` by [`pack`]; `None` when `bytes` has
/// another length or its padding is not 3.
///
/// ```
/// use bishops::storage::{pack, unpack};
/// assert_eq!(unpack(&pack([2u8, 0, 1].into_iter()), 3), Some(vec![2, 0, 1]));
/// assert_eq!(unpack(&[0b0000_0001], 1), None);
/// ```
pub fn unpack(bytes: &[u8], len: usize) -> Option<Vec<u8>> {
    if bytes.len() != len.div_ceil(4) {
        return None;
    }
    let codes: Vec<u8> = bytes
        .iter()
        .flat_map(|&b| [b & 3, b >> 2 & 3, b >> 4 & 3, b >> 6])
        .collect();
    codes[len..].iter().all(|&c| c == UNREACHABLE_CODE).then(|| {
        let mut codes = codes;
        codes.truncate(len);
        codes
    })
}

fn write_file(tmp: &Path, variant: &Variant, solved: &Solved<'_>, layout: Layout) -> Result<()> {
    let _ = fs::remove_file(tmp);
    let sql = |e| Error::Sqlite(tmp.to_path_buf(), e);
    let mut conn = Connection::open_with_flags(
        tmp,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql)?;
    // The file is private until renamed, so no journal is needed.
    // Large pages keep the blobs of big boards off overflow chains.
    conn.execute_batch("PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
        .map_err(sql)?;
    let tx = conn.transaction().map_err(sql)?;
    tx.execute_batch(SCHEMA).map_err(sql)?;
    let starts = variant.class_hashes(variant.start());
    let goals = variant.class_hashes(&variant.goal());
    let mut start_remoteness = Some(Remoteness(0));
    let (mut legal, mut reachable, mut max) = (1u128, 1u128, Some(Remoteness(0)));
    {
        let mut row = tx
            .prepare("INSERT INTO positions (class, hash, remoteness) VALUES (?1, ?2, ?3)")
            .map_err(sql)?;
        let mut row_checksum = tx
            .prepare("INSERT INTO row_checksums (class, white, checksum) VALUES (?1, ?2, ?3)")
            .map_err(sql)?;
        let mut block_row = tx
            .prepare("INSERT INTO blocks (class, white, data, checksum) VALUES (?1, ?2, ?3, ?4)")
            .map_err(sql)?;
        let mut class_row = tx
            .prepare("INSERT INTO classes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)")
            .map_err(sql)?;
        let mut class_checksums = Vec::new();
        for (k, spec) in variant.classes().iter().enumerate() {
            let class = spec.class.index() as i64;
            let mut checksum = Checksum::default();
            match solved {
                // The class checksum is that of the block checksums, so that
                // it is computed in parallel; a mirrored class's blocks are
                // derived (and checksummed) but not stored.
                // A mirrored class has no blocks and takes its source's
                // checksum: every read of it is a checked read of the source.
                Solved::TwoBit(solution) => match &solution.classes[k].residues {
                    Residues::Mirrored { from, .. } => checksum = class_checksums[*from],
                    Residues::Searched(_) => {
                        let white_sets = solution.classes[k].index.white_sets();
                        for first in (0..white_sets).step_by(PACK_BATCH as usize) {
                            let batch = residue_blocks(solution, k, first..(first + PACK_BATCH).min(white_sets));
                            for (r, packed, block_sum) in batch {
                                checksum.add(&block_sum.signed().to_le_bytes());
                                block_row
                                    .execute(params![class, r as i64, packed, block_sum.signed()])
                                    .map_err(sql)?;
                            }
                        }
                    }
                },
                Solved::Bytes(solution) => {
                    let table = &solution.classes[k];
                    let index = &table.index;
                    match &table.table {
                        // A mirrored class has no rows or blocks of its own
                        // and takes its source's checksum, as in the
                        // residues layout.
                        ClassTable::Mirrored { from, .. } => checksum = class_checksums[*from],
                        ClassTable::Own(all) => {
                            checksum.add(all);
                            for r in 0..index.white_sets() {
                                let block = index.block(r);
                                let cells = &all[block.start as usize..block.end as usize];
                                if cells.is_empty() {
                                    continue;
                                }
                                let block_sum = block_checksum(spec.class.index(), r, cells).signed();
                                match layout {
                                    Layout::Blocks | Layout::Residues => {
                                        block_row
                                            .execute(params![class, r as i64, cells, block_sum])
                                            .map_err(sql)?;
                                    }
                                    Layout::Rows => {
                                        let white = colex_unrank(r, index.white());
                                        for (black, &byte) in Subsets::new(index.safe(r), index.black()).zip(cells) {
                                            let hash = spec.index.rank(Part { white, black });
                                            row.execute(params![
                                                class,
                                                hash as i64,
                                                Cell(byte).remoteness().map(|r| r.0)
                                            ])
                                            .map_err(sql)?;
                                        }
                                        row_checksum.execute(params![class, r as i64, block_sum]).map_err(sql)?;
                                    }
                                }
                            }
                        }
                    }
                }
            }
            let stats = solved.stats(k);
            let (white, black) = spec.counts();
            class_row
                .execute(params![
                    class,
                    spec.geometry.len() as i64,
                    white,
                    black,
                    spec.index.len() as i64,
                    starts[k] as i64,
                    goals[k] as i64,
                    stats.legal as i64,
                    stats.reachable as i64,
                    stats.max_remoteness().map(|r| r.0),
                    serde_json::to_string(&stats.histogram).expect("numbers serialize"),
                    serde_json::to_string(&stats.hardest).expect("numbers serialize"),
                    solved.is_mirrored(k),
                    checksum.hex(),
                ])
                .map_err(sql)?;
            class_checksums.push(checksum);
            start_remoteness = sum(start_remoteness, solved.remoteness(spec, k, starts[k])?);
            max = sum(max, stats.max_remoteness());
            legal *= u128::from(stats.legal);
            reachable *= u128::from(stats.reachable);
        }
    }
    let created = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let meta: Vec<(&str, String)> = vec![
        ("format", "bishops".into()),
        ("layout", layout.name().into()),
        ("format_version", FORMAT_VERSION.to_string()),
        ("variant", variant.name().into()),
        ("description", variant.description().into()),
        ("board", variant.board().to_string()),
        ("start", variant.start().to_string()),
        ("goal", variant.goal().to_string()),
        ("hash_scheme", crate::index::HASH_SCHEME.into()),
        ("hash_version", crate::index::HASH_VERSION.to_string()),
        ("legal_positions", legal.to_string()),
        ("reachable_positions", reachable.to_string()),
        ("max_remoteness", max.map_or(String::new(), |r| r.to_string())),
        (
            "start_remoteness",
            start_remoteness.map_or(String::new(), |r| r.to_string()),
        ),
        ("program_version", env!("CARGO_PKG_VERSION").into()),
        ("solve_seconds", format!("{:.6}", solved.elapsed().as_secs_f64())),
        ("created_unix", created.to_string()),
    ];
    for (key, value) in meta {
        tx.execute("INSERT INTO meta VALUES (?1, ?2)", params![key, value])
            .map_err(sql)?;
    }
    let header = header_checksum(&tx).map_err(sql)?;
    tx.execute("INSERT INTO meta VALUES ('header_checksum', ?1)", [header])
        .map_err(sql)?;
    tx.commit().map_err(sql)?;
    conn.close().map_err(|(_, e)| sql(e))?;
    files::open_regular(tmp, fs::OpenOptions::new().read(true), Links::Refuse)
        .map_err(|e| match e {
            OpenError::NotRegular(kind) => std::io::Error::other(format!("it is {kind}")),
            OpenError::Io(e) => e,
        })
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::Io(tmp.to_path_buf(), e))
}

fn sum(a: Option<Remoteness>, b: Option<Remoteness>) -> Option<Remoteness> {
    Some(a? + b?)
}

/// What a database says of one class, checked when it was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassRecord {
    /// The class number (0: a1's class, 1: a2's).
    pub class: usize,
    /// R(n, w, b).
    pub hash_size: u64,
    /// The counts and hardest positions.
    pub stats: ClassStats,
    /// The checksum of the class's whole table, as written.
    pub checksum: String,
}

/// The `meta` table of a database, read and checked once when it is opened:
/// what the file says of itself and of the whole variant.
#[derive(Clone, Debug, PartialEq)]
pub struct Metadata {
    /// The variant's name.
    pub variant: String,
    /// How the tables are held.
    pub layout: Layout,
    /// The variant's start, as a position string.
    pub start: String,
    /// Legal positions of the whole variant: the product over its classes.
    pub legal_positions: Option<u128>,
    /// Legal positions of the whole variant that reach the goal.
    pub reachable_positions: Option<u128>,
    /// The largest remoteness of any whole position; `None` when no
    /// position reaches the goal.
    pub max_remoteness: Option<Remoteness>,
    /// The remoteness of the start; `None` when unreachable.
    pub start_remoteness: Option<Remoteness>,
    /// The version of `bishops` that wrote the file.
    pub program_version: Option<String>,
    /// Seconds the solve took, indices included.
    pub solve_seconds: Option<f64>,
    /// When the file was written, in seconds since 1970.
    pub created_unix: Option<u64>,
}

/// How many checked blocks a [`Database`] keeps in memory: a probe reads the
/// block of its position and of each move's, and many of those are shared.
const BLOCK_CACHE: usize = 64;

/// A checked block kept in memory: (class number k, white rank, cells).
type CachedBlock = (usize, u64, Arc<[u8]>);

/// An open, checked database of one variant.
pub struct Database {
    conn: Connection,
    path: PathBuf,
    metadata: Metadata,
    specs: Vec<ClassSpec>,
    classes: Vec<ClassRecord>,
    /// For each class stored as the mirror image of another: that class and
    /// the map from this class's cells to its.
    mirrors: Vec<Option<(usize, Mirror)>>,
    /// Blocks read and checked lately, oldest first.
    cache: RefCell<Vec<CachedBlock>>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("path", &self.path).finish()
    }
}

/// A class row as stored, before it is checked.
struct RawClass {
    class: i64,
    squares: i64,
    white: i64,
    black: i64,
    hash_size: i64,
    start_hash: i64,
    goal_hash: i64,
    legal: i64,
    reachable: i64,
    max_remoteness: Option<i64>,
    histogram: String,
    hardest: String,
    mirrored: i64,
    checksum: String,
}

impl Database {
    /// Opens the database of `variant` in `dir` and checks everything it
    /// says short of reading its tables whole: that it is complete, of this
    /// format and hash version and of this variant's start; that its header
    /// matches its checksum; that every count, histogram and hardest
    /// position is consistent with the others and with the variant; and that
    /// the metadata repeats what the tables say of the start and the goal.
    ///
    /// # Errors
    ///
    /// [`Error::NotSolved`] when there is no file, [`Error::DbPath`] when
    /// `dir` is a file or the database path holds anything but a regular
    /// file (or a link to one: a directory, a FIFO, a device, a socket),
    /// which is left unopened; [`Error::Corrupt`] when there is a file that
    /// cannot be trusted.
    pub fn open(dir: &Path, variant: &Variant) -> Result<Database> {
        let path = path(dir, variant.name());
        let corrupt = |problem: String| Error::Corrupt {
            path: path.clone(),
            problem,
            variant: variant.name().to_owned(),
        };
        check_dir(dir)?;
        // A FIFO there would hold SQLite's open forever: only a regular
        // file (or a link to one) is handed to it.
        let len = match files::open_regular(&path, fs::OpenOptions::new().read(true), Links::Follow) {
            Ok(file) => file.metadata().map_err(|e| Error::Io(path.clone(), e))?.len(),
            Err(OpenError::NotRegular(kind)) => return Err(not_a_database(&path, kind, variant.name())),
            Err(OpenError::Io(e)) if e.kind() == ErrorKind::NotFound => {
                return Err(Error::NotSolved {
                    variant: variant.name().to_owned(),
                    path,
                    why: None,
                });
            }
            Err(OpenError::Io(e)) => return Err(Error::Io(path, e)),
        };
        let sqlite = |e: rusqlite::Error| corrupt(format!("cannot be read ({})", clip(&e.to_string(), 80)));
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sqlite)?;
        let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0)).map_err(sqlite)?;
        let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).map_err(sqlite)?;
        let expected = pages.checked_mul(page_size).and_then(|b| u64::try_from(b).ok());
        if expected != Some(len) || len == 0 {
            return Err(corrupt(format!(
                "is truncated or padded: {len} bytes, its header says {}",
                expected.map_or("an impossible size".into(), |e| e.to_string())
            )));
        }
        let meta = |key: &str| read_meta(&conn, key).map_err(sqlite);
        if meta("format")?.as_deref() != Some("bishops") {
            return Err(corrupt("is not a bishops database".into()));
        }
        let version = meta("format_version")?.unwrap_or_default();
        if version != FORMAT_VERSION.to_string() {
            return Err(corrupt(format!(
                "is of format version {}, this program reads version {FORMAT_VERSION}",
                clip(&version, 20)
            )));
        }
        if meta("header_checksum")? != Some(header_checksum(&conn).map_err(sqlite)?) {
            return Err(corrupt(
                "fails its header checksum: its metadata or class records were changed".into(),
            ));
        }
        let hash_version = meta("hash_version")?.unwrap_or_default();
        if hash_version != crate::index::HASH_VERSION.to_string() {
            return Err(corrupt(format!(
                "uses hash version {}, this program uses version {}",
                clip(&hash_version, 20),
                crate::index::HASH_VERSION
            )));
        }
        if meta("variant")?.as_deref() != Some(variant.name())
            || meta("start")?.as_deref() != Some(&variant.start().to_string())
        {
            return Err(corrupt(format!(
                "is not of variant {} with start {}",
                variant.name(),
                variant.start()
            )));
        }
        let layout = match meta("layout")?.as_deref() {
            Some("rows") => Layout::Rows,
            Some("blocks") => Layout::Blocks,
            Some("residues") => Layout::Residues,
            other => {
                return Err(corrupt(format!(
                    "has an unknown layout `{}`",
                    clip(other.unwrap_or_default(), 20)
                )));
            }
        };
        let raw = read_classes(&conn).map_err(sqlite)?;
        let expected: Vec<i64> = variant.classes().iter().map(|s| s.class.index() as i64).collect();
        let found: Vec<i64> = raw.iter().map(|c| c.class).collect();
        if expected != found {
            return Err(corrupt(format!("has classes {found:?}, the variant has {expected:?}")));
        }
        let starts = variant.class_hashes(variant.start());
        let goals = variant.class_hashes(&variant.goal());
        let variant_mirrors = crate::solver::mirrors(variant.classes());
        let mut classes: Vec<ClassRecord> = Vec::new();
        let mut mirrors = Vec::new();
        for (k, (spec, raw)) in variant.classes().iter().zip(&raw).enumerate() {
            let damaged = |what: String| corrupt(format!("has a damaged record of class {}: {what}", raw.class));
            let record = check_class(spec, raw, starts[k], goals[k]).map_err(damaged)?;
            // A mirrored class has no table of its own: it is answered
            // through class 0, so it must be that class's mirror image and
            // count what it counts.
            let mirror = match (raw.mirrored, &variant_mirrors[k]) {
                (0, _) => None,
                (_, Some((0, mirror))) => {
                    let source = &classes[0].stats;
                    if (record.stats.legal, record.stats.reachable, &record.stats.histogram)
                        != (source.legal, source.reachable, &source.histogram)
                    {
                        return Err(damaged(format!(
                            "it is mirrored from class {}, but its counts differ",
                            classes[0].class
                        )));
                    }
                    Some((0, mirror.clone()))
                }
                _ => {
                    return Err(damaged(
                        "it is marked mirrored, but it is not the mirror image of class 0".into(),
                    ));
                }
            };
            classes.push(record);
            mirrors.push(mirror);
        }
        let text = |key: &str| -> Result<Option<String>> { Ok(meta(key)?.filter(|v| !v.is_empty())) };
        let parse =
            |key: &str, value: &str| corrupt(format!("has an unreadable {key} `{}` in its metadata", clip(value, 20)));
        let remoteness = |key: &str| -> Result<Option<Remoteness>> {
            text(key)?
                .map(|v| v.parse::<u16>().map(Remoteness).map_err(|_| parse(key, &v)))
                .transpose()
        };
        let number = |key: &str| -> Result<Option<u128>> {
            text(key)?.map(|v| v.parse().map_err(|_| parse(key, &v))).transpose()
        };
        let metadata = Metadata {
            variant: variant.name().to_owned(),
            layout,
            start: variant.start().to_string(),
            legal_positions: number("legal_positions")?,
            reachable_positions: number("reachable_positions")?,
            max_remoteness: remoteness("max_remoteness")?,
            start_remoteness: remoteness("start_remoteness")?,
            // What the file says of its own making cannot be checked against
            // the tables, only for form: it must be there and well formed.
            program_version: Some(text("program_version")?.ok_or_else(|| parse("program_version", ""))?),
            solve_seconds: Some(
                text("solve_seconds")?
                    .and_then(|v| v.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0))
                    .ok_or_else(|| {
                        parse(
                            "solve_seconds",
                            &meta("solve_seconds").ok().flatten().unwrap_or_default(),
                        )
                    })?,
            ),
            created_unix: Some(
                text("created_unix")?
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or_else(|| parse("created_unix", &meta("created_unix").ok().flatten().unwrap_or_default()))?,
            ),
        };
        let database = Database {
            conn,
            path,
            metadata,
            specs: variant.classes().to_vec(),
            classes,
            mirrors,
            cache: RefCell::new(Vec::new()),
        };
        database.check_metadata(&starts, &goals)?;
        Ok(database)
    }

    /// Checks that the metadata repeats what the class records and the
    /// tables say: the counts, the largest remoteness, the start's
    /// remoteness, the goal at 0 and the hardest positions at the largest.
    fn check_metadata(&self, starts: &[u64], goals: &[u64]) -> Result<()> {
        let meta = &self.metadata;
        let stats = || self.classes.iter().map(|c| &c.stats);
        let legal = stats().try_fold(1u128, |p, s| p.checked_mul(u128::from(s.legal)));
        let reachable = stats().try_fold(1u128, |p, s| p.checked_mul(u128::from(s.reachable)));
        let max = stats().try_fold(Remoteness(0), |m, s| Some(m + s.max_remoteness()?));
        let mismatch = |key: &str, stored: String, actual: String| {
            self.corrupt(format!(
                "says {key} is {stored} in its metadata, but its tables say {actual}"
            ))
        };
        let show = |v: Option<String>| v.unwrap_or_else(|| "nothing".into());
        if meta.legal_positions != legal {
            return Err(mismatch(
                "legal_positions",
                show(meta.legal_positions.map(|v| v.to_string())),
                show(legal.map(|v| v.to_string())),
            ));
        }
        if meta.reachable_positions != reachable {
            return Err(mismatch(
                "reachable_positions",
                show(meta.reachable_positions.map(|v| v.to_string())),
                show(reachable.map(|v| v.to_string())),
            ));
        }
        if meta.max_remoteness != max {
            return Err(mismatch(
                "max_remoteness",
                show(meta.max_remoteness.map(|v| v.to_string())),
                show(max.map(|v| v.to_string())),
            ));
        }
        let mut start = Some(Remoteness(0));
        for (k, (&s, &g)) in starts.iter().zip(goals).enumerate() {
            start = sum(start, self.remoteness_of(k, s)?);
            if self.cell(k, g)? != Cell(0) {
                return Err(self.corrupt(format!(
                    "does not give the goal remoteness 0 in class {}",
                    self.classes[k].class
                )));
            }
            let record = &self.classes[k];
            for &hash in &record.stats.hardest {
                // A descent per hardest position would cost every open of a
                // two-bit table dearly: its residue is checked instead.
                let stored = match self.metadata.layout {
                    Layout::Residues => {
                        let part = self.legal_part(k, hash).ok_or_else(|| self.not_legal(k, hash))?;
                        let residue = self.residue(k, part)?;
                        let max = record.stats.max_remoteness();
                        (residue.map(u16::from) == max.map(|r| r.0 % 3))
                            .then_some(max)
                            .flatten()
                    }
                    Layout::Rows | Layout::Blocks => self.remoteness_of(k, hash)?,
                };
                if stored != record.stats.max_remoteness() {
                    return Err(self.corrupt(format!(
                        "lists hash {hash} among the hardest of class {}, but its table disagrees",
                        record.class
                    )));
                }
            }
        }
        if meta.start_remoteness != start {
            return Err(mismatch(
                "start_remoteness",
                show(meta.start_remoteness.map(|v| v.to_string())),
                show(start.map(|v| v.to_string())),
            ));
        }
        Ok(())
    }

    /// What the file says of itself, checked when it was opened.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Per class: counts, histogram, hardest positions, checked when the file
    /// was opened for consistency (and by [`Database::verify`] against the
    /// tables).
    pub fn classes(&self) -> &[ClassRecord] {
        &self.classes
    }

    fn read_error(&self, e: rusqlite::Error) -> Error {
        self.corrupt(format!("cannot be read ({})", clip(&e.to_string(), 80)))
    }

    /// The checked cells of the white set of colex rank `white` in the `k`-th
    /// class, from memory when read lately.
    fn block(&self, k: usize, white: u64) -> Result<Arc<[u8]>> {
        if let Some((_, _, cells)) = self.cache.borrow().iter().find(|(c, w, _)| (*c, *w) == (k, white)) {
            return Ok(Arc::clone(cells));
        }
        let cells: Arc<[u8]> = self.read_block(k, white)?.into();
        let mut cache = self.cache.borrow_mut();
        if cache.len() == BLOCK_CACHE {
            cache.remove(0);
        }
        cache.push((k, white, Arc::clone(&cells)));
        Ok(cells)
    }

    /// Reads the cells of the white set of colex rank `white` in the `k`-th
    /// class, in colex order of their black sets among the safe cells, and
    /// checks them: as many as the white set has legal positions, each a
    /// remoteness or unreachable, at the right hashes (rows layout), and
    /// matching the block's checksum.
    fn read_block(&self, k: usize, white: u64) -> Result<Vec<u8>> {
        self.read_block_summed(k, white).map(|(cells, _)| cells)
    }

    /// [`read_block`](Self::read_block), with the block's checksum when it
    /// is a stored two-bit block (residues layout, a class of its own): the
    /// stored checksum, which the packed bytes were just checked against,
    /// and so the checksum of [`pack`] of the codes returned, as
    /// [`unpack`] refuses any bytes that do not pack back to themselves.
    /// `None` for the other layouts, whose class checksum is of the cells,
    /// and for a mirrored class.
    fn read_block_summed(&self, k: usize, white: u64) -> Result<(Vec<u8>, Option<Checksum>)> {
        let spec = &self.specs[k];
        let class = self.classes[k].class;
        let (white_count, black_count) = spec.counts();
        let white_set = colex_unrank(white, white_count);
        let safe = safe_cells(&spec.geometry, white_set);
        let len = binomial(safe.count(), black_count);
        if len == 0 {
            return Ok((Vec::new(), None));
        }
        let wrong = |what: String| self.corrupt(format!("has {what} in white set {white} of class {class}"));
        if let Some((from, mirror)) = &self.mirrors[k] {
            // One source block, checked as it is read, permuted.
            let image = mirror.cells(white_set);
            let source = self.read_block(*from, colex_rank(image))?;
            if source.len() as u64 != len {
                return Err(wrong(format!("a mirror image of {} positions for {len}", source.len())));
            }
            let mut cells = vec![0u8; len as usize];
            let image_safe = safe_cells(&self.specs[*from].geometry, image);
            mirror.block(safe, black_count, image_safe, &source, &mut cells);
            return Ok((cells, None));
        }
        let read = |e| self.read_error(e);
        let (cells, stored) = match self.metadata.layout {
            Layout::Blocks | Layout::Residues => {
                let row = self
                    .conn
                    .prepare_cached("SELECT data, checksum FROM blocks WHERE class = ?1 AND white = ?2")
                    .and_then(|mut st| {
                        st.query_row(params![class as i64, white as i64], |r| {
                            Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, i64>(1)?))
                        })
                        .optional()
                    })
                    .map_err(read)?;
                let (data, checksum) = row.ok_or_else(|| wrong("no block".into()))?;
                let bytes = if self.metadata.layout == Layout::Residues {
                    len.div_ceil(4)
                } else {
                    len
                };
                if data.len() as u64 != bytes {
                    return Err(wrong(format!("a block of {} bytes for {len} positions", data.len())));
                }
                if self.metadata.layout == Layout::Residues {
                    let sum = block_checksum(class, white, &data);
                    if sum.signed() != checksum {
                        return Err(wrong("a block that fails its checksum".into()));
                    }
                    let codes = unpack(&data, len as usize).ok_or_else(|| wrong("a block with bad padding".into()))?;
                    return Ok((codes, Some(sum)));
                }
                (data, checksum)
            }
            Layout::Rows => {
                let size = binomial(spec.geometry.len() as u32 - white_count, black_count);
                let low = white * size;
                let mut expected = Subsets::new(safe, black_count).map(|black| {
                    spec.index.rank(Part {
                        white: white_set,
                        black,
                    })
                });
                let mut cells = Vec::with_capacity(len as usize);
                let mut st = self
                    .conn
                    .prepare_cached(
                        "SELECT hash, remoteness FROM positions WHERE class = ?1 AND hash >= ?2 AND hash < ?3 ORDER BY hash",
                    )
                    .map_err(read)?;
                let mut rows = st
                    .query(params![class as i64, low as i64, (low + size) as i64])
                    .map_err(read)?;
                while let Some(row) = rows.next().map_err(read)? {
                    let hash = row.get::<_, i64>(0).map_err(read)?;
                    match expected.next() {
                        Some(legal) if legal as i64 == hash => {}
                        Some(legal) if (legal as i64) < hash => {
                            return Err(wrong(format!("no row for the legal hash {legal}")));
                        }
                        _ => return Err(wrong(format!("a row at hash {hash}, where no legal position is"))),
                    }
                    cells.push(match row.get::<_, Option<i64>>(1).map_err(read)? {
                        None => Cell::UNREACHABLE.0,
                        Some(r) if (0..=i64::from(Cell::MAX_REMOTENESS)).contains(&r) => r as u8,
                        Some(r) => return Err(wrong(format!("a remoteness of {r} at hash {hash}"))),
                    });
                }
                if let Some(hash) = expected.next() {
                    return Err(wrong(format!("no row for the legal hash {hash}")));
                }
                let checksum = self
                    .conn
                    .prepare_cached("SELECT checksum FROM row_checksums WHERE class = ?1 AND white = ?2")
                    .and_then(|mut st| {
                        st.query_row(params![class as i64, white as i64], |r| r.get::<_, i64>(0))
                            .optional()
                    })
                    .map_err(read)?
                    .ok_or_else(|| wrong("no checksum".into()))?;
                (cells, checksum)
            }
        };
        if block_checksum(class, white, &cells).signed() != stored {
            return Err(wrong("a block that fails its checksum".into()));
        }
        if cells.contains(&Cell::ILLEGAL.0) {
            return Err(wrong("a cell marked illegal".into()));
        }
        Ok((cells, None))
    }

    /// How the tables are held.
    pub fn layout(&self) -> Layout {
        self.metadata.layout
    }

    /// The legal part of class `k` whose hash is `hash`; `None` when no legal
    /// position has that hash.
    fn legal_part(&self, k: usize, hash: u64) -> Option<Part> {
        let spec = &self.specs[k];
        if hash >= spec.index.len() {
            return None;
        }
        let part = spec.index.unrank(hash);
        part.black
            .is_subset(safe_cells(&spec.geometry, part.white))
            .then_some(part)
    }

    /// What the table holds for the legal part `part` of class `k`: its
    /// cell, or in the residues layout its two-bit code.
    fn stored(&self, k: usize, part: Part) -> Result<u8> {
        // A mirrored class is answered by the image position in its source:
        // one cell read, not a whole block permuted.
        if let Some((from, mirror)) = &self.mirrors[k] {
            return self.stored(*from, mirror.part(part));
        }
        let safe = safe_cells(&self.specs[k].geometry, part.white);
        let cells = self.block(k, colex_rank(part.white))?;
        Ok(cells[rank_within(part.black, safe) as usize])
    }

    /// The remoteness mod 3 of the legal part `part` of class `k` in the
    /// residues layout, `None` when it cannot reach the goal.
    fn residue(&self, k: usize, part: Part) -> Result<Option<u8>> {
        let code = self.stored(k, part)?;
        Ok((code != UNREACHABLE_CODE).then_some(code))
    }

    /// The exact remoteness of the legal part `part` of class `k` in the
    /// residues layout: the length of a walk to the goal, each step to a
    /// neighbour one less mod 3, which is one move closer
    /// ([`exact::descend`]).
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when a block cannot be read, or the walk finds no
    /// closer neighbour, takes more steps than the class's largest
    /// remoteness, or ends at a goal whose residue is not 0: a table no
    /// search leaves.
    fn descend(&self, k: usize, part: Part) -> Result<Option<Remoteness>> {
        let spec = &self.specs[k];
        let record = &self.classes[k];
        let max = record.stats.max_remoteness().map_or(0, |r| r.0);
        // A failed read ends the walk; its error is the one reported.
        let mut failed = None;
        let descent = exact::descend(&spec.geometry, spec.goal, part, max, |p| match self.residue(k, p) {
            Ok(residue) => residue,
            Err(e) => {
                failed.get_or_insert(e);
                None
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        descent
            .map(|d| d.map(|d| d.remoteness))
            .map_err(|e| self.corrupt(format!("fails a descent in class {}: {e}", record.class)))
    }

    /// The residues of the `k`-th class in tight-index order (the order of
    /// its blocks), each block checked as it is read: the whole two-bit
    /// table in memory, a quarter of a byte per position (a mirrored class
    /// holds its source's for a while too).
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when the table is damaged; [`Error::Usage`] when
    /// the database is not of the residues layout.
    pub fn residues(&self, k: usize) -> Result<Mod3Table> {
        if self.metadata.layout != Layout::Residues {
            return Err(Error::Usage(format!(
                "{} holds a byte per position, not residues",
                self.path.display()
            )));
        }
        if let Some((from, mirror)) = &self.mirrors[k] {
            return self.mirrored_residues(k, *from, mirror);
        }
        let mut table = Mod3Table::new(self.classes[k].stats.legal);
        let mut i = 0u64;
        self.for_each_block(k, |_, codes| {
            for &code in codes {
                // A table longer than its record fails for_each_block at the end.
                if i < table.len() {
                    table.set(i, (code != UNREACHABLE_CODE).then_some(code));
                }
                i += 1;
            }
            Ok(())
        })?;
        Ok(table)
    }

    /// The residues of the `k`-th class, the mirror image of class `from`
    /// through `mirror`, from the checked residues of `from` in memory: each
    /// block is a permutation of its image's block, built in parallel.
    fn mirrored_residues(&self, k: usize, from: usize, mirror: &Mirror) -> Result<Mod3Table> {
        let source = self.residues(from)?;
        let index_of = |spec: &ClassSpec| TightIndex::new(&spec.geometry, spec.counts().0, spec.counts().1);
        let (index, source_index) = (index_of(&self.specs[k]), index_of(&self.specs[from]));
        if source.len() != source_index.len() || index.len() != self.classes[k].stats.legal {
            return Err(self.corrupt(format!(
                "has a class {} of another size than its mirror image",
                self.classes[k].class
            )));
        }
        let mut table = Mod3Table::new(index.len());
        let white_sets = index.white_sets();
        for first in (0..white_sets).step_by(PACK_BATCH as usize) {
            let blocks: Vec<(u64, Vec<u8>)> = (first..(first + PACK_BATCH).min(white_sets))
                .into_par_iter()
                .filter_map(|r| {
                    let block = index.block(r);
                    if block.is_empty() {
                        return None;
                    }
                    let image = colex_rank(mirror.cells(colex_unrank(r, index.white())));
                    let codes: Vec<u8> = source_index
                        .block(image)
                        .map(|i| source.get(i).unwrap_or(UNREACHABLE_CODE))
                        .collect();
                    let mut cells = vec![0u8; (block.end - block.start) as usize];
                    mirror.block(
                        index.safe(r),
                        index.black(),
                        source_index.safe(image),
                        &codes,
                        &mut cells,
                    );
                    Some((block.start, cells))
                })
                .collect();
            for (start, cells) in blocks {
                for (i, &code) in (start..).zip(&cells) {
                    table.set(i, (code != UNREACHABLE_CODE).then_some(code));
                }
            }
        }
        Ok(table)
    }

    /// The exact remoteness of every position of the `k`-th class of a
    /// residues database as byte cells in tight-index order, resolved in
    /// memory ([`exact::resolve`]): 1.25 bytes per position.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`] when that does not fit in the memory available;
    /// [`Error::Corrupt`] when the table is damaged or cannot be resolved.
    fn exact_cells(&self, k: usize) -> Result<Vec<u8>> {
        let spec = &self.specs[k];
        let record = &self.classes[k];
        let need = record.stats.legal + record.stats.legal.div_ceil(4);
        if let Some(available) = crate::system::available_memory()
            && need > available
        {
            return Err(Error::TooLarge(format!(
                "reading every position of class {} of {} needs {} of memory for its exact values, only {} is available; ask for positions one at a time (query, or check --sample)",
                record.class,
                self.metadata.variant,
                crate::system::human_bytes(need),
                crate::system::human_bytes(available)
            )));
        }
        let residues = self.residues(k)?;
        let (white, black) = spec.counts();
        let index = TightIndex::new(&spec.geometry, white, black);
        exact::resolve(spec, &index, &residues, record.stats.max_remoteness())
            .map_err(|e| self.corrupt(format!("cannot be resolved in class {}: {e}", record.class)))
    }

    /// The cell of `hash` in the `k`-th class of the variant: one checked
    /// block read, or in the residues layout the exact remoteness found by
    /// descent. A hash that names no legal position is [`Cell::ILLEGAL`].
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when a block cannot be read or fails its checks,
    /// or a descent fails.
    pub fn cell(&self, k: usize, hash: u64) -> Result<Cell> {
        let Some(part) = self.legal_part(k, hash) else {
            return Ok(Cell::ILLEGAL);
        };
        if self.metadata.layout == Layout::Residues {
            return Ok(match self.descend(k, part)? {
                Some(r) => Cell(u8::try_from(r.0).unwrap_or(Cell::MAX_REMOTENESS)),
                None => Cell::UNREACHABLE,
            });
        }
        Ok(Cell(self.stored(k, part)?))
    }

    /// The remoteness of the legal class part `hash` of the `k`-th class,
    /// `None` when it cannot reach the goal.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when the part is not in the table: it was checked
    /// legal, so the table is wrong.
    pub fn remoteness_of(&self, k: usize, hash: u64) -> Result<Option<Remoteness>> {
        let cell = self.cell(k, hash)?;
        if !cell.is_legal() {
            return Err(self.not_legal(k, hash));
        }
        Ok(cell.remoteness())
    }

    fn not_legal(&self, k: usize, hash: u64) -> Error {
        self.corrupt(format!(
            "names hash {hash} of class {}, which is not a legal position",
            self.classes[k].class
        ))
    }

    /// As [`remoteness_of`](Self::remoteness_of), for a class part one move
    /// from a part whose remoteness is known to be `beside`: in the residues
    /// layout that takes one lookup instead of a descent, as a neighbour is
    /// one closer, as far or one further, and those three differ mod 3.
    ///
    /// # Errors
    ///
    /// As [`remoteness_of`](Self::remoteness_of), and [`Error::Corrupt`]
    /// when the part and its neighbour disagree on reaching the goal.
    pub fn remoteness_beside(&self, k: usize, hash: u64, beside: Option<Remoteness>) -> Result<Option<Remoteness>> {
        if self.metadata.layout != Layout::Residues {
            return self.remoteness_of(k, hash);
        }
        let part = self.legal_part(k, hash).ok_or_else(|| self.not_legal(k, hash))?;
        let residue = self.residue(k, part)?;
        let value = match (beside, residue) {
            (None, None) => return Ok(None),
            (Some(r), Some(residue)) => [r.0.checked_sub(1), Some(r.0), r.0.checked_add(1)]
                .into_iter()
                .flatten()
                .find(|v| v % 3 == u16::from(residue)),
            _ => None,
        };
        value.map(|v| Some(Remoteness(v))).ok_or_else(|| {
            self.corrupt(format!(
                "gives hash {hash} of class {} a value that no neighbour of a position at {} can have",
                self.classes[k].class,
                beside.map_or("no remoteness".into(), |r| format!("remoteness {r}"))
            ))
        })
    }

    /// The remoteness of a position given by its class hashes, `None` when it
    /// cannot reach the goal.
    ///
    /// # Errors
    ///
    /// As [`Database::remoteness_of`].
    pub fn remoteness(&self, hashes: &[u64]) -> Result<Option<Remoteness>> {
        let mut total = Some(Remoteness(0));
        for (k, &hash) in hashes.iter().enumerate() {
            total = sum(total, self.remoteness_of(k, hash)?);
        }
        Ok(total)
    }

    /// Calls `f(hash, part, cell)` for every legal position of the `k`-th
    /// class in hash order, reading and checking the table block by block,
    /// then checks the whole table against its checksum and its row count.
    /// In the residues layout each cell is the exact remoteness, resolved
    /// in memory first (see [`Database::residues`]).
    ///
    /// # Errors
    ///
    /// What `f` returns, or [`Error::Corrupt`] when the table is damaged.
    pub fn for_each_row(&self, k: usize, mut f: impl FnMut(u64, Part, Cell) -> Result<()>) -> Result<()> {
        let spec = &self.specs[k];
        let (white_count, black_count) = spec.counts();
        let exact = match self.metadata.layout {
            Layout::Residues => Some(self.exact_cells(k)?),
            Layout::Rows | Layout::Blocks => None,
        };
        let mut i = 0;
        self.for_each_block(k, |r, cells| {
            let white = colex_unrank(r, white_count);
            let safe = safe_cells(&spec.geometry, white);
            for (black, &byte) in Subsets::new(safe, black_count).zip(cells) {
                let part = Part { white, black };
                let cell = exact
                    .as_ref()
                    .map_or(byte, |e| e.get(i).copied().unwrap_or(Cell::ILLEGAL.0));
                i += 1;
                f(spec.index.rank(part), part, Cell(cell))?;
            }
            Ok(())
        })
    }

    /// Calls `f(white, cells)` for every non-empty block of the `k`-th class
    /// in white-set order with its checked cells (two-bit codes in the
    /// residues layout), then checks the whole table against its checksum
    /// and its row count.
    ///
    /// # Errors
    ///
    /// What `f` returns, or [`Error::Corrupt`] when the table is damaged.
    fn for_each_block(&self, k: usize, mut f: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<()> {
        let spec = &self.specs[k];
        let record = &self.classes[k];
        let (white_count, _) = spec.counts();
        let mut checksum = Checksum::default();
        let (mut positions, mut blocks) = (0u64, 0u64);
        for r in 0..binomial(spec.geometry.len() as u32, white_count) {
            let (cells, block_sum) = self.read_block_summed(k, r)?;
            if cells.is_empty() {
                continue;
            }
            match (self.metadata.layout, block_sum) {
                // The stored block's checksum, checked as it was read: the
                // class checksum is that of the block checksums in order.
                (Layout::Residues, Some(sum)) => checksum.add(&sum.signed().to_le_bytes()),
                // A mirrored class has no stored blocks; its checksum is
                // its source's, not checked here.
                (Layout::Residues, None) => {}
                (Layout::Rows | Layout::Blocks, _) => checksum.add(&cells),
            }
            positions += cells.len() as u64;
            blocks += 1;
            f(r, &cells)?;
        }
        let sql = match self.metadata.layout {
            Layout::Rows => "SELECT count(*) FROM positions WHERE class = ?1",
            Layout::Blocks | Layout::Residues => "SELECT count(*) FROM blocks WHERE class = ?1",
        };
        let stored: i64 = self
            .conn
            .query_row(sql, [record.class as i64], |r| r.get(0))
            .map_err(|e| self.read_error(e))?;
        let expected = match self.metadata.layout {
            // A mirrored class keeps no rows or blocks of its own.
            _ if self.mirrors[k].is_some() => 0,
            Layout::Rows => positions,
            Layout::Blocks | Layout::Residues => blocks,
        };
        if stored as u64 != expected || positions != record.stats.legal {
            return Err(self.corrupt(format!(
                "has {stored} rows in class {}, where {expected} belong",
                record.class
            )));
        }
        // A mirrored class carries its source's checksum, which the
        // source's own pass checks; each block it is derived from was
        // checked as it was read.
        let mirrored = self.mirrors[k].is_some();
        if checksum.hex() != record.checksum && !mirrored {
            return Err(self.corrupt(format!("fails its checksum for class {}", record.class)));
        }
        Ok(())
    }

    /// Reads every class's table, checks each block and the whole table
    /// against their checksums, and recomputes every count, histogram and
    /// hardest position from it: a full read, so done before trusting a file
    /// for a whole export or before `solve` keeps it, not on every lookup.
    /// In the residues layout it counts the positions of each residue
    /// against the histogram's layers of that residue, and the hardest
    /// positions were checked for the largest remoteness's residue when the
    /// file was opened; `bishops check` proves such a table whole.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when a table is damaged or disagrees with its
    /// class record.
    pub fn verify(&self) -> Result<()> {
        for (k, record) in self.classes.iter().enumerate() {
            let mut counts = [0u64; 256];
            let max = record.stats.max_remoteness().map_or(0, |r| usize::from(r.0));
            let mut hardest = Vec::new();
            let spec = &self.specs[k];
            let residues = self.metadata.layout == Layout::Residues;
            if self.mirrors[k].is_some() {
                // A mirrored class carries its source's checksum.
                if record.checksum != self.classes[0].checksum {
                    return Err(self.corrupt(format!("fails its checksum for class {}", record.class)));
                }
                // Read through its source, whose table is verified in full,
                // with the same counts (checked when the file was opened).
                // A byte table's is still derived and counted below.
                if residues {
                    continue;
                }
            }
            let (white_count, black_count) = spec.counts();
            self.for_each_block(k, |r, cells| {
                for &byte in cells {
                    counts[usize::from(byte)] += 1;
                }
                if !residues && hardest.len() < HARDEST && cells.contains(&(max as u8)) {
                    let white = colex_unrank(r, white_count);
                    let safe = safe_cells(&spec.geometry, white);
                    for (black, _) in Subsets::new(safe, black_count)
                        .zip(cells)
                        .filter(|&(_, &c)| usize::from(c) == max)
                    {
                        if hardest.len() < HARDEST {
                            hardest.push(spec.index.rank(Part { white, black }));
                        }
                    }
                }
                Ok(())
            })?;
            let bad = || {
                self.corrupt(format!(
                    "has counts for class {} that its table does not bear out",
                    record.class
                ))
            };
            if residues {
                let mut expected = [0u64; 4];
                for (d, &n) in record.stats.histogram.iter().enumerate() {
                    expected[d % 3] += n;
                }
                expected[usize::from(UNREACHABLE_CODE)] = record.stats.legal - record.stats.reachable;
                if counts[..4] != expected {
                    return Err(bad());
                }
                continue;
            }
            let reachable = &counts[..=usize::from(Cell::MAX_REMOTENESS)];
            let top = reachable.iter().rposition(|&n| n > 0).map_or(0, |t| t + 1);
            let found = ClassStats {
                legal: counts.iter().sum(),
                reachable: reachable.iter().sum(),
                histogram: reachable[..top].to_vec(),
                hardest,
            };
            if found != record.stats {
                return Err(bad());
            }
        }
        Ok(())
    }

    /// The error for this file when `problem` is found in it.
    pub fn corrupt(&self, problem: String) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            problem,
            variant: self.metadata.variant.clone(),
        }
    }
}

/// Checks a class row against the variant's class `spec` and against
/// itself, and returns what it says; the error says what is wrong.
fn check_class(spec: &ClassSpec, raw: &RawClass, start: u64, goal: u64) -> std::result::Result<ClassRecord, String> {
    let (white, black) = spec.counts();
    let hash_size = spec.index.len();
    let expected = [
        ("squares", raw.squares, spec.geometry.len() as i64),
        ("white", raw.white, i64::from(white)),
        ("black", raw.black, i64::from(black)),
        ("hash_size", raw.hash_size, hash_size as i64),
        ("start_hash", raw.start_hash, start as i64),
        ("goal_hash", raw.goal_hash, goal as i64),
    ];
    for (name, stored, actual) in expected {
        if stored != actual {
            return Err(format!("{name} is {stored}, the variant has {actual}"));
        }
    }
    let count = |name: &str, v: i64, low: u64, high: u64| {
        u64::try_from(v)
            .ok()
            .filter(|v| (low..=high).contains(v))
            .ok_or_else(|| format!("{name} is {v}, not between {low} and {high}"))
    };
    let legal = count("legal", raw.legal, 1, hash_size)?;
    let reachable = count("reachable", raw.reachable, 1, legal)?;
    let list = |name: &str, text: &str| {
        serde_json::from_str::<Vec<u64>>(text).map_err(|_| format!("{name} is not a list of counts"))
    };
    let histogram = list("histogram", &raw.histogram)?;
    if histogram.is_empty() || histogram.len() > usize::from(Cell::MAX_REMOTENESS) + 1 {
        return Err(format!("the histogram has {} entries", histogram.len()));
    }
    if histogram[0] != 1 || histogram.contains(&0) {
        return Err("the histogram does not have one goal and a position at every remoteness up to the largest".into());
    }
    if histogram.iter().try_fold(0u64, |s, &n| s.checked_add(n)) != Some(reachable) {
        return Err(format!(
            "the histogram does not add up to {reachable} reachable positions"
        ));
    }
    let max = histogram.len() as i64 - 1;
    if raw.max_remoteness != Some(max) {
        return Err(format!("max_remoteness is not {max}, the histogram's largest"));
    }
    let hardest = list("hardest", &raw.hardest)?;
    let top = histogram[histogram.len() - 1];
    if hardest.len() as u64 != top.min(HARDEST as u64) {
        return Err(format!("it lists {} hardest positions", hardest.len()));
    }
    if hardest.windows(2).any(|w| w[0] >= w[1]) || hardest.iter().any(|&h| h >= hash_size) {
        return Err("its hardest positions are out of order or out of range".into());
    }
    if !(0..=1).contains(&raw.mirrored) {
        return Err(format!("mirrored is {}", raw.mirrored));
    }
    if raw.checksum.len() != 16 || !raw.checksum.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("its checksum is not 16 hex digits".into());
    }
    Ok(ClassRecord {
        class: spec.class.index(),
        hash_size,
        stats: ClassStats {
            legal,
            reachable,
            histogram,
            hardest,
        },
        checksum: raw.checksum.clone(),
    })
}

fn read_meta(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
}

fn read_classes(conn: &Connection) -> rusqlite::Result<Vec<RawClass>> {
    let mut st = conn.prepare(
        "SELECT class, squares, white, black, hash_size, start_hash, goal_hash, legal, reachable,
                max_remoteness, histogram, hardest, mirrored, checksum FROM classes ORDER BY class",
    )?;
    st.query_map([], |r| {
        Ok(RawClass {
            class: r.get(0)?,
            squares: r.get(1)?,
            white: r.get(2)?,
            black: r.get(3)?,
            hash_size: r.get(4)?,
            start_hash: r.get(5)?,
            goal_hash: r.get(6)?,
            legal: r.get(7)?,
            reachable: r.get(8)?,
            max_remoteness: r.get(9)?,
            histogram: r.get(10)?,
            hardest: r.get(11)?,
            mirrored: r.get(12)?,
            checksum: r.get(13)?,
        })
    })?
    .collect()
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
