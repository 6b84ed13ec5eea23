//! An open, checked [`Database`] and its lookups: reading one block
//! (through its layout's reader, or a mirrored class's source) into the
//! cache of checked blocks, and the cell and remoteness of one position,
//! found by descent in the residues layout.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hashbrown::HashMap;
use rusqlite::Connection;

use super::block::BlockAt;
use super::cache::{BlockCache, HeldBlock};
use super::checksum::Checksum;
use super::fault::Fault;
use super::memo::{CellMemo, WhiteMemo};
use super::residues::{UNREACHABLE_CODE, code_at};
use super::schema::{ClassRecord, Layout, Metadata};
use super::{blocks, frames, packed, residues, rows};
use crate::bitboard::{Bitboard, Word};
use crate::error::{Error, Result};
use crate::index::{binomial, colex_rank, rank_within};
use crate::mod3::exact;
use crate::remoteness::{Cell, Remoteness};
use crate::rules::{Part, safe_cells};
use crate::symmetry::Mirror;
use crate::text::clip;
use crate::tight::prefetch;
use crate::variant::ClassSpec;
use crate::variant::Width;

/// How many bytes of checked blocks a [`Database`] and the databases
/// [reopened](Database::reopen) from it keep in memory, together, unless
/// opened with a budget of their own ([`Database::open_with_cache`]): a probe
/// reads the block of its position, of each move's and, in the residues
/// layout, of every step of a descent to the goal, and many of those are
/// shared between probes. Kept only as blocks are read: a single query
/// keeps a few.
pub const BLOCK_CACHE_BYTES: usize = 192 << 20;

/// How many blocks a connection keeps at hand besides the shared cache
/// (see [`Database::recent`](Database)): a question's confirmations read
/// some hundreds of blocks, each many times, and most of those reads are
/// answered here, without the shared cache's lock.
const RECENT_BLOCKS: usize = 256;

/// A block a connection used lately: ((class number k, white rank), its
/// cells or packed codes).
pub(super) type RecentBlock = ((usize, u64), Arc<[u8]>);

/// The values a connection confirmed lately, by class number and part
/// ([`Database::confirm`], which keeps at most
/// [`CONFIRMED_KEPT`](super::confirm::CONFIRMED_KEPT)).
pub(super) type Confirmed<W> = hashbrown::HashMap<(usize, Part<W>), Option<Remoteness>>;

/// The slot of [`Database::recent`](Database) a block may be kept in.
fn recent_slot(key: (usize, u64)) -> usize {
    let h = (key.1 ^ (key.0 as u64) << 58).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 56) as usize % RECENT_BLOCKS
}

/// What [`Database::hold`] put in memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held {
    /// Blocks read and kept.
    pub blocks: u64,
    /// Their positions.
    pub positions: u64,
    /// The bytes they take, beyond what keeping each costs.
    pub bytes: u64,
    /// Whether it stopped because the memory for blocks was full.
    pub full: bool,
}

impl Held {
    /// The sum of two counts, full when either is.
    #[must_use]
    pub fn and(self, other: Held) -> Held {
        Held {
            blocks: self.blocks + other.blocks,
            positions: self.positions + other.positions,
            bytes: self.bytes + other.bytes,
            full: self.full || other.full,
        }
    }
}

