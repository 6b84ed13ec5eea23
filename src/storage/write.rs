//! Writing a database: the whole file into a temporary file beside its
//! final name, in one transaction, synced and renamed into place, so that a
//! crash leaves the old file or the new one and never half of one. The
//! steps of a file: the schema, each class's table in its layout and its
//! `classes` row, then the metadata and the header checksum.
//!
//! A resumable write ([`WriteOptions::resumable`]) of a two-bit table
//! resolved into frames, which takes hours on the largest boards, fills a
//! partial file of a fixed name instead (`.NAME.sqlite.partial`) and
//! commits it as it goes, with SQLite's rollback journal: a write stopped,
//! killed or out of disk leaves its last commit, and the next goes on from
//! there once every frame kept is read back and checked against the table
//! ([`frames::replay`]).

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags, params};

use super::checksum::{Checksum, header_checksum};
use super::commit::{Commits, Resumable};
use super::names::{check_destination, check_dir, partial_files, partial_path, path, temp_path};
use super::read::Database;
use super::schema::{FORMAT_VERSION, Layout, SCHEMA, read_meta};
use super::stream::Cutter;
use super::{blocks, frames, residues, rows};
use crate::board::Class;
use crate::cleanup::Pending;
use crate::error::{Error, Result};
use crate::files::{self, Kind, Links, OpenError};
use crate::mod3::Residues;
use crate::mod3::exact::MEMO_BYTES;
use crate::remoteness::Remoteness;
use crate::solver::{ClassTable, Solution, Streamed, Tables, TwoBitSolution};
use crate::variant::by_width;
use crate::variant::{ClassSpec, Variant, Width};

/// Writes the database of `variant` into `dir`, atomically, and returns its
/// path. The caller should hold the variant's [`WriteLock`](crate::storage::WriteLock).
///
/// # Errors
///
/// When the directory cannot be made or the file cannot be written; no file
/// of the final name is touched then.
pub fn write<W: Width>(dir: &Path, variant: &Variant, solution: &Solution<Vec<u8>, W>) -> Result<PathBuf> {
    write_with(dir, variant, solution, Layout::for_solution(solution))
}

/// [`write()`] with a chosen layout.
///
/// # Errors
///
/// As [`write()`].
pub fn write_with<W: Width>(
    dir: &Path,
    variant: &Variant,
    solution: &Solution<Vec<u8>, W>,
    layout: Layout,
) -> Result<PathBuf> {
    write_checked(
        dir,
        variant,
        &Tables::<W>::Bytes(solution),
        (Some(layout), MEMO_BYTES),
        None,
        &mut |_| {},
    )
}

/// Writes a variant whose tables come through a pipe ([`Streamed`]), as
/// [`write()`] does, in `layout` or the one that suits their sizes (the
/// residues layout for the two-bit search's codes, and no other); the
/// cells of each searched class are written a block at a time as they
/// come, never held whole.
///
/// # Errors
///
/// As [`write()`]; [`Error::Exchange`] when a class's cells are not its
/// number of positions; what the pipe returns.
pub fn write_streamed<'a>(
    dir: &Path,
    variant: &Variant,
    streamed: &'a Streamed<'a>,
    layout: Option<Layout>,
) -> Result<PathBuf> {
    by_width!(variant, W => write_checked(dir, variant, &Tables::<W>::Streamed(streamed), (layout, MEMO_BYTES), None, &mut |_| {}))
}

/// Writes a variant solved by the two-bit search as its residues
/// ([`Layout::Residues`]), as [`write()`] does: atomically, replacing an
/// older file.
///
/// # Errors
///
/// As [`write()`].
pub fn write_two_bit<W: Width>(dir: &Path, variant: &Variant, solution: &TwoBitSolution<W>) -> Result<PathBuf> {
    write_checked(
        dir,
        variant,
        &Tables::TwoBit(solution),
        (Some(Layout::Residues), MEMO_BYTES),
        None,
        &mut |_| {},
    )
}

