//! The move generator the tight searches share: the neighbours of a position
//! as tight indices, worked out block by block.
//!
//! Every position of a block (one white set `W`) shares the white moves out
//! of it and the cells black may use, so [`Kernel::block_in`] works those out
//! once per block. Ranking a black set among the subsets of a safe set is the
//! inner loop of every search; [`Ranker`] does it with a per-block table of
//! cell positions instead of a popcount per bishop (why: [`isa`](super::isa)).
//! The cells of a position's black set are picked out once, and every white
//! move out of it ranks that list in its own block. Where the processor has
//! BMI2 ([`Isa`]), none of those tables is built: a black set is ranked as
//! the colex rank of its cells renumbered among the safe cells by one `pext`.

use crate::bitboard::{Bitboard, Word};
use crate::board::Geometry;
use crate::index::{colex_rank, colex_unrank};
use crate::rules::Part;
use crate::tight::TightIndex;

use super::isa::Isa;

/// Ranks subsets of one set of cells (`within`) in colex order, as
/// [`rank_within`](crate::index::rank_within) does, by table lookups.
#[derive(Clone, Debug)]
pub(super) struct Ranker {
    /// `pos[c]`: how many cells of `within` lie below cell `c`, for the
    /// cells `c` of `within`: room for the 128 cells of the widest class.
    pos: [u8; 128],
}

impl Ranker {
    #[inline]
    pub(super) fn new<W: Word>(within: Bitboard<W>) -> Ranker {
        // Only the cells of `within` are ever looked up.
        let mut pos = [0u8; 128];
        for (k, c) in within.iter().enumerate() {
            pos[usize::from(c)] = k as u8;
        }
        Ranker { pos }
    }

    /// The colex rank of `set`, a subset of `within`, among the subsets of
    /// `within` of its size.
    #[inline]
    pub(super) fn rank<W: Word>(&self, set: Bitboard<W>) -> u64 {
        let mut rank = 0;
        let mut bits = set.0;
        // The i-th cell (from 0) adds C(pos, i + 1). Cells and positions are
        // below `W::BITS`, which the masks tell the compiler: no bounds checks.
        let mask = W::BITS as usize - 1;
        for i in 0..64 {
            if bits == W::ZERO {
                break;
            }
            let cell = bits.trailing_zeros() as usize & mask;
            bits = bits.clear_lowest();
            rank += colex_entry::<W>(i, usize::from(self.pos[cell]));
        }
        rank
    }

    /// How many cells of `within` lie below `cell`, a cell of `within`.
    #[inline(always)]
    fn at(&self, cell: u8) -> usize {
        usize::from(self.pos[usize::from(cell) & 127])
    }

    /// As [`rank`](Self::rank), for the set whose cells, lowest first, are
    /// `cells`.
    #[inline]
    fn rank_cells<W: Word>(&self, cells: &[u8]) -> u64 {
        let mask = W::BITS as usize - 1;
        cells
            .iter()
            .enumerate()
            .map(|(i, &cell)| colex_entry::<W>(i, usize::from(self.pos[usize::from(cell) & mask])))
            .sum()
    }
}

/// `COLEX[i][n]` = C(n, i + 1): what a cell at position `n` adds to a colex
/// rank as the `i`-th cell of its set (from 0): rows of 64 columns, so
/// that masked indices need no bounds check.
static COLEX: [[u64; 64]; 64] = colex_table::<64>();

/// [`COLEX`] with 128 columns, for classes of more than 64 cells:
/// `u64::MAX` where C(n, i + 1) does not fit 64 bits, which no rank of a
/// 64-bit index reaches.
static COLEX_WIDE: [[u64; 128]; 64] = colex_table::<128>();

/// C(n, i + 1) from the table for words `W`: the branch is on a constant,
/// so each width compiles to one table read.
#[inline(always)]
fn colex_entry<W: Word>(i: usize, n: usize) -> u64 {
    if W::BITS == 64 {
        COLEX[i & 63][n & 63]
    } else {
        COLEX_WIDE[i & 63][n & 127]
    }
}

