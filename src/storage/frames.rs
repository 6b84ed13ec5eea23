//! The `frames` layout: the exact remoteness of every position, a byte a
//! position as in the `blocks` layout, compressed. The blocks of a class
//! (one a white set, in white-set order) are gathered into frames of at
//! least [`FRAME_POSITIONS`] positions, and each frame is compressed on its
//! own with zstd and checked on its own, so a lookup decompresses one frame.
//! A row of `frames` holds one: the first and last white set it covers
//! (the frames of a class tile its white sets in order, so the frame of a
//! white set is the row with the greatest first white set not above it),
//! the compressed cells, and the block checksum of the cells.
//!
//! Nothing read is believed before it is checked: the compressed bytes are
//! bounded by what zstd can make of the frame's cells before they are
//! decompressed, and they must decompress to exactly as many cells as the
//! frame's white sets have positions, match the frame's checksum and hold
//! no cell marked illegal.

use std::cell::RefCell;
use std::ops::RangeInclusive;
use std::sync::Mutex;

use rayon::prelude::*;
use rusqlite::{Connection, OptionalExtension, Statement, params};

use super::block::{BlockAt, own_blocks};
use super::checksum::{Checksum, RunningChecksum, block_checksum};
use super::commit::Commits;
use super::fault::{Checked, Fault};
use crate::bitboard::Word;
use crate::error::{Error, Result};
use crate::mod3::exact::{ResolveError, Resolver, in_windows};
use crate::mod3::{PER_WORD, Residues, UNSEEN};
use crate::remoteness::{Cell, Remoteness};
use crate::tight::TightIndex;
use crate::variant::ClassSpec;

/// A frame holds whole blocks, at least this many positions when the class
/// has them (its last frame may hold fewer; a block larger than this is a
/// frame alone). Chosen by measurement (`examples/coding.rs`, see
/// `docs/database.md`): smaller frames compress worse, larger ones cost a
/// lookup more to decompress.
pub const FRAME_POSITIONS: usize = 1 << 14;

/// A frame covers at most this many white sets, so that finding how many
/// positions it holds is bounded work even where blocks are empty.
pub(super) const FRAME_WHITES: u64 = 1 << 12;

/// The zstd level frames are compressed at.
pub const LEVEL: i32 = 3;

/// Frames are compressed this many at a time, in parallel, then written in
/// order.
const BATCH: usize = 512;

/// The statement that stores one frame.
const INSERT: &str = "INSERT INTO frames (class, first_white, last_white, data, checksum) VALUES (?1, ?2, ?3, ?4, ?5)";

/// A frame being filled or waiting to be compressed: its white sets and
/// its cells.
struct Open {
    first: u64,
    last: u64,
    cells: Vec<u8>,
}

/// Writes the blocks of one class into frames, as they come in white-set
/// order. The frames tile the class's white sets: each begins where the
/// one before it ended, the first at white set 0, the last ending at the
/// class's last, so a frame may hold empty blocks (or only empty ones,
/// where a class has long runs of them).
pub(super) struct Writer<'c> {
    row: Statement<'c>,
    class: usize,
    /// The white sets of the class.
    white_sets: u64,
    open: Open,
    full: Vec<Open>,
}