/// An open, checked database of one variant.
pub struct Database<W: Word = u64> {
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
    pub(super) metadata: Metadata,
    pub(super) specs: Vec<ClassSpec<W>>,
    pub(super) classes: Vec<ClassRecord>,
    /// For each class stored as the mirror image of another: that class and
    /// the map from this class's cells to its.
    pub(super) mirrors: Vec<Option<(usize, Mirror)>>,
    /// Blocks read and checked lately, shared with the databases reopened
    /// from this one: the cells of each, or in the residues layout its
    /// packed two-bit codes; a held block of the frames layout in the bits
    /// its values need ([`packed`]).
    pub(super) cache: Arc<BlockCache>,
    /// Blocks this connection used lately, [`RECENT_BLOCKS`] slots each
    /// holding the last block used of those that fall in it: a descent
    /// and a question's confirmations look up many positions of one block
    /// in a row, and these are found without asking the shared cache.
    pub(super) recent: RefCell<Vec<Option<RecentBlock>>>,
    /// In the frames layout, the frames this connection decoded last
    /// ([`frames::AtHand`]).
    pub(super) frames: RefCell<frames::AtHand>,
    /// The values this connection confirmed lately
    /// ([`Database::confirm`]).
    pub(super) confirmed: RefCell<Confirmed<W>>,
    /// Where the white sets this connection placed lately lie
    /// ([`WhiteMemo`]).
    pub(super) whites: RefCell<WhiteMemo<W>>,
    /// The cells this connection read lately, by position ([`CellMemo`]).
    pub(super) memo: RefCell<CellMemo<W>>,
    /// The cells its first question read ahead ([`Database::read_ahead`]),
    /// by class number, white set's rank and place in that block.
    pub(super) ahead: RefCell<HashMap<(usize, u64, usize), u8>>,
    /// Whether a question read ahead on this connection before.
    pub(super) asked: std::cell::Cell<bool>,
    /// The buffers its confirmations reuse ([`Scratch`]).
    pub(super) scratch: RefCell<Scratch<W>>,
}

/// Buffers that a connection's confirmations use one after another
/// ([`Database::confirm`]), kept so that a question, which confirms
/// dozens of positions, allocates none of them anew.
#[derive(Default)]
pub(super) struct Scratch<W: Word> {
    /// A position's neighbours.
    pub(super) neighbours: Vec<Part<W>>,
    /// Their cells, in order ([`Database::stored_all`]).
    pub(super) cells: Vec<u8>,
    /// The neighbours not remembered ([`Misses`]).
    pub(super) misses: Misses,
}

/// The parts of [`Database::stored_all`]'s list that the connection did
/// not remember: (their place in the list, their white set's rank, their
/// place in that block).
pub(super) type Misses = Vec<(usize, u64, usize)>;

impl<W: Word> std::fmt::Debug for Database<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("path", &self.path).finish()
    }
}

