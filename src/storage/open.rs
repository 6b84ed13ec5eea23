//! Opening a database, and everything checked before anything in it is
//! believed, short of reading its tables whole: the file's length, its
//! header (format and hash versions, variant, start, layout, the header
//! checksum), its class records against the variant and each other, its
//! metadata for form, and the metadata against what the tables say of the
//! start, the goal and the hardest positions.

use std::cell::RefCell;
use std::fs;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::Arc;

use rusqlite::Connection;

use super::cache::BlockCache;
use super::checksum::header_checksum;
use super::fault::{Checked, Fault};
use super::names::{check_dir, not_a_database, open_read_only, path};
use super::read::{BLOCK_CACHE_BYTES, Database};
use super::schema::{
    ClassRecord, FORMAT_VERSION, Layout, Metadata, OLDEST_FORMAT_VERSION, RawClass, RecordFault, check_class,
    read_classes, read_meta,
};
use crate::error::{Error, Result};
use crate::files::{self, Links, OpenError};
use crate::remoteness::{Cell, Remoteness};
use crate::symmetry::Mirror;
use crate::text::clip;
use crate::variant::Variant;
use crate::variant::Width;

/// For each class, the class it is stored as the mirror image of, and how.
type Mirrors = Vec<Option<(usize, Mirror)>>;

impl Database {
    /// [`Database::open_in`] of a variant of at most 64 squares a class.
    ///
    /// # Errors
    ///
    /// As [`Database::open_in`].
    pub fn open(dir: &Path, variant: &Variant) -> Result<Database> {
        Database::open_in(dir, variant)
    }
}

impl<W: Width> Database<W> {
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
    ///
    /// Its classes are in words `W`, the word
    /// [`Variant::is_wide`](crate::Variant::is_wide) says.
    pub fn open_in(dir: &Path, variant: &Variant) -> Result<Database<W>> {
        Database::open_with_cache(dir, variant, BLOCK_CACHE_BYTES)
    }

    /// [`Database::open_in`], keeping up to `cache_bytes` bytes of checked
    /// blocks in memory (for it and the databases
    /// [reopened](Database::reopen) from it) instead of
    /// [`BLOCK_CACHE_BYTES`]: a server whose questions range over more of
    /// a large table than that reads fewer blocks from the file again.
    /// The memory is taken only as blocks are read.
    ///
    /// # Errors
    ///
    /// As [`Database::open_in`].
    pub fn open_with_cache(dir: &Path, variant: &Variant, cache_bytes: usize) -> Result<Database<W>> {
        Database::open_sharing(dir, variant, Arc::new(BlockCache::new(cache_bytes)))
    }

    /// Opens the file of this database, `variant`'s, once more, with every
    /// check of [`Database::open`]: another connection to it, for another
    /// thread to read at the same time. The two share their memory of
    /// checked blocks, so a block read by one is not read again by the
    /// other, and the bound on that memory is for both.
    ///
    /// # Errors
    ///
    /// As [`Database::open`], and [`Error::Corrupt`] when the file is no
    /// longer the one this database opened (another was written in its
    /// place since).
    pub fn reopen(&self, variant: &Variant) -> Result<Database<W>> {
        let dir = (self.path.parent())
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        // Opened with a memory of its own: the blocks its checks read must
        // not reach this database's memory before the file is known to be
        // the same one.
        let mut again = Database::open_sharing(dir, variant, Arc::new(BlockCache::new(BLOCK_CACHE_BYTES)))?;
        let checksums = |db: &Database<W>| db.classes.iter().map(|c| c.checksum.clone()).collect::<Vec<_>>();
        if again.metadata != self.metadata || checksums(&again) != checksums(self) {
            return Err(self.corrupt("was replaced by another file while it was open".into()));
        }
        again.cache = Arc::clone(&self.cache);
        Ok(again)
    }

    /// [`Database::open`], keeping checked blocks in `cache`.
    fn open_sharing(dir: &Path, variant: &Variant, cache: Arc<BlockCache>) -> Result<Database<W>> {
        check_dir(dir)?;
        Database::open_at(path(dir, variant.name()), variant, cache)
    }