/// A check of a database written whole, opened from its temporary file
/// before it is renamed into place: an error refuses the write, and
/// nothing of the final name is touched.
pub type Vet<'a, W = u64> = &'a dyn Fn(&Database<W>) -> Result<()>;

/// How [`write_vetted`] writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// The layout, or `None` for the one that suits the tables.
    pub layout: Option<Layout>,
    /// The most memory that resolving a two-bit table into frames keeps of
    /// exact values found ([`MEMO_BYTES`], less under a memory cap).
    pub memo_bytes: u64,
    /// Write a two-bit table resolved into frames so that a write stopped
    /// goes on from its last commit (any other write is whole or nothing,
    /// as without it).
    pub resumable: Option<Resumable>,
}

impl WriteOptions {
    /// The layout that suits the tables, the whole memo, not resumable.
    pub fn whole(layout: Option<Layout>) -> WriteOptions {
        WriteOptions {
            layout,
            memo_bytes: MEMO_BYTES,
            resumable: None,
        }
    }
}

/// Writes what a solve found, `tables`, as [`write()`] does, in
/// `options.layout` or the one that suits them ([`Layout::for_solution`]
/// for bytes; for the two-bit search's tables, frames of the values they
/// resolve to; for its codes streamed, the residues layout), and before
/// the file takes the database's name, opens it with every check of
/// [`Database::open`] and hands it to `vet`, which may refuse it.
///
/// Two-bit tables resolved into frames keep at most `options.memo_bytes`
/// of exact values found, and tell `progress` how far each class's
/// resolution is ([`WriteEvent::Writing`]) every 4,096 white sets and at
/// its end: on the largest boards it takes hours. With
/// `options.resumable` they are written so that a stopped write resumes
/// ([`WriteEvent::Resumed`]).
///
/// # Errors
///
/// As [`write()`] and [`write_streamed`]; [`Error::Usage`] for a layout
/// that cannot hold the tables; what `vet` returns. A resumable write that
/// fails keeps what it committed unless the failure is the table's or the
/// file's (a refusal of the values or of the file).
pub fn write_vetted<W: Width, R: Residues>(
    dir: &Path,
    variant: &Variant,
    tables: &Tables<'_, W, R>,
    options: WriteOptions,
    vet: Vet<'_, W>,
    progress: Progress<'_>,
) -> Result<PathBuf> {
    let layout = (options.layout, options.memo_bytes);
    match options.resumable {
        Some(how) if matches!(tables, Tables::TwoBit(_)) && options.layout.is_none_or(|l| l == Layout::Frames) => {
            write_resumable(dir, variant, tables, (options.memo_bytes, how), vet, progress)
        }
        _ => write_checked(dir, variant, tables, layout, Some(vet), progress),
    }
}

/// What a write tells as it goes ([`write_vetted`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WriteEvent {
    /// Of class `class`'s `total` white sets, `done` are written.
    Writing {
        /// The class.
        class: Class,
        /// White sets written.
        done: u64,
        /// White sets of the class.
        total: u64,
    },
    /// A resumable write goes on from white set `from` of class `class`:
    /// what a stopped write left before it was read back and checked.
    Resumed {
        /// The class.
        class: Class,
        /// The first white set not yet written.
        from: u64,
        /// White sets of the class.
        total: u64,
    },
    /// What a stopped write left of class `class` fails its checks from
    /// white set `at` on (or, at 0 of the first class, is not a partial
    /// write of these tables at all): it is written again from there.
    Discarded {
        /// The class.
        class: Class,
        /// The first white set written again.
        at: u64,
    },
}

/// What a write tells of its progress ([`write_vetted`]).
pub type Progress<'a> = &'a mut dyn FnMut(WriteEvent);