impl<'c> Writer<'c> {
    /// A writer of the frames of class number `class`, which has
    /// `white_sets` white sets.
    pub(super) fn new(tx: &'c Connection, class: usize, white_sets: u64) -> rusqlite::Result<Writer<'c>> {
        Writer::from(tx, class, white_sets, 0)
    }

    /// A writer of the frames of class number `class` from white set
    /// `first` on, where the frames before it end: a resumed write's.
    fn from(tx: &'c Connection, class: usize, white_sets: u64, first: u64) -> rusqlite::Result<Writer<'c>> {
        Ok(Writer {
            row: tx.prepare(INSERT)?,
            class,
            white_sets,
            open: Open::at(first),
            full: Vec::new(),
        })
    }

    /// Takes the cells of the block of white-set rank `r`, after those of
    /// every block before it.
    pub(super) fn block(&mut self, r: u64, cells: &[u8]) -> rusqlite::Result<()> {
        debug_assert!(r >= self.open.first && r < self.white_sets);
        while r - self.open.first >= FRAME_WHITES {
            self.close(self.open.first + FRAME_WHITES - 1);
        }
        self.open.cells.extend_from_slice(cells);
        if self.open.cells.len() >= FRAME_POSITIONS {
            self.close(r);
        }
        if self.full.len() >= BATCH {
            self.write_full()?;
        }
        Ok(())
    }

    /// Writes every frame still held, up to the class's last white set.
    pub(super) fn finish(mut self) -> rusqlite::Result<()> {
        while self.open.first < self.white_sets {
            self.close((self.open.first + FRAME_WHITES - 1).min(self.white_sets - 1));
        }
        self.write_full()
    }

    /// Closes the open frame at white set `last`: it waits to be
    /// compressed, and the next frame opens after it.
    fn close(&mut self, last: u64) {
        let mut frame = std::mem::replace(&mut self.open, Open::at(last + 1));
        frame.last = last;
        self.full.push(frame);
    }

    /// Compresses the closed frames in parallel and writes them in order.
    fn write_full(&mut self) -> rusqlite::Result<()> {
        let class = self.class;
        let packed: Vec<(Vec<u8>, i64)> = self
            .full
            .par_iter()
            .map(|frame| {
                let sum = block_checksum(class, frame.first, &frame.cells).signed();
                (compress(&frame.cells), sum)
            })
            .collect();
        for (frame, (data, sum)) in self.full.drain(..).zip(packed) {
            self.row
                .execute(params![class as i64, frame.first as i64, frame.last as i64, data, sum])?;
        }
        Ok(())
    }
}

impl Open {
    /// A frame opened at white set `first`, empty so far.
    fn at(first: u64) -> Open {
        Open {
            first,
            last: first,
            cells: Vec::new(),
        }
    }
}

/// Writes the byte table `all` of class number `class` (a cell per
/// position in the order of `index`) as frames.
pub(super) fn write_class<W: Word>(
    tx: &Connection,
    class: usize,
    index: &TightIndex<W>,
    all: &[u8],
) -> rusqlite::Result<()> {
    let mut writer = Writer::new(tx, class, index.white_sets())?;
    own_blocks(index, all).try_for_each(|(r, cells)| writer.block(r, cells))?;
    writer.finish()
}

/// Writes the class `spec`, searched by the two-bit search, as frames of
/// exact values: each block resolved from the residues `residues` (in the
/// order of `index`), mostly from its own positions before it and now and
/// then by a descent ([`Resolver::block`]), a window of blocks at a time
/// in parallel. The values found must count, remoteness by remoteness,
/// what the search counted layer by layer (`histogram`), and as many
/// unreachable positions as it left. Returns the class checksum, of every
/// cell in order.
///
/// A resumed write begins where the frames already written and checked
/// end (`so_far`, from [`replay`]) and commits through `commits` when one
/// is due, at most every few thousand white sets.
///
/// # Errors
///
/// [`Error::Unresolved`] when the residues cannot be resolved, or resolve
/// to other counts than the search's (they are not what a search leaves);
/// what SQLite runs into; [`Error::Stopped`] where a test asks a commit to
/// stop.
pub(super) fn write_resolved<W: Word, R: Residues>(
    tx: &Connection,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    residues: &R,
    (histogram, memo_bytes): (&[u64], u64),
    (so_far, mut commits): (SoFar, Option<&mut Commits<'_>>),
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Checksum> {
    let max = histogram.len().checked_sub(1).map(|m| Remoteness(m as u16));
    // Residues a file could not give are its failure, not theirs.
    let fault = |e: ResolveError| match residues.fault() {
        Err(failed) => failed,
        Ok(()) => Error::Unresolved(format!(
            "has residues in class {} that cannot be resolved to exact values: {e}",
            spec.class.name()
        )),
    };
    let resolver = Resolver::new(spec, index, residues, max, memo_bytes).map_err(fault)?;
    let cells_of = |path: &mut Vec<u64>, r: u64| resolver.block(r, path);
    let sql = |e| Error::Sqlite("the database being written".into(), e);
    let SoFar {
        next,
        mut checksum,
        mut counts,
    } = so_far;
    let mut writer = Writer::from(tx, spec.class.index(), index.white_sets(), next).map_err(sql)?;
    let white_sets = index.white_sets();
    in_windows(
        index,
        (next, &|positions| residues.prepare(positions)),
        cells_of,
        fault,
        |r, cells| {
            if r % PROGRESS_WHITE_SETS == 0 {
                progress(r, white_sets);
                if let Some(commits) = commits.as_deref_mut().filter(|c| c.due()) {
                    // The frames closed so far go in; the open one is worked
                    // out again by a resumed write.
                    writer.write_full().map_err(sql)?;
                    commits.commit()?;
                }
            }
            checksum.add(cells);
            for &cell in cells {
                counts[usize::from(cell)] += 1;
            }
            if cells.is_empty() {
                return Ok(());
            }
            writer.block(r, cells).map_err(sql)
        },
    )?;
    residues.fault()?;
    let reachable: u64 = histogram.iter().sum();
    if counts[..histogram.len()] != *histogram || counts[usize::from(Cell::UNREACHABLE.0)] != index.len() - reachable {
        return Err(Error::Unresolved(format!(
            "has residues in class {} that resolve to other counts by remoteness than the search found",
            spec.class.name()
        )));
    }
    writer.finish().map_err(sql)?;
    progress(white_sets, white_sets);
    Ok(checksum.checksum())
}

/// How often, in white sets, a resolving write tells of its progress.
const PROGRESS_WHITE_SETS: u64 = 4096;

/// Where a resolving write of a class stands: the white set it goes on
/// from, the running checksum and the counts by cell of every block
/// before it.
pub(super) struct SoFar {
    /// The first white set not yet written.
    pub(super) next: u64,
    checksum: RunningChecksum,
    counts: [u64; 256],
}

impl SoFar {
    /// Nothing written yet.
    pub(super) fn start() -> SoFar {
        SoFar {
            next: 0,
            checksum: RunningChecksum::default(),
            counts: [0; 256],
        }
    }
}

/// What a resumed write keeps of the frames of class `spec` that a write
/// stopped before it left in `conn`: they are read in order, and each must
/// begin where the one before ended (the first at white set 0) and pass
/// every check of a frame read back, and each of its cells must have the
/// residue the search left in `residues` (an exact value `v` for the code
/// `v mod 3`, unreachable for unseen). The first that does not, and every
/// frame after it, is deleted. Returns where the write stands after the
/// frames kept, and the white set the deletion began at, if any.
///
/// # Errors
///
/// What SQLite runs into; a residues file's failure.
pub(super) fn replay<W: Word, R: Residues>(
    conn: &Connection,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    residues: &R,
) -> Result<(SoFar, Option<u64>)> {
    let sql = |e| Error::Sqlite("the database being written".into(), e);
    let class = spec.class.index() as i64;
    let mut so_far = SoFar::start();
    let mut bad = None;
    {
        let mut st = conn
            .prepare("SELECT first_white, last_white, data, checksum FROM frames WHERE class = ?1 ORDER BY first_white")
            .map_err(sql)?;
        let mut rows = st.query([class]).map_err(sql)?;
        while let Some(row) = rows.next().map_err(sql)? {
            let read = || -> Checked<Frame> {
                let whites: (i64, i64) = (row.get(0)?, row.get(1)?);
                if whites.0 != so_far.next as i64 {
                    return Err(Fault::Wrong("a frame out of place".into()));
                }
                let data: Vec<u8> = row.get(2)?;
                let frame = check_frame(spec, whites, &data, row.get(3)?)?;
                if let (Some(&(white, ..)), Some(&(last, ..))) = (frame.blocks.first(), frame.blocks.last()) {
                    residues.prepare(index.block(white).start..index.block(last).end);
                }
                for &(white, start, len) in &frame.blocks {
                    let block = index.block(white);
                    if block.end - block.start != len as u64
                        || !agrees(residues, block, &frame.cells[start..start + len])
                    {
                        return Err(Fault::Wrong(format!(
                            "a block of white set {white} the table disagrees with"
                        )));
                    }
                }
                Ok(frame)
            };
            let Ok(frame) = read() else {
                bad = Some(so_far.next);
                break;
            };
            so_far.checksum.add(&frame.cells);
            for &cell in &frame.cells {
                so_far.counts[usize::from(cell)] += 1;
            }
            so_far.next = frame.whites.end() + 1;
        }
    }
    residues.fault()?;
    if bad.is_some() {
        conn.execute(
            "DELETE FROM frames WHERE class = ?1 AND first_white >= ?2",
            params![class, so_far.next as i64],
        )
        .map_err(sql)?;
    }
    Ok((so_far, bad))
}

/// Whether the exact values `cells` of the positions `block` (a block of
/// the class's index) have the residues that `residues` holds for them.
fn agrees<R: Residues>(residues: &R, block: std::ops::Range<u64>, cells: &[u8]) -> bool {
    let first = block.start / PER_WORD;
    let words = residues.words(first..block.end.div_ceil(PER_WORD).max(first));
    block.zip(cells).all(|(i, &cell)| {
        let code = (words[(i / PER_WORD - first) as usize] >> (2 * (i % PER_WORD))) as u8 & 3;
        match Cell(cell).remoteness() {
            Some(r) => u16::from(code) == r.0 % 3,
            None => code == UNSEEN && cell == Cell::UNREACHABLE.0,
        }
    })
}

/// Compresses `cells` at [`LEVEL`], with a context kept by each thread.
fn compress(cells: &[u8]) -> Vec<u8> {
    thread_local! {
        static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    }
    COMPRESSOR.with_borrow_mut(|c| {
        let compressor = match c {
            Some(c) => c,
            None => c.insert(zstd::bulk::Compressor::new(LEVEL).expect("zstd takes its own levels")),
        };
        compressor
            .compress(cells)
            .expect("zstd compresses into a growing buffer")
    })
}

/// Decompresses `data` into `cells`, which must be exactly `len` cells,
/// with a context kept by each thread; `None` when it is not a zstd frame
/// of `len` bytes (nothing is written past the buffer's room, which is
/// `len` or what it held before).
fn decompress(data: &[u8], len: usize, cells: &mut Vec<u8>) -> Option<()> {
    thread_local! {
        static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
    }
    DECOMPRESSOR.with_borrow_mut(|d| {
        let decompressor = match d {
            Some(d) => d,
            None => d.insert(zstd::bulk::Decompressor::new().ok()?),
        };
        // Written into the buffer's room, not over zeros laid down first.
        cells.clear();
        cells.reserve_exact(len);
        let written = decompressor.decompress_to_buffer(data, cells).ok()?;
        (written == len && cells.len() == len).then_some(())
    })
}

/// A frame read and checked: the white sets it covers, and the cells of
/// their blocks in order.
pub(super) struct Frame {
    /// Its first and last white set.
    pub(super) whites: RangeInclusive<u64>,
    /// The cells of each of its blocks, in white-set order: (white rank,
    /// where its cells start in `cells`, how many), empty blocks left out.
    pub(super) blocks: Vec<(u64, usize, usize)>,
    /// Every cell of the frame.
    pub(super) cells: Vec<u8>,
}

/// Reads the frame of class `spec` that covers the white set of rank
/// `white`, and checks it.
#[cfg(test)]
pub(super) fn read_covering<W: Word>(conn: &Connection, spec: &ClassSpec<W>, white: u64) -> Checked<Frame> {
    let (whites, data, sum) = covering(conn, spec, white)?;
    let frame = check_frame(spec, whites, &data, sum)?;
    if !frame.whites.contains(&white) {
        return Err(Fault::Wrong("no frame".into()));
    }
    Ok(frame)
}

/// How many decoded frames a connection keeps at hand ([`AtHand`]): a
/// question's lookups come partly in runs of white sets near each other,
/// so a frame decoded for one block is sometimes asked for another soon
/// after (the query on 11x10's start decodes 205 frames with 8 at hand,
/// 218 without).
const FRAMES_AT_HAND: usize = 8;

/// The frames a connection decoded and checked last, newest first, at most
/// [`FRAMES_AT_HAND`]: a block in one of them is copied out without a row
/// read or a frame decompressed. Their cells were checked whole when they
/// were read, as a block in the shared cache was.
#[derive(Default)]
pub(super) struct AtHand {
    frames: Vec<Decoded>,
}

/// A frame at hand: its class and the frame.
struct Decoded {
    class: usize,
    frame: Frame,
}

impl AtHand {
    /// Whether no frame is at hand: none was read by a lookup.
    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

impl Frame {
    /// The cells of white set `white`'s block, which this frame covers.
    fn block(&self, white: u64) -> Vec<u8> {
        // An empty block is left out of the frame's list.
        (self.blocks.iter().find(|b| b.0 == white))
            .map_or_else(Vec::new, |&(_, start, len)| self.cells[start..start + len].to_vec())
    }
}

/// The cells of the block of white set `white` in class `spec`, from the
/// frame that covers it, which is checked whole: from `at_hand` when it is
/// there, else read, checked and kept there in place of the oldest.
pub(super) fn read_block<W: Word>(
    conn: &Connection,
    spec: &ClassSpec<W>,
    white: u64,
    at_hand: &mut AtHand,
) -> Checked<Vec<u8>> {
    let class = spec.class.index();
    let frames = &mut at_hand.frames;
    if let Some(i) = frames
        .iter()
        .position(|f| f.class == class && f.frame.whites.contains(&white))
    {
        frames[..=i].rotate_right(1);
        return Ok(frames[0].frame.block(white));
    }
    let (whites, data, sum) = covering(conn, spec, white)?;
    // The oldest frame's memory is used again.
    let mut cells = if frames.len() == FRAMES_AT_HAND {
        frames.pop().map(|f| f.frame.cells).unwrap_or_default()
    } else {
        Vec::new()
    };
    let (whites, blocks) = check_into(spec, whites, &data, sum, &mut cells)?;
    if !whites.contains(&white) {
        return Err(Fault::Wrong("no frame".into()));
    }
    let frame = Frame { whites, blocks, cells };
    let block = frame.block(white);
    frames.insert(0, Decoded { class, frame });
    Ok(block)
}

/// What [`read_ahead`] takes of the frames that cover the positions
/// `wanted` of class `spec`, each given by its white set's rank and its
/// place in that block, in increasing order: `take(white, place, block)`
/// for each whose block has cells, the block checked whole with its frame.
/// The frames' rows are read in turn, and each frame decoded and checked
/// on the pool while the next row is read, into a buffer each thread keeps
/// ([`DECODED`]): only what `take` copies out is kept. What cannot be given
/// is left out: an empty block, what `take` declines, and all a frame
/// that cannot be read, fails a check or does not cover its positions
/// would give. The lookup that needs one of those reads it again and says
/// what is wrong. What is taken comes back in no particular order.
pub(super) fn read_ahead<W: Word, T: Send>(
    conn: &Connection,
    spec: &ClassSpec<W>,
    wanted: &[(u64, usize)],
    take: impl Fn(u64, usize, &[u8]) -> Option<T> + Sync,
) -> Vec<T> {
    let found = Mutex::new(Vec::with_capacity(wanted.len()));
    // Each frame is decoded by the pool while this thread reads the next
    // frame's row.
    let decode = &|(whites, data, sum): Row, wanted: &[(u64, usize)]| {
        DECODED.with_borrow_mut(|cells| {
            let Ok((whites, blocks)) = check_into(spec, whites, &data, sum, cells) else {
                return;
            };
            let got: Vec<T> = (wanted.iter())
                .filter(|(white, _)| whites.contains(white))
                .filter_map(|&(white, i)| {
                    // An empty block is left out of the frame's list.
                    let at = blocks.binary_search_by_key(&white, |b| b.0).ok()?;
                    let (_, start, len) = blocks[at];
                    take(white, i, &cells[start..start + len])
                })
                .collect();
            found.lock().unwrap_or_else(|e| e.into_inner()).extend(got);
        });
    };
    rayon::in_place_scope(|scope| {
        // The frame read last, and where the positions it may cover begin.
        let mut open: Option<(Row, usize)> = None;
        for (n, &(white, _)) in wanted.iter().enumerate() {
            if let Some((((first, last), ..), _)) = &open
                && (*first..=*last).contains(&(white as i64))
            {
                continue;
            }
            if let Some((row, from)) = open.take() {
                let wanted = &wanted[from..n];
                scope.spawn(move |_| decode(row, wanted));
            }
            open = covering(conn, spec, white).ok().map(|row| (row, n));
        }
        if let Some((row, from)) = open {
            let wanted = &wanted[from..];
            scope.spawn(move |_| decode(row, wanted));
        }
    });
    found.into_inner().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// The cells of the frame a thread decoded last in [`read_ahead`],
    /// kept so that the next is decoded into memory already mapped and
    /// warm in the processor's caches, not into fresh pages: a frame
    /// holds less than [`FRAME_POSITIONS`] and one block (tens of KiB on
    /// the boards solved here), and the buffer keeps the room of the
    /// largest its thread decoded.
    static DECODED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A frame's row as stored, unchecked: its first and last white set, its
/// compressed cells and their checksum.
type Row = ((i64, i64), Vec<u8>, i64);

/// The row of the frame of class `spec` that covers the white set of rank
/// `white`: its first and last white set, its compressed cells and their
/// checksum, unchecked.
fn covering<W: Word>(conn: &Connection, spec: &ClassSpec<W>, white: u64) -> Checked<Row> {
    let row = conn
        .prepare_cached(
            "SELECT first_white, last_white, data, checksum FROM frames
             WHERE class = ?1 AND first_white <= ?2 ORDER BY first_white DESC LIMIT 1",
        )?
        .query_row(params![spec.class.index() as i64, white as i64], |r| {
            Ok((
                (r.get::<_, i64>(0)?, r.get::<_, i64>(1)?),
                r.get::<_, Vec<u8>>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })
        .optional()?;
    row.ok_or_else(|| Fault::Wrong("no frame".into()))
}

/// Hands every frame of class `spec` to `f` in order, each checked, and
/// checks that they tile the class's white sets: the first begins at 0,
/// each where the one before ended, the last ends at the class's last.
/// Returns how many there are; a fault found becomes `fault`'s error.
pub(super) fn for_each<W: Word>(
    conn: &Connection,
    spec: &ClassSpec<W>,
    fault: impl Fn(Fault) -> Error,
    mut f: impl FnMut(&Frame) -> Result<()>,
) -> Result<u64> {
    let white_sets = white_sets(spec);
    let mut st = conn
        .prepare_cached(
            "SELECT first_white, last_white, data, checksum FROM frames WHERE class = ?1 ORDER BY first_white",
        )
        .map_err(|e| fault(e.into()))?;
    let mut rows = st.query([spec.class.index() as i64]).map_err(|e| fault(e.into()))?;
    let (mut next, mut count) = (0u64, 0u64);
    while let Some(row) = rows.next().map_err(|e| fault(e.into()))? {
        let read = || -> Checked<Frame> {
            let whites: (i64, i64) = (row.get(0)?, row.get(1)?);
            if whites.0 != next as i64 {
                return Err(Fault::Wrong(format!(
                    "frames that leave out or repeat white set {next}"
                )));
            }
            let data: Vec<u8> = row.get(2)?;
            check_frame(spec, whites, &data, row.get(3)?)
        };
        let frame = read().map_err(&fault)?;
        next = frame.whites.end() + 1;
        count += 1;
        f(&frame)?;
    }
    if next != white_sets {
        return Err(fault(Fault::Wrong(format!(
            "frames that end before white set {next} of {white_sets}"
        ))));
    }
    Ok(count)
}

/// How many white sets the class `spec` has.
fn white_sets<W: Word>(spec: &ClassSpec<W>) -> u64 {
    let (white_count, _) = spec.counts();
    crate::index::binomial(spec.geometry.len() as u32, white_count)
}

/// Checks a frame as stored: its white sets `(first, last)` in range, its
/// compressed `data` no longer than its cells can take, decompressing to
/// exactly its positions, matching `sum` and holding no illegal cell.
fn check_frame<W: Word>(spec: &ClassSpec<W>, whites: (i64, i64), data: &[u8], sum: i64) -> Checked<Frame> {
    let mut cells = Vec::new();
    let (whites, blocks) = check_into(spec, whites, data, sum, &mut cells)?;
    Ok(Frame { whites, blocks, cells })
}

/// A frame's white sets and where each of its blocks is among its cells,
/// as [`Frame`] has them.
type Extent = (RangeInclusive<u64>, Vec<(u64, usize, usize)>);

/// The white sets of a frame (checked as [`check_frame`] says) and where
/// each block's cells are, its cells left in `cells`.
fn check_into<W: Word>(
    spec: &ClassSpec<W>,
    (first, last): (i64, i64),
    data: &[u8],
    sum: i64,
    cells: &mut Vec<u8>,
) -> Checked<Extent> {
    let white_sets = white_sets(spec);
    let (Ok(first), Ok(last)) = (u64::try_from(first), u64::try_from(last)) else {
        return Err(Fault::Wrong("a frame of negative white sets".into()));
    };
    if first > last || last >= white_sets || last - first >= FRAME_WHITES {
        return Err(Fault::Wrong(format!("a frame of white sets {first} to {last}")));
    }
    let mut blocks = Vec::new();
    let mut len = 0usize;
    for white in first..=last {
        let at = BlockAt::new(spec, white);
        if at.len > 0 {
            blocks.push((white, len, at.len as usize));
            len += at.len as usize;
        }
    }
    // A frame is closed as soon as it holds FRAME_POSITIONS, so what claims
    // that many before its last block was not written so, and is refused
    // before memory is taken for its cells.
    if blocks.last().is_some_and(|&(_, start, _)| start >= FRAME_POSITIONS) {
        return Err(Fault::Wrong(format!(
            "a frame of white sets {first} to {last}, {len} positions"
        )));
    }
    if data.len() > zstd::zstd_safe::compress_bound(len) {
        return Err(Fault::Wrong(format!(
            "a frame of {} bytes for {len} positions",
            data.len()
        )));
    }
    decompress(data, len, cells)
        .ok_or_else(|| Fault::Wrong(format!("a frame that does not decompress to its {len} positions")))?;
    if block_checksum(spec.class.index(), first, cells).signed() != sum {
        return Err(Fault::Wrong("a frame that fails its checksum".into()));
    }
    if cells.contains(&Cell::ILLEGAL.0) {
        return Err(Fault::Wrong("a cell marked illegal".into()));
    }
    Ok((first..=last, blocks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mod3::Mod3Table;
    use crate::storage::schema::SCHEMA;
    use crate::variant::Variant;

    /// 9x6's class a1 with made-up cells (every value but illegal), written
    /// as frames into a database in memory.
    fn written() -> (Variant, Connection, Vec<u8>) {
        let variant = Variant::named("9x6").unwrap();
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let cells: Vec<u8> = (0..index.len()).map(|i| (i * 31 / 7 % 255) as u8).collect();
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        write_class(&conn, 0, &index, &cells).unwrap();
        (variant, conn, cells)
    }

    fn every_frame(conn: &Connection, spec: &ClassSpec) -> Result<(u64, Vec<u8>)> {
        let mut cells = Vec::new();
        let count = for_each(
            conn,
            spec,
            |f| Error::Usage(format!("{f:?}")),
            |frame| {
                cells.extend_from_slice(&frame.cells);
                Ok(())
            },
        )?;
        Ok((count, cells))
    }

    #[test]
    fn frames_tile_the_class_and_give_back_every_cell() {
        let (variant, conn, cells) = written();
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let (count, read) = every_frame(&conn, spec).unwrap();
        assert_eq!(read, cells);
        assert!(
            count > 1 && count as usize <= cells.len() / FRAME_POSITIONS + 1,
            "{count} frames"
        );
        // Each block is found in the frame that covers it, at its place,
        // read alone and through frames kept at hand.
        let mut at_hand = AtHand::default();
        for r in (0..index.white_sets()).step_by(97) {
            let block = index.block(r);
            let frame = read_covering(&conn, spec, r).unwrap();
            assert!(frame.whites.contains(&r));
            let want = &cells[block.start as usize..block.end as usize];
            assert_eq!(read_block(&conn, spec, r, &mut AtHand::default()).unwrap(), want);
            assert_eq!(read_block(&conn, spec, r, &mut at_hand).unwrap(), want);
            let found = frame.blocks.iter().find(|b| b.0 == r);
            match found {
                Some(&(_, start, len)) => {
                    assert_eq!(
                        &frame.cells[start..start + len],
                        &cells[block.start as usize..block.end as usize]
                    )
                }
                None => assert!(block.is_empty(), "block {r} is left out of its frame"),
            }
        }
    }

    /// What is read ahead is each cell (or block) asked for that its block
    /// has, as a frame read alone gives it; a damaged frame gives none,
    /// and is left to the lookup that needs it.
    #[test]
    fn cells_read_ahead_are_those_read_alone_and_a_damaged_frame_gives_none() {
        let (variant, conn, cells) = written();
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let block = |r: u64| &cells[index.block(r).start as usize..index.block(r).end as usize];
        // Every 7th white set, at the first, a middle and a last place of
        // its block and one past its end.
        let mut wanted = Vec::new();
        for r in (0..index.white_sets()).step_by(7) {
            let len = block(r).len();
            wanted.extend([(r, 0), (r, len / 2), (r, len.saturating_sub(1)), (r, len)]);
        }
        wanted.sort_unstable();
        wanted.dedup();
        let cell = |white, i, block: &[u8]| block.get(i).map(|&cell| ((white, i), cell));
        let read = |wanted: &[(u64, usize)]| {
            let mut ahead = read_ahead(&conn, spec, wanted, cell);
            ahead.sort_unstable();
            ahead
        };
        let ahead = read(&wanted);
        let want: Vec<(u64, usize)> = wanted.iter().copied().filter(|&(r, i)| i < block(r).len()).collect();
        assert!(want.len() > 100, "{} cells", want.len());
        assert_eq!(ahead.iter().map(|c| c.0).collect::<Vec<_>>(), want);
        for &((r, i), cell) in &ahead {
            assert_eq!(cell, block(r)[i]);
        }
        // Or each block whole.
        let whites: Vec<(u64, usize)> = (0..index.white_sets()).step_by(5).map(|r| (r, 0)).collect();
        let mut blocks = read_ahead(&conn, spec, &whites, |white, _, block| Some((white, block.to_vec())));
        blocks.sort_unstable();
        let nonempty: Vec<(u64, Vec<u8>)> = (whites.iter())
            .filter(|&&(r, _)| !block(r).is_empty())
            .map(|&(r, _)| (r, block(r).to_vec()))
            .collect();
        assert_eq!(blocks, nonempty);
        conn.execute("UPDATE frames SET checksum = checksum + 1 WHERE first_white = 0", [])
            .unwrap();
        let damaged: i64 = conn
            .query_row("SELECT last_white FROM frames WHERE first_white = 0", [], |r| r.get(0))
            .unwrap();
        let damaged = damaged as u64;
        let ahead = read(&wanted);
        assert!(ahead.iter().all(|&((r, _), _)| r > damaged));
        assert_eq!(ahead.len(), want.iter().filter(|&&(r, _)| r > damaged).count());
        assert!(read_block(&conn, spec, 0, &mut AtHand::default()).is_err());
    }

    #[test]
    fn frames_at_hand_answer_only_for_their_own_class_and_white_sets() {
        let (variant, conn, cells) = written();
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let mut at_hand = AtHand::default();
        // Back and forth over the class: later reads find frames at hand.
        let whites: Vec<u64> = (0..index.white_sets()).step_by(13).collect();
        for &r in whites.iter().chain(whites.iter().rev()).chain(&whites) {
            let block = index.block(r);
            assert_eq!(
                read_block(&conn, spec, r, &mut at_hand).unwrap(),
                &cells[block.start as usize..block.end as usize]
            );
            assert!(at_hand.frames.len() <= FRAMES_AT_HAND);
            assert!(
                at_hand.frames[0].frame.whites.contains(&r),
                "the frame used is the newest"
            );
        }
        // A frame of another class covering the same white sets is not
        // this class's.
        let r = (0..index.white_sets()).find(|&r| !index.block(r).is_empty()).unwrap();
        let block = index.block(r);
        let len = (block.end - block.start) as usize;
        let mut foreign = AtHand::default();
        foreign.frames.push(Decoded {
            class: 1,
            frame: Frame {
                whites: r..=r,
                blocks: vec![(r, 0, len)],
                cells: vec![Cell::UNREACHABLE.0; len],
            },
        });
        assert_eq!(
            read_block(&conn, spec, r, &mut foreign).unwrap(),
            &cells[block.start as usize..block.end as usize]
        );
    }

    #[test]
    fn a_long_run_of_empty_blocks_is_cut_into_bounded_frames() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        let mut writer = Writer::new(&conn, 0, 3 * FRAME_WHITES + 5).unwrap();
        writer.block(1, &[1, 2]).unwrap();
        writer.block(2 * FRAME_WHITES + 3, &[3]).unwrap();
        writer.finish().unwrap();
        let spans: Vec<(i64, i64, i64)> = conn
            .prepare("SELECT first_white, last_white, length(data) FROM frames ORDER BY first_white")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let w = FRAME_WHITES as i64;
        let bounds: Vec<(i64, i64)> = spans.iter().map(|s| (s.0, s.1)).collect();
        assert_eq!(
            bounds,
            [(0, w - 1), (w, 2 * w - 1), (2 * w, 3 * w - 1), (3 * w, 3 * w + 4)]
        );
        // A frame of no positions reads back as none.
        let mut cells = vec![7; 3];
        assert_eq!(decompress(&compress(&[]), 0, &mut cells), Some(()));
        assert!(cells.is_empty());
        assert_eq!(decompress(&compress(&[]), 1, &mut cells), None);
        // A buffer kept from a larger frame takes no more than the frame.
        let mut cells = vec![0; 100];
        assert_eq!(decompress(&compress(&[5; 10]), 9, &mut cells), None);
        assert_eq!(decompress(&compress(&[5; 10]), 10, &mut cells), Some(()));
        assert_eq!(cells, [5; 10]);
    }

    /// Residues resolve to exact values a block at a time, as a byte search
    /// finds them; damaged ones are refused, as their values no longer
    /// count what the search counted.
    #[test]
    fn residues_are_written_as_the_exact_values_they_stand_for() {
        let variant = Variant::named("7x6").unwrap();
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let cells = crate::solver::search::bytes("7x6", spec, &index, &mut |_| {}).unwrap();
        let stats = crate::solver::ClassStats::of(&cells, &index);
        let write = |residues: &Mod3Table| {
            let conn = Connection::open_in_memory().unwrap();
            conn.execute_batch(SCHEMA).unwrap();
            write_resolved(
                &conn,
                spec,
                &index,
                residues,
                (&stats.histogram, crate::mod3::exact::MEMO_BYTES),
                (SoFar::start(), None),
                &mut |_, _| {},
            )
            .map(|sum| (sum, conn))
        };
        let (sum, conn) = write(&Mod3Table::from_cells(&cells)).unwrap();
        assert_eq!(sum, Checksum::of(&cells));
        assert_eq!(every_frame(&conn, spec).unwrap().1, cells);
        // A residue one off in the middle of the table, and a reachable
        // position marked unreachable.
        let middle = index.len() / 2;
        let reachable = (middle..index.len())
            .find(|&i| cells[i as usize] != Cell::UNREACHABLE.0)
            .unwrap();
        for damage in [Some((cells[reachable as usize] + 1) % 3), None] {
            let mut residues = Mod3Table::from_cells(&cells);
            residues.set(reachable, damage);
            let err = write(&residues).err().unwrap().to_string();
            assert!(err.contains("resolve"), "{damage:?}: {err}");
        }
    }

    /// A resumed write keeps the frames a stopped one left as far as they
    /// are right, and goes on from there to the frames and checksum of a
    /// write in one go: a frame forged with its checksum made anew (a value
    /// the table's residue contradicts) is deleted with every frame after
    /// it, and so is a frame out of place.
    #[test]
    fn a_resumed_write_keeps_what_is_right_and_ends_as_one_in_one_go() {
        let variant = Variant::named("9x6").unwrap();
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let cells = crate::solver::search::bytes("9x6", spec, &index, &mut |_| {}).unwrap();
        let stats = crate::solver::ClassStats::of(&cells, &index);
        let residues = Mod3Table::from_cells(&cells);
        let memo = (stats.histogram.as_slice(), crate::mod3::exact::MEMO_BYTES);
        let frames = |conn: &Connection| -> Vec<(i64, i64, Vec<u8>, i64)> {
            conn.prepare("SELECT first_white, last_white, data, checksum FROM frames ORDER BY first_white")
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        let whole = Connection::open_in_memory().unwrap();
        whole.execute_batch(SCHEMA).unwrap();
        let sum = write_resolved(
            &whole,
            spec,
            &index,
            &residues,
            memo,
            (SoFar::start(), None),
            &mut |_, _| {},
        )
        .unwrap();
        let want = frames(&whole);
        assert!(want.len() >= 3, "{} frames", want.len());
        // Whole and right: kept whole, and nothing is left to write.
        let (so_far, bad) = replay(&whole, spec, &index, &residues).unwrap();
        assert_eq!((so_far.next, bad), (index.white_sets(), None));
        assert_eq!(so_far.checksum.checksum(), sum);
        let second = want[1].0;
        let forge = |conn: &Connection| {
            // Frame 1 with one reachable value one higher, its checksum made anew.
            let (first, last, data, _) = &want[1];
            let mut cells = zstd::bulk::decompress(data, 1 << 24).unwrap();
            let at = cells
                .iter()
                .position(|&c| Cell(c).remoteness().is_some_and(|r| r.0 < 200))
                .unwrap();
            cells[at] += 1;
            let sum = block_checksum(spec.class.index(), *first as u64, &cells).signed();
            conn.execute(
                "UPDATE frames SET data = ?1, checksum = ?2 WHERE first_white = ?3 AND last_white = ?4",
                params![compress(&cells), sum, first, last],
            )
            .unwrap();
        };
        let out_of_place = |conn: &Connection| {
            conn.execute("DELETE FROM frames WHERE first_white = ?1", [second])
                .unwrap();
        };
        for damage in [&forge as &dyn Fn(&Connection), &out_of_place] {
            let conn = Connection::open_in_memory().unwrap();
            conn.execute_batch(SCHEMA).unwrap();
            write_resolved(
                &conn,
                spec,
                &index,
                &residues,
                memo,
                (SoFar::start(), None),
                &mut |_, _| {},
            )
            .unwrap();
            damage(&conn);
            let (so_far, bad) = replay(&conn, spec, &index, &residues).unwrap();
            assert_eq!((so_far.next, bad), (second as u64, Some(second as u64)));
            assert_eq!(frames(&conn), want[..1], "the frames from the damage on are deleted");
            let mut told = Vec::new();
            let resumed = write_resolved(&conn, spec, &index, &residues, memo, (so_far, None), &mut |d, _| {
                told.push(d)
            })
            .unwrap();
            assert_eq!(resumed, sum, "the class checksum of a write in one go");
            assert_eq!(frames(&conn), want, "its frames too");
            assert!(told.iter().all(|&d| d >= second as u64), "{told:?}");
        }
    }

    /// Each kind of damage to a stored frame is refused when it is read,
    /// and when the class is read whole.
    #[test]
    fn a_damaged_frame_is_refused() {
        let damages = [
            (
                "UPDATE frames SET data = CAST(X'00' || data AS BLOB) WHERE rowid = (SELECT min(rowid) FROM frames)",
                "decompress",
            ),
            (
                "UPDATE frames SET checksum = checksum + 1 WHERE rowid = (SELECT min(rowid) FROM frames)",
                "checksum",
            ),
            (
                "UPDATE frames SET data = zeroblob(1 << 20) WHERE rowid = (SELECT min(rowid) FROM frames)",
                "bytes for",
            ),
            (
                "UPDATE frames SET last_white = last_white - 1 WHERE rowid = (SELECT min(rowid) FROM frames)",
                "decompress",
            ),
            // More positions before its last block than a frame is closed
            // at: refused before its cells take any memory.
            (
                "UPDATE frames SET last_white = last_white + 1 WHERE rowid = (SELECT min(rowid) FROM frames)",
                "positions",
            ),
            (
                "UPDATE frames SET last_white = -1 WHERE rowid = (SELECT min(rowid) FROM frames)",
                "a frame of",
            ),
            (
                "DELETE FROM frames WHERE rowid = (SELECT max(rowid) FROM frames)",
                "end before",
            ),
            (
                "DELETE FROM frames WHERE rowid = (SELECT min(rowid) + 1 FROM frames)",
                "leave out",
            ),
        ];
        for (damage, said) in damages {
            let (variant, conn, _) = written();
            let spec = &variant.classes()[0];
            conn.execute(damage, []).unwrap();
            let err = every_frame(&conn, spec).unwrap_err().to_string();
            assert!(err.contains(said), "{damage}: {err}");
        }
        // A frame of zstd bytes that would decompress to more than its
        // positions is refused, never decompressed whole.
        let (variant, conn, cells) = written();
        let spec = &variant.classes()[0];
        let first: i64 = conn
            .query_row("SELECT last_white FROM frames ORDER BY first_white LIMIT 1", [], |r| {
                r.get(0)
            })
            .unwrap();
        let larger = zstd::bulk::compress(&vec![0u8; cells.len()], 3).unwrap();
        conn.execute("UPDATE frames SET data = ?1 WHERE first_white = 0", [larger])
            .unwrap();
        let err = read_covering(&conn, spec, first as u64)
            .err()
            .map(|f| format!("{f:?}"))
            .unwrap();
        assert!(err.contains("decompress"), "{err}");
    }
}