/// `table[i][n]` = C(n, i + 1) for cells `n` below `N`: [`COLEX`] and
/// [`COLEX_WIDE`], cut from the one binomial table.
const fn colex_table<const N: usize>() -> [[u64; N]; 64] {
    let binomial = crate::index::wide_table();
    let mut table = [[0u64; N]; 64];
    let mut i = 0;
    while i < 64 {
        let mut n = 0;
        while n < N {
            table[i][n] = binomial[i + 1][n];
            n += 1;
        }
        i += 1;
    }
    table
}

/// The colex rank of `bits` among the sets of its size: [`colex_rank`] for
/// the inner loops, where `trailing_zeros` is one instruction.
#[inline(always)]
fn colex_bits<W: Word>(mut bits: W) -> u64 {
    let mut rank = 0;
    let mut i = 0;
    while bits != W::ZERO {
        rank += colex_entry::<W>(i, bits.trailing_zeros() as usize);
        bits = bits.clear_lowest();
        i += 1;
    }
    rank
}

/// [`colex_bits`] for a set of at most `N` cells, unrolled: three
/// instructions a row. The rows past the set's last cell add nothing: their
/// cell is `trailing_zeros(0) = W::BITS`, masked to 0, and C(0, i + 1) = 0.
#[inline(always)]
fn colex_fixed<const N: usize, W: Word>(mut bits: W) -> u64 {
    let mut rank = 0;
    for i in 0..N {
        rank += colex_entry::<W>(i, bits.trailing_zeros() as usize);
        bits = bits.clear_lowest();
    }
    rank
}

/// [`colex_bits`] for a set of `len` cells: unrolled for up to 4 cells or
/// up to [`LISTED`], so that one well-predicted branch picks the loop.
#[inline(always)]
fn colex_len<W: Word>(bits: W, len: usize) -> u64 {
    if len <= 4 {
        colex_fixed::<4, W>(bits)
    } else if len <= LISTED {
        colex_fixed::<LISTED, W>(bits)
    } else {
        colex_bits(bits)
    }
}

/// The most black bishops whose cells [`Kernel::neighbours_via_in`] lists once per
/// position; larger sets are ranked from their bitboard for every move.
const LISTED: usize = 8;
// Listed cells are indexed under a mask, which needs a power of two.
const _: () = assert!(LISTED.is_power_of_two());

/// The cells of `set`, at most [`LISTED`], lowest first, then `pad`.
#[inline(always)]
fn list<W: Word>(set: Bitboard<W>, pad: u8) -> [u8; LISTED] {
    let mut cells = [pad; LISTED];
    for (slot, cell) in cells.iter_mut().zip(set) {
        *slot = cell;
    }
    cells
}

/// The cells of each black set a push expands together, lowest first, when
/// they are ranked by tables: picked out once for every white move, not once
/// for each.
#[derive(Clone, Debug, Default)]
pub(super) struct Listed(Vec<[u8; LISTED]>);

/// A white move as seen from its block: legal for a black set that avoids
/// `forbid` (the cells the bishop crosses, and the cells that are not safe
/// in the block it leads to), whose white set is `white`, whose safe cells
/// are `safe` and whose positions start at `start`.
#[derive(Clone, Debug)]
struct WhiteMove<W: Word> {
    forbid: Bitboard<W>,
    white: Bitboard<W>,
    safe: Bitboard<W>,
    start: u64,
    /// The colex rank of `white`: the block the move leads to.
    target: u64,
}

/// How a neighbour was reached from a block: by a black move, which stays
/// in the block, or by the block's white move `k`
/// ([`Block::white_target`]), whose neighbours all lie in one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Via {
    Black,
    White(usize),
}

impl<W: Word> Block<W> {
    /// How many white moves leave the block (of those kept).
    pub(super) fn white_moves(&self) -> usize {
        self.white_moves.len()
    }

    /// The block white move `k` leads to (a white-set rank) and the tight
    /// index of its first position.
    pub(super) fn white_target(&self, k: usize) -> (u64, u64) {
        let m = &self.white_moves[k];
        (m.target, m.start)
    }
}

