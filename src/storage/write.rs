//! Writing a database: the whole file into a temporary file beside its
//! final name, in one transaction, synced and renamed into place, so that a
//! crash leaves the old file or the new one and never half of one. The
//! steps of a file: the schema, each class's table in its layout and its
//! `classes` row, then the metadata and the header checksum.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags, params};

use super::checksum::{Checksum, header_checksum};
use super::names::{check_destination, check_dir, path, temp_path};
use super::read::Database;
use super::schema::{FORMAT_VERSION, Layout, SCHEMA};
use super::stream::Cutter;
use super::{blocks, frames, residues, rows};
use crate::board::Class;
use crate::cleanup::Pending;
use crate::error::{Error, Result};
use crate::files::{self, Links, OpenError};
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
        &mut |_, _, _| {},
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
    by_width!(variant, W => write_checked(dir, variant, &Tables::<W>::Streamed(streamed), (layout, MEMO_BYTES), None, &mut |_, _, _| {}))
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
        &mut |_, _, _| {},
    )
}

/// A check of a database written whole, opened from its temporary file
/// before it is renamed into place: an error refuses the write, and
/// nothing of the final name is touched.
pub type Vet<'a, W = u64> = &'a dyn Fn(&Database<W>) -> Result<()>;

/// Writes what a solve found, `tables`, as [`write()`] does, in `layout`
/// or the one that suits them ([`Layout::for_solution`] for bytes; for
/// the two-bit search's tables, frames of the values they resolve to; for
/// its codes streamed, the residues layout), and before the file takes the database's name, opens it with
/// every check of [`Database::open`] and hands it to `vet`, which may
/// refuse it.
///
/// Two-bit tables resolved into frames keep at most `memo_bytes` of
/// exact values found ([`MEMO_BYTES`] but under a memory cap), and tell
/// `progress` how far each class's resolution is, `(class, white sets
/// written, white sets)`, every 4,096 white sets and at its end: on the
/// largest boards it takes hours.
///
/// # Errors
///
/// As [`write()`] and [`write_streamed`]; [`Error::Usage`] for a layout
/// that cannot hold the tables; what `vet` returns.
pub fn write_vetted<W: Width, R: Residues>(
    dir: &Path,
    variant: &Variant,
    tables: &Tables<'_, W, R>,
    (layout, memo_bytes): (Option<Layout>, u64),
    vet: Vet<'_, W>,
    progress: Progress<'_>,
) -> Result<PathBuf> {
    write_checked(dir, variant, tables, (layout, memo_bytes), Some(vet), progress)
}

/// What a write tells of its progress: `(class, white sets written, white
/// sets of the class)` ([`write_vetted`]).
pub type Progress<'a> = &'a mut dyn FnMut(Class, u64, u64);

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
                let told = &mut |done, total| progress(spec.class, done, total);
                frames::write_resolved(tx, spec, &class.index, codes, (histogram, memo_bytes), told)
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
