//! One block: the positions of one white set of a class, the unit every
//! layout stores and checks. Where a block's positions are (its white set,
//! the cells that set leaves safe, how many positions it holds), the
//! blocks of a byte table in order, and the checks the cells of every
//! stored block must pass once read.

use super::checksum::block_checksum;
use super::fault::{Checked, Fault};
use crate::bitboard::Bitboard;
use crate::bitboard::Word;
use crate::index::{binomial, colex_unrank};
use crate::remoteness::Cell;
use crate::rules::safe_cells;
use crate::tight::TightIndex;
use crate::variant::ClassSpec;

/// The block of one white set of a class: which it is, and where its
/// positions are.
pub(super) struct BlockAt<W: Word> {
    /// The class number (0: a1's class, 1: a2's).
    pub(super) class: usize,
    /// The colex rank of the white set.
    pub(super) white: u64,
    /// The white set.
    pub(super) white_set: Bitboard<W>,
    /// The cells the white set leaves safe for black bishops.
    pub(super) safe: Bitboard<W>,
    /// The black bishops of the class.
    pub(super) black: u32,
    /// The positions of the block: the black sets among the safe cells.
    pub(super) len: u64,
}

impl<W: Word> BlockAt<W> {
    /// The block of the white set of colex rank `white` in the class `spec`.
    pub(super) fn new(spec: &ClassSpec<W>, white: u64) -> BlockAt<W> {
        let (white_count, black_count) = spec.counts();
        let white_set = colex_unrank(white, white_count);
        let safe = safe_cells(&spec.geometry, white_set);
        BlockAt {
            class: spec.class.index(),
            white,
            white_set,
            safe,
            black: black_count,
            len: binomial(safe.count(), black_count),
        }
    }

    /// Checks the cells read from this block against `stored`, its stored
    /// block checksum, and that none is marked illegal.
    pub(super) fn check_cells(&self, cells: &[u8], stored: i64) -> Checked<()> {
        if block_checksum(self.class, self.white, cells).signed() != stored {
            return Err(Fault::Wrong("a block that fails its checksum".into()));
        }
        if cells.contains(&Cell::ILLEGAL.0) {
            return Err(Fault::Wrong("a cell marked illegal".into()));
        }
        Ok(())
    }
}

/// The non-empty blocks of a byte table `all` (a cell per position in the
/// order of `index`), in white-set order: (the white set's rank, its cells).
pub(super) fn own_blocks<'a, W: Word>(
    index: &'a TightIndex<W>,
    all: &'a [u8],
) -> impl Iterator<Item = (u64, &'a [u8])> + 'a {
    (0..index.white_sets()).filter_map(move |r| {
        let block = index.block(r);
        let cells = &all[block.start as usize..block.end as usize];
        (!cells.is_empty()).then_some((r, cells))
    })
}