/// What every position of one block shares: the white set, the cells black
/// may use, where the block starts, and the white moves out of it.
#[derive(Clone, Debug, Default)]
pub(super) struct Block<W: Word = u64> {
    pub(super) white: Bitboard<W>,
    /// The cells black may use beside `white`.
    pub(super) safe: Bitboard<W>,
    /// The tight index of the block's first position.
    pub(super) start: u64,
    /// The ranker of `safe`, when the block was filled for [`Tables`](super::isa::Tables).
    ranker: Option<Ranker>,
    white_moves: Vec<WhiteMove<W>>,
    /// The ranker of each white move's safe cells, in the order of
    /// `white_moves`, when the block was filled for [`Tables`](super::isa::Tables).
    move_rankers: Vec<Ranker>,
    /// Whether [`Kernel::neighbours_via_in`] gives black moves. A pull layer turns
    /// them off in a block with no position at the layer's depth, where no
    /// black move could find one.
    pub(super) black_moves: bool,
    /// Scratch space for the black sets a push expands together
    /// ([`Kernel::each_neighbour_routed_in`]), kept to reuse its allocation.
    pub(super) blacks: Vec<Bitboard<W>>,
    /// Scratch space for the cells of `blacks`, kept likewise.
    pub(super) listed: Listed,
    /// Scratch space for a search split between workers: for each white
    /// move, `None` when it leads into the worker's own blocks, else the
    /// bit of its halo that its neighbour `j` has, less `j` (wrapping).
    pub(super) routes: Vec<Option<u64>>,
}

/// The moves of one class over its tight index.
#[derive(Clone, Debug)]
pub(super) struct Kernel<'a, W: Word = u64> {
    geo: &'a Geometry<W>,
    index: &'a TightIndex<W>,
    /// Black bishops per position, when at most [`LISTED`].
    listed: Option<usize>,
    black: usize,
    /// Whether every safe set fits 64 cells in a class that does not: its
    /// cells less the white bishops are at most 64 (13x10's 65 less 5,
    /// 17x8's 68 less 4), so that a black set is ranked in 64-bit words
    /// ([`Kernel::rank_pext`]).
    low_ranks: bool,
}