    /// Opens the file `file` as the database of `variant`, with every check
    /// of [`Database::open`]: a database written whole but not yet renamed
    /// into place, for the solve's check of its own table before it is.
    pub(super) fn open_file(file: &Path, variant: &Variant) -> Result<Database<W>> {
        Database::open_at(
            file.to_path_buf(),
            variant,
            Arc::new(BlockCache::new(BLOCK_CACHE_BYTES)),
        )
    }

    /// [`Database::open`] of the file `path`, keeping checked blocks in `cache`.
    fn open_at(path: std::path::PathBuf, variant: &Variant, cache: Arc<BlockCache>) -> Result<Database<W>> {
        // No database of a variant that tables cannot number is trusted,
        // or written: the refusal says why.
        variant.tables_fit()?;
        let len = file_length(&path, variant)?;
        let untrusted = |fault| match fault {
            Fault::Read(e) => corrupt(&path, variant, format!("cannot be read ({})", clip(&e.to_string(), 80))),
            Fault::Wrong(problem) => corrupt(&path, variant, problem),
        };
        let conn = connect(&path, len).map_err(untrusted)?;
        let layout = check_header(&conn, variant).map_err(untrusted)?;
        let (classes, mirrors) = check_classes::<W>(&conn, variant).map_err(untrusted)?;
        let metadata = Metadata::read(&conn, variant, layout).map_err(untrusted)?;
        let database = Database {
            conn,
            path,
            metadata,
            specs: variant.specs::<W>().to_vec(),
            classes,
            mirrors,
            cache,
            recent: RefCell::default(),
            frames: RefCell::default(),
            confirmed: RefCell::default(),
            whites: RefCell::default(),
            memo: RefCell::default(),
            ahead: RefCell::default(),
            asked: std::cell::Cell::new(false),
            scratch: RefCell::default(),
        };
        let starts = variant.class_hashes(variant.start());
        let goals = variant.class_hashes(&variant.goal());
        database.check_metadata(&starts, &goals)?;
        Ok(database)
    }

    /// Checks that the metadata repeats what the class records and the
    /// tables say: the counts, the largest remoteness, the start's
    /// remoteness (`starts`: its class hashes), the goal (`goals`) at 0 and
    /// the hardest positions at the largest.
    fn check_metadata(&self, starts: &[u64], goals: &[u64]) -> Result<()> {
        let meta = &self.metadata;
        let stats = || self.classes.iter().map(|c| &c.stats);
        let legal = stats().try_fold(1u128, |p, s| p.checked_mul(u128::from(s.legal)));
        let reachable = stats().try_fold(1u128, |p, s| p.checked_mul(u128::from(s.reachable)));
        let max = stats().try_fold(Remoteness(0), |m, s| Some(m + s.max_remoteness()?));
        self.check_stated("legal_positions", meta.legal_positions, legal)?;
        self.check_stated("reachable_positions", meta.reachable_positions, reachable)?;
        self.check_stated("max_remoteness", meta.max_remoteness, max)?;
        let mut start = Some(Remoteness(0));
        for (k, (&s, &g)) in starts.iter().zip(goals).enumerate() {
            start = Remoteness::total([start, self.remoteness_of(k, s)?]);
            if self.cell(k, g)? != Cell(0) {
                return Err(self.corrupt(format!(
                    "does not give the goal remoteness 0 in class {}",
                    crate::board::Class::name_of(self.classes[k].class)
                )));
            }
            self.check_hardest(k)?;
        }
        self.check_stated("start_remoteness", meta.start_remoteness, start)
    }

    /// Checks that the metadata's `key`, `stored`, is what the tables say,
    /// `actual`.
    fn check_stated<T: ToString + PartialEq>(&self, key: &str, stored: Option<T>, actual: Option<T>) -> Result<()> {
        if stored == actual {
            return Ok(());
        }
        let show = |v: Option<T>| v.map_or_else(|| "nothing".into(), |v| v.to_string());
        Err(self.corrupt(format!(
            "says {key} is {} in its metadata, but its tables say {}",
            show(stored),
            show(actual)
        )))
    }