/// [`write_vetted`], or with no `vet` the file renamed into place as
/// written: the writes of tables made by hand (the tests of `check`
/// write wrong ones on purpose).
fn write_checked<W: Width, R: Residues>(
    dir: &Path,
    variant: &Variant,
    tables: &Tables<'_, W, R>,
    (layout, memo_bytes): (Option<Layout>, u64),
    vet: Option<Vet<'_, W>>,
    progress: Progress<'_>,
) -> Result<PathBuf> {
    let (layout, residues) = match tables {
        // Resolved into frames, exact and smaller than the residues (11x8:
        // 29 MB against 50 MB), unless residues are asked for.
        Tables::TwoBit(_) => (layout.unwrap_or(Layout::Frames), true),
        Tables::Bytes(solution) => (layout.unwrap_or_else(|| Layout::for_solution(solution)), false),
        Tables::Streamed(streamed) => match (layout, streamed.residues) {
            (None, true) => (Layout::Residues, true),
            (None, false) => (Layout::for_legal(streamed.stats.iter().map(|s| s.legal)), false),
            (Some(layout), residues) => (layout, residues),
        },
    };
    // Two-bit tables are written as they are, or resolved to exact values
    // in frames; a byte table has no residues to write.
    let fits = match (layout, residues) {
        (Layout::Residues, residues) => residues,
        // Resolving needs the whole table, which a stream never holds.
        (Layout::Frames, true) => !matches!(tables, Tables::Streamed(_)),
        (_, residues) => !residues,
    };
    if !fits {
        return Err(Error::Usage(
            "the residues layout holds the tables of the two-bit search, which are written as residues or, resolved, as frames: solve with --method two-bit, or another --layout".into(),
        ));
    }
    check_dir(dir)?;
    fs::create_dir_all(dir).map_err(|e| Error::Io(dir.to_path_buf(), e))?;
    check_destination(dir, variant.name())?;
    let dest = path(dir, variant.name());
    let tmp = temp_path(dir, variant.name(), std::process::id());
    let _pending = Pending::register(&tmp);
    let result = write_file(&tmp, variant, tables, (layout, memo_bytes), progress).and_then(|()| {
        if let Some(vet) = vet {
            vet(&Database::open_file(&tmp, variant)?)?;
        }
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

/// [`write_vetted`] of a two-bit table into frames, resumable: filled into
/// the partial file and committed as it goes ([`fill`]), opened and vetted,
/// then renamed into place. A failure keeps the partial file for the next
/// write to go on from, unless it is a refusal of what was written.
fn write_resumable<W: Width, R: Residues>(
    dir: &Path,
    variant: &Variant,
    tables: &Tables<'_, W, R>,
    (memo_bytes, how): (u64, Resumable),
    vet: Vet<'_, W>,
    progress: Progress<'_>,
) -> Result<PathBuf> {
    check_dir(dir)?;
    fs::create_dir_all(dir).map_err(|e| Error::Io(dir.to_path_buf(), e))?;
    check_destination(dir, variant.name())?;
    let dest = path(dir, variant.name());
    let partial = partial_path(dir, variant.name());
    let result = fill(&partial, variant, tables, (memo_bytes, how), progress).and_then(|()| {
        vet(&Database::open_file(&partial, variant)?)?;
        // Looked at again: the write may have taken hours.
        check_destination(dir, variant.name())?;
        fs::rename(&partial, &dest).map_err(|e| Error::Io(dest.clone(), e))?;
        files::sync_dir(dir);
        Ok(())
    });
    // Stopped, or what the disk or SQLite ran into: the next write goes on.
    if result.as_ref().is_err_and(|e| {
        !matches!(
            e,
            Error::Stopped(_) | Error::Io(..) | Error::Sqlite(..) | Error::DbPath(_)
        )
    }) {
        remove_partial(dir, variant.name());
    }
    result.map(|()| dest)
}

/// Removes the partial file of a resumable write of `variant` in `dir` and
/// its journal, if there are any.
pub fn remove_partial(dir: &Path, variant: &str) {
    for file in partial_files(dir, variant) {
        let _ = fs::remove_file(file);
    }
}

/// What a partial file records of the tables it is written from, so that
/// one of other tables is not resumed: the variant, and each class's counts
/// by remoteness.
fn identity<W: Width, R: Residues>(variant: &Variant, tables: &Tables<'_, W, R>) -> String {
    let histograms: Vec<&[u64]> = (0..variant.class_list().len())
        .map(|k| tables.stats(k).histogram.as_slice())
        .collect();
    serde_json::json!({
        "variant": variant.name(),
        "board": variant.board().to_string(),
        "start": variant.start().to_string(),
        "format_version": FORMAT_VERSION,
        "hash_version": crate::index::HASH_VERSION,
        "histograms": histograms,
    })
    .to_string()
}

/// Fills the partial file `partial` with the database of `variant`, going
/// on from what a stopped write left there when it is a partial write of
/// these tables (its frames are checked as they are replayed); otherwise
/// from nothing, the file made anew (never through a link, nor over what
/// is not a regular file). Commits every `how.interval` or so, and at the
/// end, and syncs the file.
fn fill<W: Width, R: Residues>(
    partial: &Path,
    variant: &Variant,
    tables: &Tables<'_, W, R>,
    (memo_bytes, how): (u64, Resumable),
    progress: Progress<'_>,
) -> Result<()> {
    let sql = |e| Error::Sqlite(partial.to_path_buf(), e);
    let Tables::TwoBit(solution) = tables else {
        unreachable!("only a two-bit table is written resumably")
    };
    let identity = identity(variant, tables);
    let specs = variant.specs::<W>();
    let first = specs[0].class;
    let conn = match fs::symlink_metadata(partial) {
        Ok(meta) if Kind::of(&meta) != Kind::Regular => {
            return Err(Error::DbPath(format!(
                "`{}` is {}, where a write of {} keeps what it has written: move it away",
                crate::text::path(partial),
                Kind::of(&meta),
                variant.name()
            )));
        }
        Ok(_) => match reopen(partial, variant, &identity) {
            Some(conn) => conn,
            None => {
                progress(WriteEvent::Discarded { class: first, at: 0 });
                remove_partial(partial.parent().unwrap_or(Path::new(".")), variant.name());
                begin_partial(partial, &identity).map_err(sql)?
            }
        },
        Err(e) if e.kind() == ErrorKind::NotFound => begin_partial(partial, &identity).map_err(sql)?,
        Err(e) => return Err(Error::Io(partial.to_path_buf(), e)),
    };
    let mut commits = Commits::begin(&conn, how).map_err(sql)?;
    // The header is written last, whole, as in a write in one go.
    conn.execute_batch("DELETE FROM classes; DELETE FROM meta")
        .map_err(sql)?;
    conn.execute("INSERT INTO meta VALUES ('partial_of', ?1)", [&identity])
        .map_err(sql)?;
    let starts = variant.class_hashes(variant.start());
    let goals = variant.class_hashes(&variant.goal());
    let mut sources = Vec::new();
    let mut totals = Totals {
        start_remoteness: Some(Remoteness(0)),
        max: Some(Remoteness(0)),
        legal: 1,
        reachable: 1,
    };
    for (k, spec) in specs.iter().enumerate() {
        let class = &solution.classes[k];
        let checksum = match &class.table {
            ClassTable::Mirrored { from, .. } => sources[*from],
            ClassTable::Own(codes) => {
                let (so_far, bad) = frames::replay(&conn, spec, &class.index, codes)?;
                let total = class.index.white_sets();
                if let Some(at) = bad {
                    progress(WriteEvent::Discarded { class: spec.class, at });
                }
                if so_far.next > 0 {
                    progress(WriteEvent::Resumed {
                        class: spec.class,
                        from: so_far.next,
                        total,
                    });
                }
                let told = &mut |done, total| {
                    progress(WriteEvent::Writing {
                        class: spec.class,
                        done,
                        total,
                    })
                };
                let histogram = (class.stats.histogram.as_slice(), memo_bytes);
                frames::write_resolved(
                    &conn,
                    spec,
                    &class.index,
                    codes,
                    histogram,
                    (so_far, Some(&mut commits)),
                    told,
                )?
            }
        };
        write_class_row(&conn, tables, spec, k, (starts[k], goals[k]), checksum).map_err(sql)?;
        sources.push(checksum);
        let stats = tables.stats(k);
        totals.start_remoteness = Remoteness::total([totals.start_remoteness, tables.start(variant, k)?]);
        totals.max = Remoteness::total([totals.max, stats.max_remoteness()]);
        totals.legal *= u128::from(stats.legal);
        totals.reachable *= u128::from(stats.reachable);
    }
    conn.execute("DELETE FROM meta WHERE key = 'partial_of'", [])
        .map_err(sql)?;
    write_meta(&conn, variant, tables, Layout::Frames, &totals).map_err(sql)?;
    commits.finish().map_err(sql)?;
    conn.close().map_err(|(_, e)| sql(e))?;
    sync(partial)
}

/// Creates the partial file `partial` (never through a link) with the
/// schema and `identity`, committed: the first step of a resumable write.
fn begin_partial(partial: &Path, identity: &str) -> rusqlite::Result<Connection> {
    let conn = open_partial(partial, OpenFlags::SQLITE_OPEN_CREATE)?;
    conn.execute_batch("PRAGMA page_size = 65536;")?;
    conn.execute_batch(&format!("BEGIN; {SCHEMA}"))?;
    conn.execute("INSERT INTO meta VALUES ('partial_of', ?1)", [identity])?;
    conn.execute_batch("COMMIT")?;
    Ok(conn)
}

/// Opens the partial file `partial` for writing, set up for commits that
/// survive the process: a rollback journal, synced at every commit. A
/// journal left by a write killed inside a transaction is rolled back
/// here, by SQLite, before anything is read.
fn open_partial(partial: &Path, create: OpenFlags) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        partial,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NOFOLLOW | OpenFlags::SQLITE_OPEN_NO_MUTEX | create,
    )?;
    conn.execute_batch("PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL;")?;
    Ok(conn)
}

/// The partial file `partial` opened to go on with, when it is a partial
/// write of the tables whose [`identity`] is `identity`, or one that
/// completed them and was stopped before it was renamed; `None` when it
/// is anything else (what it holds is then checked no further).
fn reopen(partial: &Path, variant: &Variant, identity: &str) -> Option<Connection> {
    let conn = open_partial(partial, OpenFlags::empty()).ok()?;
    let meta = |key| read_meta(&conn, key).ok().flatten();
    let ours = match meta("partial_of") {
        Some(of) => of == identity,
        // Complete: every frame is still read back and checked.
        None => {
            meta("format").as_deref() == Some("bishops")
                && meta("layout").as_deref() == Some(Layout::Frames.name())
                && meta("variant").as_deref() == Some(variant.name())
                && meta("start") == Some(variant.start().to_string())
                && meta("format_version") == Some(FORMAT_VERSION.to_string())
        }
    };
    ours.then_some(conn)
}

/// Writes the whole database of `variant` into the file `tmp`, in one
/// transaction, and syncs it.
fn write_file<W: Width, R: Residues>(
    tmp: &Path,
    variant: &Variant,
    solved: &Tables<'_, W, R>,
    (layout, memo_bytes): (Layout, u64),
    progress: Progress<'_>,
) -> Result<()> {
    let _ = fs::remove_file(tmp);
    let sql = |e| Error::Sqlite(tmp.to_path_buf(), e);
    let mut conn = create(tmp).map_err(sql)?;
    let tx = conn.transaction().map_err(sql)?;
    tx.execute_batch(SCHEMA).map_err(sql)?;
    let totals = write_classes(&tx, tmp, variant, solved, (layout, memo_bytes), progress)?;
    write_meta(&tx, variant, solved, layout, &totals).map_err(sql)?;
    tx.commit().map_err(sql)?;
    conn.close().map_err(|(_, e)| sql(e))?;
    sync(tmp)
}

/// Creates the SQLite file `tmp`, never through a link, set up for one
/// large private write.
fn create(tmp: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        tmp,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    // The file is private until renamed, so no journal is needed.
    // Large pages keep the blobs of big boards off overflow chains.
    conn.execute_batch("PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
    Ok(conn)
}

/// What the metadata says of the whole variant, from its classes.
struct Totals {
    /// The start's remoteness: the sum of its class parts'.
    start_remoteness: Option<Remoteness>,
    /// The largest remoteness: the sum of the classes' largest.
    max: Option<Remoteness>,
    /// Legal positions: the product of the classes'.
    legal: u128,
    /// Positions that reach the goal: the product of the classes'.
    reachable: u128,
}

/// Writes the table of every class in `layout` and its `classes` row, and
/// returns what the metadata says of their whole.
fn write_classes<W: Width, R: Residues>(
    tx: &Connection,
    tmp: &Path,
    variant: &Variant,
    solved: &Tables<'_, W, R>,
    (layout, memo_bytes): (Layout, u64),
    progress: Progress<'_>,
) -> Result<Totals> {
    let sql = |e| Error::Sqlite(tmp.to_path_buf(), e);
    let starts = variant.class_hashes(variant.start());
    let goals = variant.class_hashes(&variant.goal());
    let mut totals = Totals {
        start_remoteness: Some(Remoteness(0)),
        max: Some(Remoteness(0)),
        legal: 1,
        reachable: 1,
    };
    let mut class_checksums = Vec::new();
    for (k, spec) in variant.specs::<W>().iter().enumerate() {
        let checksum = write_table(tx, solved, spec, k, (layout, memo_bytes), &class_checksums, progress)?;
        write_class_row(tx, solved, spec, k, (starts[k], goals[k]), checksum).map_err(sql)?;
        class_checksums.push(checksum);
        let stats = solved.stats(k);
        let start = solved.start(variant, k)?;
        totals.start_remoteness = Remoteness::total([totals.start_remoteness, start]);
        totals.max = Remoteness::total([totals.max, stats.max_remoteness()]);
        totals.legal *= u128::from(stats.legal);
        totals.reachable *= u128::from(stats.reachable);
    }
    Ok(totals)
}

/// Writes the table of class `k` in `layout`, and returns the class
/// checksum. A mirrored class has no rows or blocks of its own and takes
/// its source's checksum (in `sources`, those of the classes before it):
/// every read of it is a checked read of the source.
fn write_table<W: Width, R: Residues>(
    tx: &Connection,
    solved: &Tables<'_, W, R>,
    spec: &ClassSpec<W>,
    k: usize,
    (layout, memo_bytes): (Layout, u64),
    sources: &[Checksum],
    progress: Progress<'_>,
) -> Result<Checksum> {
    let sql = |e| Error::Sqlite("the database being written".into(), e);
    match solved {
        Tables::TwoBit(solution) => match &solution.classes[k].table {
            ClassTable::Mirrored { from, .. } => Ok(sources[*from]),
            ClassTable::Own(codes) if layout == Layout::Frames => {
                let class = &solution.classes[k];
                let histogram = &class.stats.histogram;
                let told = &mut |done, total| {
                    progress(WriteEvent::Writing {
                        class: spec.class,
                        done,
                        total,
                    })
                };
                let fresh = (frames::SoFar::start(), None);
                frames::write_resolved(tx, spec, &class.index, codes, (histogram, memo_bytes), fresh, told)
            }
            ClassTable::Own(codes) => {
                let checksum = residues::write_class(tx, solution, k).map_err(sql)?;
                // What a file could not give was written as unreachable.
                codes.fault()?;
                Ok(checksum)
            }
        },
        Tables::Streamed(streamed) => match streamed.mirrored[k] {
            Some(from) => Ok(sources[from]),
            None => {
                let index = spec.tight_index();
                let mut cutter = Cutter::new(tx, spec, &index, layout)?;
                (streamed.cells.borrow_mut())(k, &mut |piece| cutter.take(piece))?;
                cutter.finish()
            }
        },
        Tables::Bytes(solution) => {
            let class = &solution.classes[k];
            match &class.table {
                ClassTable::Mirrored { from, .. } => Ok(sources[*from]),
                ClassTable::Own(all) => {
                    match layout {
                        Layout::Rows => rows::write_class(tx, spec, &class.index, all),
                        Layout::Blocks | Layout::Residues => {
                            blocks::write_class(tx, spec.class.index(), &class.index, all)
                        }
                        Layout::Frames => frames::write_class(tx, spec.class.index(), &class.index, all),
                    }
                    .map_err(sql)?;
                    Ok(Checksum::of(all))
                }
            }
        }
    }
}

/// Writes the `classes` row of class `k`, whose start and goal have the
/// class hashes `(start, goal)` and whose table has the class checksum
/// `checksum`.
fn write_class_row<W: Width, R: Residues>(
    tx: &Connection,
    solved: &Tables<'_, W, R>,
    spec: &ClassSpec<W>,
    k: usize,
    (start, goal): (u64, u64),
    checksum: Checksum,
) -> rusqlite::Result<()> {
    let stats = solved.stats(k);
    let (white, black) = spec.counts();
    tx.prepare("INSERT INTO classes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)")?
        .execute(params![
            spec.class.index() as i64,
            spec.geometry.len() as i64,
            white,
            black,
            spec.index.len() as i64,
            start as i64,
            goal as i64,
            stats.legal as i64,
            stats.reachable as i64,
            stats.max_remoteness().map(|r| r.0),
            serde_json::to_string(&stats.histogram).expect("numbers serialize"),
            serde_json::to_string(&stats.hardest).expect("numbers serialize"),
            solved.is_mirrored(k),
            checksum.hex(),
        ])?;
    Ok(())
}

/// Writes the `meta` table, the header checksum last, over everything else
/// the header holds.
fn write_meta<W: Width, R: Residues>(
    tx: &Connection,
    variant: &Variant,
    solved: &Tables<'_, W, R>,
    layout: Layout,
    totals: &Totals,
) -> rusqlite::Result<()> {
    let created = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let shown = |r: Option<Remoteness>| r.map_or(String::new(), |r| r.to_string());
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
        ("legal_positions", totals.legal.to_string()),
        ("reachable_positions", totals.reachable.to_string()),
        ("max_remoteness", shown(totals.max)),
        ("start_remoteness", shown(totals.start_remoteness)),
        ("program_version", env!("CARGO_PKG_VERSION").into()),
        ("solve_seconds", format!("{:.6}", solved.elapsed().as_secs_f64())),
        ("created_unix", created.to_string()),
    ];
    for (key, value) in meta {
        tx.execute("INSERT INTO meta VALUES (?1, ?2)", params![key, value])?;
    }
    let header = header_checksum(tx)?;
    tx.execute("INSERT INTO meta VALUES ('header_checksum', ?1)", [header])?;
    Ok(())
}

/// Syncs the written file `tmp` to disk, opened only if it is still a
/// regular file.
fn sync(tmp: &Path) -> Result<()> {
    files::open_regular(tmp, fs::OpenOptions::new().read(true), Links::Refuse)
        .map_err(|e| match e {
            OpenError::NotRegular(kind) => std::io::Error::other(format!("it is {kind}")),
            OpenError::Io(e) => e,
        })
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::Io(tmp.to_path_buf(), e))
}