impl<'a, W: Word> Kernel<'a, W> {
    pub(super) fn new(geo: &'a Geometry<W>, index: &'a TightIndex<W>) -> Kernel<'a, W> {
        let black = index.black() as usize;
        Kernel {
            geo,
            index,
            listed: (black <= LISTED).then_some(black),
            black,
            low_ranks: W::BITS > 64 && geo.len() <= 64 + index.white() as usize,
        }
    }

    /// The colex rank of `set` among the subsets of `within` of its size,
    /// by `pext`: in 64-bit words wherever the safe sets fit them
    /// (`low_ranks`), where a 128-bit word's bit scans and clears cost more
    /// (11x8 searched in 128-bit words took 0.89 times as long with it).
    #[inline(always)]
    fn rank_pext<I: Isa>(&self, isa: I, set: Bitboard<W>, within: Bitboard<W>) -> u64 {
        if W::BITS > 64 && self.low_ranks {
            colex_len::<u64>(isa.compress_low(set.0, within.0), self.black)
        } else {
            colex_len(isa.compress(set.0, within.0), self.black)
        }
    }

    /// Calls `f` with the colex rank of every block a white move out of
    /// block `r` leads to that black bishops do not block, each time a move
    /// leads there: the blocks a worker's halo holds, worked out without
    /// filling a [`Block<W>`].
    pub(super) fn white_targets(&self, r: u64, mut f: impl FnMut(u64)) {
        let white: Bitboard<W> = colex_unrank(r, self.index.white());
        self.each_white_move(white, self.index.safe(r), |_| true, |_, target, _, _| f(target));
    }

    /// Calls `f(white, target, safe, forbid)` for every white move out of
    /// the white set `white`, whose safe cells are `safe`, that black
    /// bishops do not block and that leads to a white set whose colex rank
    /// satisfies `keep`: the white set it makes, its colex rank, its safe
    /// cells, and the cells black bishops must avoid for it (those the
    /// bishop crosses and this block's safe cells that are not its).
    #[inline(always)]
    fn each_white_move(
        &self,
        white: Bitboard<W>,
        safe: Bitboard<W>,
        keep: impl Fn(u64) -> bool,
        mut f: impl FnMut(Bitboard<W>, u64, Bitboard<W>, Bitboard<W>),
    ) {
        for from in white {
            let rest = white.without(from);
            for d in 0..4 {
                let ray = self.geo.ray(from, d);
                for to in ray & !white {
                    // The cells the bishop crosses, `to` included.
                    let path = ray ^ self.geo.ray(to, d);
                    if !(path & white).is_empty() {
                        continue;
                    }
                    let target = colex_rank(rest.with(to));
                    if self.index.block(target).is_empty() || !keep(target) {
                        continue;
                    }
                    let target_safe = self.index.safe(target);
                    // A black set inside this block's safe cells avoids the
                    // other cells outside `target_safe` already.
                    let forbid = path | (safe & !target_safe);
                    if (safe & !forbid).count() < self.index.black() {
                        continue;
                    }
                    f(rest.with(to), target, target_safe, forbid);
                }
            }
        }
    }

    /// Fills `block` for the white set of colex rank `r`, reusing its
    /// allocation: the white moves [`each_white_move`](Self::each_white_move)
    /// gives, and the tables `isa` ranks with, built only if it needs them.
    #[inline(always)]
    pub(super) fn block_in<I: Isa>(&self, _isa: I, r: u64, block: &mut Block<W>, keep: impl Fn(u64) -> bool) {
        let white: Bitboard<W> = colex_unrank(r, self.index.white());
        block.white = white;
        block.safe = self.index.safe(r);
        block.start = self.index.block(r).start;
        block.ranker = (!I::PEXT).then(|| Ranker::new(block.safe));
        block.black_moves = true;
        block.white_moves.clear();
        block.move_rankers.clear();
        let (moves, rankers) = (&mut block.white_moves, &mut block.move_rankers);
        self.each_white_move(white, block.safe, keep, |white, target, safe, forbid| {
            moves.push(WhiteMove {
                forbid,
                white,
                safe,
                start: self.index.block(target).start,
                target,
            });
            if !I::PEXT {
                rankers.push(Ranker::new(safe));
            }
        });
    }

    /// As [`neighbours_via_in`](Self::neighbours_via_in), with the tight
    /// index alone.
    #[inline(always)]
    pub(super) fn neighbours_in<I: Isa>(
        &self,
        isa: I,
        block: &Block<W>,
        black: Bitboard<W>,
        mut f: impl FnMut(u64) -> bool,
    ) -> bool {
        self.neighbours_via_in(
            isa,
            block,
            black,
            #[inline(always)]
            |i, _, _| f(i),
        )
    }

    /// Calls `f` with the tight index, the position and the way it was
    /// reached of every position one move from the position of `block` with
    /// black set `black`, black moves first (they stay in the block, so
    /// their cells are near), until `f` returns true; returns whether it
    /// did. Ranks with `isa`, for a block filled for it by
    /// [`block_in`](Self::block_in). The way ([`Via`]) lets a search split
    /// between workers work out once per white move, not once per
    /// neighbour, whose block the move leads to.
    #[inline(always)]
    pub(super) fn neighbours_via_in<I: Isa>(
        &self,
        isa: I,
        block: &Block<W>,
        black: Bitboard<W>,
        mut f: impl FnMut(u64, Part<W>, Via) -> bool,
    ) -> bool {
        (block.black_moves && self.black_neighbours(isa, block, black, &mut f))
            || self.white_neighbours(isa, block, black, f)
    }

    /// For a push, which visits every neighbour: as
    /// [`neighbours_via_in`](Self::neighbours_via_in) for each of `blacks`
    /// in turn, but move by move for the white moves: every black set
    /// through one white move, then the next. A white move's neighbours all
    /// lie in one block, in the order of `blacks` when they are in colex
    /// order, so the table is read in runs instead of hopping between
    /// blocks. A white move that [`Block::routes`] sends to another worker
    /// gives `away` the bit of each of its neighbours (its route plus the
    /// neighbour's index), decided once per move; every other neighbour
    /// goes to `f`. Returns how many neighbours there were, both ways.
    /// `listed` is scratch space, kept by the caller to reuse its
    /// allocation.
    #[inline(always)]
    pub(super) fn each_neighbour_routed_in<I: Isa>(
        &self,
        isa: I,
        block: &Block<W>,
        blacks: &[Bitboard<W>],
        listed: &mut Listed,
        mut away: impl FnMut(u64),
        mut f: impl FnMut(u64, Part<W>, Via),
    ) -> u64 {
        let mut neighbours = 0;
        if block.black_moves {
            for &black in blacks {
                self.black_neighbours(
                    isa,
                    block,
                    black,
                    #[inline(always)]
                    |i, part, via| {
                        neighbours += 1;
                        f(i, part, via);
                        false
                    },
                );
            }
        }
        // By tables, each set's cells are picked out once for every move.
        let len = self.listed.filter(|_| !I::PEXT);
        let cells = &mut listed.0;
        cells.clear();
        if len.is_some() {
            cells.extend(blacks.iter().map(|&black| list(black, 0)));
        }
        for (k, m) in block.white_moves.iter().enumerate() {
            let route = block.routes.get(k).copied().flatten();
            for (b, &black) in blacks.iter().enumerate() {
                if !(black & m.forbid).is_empty() {
                    continue;
                }
                let rank = if I::PEXT {
                    self.rank_pext(isa, black, m.safe)
                } else if let Some(len) = len {
                    block.move_rankers[k].rank_cells::<W>(&cells[b][..len])
                } else {
                    block.move_rankers[k].rank(black)
                };
                neighbours += 1;
                match route {
                    Some(route) => away(route.wrapping_add(m.start + rank)),
                    None => f(m.start + rank, Part { white: m.white, black }, Via::White(k)),
                }
            }
        }
        neighbours
    }

    /// As [`neighbours_via_in`](Self::neighbours_via_in), black moves
    /// only: they keep the white set, so they stay in the block.
    #[inline(always)]
    fn black_neighbours<I: Isa>(
        &self,
        isa: I,
        block: &Block<W>,
        black: Bitboard<W>,
        mut f: impl FnMut(u64, Part<W>, Via) -> bool,
    ) -> bool {
        if !I::PEXT
            && let Some(len) = self.listed
        {
            return self.black_neighbours_listed(block, black, len, f);
        }
        let occupied = block.white | black;
        // Safe cells hold no white bishop already.
        let empty = block.safe & !black;
        let rank = |after: Bitboard<W>| {
            if I::PEXT {
                self.rank_pext(isa, after, block.safe)
            } else {
                block.ranker.as_ref().expect("a block filled for tables").rank(after)
            }
        };
        for from in black {
            let rest = black.without(from);
            for to in self.geo.attacks(from, occupied) & empty {
                let after = rest.with(to);
                let part = Part {
                    white: block.white,
                    black: after,
                };
                if f(block.start + rank(after), part, Via::Black) {
                    return true;
                }
            }
        }
        false
    }

    /// [`black_neighbours`](Self::black_neighbours) by tables, for a black
    /// set of `len` cells, at most [`LISTED`]: the set a bishop leaves
    /// behind is summed once for every place among those cells that its
    /// move may land, so that each move adds one term to a sum, where a
    /// rank from the set's bitboard would add `len` (a third of the samples
    /// of 13x10's search sat in that loop; what the change saved, less, is
    /// in `docs/search.md`).
    ///
    /// With the cells that stay at positions `p[0] < … < p[n-1]` among the
    /// safe cells, and the bishop landing at position `q` with `m` of them
    /// below it, the rank is `C(q, m+1)` plus `stay[m]`: the sum of
    /// `C(p[j], j+1)` for `j < m` and of `C(p[j], j+2)` for `j ≥ m`.
    #[inline(always)]
    fn black_neighbours_listed(
        &self,
        block: &Block<W>,
        black: Bitboard<W>,
        len: usize,
        mut f: impl FnMut(u64, Part<W>, Via) -> bool,
    ) -> bool {
        let ranker = block.ranker.as_ref().expect("a block filled for tables");
        let occupied = block.white | black;
        // Safe cells hold no white bishop already.
        let empty = block.safe & !black;
        // Past `len`, cells no move reaches: nothing lies below them.
        let cells = list(black, u8::MAX);
        let at = cells.map(|cell| ranker.at(cell));
        let Some(n) = len.checked_sub(1) else {
            return false;
        };
        for (k, &from) in cells.iter().enumerate().take(len) {
            // The positions of the cells that stay.
            let p = |j: usize| if j < k { at[j] } else { at[(j + 1) & (LISTED - 1)] };
            let mut stay = [0u64; LISTED];
            let mut sum: u64 = (0..n).map(|j| colex_entry::<W>(j, p(j))).sum();
            stay[n & (LISTED - 1)] = sum;
            for m in (0..n).rev() {
                sum = sum - colex_entry::<W>(m, p(m)) + colex_entry::<W>(m + 1, p(m));
                stay[m & (LISTED - 1)] = sum;
            }
            let rest = black.without(from);
            for to in self.geo.attacks(from, occupied) & empty {
                let below = cells.iter().filter(|&&c| c < to).count() - usize::from(from < to);
                let rank = stay[below & (LISTED - 1)] + colex_entry::<W>(below, ranker.at(to));
                let part = Part {
                    white: block.white,
                    black: rest.with(to),
                };
                if f(block.start + rank, part, Via::Black) {
                    return true;
                }
            }
        }
        false
    }

    /// As [`neighbours_via_in`](Self::neighbours_via_in), white moves
    /// only: each goes to another block, legal when black stays safe there.
    #[inline(always)]
    fn white_neighbours<I: Isa>(
        &self,
        isa: I,
        block: &Block<W>,
        black: Bitboard<W>,
        mut f: impl FnMut(u64, Part<W>, Via) -> bool,
    ) -> bool {
        let part = |m: &WhiteMove<W>| Part { white: m.white, black };
        if I::PEXT {
            for (k, m) in block.white_moves.iter().enumerate() {
                if (black & m.forbid).is_empty()
                    && f(m.start + self.rank_pext(isa, black, m.safe), part(m), Via::White(k))
                {
                    return true;
                }
            }
            return false;
        }
        let moves = block.white_moves.iter().zip(&block.move_rankers).enumerate();
        let Some(len) = self.listed else {
            for (k, (m, ranker)) in moves {
                if (black & m.forbid).is_empty() && f(m.start + ranker.rank(black), part(m), Via::White(k)) {
                    return true;
                }
            }
            return false;
        };
        // The black cells, picked out once for every white move's rank.
        let cells = list(black, 0);
        let cells = &cells[..len];
        for (k, (m, ranker)) in moves {
            if (black & m.forbid).is_empty() && f(m.start + ranker.rank_cells::<W>(cells), part(m), Via::White(k)) {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Board, Class};
    use crate::index::rank_within;
    use crate::solver::isa::Tables;
    use crate::tight::Subsets;

    #[test]
    fn ranker_agrees_with_rank_within() {
        let within = Bitboard(0b1011_0110_1101_0011u64);
        let ranker = Ranker::new(within);
        for k in 0..=within.count() {
            for set in Subsets::new(within, k) {
                assert_eq!(ranker.rank(set), rank_within(set, within));
                let cells: Vec<u8> = set.iter().collect();
                assert_eq!(ranker.rank_cells::<u64>(&cells), rank_within(set, within));
                assert_eq!(colex_bits(set.0), crate::index::colex_rank(set));
                assert_eq!(colex_len(set.0, k as usize), crate::index::colex_rank(set));
            }
        }
        for i in 0..64 {
            for n in 0..64 {
                assert_eq!(COLEX[i as usize][n as usize], crate::index::binomial(n, i + 1));
            }
            for n in 0..128 {
                assert_eq!(COLEX_WIDE[i as usize][n as usize], crate::index::binomial(n, i + 1));
            }
        }
    }

    /// Checks that neighbour `n` of block `r` was reached the way `via`
    /// says: in the block by a black move, in the white move's block by one.
    fn check_via<W: Word>(index: &TightIndex<W>, block: &Block<W>, r: u64, n: u64, via: Via) {
        let (target, start) = match via {
            Via::Black => (r, block.start),
            Via::White(k) => block.white_target(k),
        };
        assert_eq!(index.block(target).start, start);
        assert!(index.block(target).contains(&n), "{n} is not in block {target}");
    }

    /// Checks every neighbour `kernel` gives with `isa` against the rules.
    fn check_neighbours<I: Isa, W: Word>(kernel: &Kernel<W>, isa: I, geo: &Geometry<W>, index: &TightIndex<W>) {
        let mut block = Block::<W>::default();
        for r in 0..index.white_sets() {
            kernel.block_in(isa, r, &mut block, |_| true);
            // Position by position, against the rules.
            let blacks: Vec<Bitboard<W>> = Subsets::new(index.safe(r), index.black()).collect();
            let mut one_by_one = Vec::new();
            for (j, &black) in blacks.iter().enumerate() {
                let part = index.unrank(block.start + j as u64);
                let mut expected = Vec::new();
                part.for_each_move(geo, |_, _, _, after| expected.push(index.rank(after).unwrap()));
                let mut found = Vec::new();
                kernel.neighbours_via_in(isa, &block, black, |n, after, via| {
                    assert_eq!(index.rank(after), Some(n));
                    check_via(index, &block, r, n, via);
                    found.push(n);
                    one_by_one.push((n, after));
                    false
                });
                expected.sort_unstable();
                found.sort_unstable();
                assert_eq!(found, expected, "{part:?}");
            }
            // Move by move over the whole block: the same neighbours.
            let mut together = Vec::new();
            let count = kernel.each_neighbour_routed_in(
                isa,
                &block,
                &blacks,
                &mut Listed::default(),
                |_| {},
                |n, after, via| {
                    together.push((n, after));
                    check_via(index, &block, r, n, via);
                },
            );
            assert_eq!(count, together.len() as u64);
            together.sort_unstable_by_key(|&(n, after)| (n, after.white.0, after.black.0));
            one_by_one.sort_unstable_by_key(|&(n, after)| (n, after.white.0, after.black.0));
            assert_eq!(together, one_by_one);
        }
    }

    #[test]
    fn neighbours_in_128_bit_words_are_the_legal_moves() {
        // Classes of 68, 72 and 65 cells: 17x8's a1 and 13x11's a1, whose
        // safe sets may pass 64 cells, and 13x10's a1, whose safe sets
        // never do, so that its ranks are worked in 64-bit words.
        for (rows, cols, w, b, low) in [(17, 8, 1, 2, false), (13, 11, 2, 1, false), (13, 10, 1, 2, true)] {
            let geo: Geometry<u128> = Geometry::in_words(Board::new(rows, cols).unwrap(), Class::Even);
            assert!(geo.len() > 64);
            let index = TightIndex::new(&geo, w, b);
            let kernel = Kernel::new(&geo, &index);
            assert_eq!(kernel.low_ranks, low, "{rows}x{cols}");
            check_neighbours(&kernel, Tables, &geo, &index);
            #[cfg(target_arch = "x86_64")]
            if let Some(isa) = super::super::isa::Bmi2::detect() {
                check_neighbours(&kernel, isa, &geo, &index);
            }
        }
    }

    #[test]
    fn neighbours_are_the_legal_moves() {
        for (rows, cols, w, b) in [(5, 4, 2, 2), (7, 6, 3, 3), (6, 5, 1, 3)] {
            let geo = Geometry::new(Board::new(rows, cols).unwrap(), Class::Even);
            let index = TightIndex::new(&geo, w, b);
            let listed = Kernel::new(&geo, &index);
            assert!(listed.listed.is_some());
            // And the path for sets of more than `LISTED` black bishops.
            let unlisted = Kernel {
                listed: None,
                ..listed.clone()
            };
            check_neighbours(&listed, Tables, &geo, &index);
            check_neighbours(&unlisted, Tables, &geo, &index);
            #[cfg(target_arch = "x86_64")]
            if let Some(isa) = super::super::isa::Bmi2::detect() {
                check_neighbours(&listed, isa, &geo, &index);
            }
        }
    }
}
