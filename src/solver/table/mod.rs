//! The tables a tight search fills, as one worker holds its share of one:
//! a byte a position ([`bytes`], its remoteness) or two bits
//! ([`codes`], its remoteness mod 3). The search
//! ([`search`](super::search)) is written once over
//! [`Table`]; a table says how a position is read, claimed for a new layer
//! and scanned, and how its share is saved and resumed. A third kind of
//! table is one more implementation of it.
//!
//! A *code* is what a table keeps of a remoteness, as [`Table::code`]
//! gives it: the remoteness itself in a byte table, the remoteness mod 3 in
//! a two-bit one. [`Table::UNSEEN`] is the code of a position no layer has
//! reached.

pub(super) mod bytes;
pub(super) mod codes;

use std::ops::Range;

use crate::bitboard::Bitboard;
use crate::board::Class;
use crate::error::Result;
use crate::tight::TightIndex;

use super::boundary::{LayerHardest, ShareCheckpoints, ShareReport};

/// How a search claims a position of its own share for the next layer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Claim {
    /// In a push: a neighbour of the layer, an image of one, or a position
    /// another worker reached. Claimed if no layer has reached it, once
    /// however many threads reach it.
    Reached,
    /// In a pull: a canonical position the pull found, or one of its
    /// images. Only the pull of an orbit's canonical position writes it,
    /// and it was unreached.
    Unseen,
    /// In a pull: a position another worker sent. Written if no layer has
    /// reached it; only its sender names it, once.
    Sent,
}

/// One worker's share of a class's table, the positions `base..base + len`
/// in tight-index order: what the search reads and writes while the
/// threads of a layer share it, and what it hands to the checkpoints.
///
/// Every method taking `&self` may run on many threads at once.
pub(super) trait Table: Sized + Sync {
    /// What a search of this table ends with: the share's codes.
    type Done: Send;
    /// A saved share, as the checkpoints give it back.
    type Saved;

    /// The deepest remoteness the table holds.
    const DEEPEST: u16;
    /// The code of a position no layer has reached.
    const UNSEEN: u8;
    /// Bits a position takes when a share moves to another worker.
    const BITS: u64;

    /// The code of remoteness `depth`.
    fn code(depth: u64) -> u8;

    /// The most positions a push of the newest layer could scan, from the
    /// count of each layer found so far: the layer itself when its code
    /// tells it from every other, all the layers sharing its code when not.
    fn scan_bound(found: &[u64]) -> u64;

    /// A share of `len` positions from `base`, none of them reached.
    fn unseen(base: u64, len: u64) -> Self;

    /// The share of `len` positions from `base` whose codes are `words`,
    /// [`BITS`](Self::BITS) a position from the low bits of the first.
    fn from_words(base: u64, len: u64, words: Vec<u64>) -> Self;

    /// The codes as [`from_words`](Self::from_words) takes them.
    fn into_words(self) -> Vec<u64>;

    /// The codes, as the search hands them over.
    fn finish(self) -> Self::Done;

    /// Calls `f(i, black)` for every position `i` of block `r` of `index`
    /// coded `want`, whose safe cells are `safe`.
    fn scan(&self, index: &TightIndex, r: u64, safe: Bitboard, want: u8, f: impl FnMut(u64, Bitboard));

    /// How many of the positions `cells` are coded `want`.
    fn count(&self, cells: Range<u64>, want: u8) -> u64;

    /// Bit `k` set when position `start + k` (`k` below `len`, at most 64)
    /// is coded `want`.
    fn matching(&self, start: u64, len: usize, want: u8) -> u64;

    /// In a pull of the layer coded `here`: whether position `i` is of it.
    fn at(&self, i: u64, here: u8) -> bool;

    /// Whether position `i` has been reached, between layers.
    fn reached(&self, i: u64) -> bool;

    /// Claims position `i` for the layer coded `next` as `claim` says;
    /// whether this call did.
    fn claim(&self, i: u64, next: u8, claim: Claim) -> bool;

    /// Readies what [`claim`](Self::claim) of position `i` will touch.
    fn prefetch(&self, i: u64, claim: Claim);

    /// Before a layer from the one coded `here`, by a pull or a push, with
    /// no thread at work.
    fn begin_layer(&mut self, here: u8, pull: bool);

    /// After a layer coded `next`, found by a pull or a push, every
    /// position taken in, with no thread at work.
    fn end_layer(&mut self, next: u8, pull: bool);

    /// This worker's saved share of `class`, of the blocks and positions
    /// `shape` gives, from `checkpoints`, if one can be trusted on its own
    /// and fits the share: with the hardest candidates of a mirroring class
    /// when `shape` asks for them, and a remoteness slot for each watched
    /// position.
    fn resume(
        checkpoints: &mut dyn ShareCheckpoints,
        class: Class,
        index: &TightIndex,
        shape: Shape<'_>,
    ) -> Option<Self::Saved>;

    /// What `saved` says of itself, for the workers to agree on a resume.
    fn report(saved: &Self::Saved) -> ShareReport;

    /// What a worker starts from: the saved share (whose `found` counts
    /// the class's layers), turned into a table, its blocks' summary and
    /// what it knows.
    fn resumed(saved: Self::Saved, index: &TightIndex, shape: Shape<'_>, mirror: MirrorOf<'_>) -> Resumed<Self>;

    /// Hands the share to `checkpoints` at a layer boundary.
    ///
    /// # Errors
    ///
    /// What the save ran into.
    fn save(&self, checkpoints: &mut dyn ShareCheckpoints, boundary: Boundary<'_>) -> Result<()>;
}

/// The share a worker resumes: its blocks, positions, and what it is asked.
#[derive(Clone, Debug)]
pub(super) struct Shape<'a> {
    /// Its white-set ranks.
    pub blocks: Range<u64>,
    /// Its positions' tight indices.
    pub range: Range<u64>,
    /// Whether it keeps the hardest candidates of a mirroring class.
    pub mirrored: bool,
    /// The positions whose remoteness it knows where it owns them.
    pub watch: &'a [u64],
}

/// The public hash, in a mirroring class, of a position's mirror image,
/// when one is asked for.
pub(super) type MirrorOf<'a> = Option<&'a dyn Fn(crate::rules::Part) -> u64>;

/// A resumed share: its table, the summary byte of each of its blocks, and
/// what its checkpoint says besides.
pub(super) struct Resumed<T> {
    pub table: T,
    pub summary: Vec<u8>,
    /// `found[d]`: positions of the class at remoteness `d`.
    pub found: Vec<u64>,
    /// `own[d]`: the share's.
    pub own: Vec<u64>,
    pub done: bool,
    pub hardest: LayerHardest,
    pub watched: Vec<Option<u64>>,
}

/// A share at a layer boundary, as [`Table::save`] hands it on.
pub(super) struct Boundary<'a> {
    pub class: Class,
    pub range: Range<u64>,
    pub found: &'a [u64],
    pub own: &'a [u64],
    pub done: bool,
    pub summary: &'a [std::sync::atomic::AtomicU8],
    pub hardest: &'a LayerHardest,
    pub watched: &'a [Option<u64>],
}