    /// Checks that the table gives the hardest positions of class `k` the
    /// class's largest remoteness.
    fn check_hardest(&self, k: usize) -> Result<()> {
        let record = &self.classes[k];
        let max = record.stats.max_remoteness();
        for &hash in &record.stats.hardest {
            // A descent per hardest position would cost every open of a
            // two-bit table dearly: its residue is checked instead.
            let stored = match self.metadata.layout {
                Layout::Residues => {
                    let part = self.legal_part(k, hash).ok_or_else(|| self.not_legal(k, hash))?;
                    let residue = self.residue(k, part)?;
                    (residue.map(u16::from) == max.map(|r| r.0 % 3))
                        .then_some(max)
                        .flatten()
                }
                Layout::Rows | Layout::Blocks | Layout::Frames => self.remoteness_of(k, hash)?,
            };
            if stored != max {
                return Err(self.corrupt(format!(
                    "lists hash {hash} among the hardest of class {}, but its table disagrees",
                    crate::board::Class::name_of(record.class)
                )));
            }
        }
        Ok(())
    }
}

/// The error for the database of `variant` at `path` when `problem` is
/// found in it.
fn corrupt(path: &Path, variant: &Variant, problem: String) -> Error {
    Error::Corrupt {
        path: path.to_path_buf(),
        problem,
        variant: variant.name().to_owned(),
    }
}

/// The length of the database file at `path`, opened only if it is a
/// regular file (or a link to one): a FIFO there would hold SQLite's open
/// forever.
fn file_length(path: &Path, variant: &Variant) -> Result<u64> {
    match files::open_regular(path, fs::OpenOptions::new().read(true), Links::Follow) {
        Ok(file) => Ok(file.metadata().map_err(|e| Error::Io(path.to_path_buf(), e))?.len()),
        Err(OpenError::NotRegular(kind)) => Err(not_a_database(path, kind, variant.name())),
        Err(OpenError::Io(e)) if e.kind() == ErrorKind::NotFound => Err(Error::NotSolved {
            variant: variant.name().to_owned(),
            path: path.to_path_buf(),
            why: None,
        }),
        Err(OpenError::Io(e)) => Err(Error::Io(path.to_path_buf(), e)),
    }
}

/// Opens the SQLite file at `path`, read-only, and checks that it is as
/// long as its header says: `len` bytes.
fn connect(path: &Path, len: u64) -> Checked<Connection> {
    let conn = open_read_only(path)?;
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    let expected = pages.checked_mul(page_size).and_then(|b| u64::try_from(b).ok());
    if expected != Some(len) || len == 0 {
        return Err(Fault::Wrong(format!(
            "is truncated or padded: {len} bytes, its header says {}",
            expected.map_or("an impossible size".into(), |e| e.to_string())
        )));
    }
    Ok(conn)
}