impl<W: Width> Database<W> {
    /// When the `k`-th class is stored as the mirror image of another: that
    /// class's place and the map from this class's cells to its.
    pub fn mirror_of(&self, k: usize) -> Option<(usize, &Mirror)> {
        self.mirrors[k].as_ref().map(|(from, mirror)| (*from, mirror))
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

    /// How the tables are held.
    pub fn layout(&self) -> Layout {
        self.metadata.layout
    }

    /// The error for this file when `problem` is found in it.
    pub fn corrupt(&self, problem: String) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            problem,
            variant: self.metadata.variant.clone(),
        }
    }

    /// The error for this file when SQLite cannot read it.
    pub(super) fn read_error(&self, e: rusqlite::Error) -> Error {
        self.corrupt(format!("cannot be read ({})", clip(&e.to_string(), 80)))
    }

    /// Lets SQLite keep up to `kib` KiB of the file's pages in memory, as
    /// they are read (about 2 MiB by default): for a long-lived reader of
    /// random positions, not for one pass over the file.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when SQLite refuses.
    pub fn keep_pages(&self, kib: u32) -> Result<()> {
        self.conn
            .pragma_update(None, "cache_size", -i64::from(kib))
            .map_err(|e| self.read_error(e))
    }

    /// What the checked block of the white set of colex rank `white` in the
    /// `k`-th class, a class with a table of its own, holds for its `i`-th
    /// position: its cell, or in the residues layout its two-bit code. The
    /// block comes from this connection's recent blocks when it is one of
    /// them, else from the shared cache, else from the file.
    fn stored_at(&self, k: usize, white: u64, i: usize) -> Result<u8> {
        if let Some(block) = self.cache.held(k, white) {
            return Ok(self.in_held(block, i));
        }
        if let Some(&cell) = self.ahead.borrow().get(&(k, white, i)) {
            return Ok(cell);
        }
        let key = (k, white);
        let slot = recent_slot(key);
        if let Some(Some((at, block))) = self.recent.borrow().get(slot)
            && *at == key
        {
            return Ok(self.in_block(block, i));
        }
        let block = self.block(k, white)?;
        let value = self.in_block(&block, i);
        let mut recent = self.recent.borrow_mut();
        if recent.is_empty() {
            recent.resize(RECENT_BLOCKS, None);
        }
        recent[slot] = Some((key, block));
        Ok(value)
    }

    /// What the checked `block` holds for its `i`-th position.
    fn in_block(&self, block: &[u8], i: usize) -> u8 {
        match self.metadata.layout {
            Layout::Residues => code_at(block, i),
            Layout::Blocks | Layout::Rows | Layout::Frames => block[i],
        }
    }

    /// What the held `block` holds for its `i`-th position: in the frames
    /// layout a block is held packed ([`packed`]), in the others as it is
    /// kept by use.
    fn in_held(&self, block: HeldBlock<'_>, i: usize) -> u8 {
        match self.metadata.layout {
            Layout::Frames => packed::cell_in(block.head, block.bytes, i),
            Layout::Residues | Layout::Blocks | Layout::Rows => self.in_block(block.bytes, i),
        }
    }

    /// The byte of the held `block` that [`in_held`](Self::in_held) reads
    /// for its `i`-th position.
    fn held_byte<'a>(&self, block: HeldBlock<'a>, i: usize) -> Option<&'a u8> {
        block.bytes.get(match self.metadata.layout {
            Layout::Frames => packed::code_byte(block.head, i),
            Layout::Residues => i / 4,
            Layout::Blocks | Layout::Rows => i,
        })
    }

    /// The checked block of the white set of colex rank `white` in the
    /// `k`-th class, a class with a table of its own, from the shared cache
    /// when read lately: its cells, or in the residues layout its packed
    /// two-bit codes (read one at a time with [`code_at`]).
    fn block(&self, k: usize, white: u64) -> Result<Arc<[u8]>> {
        debug_assert!(self.mirrors[k].is_none(), "a mirrored class is read through its source");
        if let Some(block) = self.cache.get((k, white)) {
            return Ok(block);
        }
        let block: Arc<[u8]> = self.read_kept(k, white)?.into();
        self.cache.put((k, white), Arc::clone(&block));
        Ok(block)
    }

    /// Reads and checks the block of the white set of colex rank `white` in
    /// the `k`-th class, a class with a table of its own, in the form the
    /// shared cache keeps.
    fn read_kept(&self, k: usize, white: u64) -> Result<Vec<u8>> {
        match self.metadata.layout {
            Layout::Residues => self.read_packed(k, white),
            Layout::Frames => self.frame_block(k, white),
            Layout::Blocks | Layout::Rows => self.read_block(k, white),
        }
    }

    /// How many white sets the `k`-th class has: its blocks, empty ones
    /// included.
    pub fn white_sets(&self, k: usize) -> u64 {
        let spec = &self.specs[k];
        binomial(spec.geometry.len() as u32, spec.counts().0)
    }

    /// Holds the blocks of the white sets `whites` of the `k`-th class in
    /// the memory of checked blocks this database shares with those
    /// reopened from it, in order, each read and checked as a question
    /// reads it, until that memory has no room left for the next: so that
    /// questions find them there, without a lock, and read nothing from the
    /// file. Blocks held already are passed over. A mirrored class is read
    /// through its source, so holding it holds nothing.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when a block cannot be read or fails its checks.
    pub fn hold(&self, k: usize, whites: std::ops::Range<u64>) -> Result<Held> {
        let mut held = Held::default();
        if self.mirrors[k].is_some() {
            return Ok(held);
        }
        let all = self.white_sets(k);
        for white in whites {
            let len = BlockAt::new(&self.specs[k], white).len;
            if len == 0 || self.cache.held(k, white).is_some() {
                continue;
            }
            let mut block = self.read_kept(k, white)?;
            if self.metadata.layout == Layout::Frames {
                block = packed::pack(&block);
            }
            let bytes = block.len() as u64;
            if !self.cache.hold(k, all, white, &block) {
                held.full = true;
                break;
            }
            held.blocks += 1;
            held.positions += len;
            held.bytes += bytes;
        }
        Ok(held)
    }

    /// Reads the block of white set `white` of the `k`-th class (frames
    /// layout, a class with a table of its own) from the frame that covers
    /// it, the frame checked whole.
    fn frame_block(&self, k: usize, white: u64) -> Result<Vec<u8>> {
        frames::read_block(&self.conn, &self.specs[k], white, &mut self.frames.borrow_mut())
            .map_err(|fault| self.block_fault(&BlockAt::new(&self.specs[k], white), fault))
    }

    /// Reads the packed two-bit codes of the white set of colex rank `white`
    /// in the `k`-th class of a residues table, a class with a table of its
    /// own, and checks them as [`read_block`](Self::read_block) does.
    fn read_packed(&self, k: usize, white: u64) -> Result<Vec<u8>> {
        let at = BlockAt::new(&self.specs[k], white);
        if at.len == 0 {
            return Ok(Vec::new());
        }
        residues::read_packed(&self.conn, &at)
            .map(|(packed, _)| packed)
            .map_err(|fault| self.block_fault(&at, fault))
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
    /// and so the checksum of [`pack`](crate::storage::pack) of the codes
    /// returned, as [`unpack`](crate::storage::unpack) refuses any bytes
    /// that do not pack back to themselves. `None` for the other layouts,
    /// whose class checksum is of the cells, and for a mirrored class.
    pub(super) fn read_block_summed(&self, k: usize, white: u64) -> Result<(Vec<u8>, Option<Checksum>)> {
        let spec = &self.specs[k];
        let at = BlockAt::new(spec, white);
        if at.len == 0 {
            return Ok((Vec::new(), None));
        }
        if let Some((from, mirror)) = &self.mirrors[k] {
            return Ok((self.read_mirrored(&at, *from, mirror)?, None));
        }
        match self.metadata.layout {
            Layout::Blocks => blocks::read_block(&self.conn, &at).map(|cells| (cells, None)),
            Layout::Residues => residues::read_block(&self.conn, &at).map(|(codes, sum)| (codes, Some(sum))),
            Layout::Rows => rows::read_block(&self.conn, spec, &at).map(|cells| (cells, None)),
            Layout::Frames => return Ok((self.block(k, white)?.to_vec(), None)),
        }
        .map_err(|fault| self.block_fault(&at, fault))
    }

    /// The cells of the block `at` of a class stored as the mirror image of
    /// class `from`: one source block, checked as it is read, permuted.
    fn read_mirrored(&self, at: &BlockAt<W>, from: usize, mirror: &Mirror) -> Result<Vec<u8>> {
        let image = mirror.cells(at.white_set);
        let source = self.read_block(from, colex_rank(image))?;
        if source.len() as u64 != at.len {
            return Err(self.block_fault(
                at,
                Fault::Wrong(format!("a mirror image of {} positions for {}", source.len(), at.len)),
            ));
        }
        let mut cells = vec![0u8; at.len as usize];
        let image_safe = safe_cells(&self.specs[from].geometry, image);
        mirror.block(at.safe, at.black, image_safe, &source, &mut cells);
        Ok(cells)
    }

    /// The error for this file when reading the block `at` found `fault`.
    fn block_fault(&self, at: &BlockAt<W>, fault: Fault) -> Error {
        match fault {
            Fault::Read(e) => self.read_error(e),
            Fault::Wrong(what) => self.corrupt(format!(
                "has {what} in white set {} of class {}",
                at.white,
                crate::board::Class::name_of(at.class)
            )),
        }
    }

    /// The legal part of class `k` whose hash is `hash`; `None` when no legal
    /// position has that hash.
    pub(super) fn legal_part(&self, k: usize, hash: u64) -> Option<Part<W>> {
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
    /// cell, or in the residues layout its two-bit code. A part that is not
    /// legal is refused (its place in a block would be another's).
    pub(super) fn stored(&self, k: usize, part: Part<W>) -> Result<u8> {
        if let Some(cell) = self.memo.borrow().get(&(k as u32, part)) {
            return Ok(cell);
        }
        let cell = self.stored_afresh(k, part)?;
        self.memo.borrow_mut().put((k as u32, part), cell);
        Ok(cell)
    }

    /// [`stored`](Self::stored), read from the table, not from what the
    /// connection remembers.
    fn stored_afresh(&self, k: usize, part: Part<W>) -> Result<u8> {
        // A mirrored class is answered by the image position in its source:
        // one cell read, not a whole block permuted.
        if let Some((from, mirror)) = &self.mirrors[k] {
            return self.stored_afresh(*from, mirror.part(part));
        }
        let (white, i) = self.place(k, part)?;
        self.stored_at(k, white, i)
    }

    /// Where the legal part `part` of class `k`, a class with a table of
    /// its own, is stored: its white set's colex rank and its place in
    /// that block.
    fn place(&self, k: usize, part: Part<W>) -> Result<(u64, usize)> {
        let (safe, white) = self.place_white(k, part.white);
        if !part.black.is_subset(safe) {
            return Err(self.corrupt(format!(
                "was asked for a position of class {} that is not legal",
                crate::board::Class::name_of(self.classes[k].class)
            )));
        }
        Ok((white, rank_within(part.black, safe) as usize))
    }

    /// [`stored`](Self::stored) of each of `parts`, legal parts of class
    /// `k`, in order, into `out`. Those the connection does not remember
    /// are each placed first (into `misses`, a buffer) and then each held
    /// block's byte asked for, so that the reads from memory, which on a
    /// large held table mostly miss the processor's caches, overlap rather
    /// than wait one for another.
    pub(super) fn stored_all(&self, k: usize, parts: &[Part<W>], out: &mut Vec<u8>, misses: &mut Misses) -> Result<()> {
        let (from, mirror) = match &self.mirrors[k] {
            Some((from, mirror)) => (*from, Some(mirror)),
            None => (k, None),
        };
        let mut memo = self.memo.borrow_mut();
        out.clear();
        misses.clear();
        // The memo's slots first, for the same reason as the cells below.
        for &part in parts {
            memo.prefetch(&(k as u32, part));
        }
        for (n, &part) in parts.iter().enumerate() {
            out.push(match memo.get(&(k as u32, part)) {
                Some(cell) => cell,
                None => {
                    let (white, i) = self.place(from, mirror.map_or(part, |m| m.part(part)))?;
                    misses.push((n, white, i));
                    0
                }
            });
        }
        // Every cell's byte is asked for before any is read, so that those
        // trips to memory overlap.
        for &(_, white, i) in misses.iter() {
            if let Some(byte) = self.cache.held(from, white).and_then(|block| self.held_byte(block, i)) {
                prefetch(byte);
            }
        }
        for &(n, white, i) in misses.iter() {
            let cell = match self.cache.held(from, white) {
                Some(block) => self.in_held(block, i),
                None => self.stored_at(from, white, i)?,
            };
            out[n] = cell;
            memo.put((k as u32, parts[n]), cell);
        }
        Ok(())
    }

    /// Reads ahead what a question about the position whose part in class
    /// `k` is `here[k]` will read, in the frames layout: the cells of its
    /// neighbours and of theirs, which its confirmations and its moves'
    /// read. The frames that cover them are decoded and checked on every
    /// core at once, so that a question asked alone need not decode some
    /// hundreds of frames on one core (12x10's start: 331 white sets in 318
    /// frames). The connection's first question keeps only the cells it
    /// asks for, and finds them there: a `query` asks one question, and
    /// copying out whole blocks cost it more than decoding (a page fault
    /// for each 4 KiB of fresh memory). Each question after keeps their
    /// blocks in the shared cache instead, and reads ahead only the blocks
    /// not there: a line's steps and a player's moves meet the same blocks
    /// again and again. Its other layouts read what they need as they go.
    /// Nothing is reported here: what cannot be read is left to the lookup
    /// that needs it, which says what is wrong.
    pub fn read_ahead(&self, here: &[Part<W>]) {
        if self.metadata.layout != Layout::Frames {
            return;
        }
        // By the class whose table holds them: a class stored as another's
        // mirror image is read through it, and its frames decoded once.
        let mut wanted = vec![Vec::new(); self.specs.len()];
        for (k, &part) in here.iter().enumerate() {
            let (from, mirror) = match &self.mirrors[k] {
                Some((from, mirror)) => (*from, Some(mirror)),
                None => (k, None),
            };
            let geometry = &self.specs[k].geometry;
            let wanted = &mut wanted[from];
            let mut place = |part: Part<W>| {
                // A move's part is legal, so it has its place.
                if let Ok(at) = self.place(from, mirror.map_or(part, |m| m.part(part))) {
                    wanted.push(at);
                }
            };
            part.for_each_move(geometry, |_, _, _, after| {
                place(after);
                after.for_each_move(geometry, |_, _, _, beyond| place(beyond));
            });
        }
        let first = !self.asked.replace(true);
        for (from, mut wanted) in wanted.into_iter().enumerate() {
            let spec = &self.specs[from];
            wanted.sort_unstable();
            wanted.dedup();
            wanted.retain(|&(white, _)| self.cache.held(from, white).is_none());
            if first {
                let cell = |white, i, block: &[u8]| block.get(i).map(|&cell| ((from, white, i), cell));
                let cells = frames::read_ahead(&self.conn, spec, &wanted, cell);
                self.ahead.borrow_mut().extend(cells);
                continue;
            }
            wanted.dedup_by_key(|at| at.0);
            wanted.retain(|&(white, _)| self.cache.get((from, white)).is_none());
            let block = |white, _, block: &[u8]| Some((white, Arc::<[u8]>::from(block)));
            for (white, block) in frames::read_ahead(&self.conn, spec, &wanted, block) {
                self.cache.put((from, white), block);
            }
        }
    }

    /// The cells the white set `white` of class `k` leaves safe, and its
    /// colex rank.
    fn place_white(&self, k: usize, white: Bitboard<W>) -> (Bitboard<W>, u64) {
        let key = (k as u32, white);
        if let Some(placed) = self.whites.borrow().get(&key) {
            return placed;
        }
        let placed = (safe_cells(&self.specs[k].geometry, white), colex_rank(white));
        self.whites.borrow_mut().put(key, placed);
        placed
    }

    /// The remoteness mod 3 of the legal part `part` of class `k` in the
    /// residues layout, `None` when it cannot reach the goal.
    pub(super) fn residue(&self, k: usize, part: Part<W>) -> Result<Option<u8>> {
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
    fn descend(&self, k: usize, part: Part<W>) -> Result<Option<Remoteness>> {
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
        descent.map(|d| d.map(|d| d.remoteness)).map_err(|e| {
            self.corrupt(format!(
                "fails a descent in class {}: {e}",
                crate::board::Class::name_of(record.class)
            ))
        })
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

    /// The error for this file when it names `hash` of class `k` as a
    /// position, which is not a legal one.
    pub(super) fn not_legal(&self, k: usize, hash: u64) -> Error {
        self.corrupt(format!(
            "names hash {hash} of class {}, which is not a legal position",
            crate::board::Class::name_of(self.classes[k].class)
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
        self.value_beside(k, part, beside)
    }

    /// [`remoteness_beside`](Self::remoteness_beside) of the legal part
    /// `part` of class `k`, read straight from the part: no hash to rank
    /// and unrank.
    ///
    /// # Errors
    ///
    /// As [`remoteness_beside`](Self::remoteness_beside).
    pub fn value_beside(&self, k: usize, part: Part<W>, beside: Option<Remoteness>) -> Result<Option<Remoteness>> {
        if self.metadata.layout != Layout::Residues {
            let cell = Cell(self.stored(k, part)?);
            if !cell.is_legal() {
                return Err(self.not_legal(k, self.specs[k].index.rank(part)));
            }
            return Ok(cell.remoteness());
        }
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
                "gives hash {} of class {} a value that no neighbour of a position at {} can have",
                self.specs[k].index.rank(part),
                crate::board::Class::name_of(self.classes[k].class),
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
            total = Remoteness::total([total, self.remoteness_of(k, hash)?]);
        }
        Ok(total)
    }
}