/// Checks the header of a file of `variant`: a bishops database of this
/// format version, matching its header checksum, of this hash version, of
/// this variant and start; returns the layout it names.
fn check_header(conn: &Connection, variant: &Variant) -> Checked<Layout> {
    let meta = |key: &str| read_meta(conn, key);
    if meta("format")?.as_deref() != Some("bishops") {
        return Err(Fault::Wrong("is not a bishops database".into()));
    }
    let version = meta("format_version")?.unwrap_or_default();
    let read = version
        .parse::<u32>()
        .ok()
        .filter(|v| (OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(v));
    let Some(version) = read else {
        // The error adds the command that rebuilds it.
        let older = version.parse::<u32>().is_ok_and(|v| v < OLDEST_FORMAT_VERSION);
        return Err(Fault::Wrong(format!(
            "is of {} format version {}, this program reads versions {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION}",
            if older { "the older" } else { "another" },
            clip(&version, 20)
        )));
    };
    if meta("header_checksum")? != Some(header_checksum(conn)?) {
        return Err(Fault::Wrong(
            "fails its header checksum: its metadata or class records were changed".into(),
        ));
    }
    let hash_version = meta("hash_version")?.unwrap_or_default();
    if hash_version != crate::index::HASH_VERSION.to_string() {
        return Err(Fault::Wrong(format!(
            "uses hash version {}, this program uses version {}",
            clip(&hash_version, 20),
            crate::index::HASH_VERSION
        )));
    }
    if meta("variant")?.as_deref() != Some(variant.name())
        || meta("start")?.as_deref() != Some(&variant.start().to_string())
        || meta("board")?.as_deref() != Some(&variant.board().to_string())
    {
        return Err(Fault::Wrong(format!(
            "is not of variant {} with start {} on {}",
            variant.name(),
            variant.start(),
            variant.board()
        )));
    }
    let layout = meta("layout")?;
    let layout = layout.as_deref().and_then(Layout::from_name).ok_or_else(|| {
        Fault::Wrong(format!(
            "has an unknown layout `{}`",
            clip(layout.as_deref().unwrap_or_default(), 20)
        ))
    })?;
    if layout == Layout::Frames && version < 6 {
        return Err(Fault::Wrong(format!(
            "has the frames layout in format version {version}, which has none"
        )));
    }
    Ok(layout)
}

/// Reads the class records of a file of `variant` and checks them: one per
/// class of the variant, each consistent with the variant and itself, and
/// a class marked mirrored only where the variant's class is the mirror
/// image of class 0, with its counts. Returns the records and the mirrors.
fn check_classes<W: Width>(conn: &Connection, variant: &Variant) -> Checked<(Vec<ClassRecord>, Mirrors)> {
    let raw = read_classes(conn)?;
    let expected: Vec<i64> = variant.specs::<W>().iter().map(|s| s.class.index() as i64).collect();
    let found: Vec<i64> = raw.iter().map(|c| c.class).collect();
    if expected != found {
        return Err(Fault::Wrong(format!(
            "has classes {found:?}, the variant has {expected:?}"
        )));
    }
    let starts = variant.class_hashes(variant.start());
    let goals = variant.class_hashes(&variant.goal());
    let variant_mirrors = crate::solver::mirrors(variant.specs::<W>());
    let mut classes: Vec<ClassRecord> = Vec::new();
    let mut mirrors = Vec::new();
    for (k, (spec, raw)) in variant.specs::<W>().iter().zip(&raw).enumerate() {
        let damaged = |what: RecordFault| {
            Fault::Wrong(format!(
                "has a damaged record of class {}: {what}",
                usize::try_from(raw.class).map_or_else(|_| raw.class.to_string(), crate::board::Class::name_of)
            ))
        };
        let record = check_class(spec, raw, starts[k], goals[k]).map_err(damaged)?;
        let mirror = check_mirror(raw, &record, &variant_mirrors[k], &classes).map_err(damaged)?;
        classes.push(record);
        mirrors.push(mirror);
    }
    Ok((classes, mirrors))
}

/// The mirror of a class whose row is `raw` and whose checked record is
/// `record`, when the row marks it mirrored: a mirrored class has no table
/// of its own and is answered through class 0, so it must be that class's
/// mirror image (`variant_mirror` says whether it is) and count what it
/// counts (`classes`: the records of the classes before it).
fn check_mirror(
    raw: &RawClass,
    record: &ClassRecord,
    variant_mirror: &Option<(usize, Mirror)>,
    classes: &[ClassRecord],
) -> std::result::Result<Option<(usize, Mirror)>, RecordFault> {
    match (raw.mirrored, variant_mirror) {
        (0, _) => Ok(None),
        (_, Some((0, mirror))) => {
            let source = &classes[0].stats;
            if (record.stats.legal, record.stats.reachable, &record.stats.histogram)
                != (source.legal, source.reachable, &source.histogram)
            {
                return Err(RecordFault::MirrorCounts(crate::board::Class::name_of(
                    classes[0].class,
                )));
            }
            Ok(Some((0, mirror.clone())))
        }
        _ => Err(RecordFault::NotAMirror),
    }
}
