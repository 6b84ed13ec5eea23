//! The fast search: every core, one byte per legal position.
//!
//! The table itself is the frontier: layer `d` is every cell holding `d`, so
//! no list of positions is kept. Each layer is one parallel pass over the
//! blocks of the [`TightIndex`] (one block per white set), in one of two
//! directions:
//!
//! - *push*, while the frontier is small: a block with cells at `d` expands
//!   those positions and claims their unreached neighbours for `d + 1` with a
//!   compare-and-swap, so two threads reaching one position count it once;
//! - *pull*, once the frontier is large next to what is left: each unreached
//!   position looks for a neighbour at `d` and stops at the first.
//!
//! Because a layer reads only cells equal to `d` and writes only `d + 1`, the
//! blocks are independent within a layer: the same pass could run block
//! ranges on different machines, exchanging only the frontier cells of the
//! ranges their white moves reach.
//!
//! The table is also the search's whole state at a layer boundary, with the
//! depth and the count of each layer: [`search_with`] hands that state to a
//! [`Checkpoints`] after every layer, and can start from a saved one.

use std::sync::atomic::{AtomicU8, Ordering};

use rayon::prelude::*;

use crate::bitboard::Bitboard;
use crate::board::Class;
use crate::error::Result;
use crate::remoteness::Cell;
use crate::tight::{Subsets, TightIndex};
use crate::variant::ClassSpec;

use super::kernel::{Block, Kernel};
use super::twobit::{TwoBitBoundary, TwoBitResume};
use super::{Event, goal_index, too_deep};

/// A cell no search layer has reached yet; left so, it is unreachable.
const UNSEEN: u8 = Cell::UNREACHABLE.0;

/// A layer pulls instead of pushing when its frontier times this is more
/// than the positions not reached yet. On 9x8, 2 beat 1, 3, 4 and 8.
const PULL_RATIO: u64 = 2;

/// A search's state at a layer boundary, from which it can go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resume {
    /// `found[d]`: positions at remoteness `d`, for every complete layer.
    pub found: Vec<u64>,
    /// Whether the search is over (the layer after the last found nothing).
    pub done: bool,
    /// The table in tight-index order: each cell its remoteness if at most
    /// `found.len() - 1`, else unreached.
    pub cells: Vec<u8>,
}

/// A search's state at a layer boundary, as [`Checkpoints::layer`] sees it.
#[derive(Debug)]
pub struct Boundary<'a> {
    /// The class searched.
    pub class: Class,
    /// `found[d]`: positions at remoteness `d`, for every complete layer.
    pub found: &'a [u64],
    /// Whether the search is over.
    pub done: bool,
    /// The table; no thread writes it while the boundary is seen.
    pub cells: &'a [AtomicU8],
}

/// Where a search saves its state at layer boundaries and finds a saved one.
pub trait Checkpoints {
    /// The state to resume the search of `class` from, if there is one that
    /// can be trusted; its table must have `legal` cells.
    fn resume(&mut self, class: Class, legal: u64) -> Option<Resume>;

    /// Called after every complete layer and once when the search is over.
    ///
    /// # Errors
    ///
    /// An error stops the search and is returned by it.
    fn layer(&mut self, boundary: Boundary<'_>) -> Result<()>;

    /// The state to resume the two-bit search ([`twobit`](super::twobit))
    /// of `class` from, if there is one that can be trusted; its table must
    /// cover `legal` positions. None by default.
    fn resume_two_bit(&mut self, class: Class, legal: u64) -> Option<TwoBitResume> {
        let _ = (class, legal);
        None
    }

    /// Called after every complete layer of the two-bit search and once when
    /// it is over. Does nothing by default.
    ///
    /// # Errors
    ///
    /// An error stops the search and is returned by it.
    fn two_bit_layer(&mut self, boundary: TwoBitBoundary<'_>) -> Result<()> {
        let _ = boundary;
        Ok(())
    }
}

/// No checkpoints: nothing to resume, nothing saved.
pub struct NoCheckpoints;

impl Checkpoints for NoCheckpoints {
    fn resume(&mut self, _: Class, _: u64) -> Option<Resume> {
        None
    }

    fn layer(&mut self, _: Boundary<'_>) -> Result<()> {
        Ok(())
    }
}

/// Searches one class over its tight index on the current rayon pool and
/// returns its cells in `index` order.
///
/// # Errors
///
/// When a remoteness would not fit a [`Cell`].
pub fn search(name: &str, spec: &ClassSpec, index: &TightIndex, observe: &mut dyn FnMut(Event)) -> Result<Vec<u8>> {
    search_with(name, spec, index, &mut NoCheckpoints, observe)
}

/// As [`search`], resuming from `checkpoints` when it has a saved state for
/// the class and telling it of every layer boundary. A resumed search
/// reports its saved layers again, in order, before the new ones.
///
/// # Errors
///
/// When a remoteness would not fit a [`Cell`], or `checkpoints` fails.
pub fn search_with(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    checkpoints: &mut dyn Checkpoints,
    observe: &mut dyn FnMut(Event),
) -> Result<Vec<u8>> {
    let legal = index.len();
    let (cells, mut found_per_layer, done) = match checkpoints.resume(spec.class, legal) {
        Some(saved) if saved.cells.len() as u64 == legal && !saved.found.is_empty() => {
            // In place: AtomicU8 and u8 have one layout.
            let cells: Vec<AtomicU8> = saved.cells.into_iter().map(AtomicU8::new).collect();
            (cells, saved.found, saved.done)
        }
        _ => {
            let cells: Vec<AtomicU8> = (0..legal as usize)
                .into_par_iter()
                .map(|_| AtomicU8::new(UNSEEN))
                .collect();
            cells[goal_index(spec, index) as usize].store(0, Ordering::Relaxed);
            (cells, vec![1], false)
        }
    };
    let mut total = 0;
    for (depth, &found) in found_per_layer.iter().enumerate() {
        total += found;
        observe(Event::Layer {
            class: spec.class,
            depth: depth as u16,
            found,
            total,
            legal,
        });
    }
    if done {
        return Ok(cells.into_iter().map(AtomicU8::into_inner).collect());
    }
    let layer = Layer {
        kernel: Kernel::new(&spec.geometry, index),
        index,
        cells: &cells,
    };
    let first = found_per_layer.len() as u8 - 1;
    let mut frontier = *found_per_layer.last().expect("at least the goal's layer");
    for depth in first.. {
        // Push from a small frontier; once the frontier is large next to what
        // is left, it is cheaper to ask each unreached position whether it
        // has a neighbour in the frontier.
        let pull = frontier * PULL_RATIO > legal - total;
        // For a pull: which blocks hold positions at `depth`. Only moves
        // into those can find one.
        let at_depth: Vec<bool> = if pull {
            (0..index.white_sets() as usize)
                .into_par_iter()
                .with_min_len(64)
                .map(|r| {
                    let range = index.block(r as u64);
                    cells[range.start as usize..range.end as usize]
                        .iter()
                        .any(|c| c.load(Ordering::Relaxed) == depth)
                })
                .collect()
        } else {
            Vec::new()
        };
        let found: u64 = (0..index.white_sets() as usize)
            .into_par_iter()
            .with_min_len(16)
            .map_init(Block::default, |block, r| {
                if pull {
                    layer.pull_block(r as u64, depth, &at_depth, block)
                } else {
                    layer.push_block(r as u64, depth, block)
                }
            })
            .sum();
        frontier = found;
        if found == 0 {
            break;
        }
        if depth + 1 > Cell::MAX_REMOTENESS {
            return Err(too_deep(name));
        }
        total += found;
        found_per_layer.push(found);
        observe(Event::Layer {
            class: spec.class,
            depth: u16::from(depth) + 1,
            found,
            total,
            legal,
        });
        checkpoints.layer(Boundary {
            class: spec.class,
            found: &found_per_layer,
            done: false,
            cells: &cells,
        })?;
    }
    checkpoints.layer(Boundary {
        class: spec.class,
        found: &found_per_layer,
        done: true,
        cells: &cells,
    })?;
    // Reuses the allocation: AtomicU8 and u8 have one layout.
    Ok(cells.into_iter().map(AtomicU8::into_inner).collect())
}

/// One search layer's shared view of the table.
struct Layer<'a> {
    kernel: Kernel<'a>,
    index: &'a TightIndex,
    cells: &'a [AtomicU8],
}

impl Layer<'_> {
    /// Calls `f(cell, black, block)` for every position of block `r` whose
    /// cell holds `want`; skips the block at once when none does. `block` is
    /// scratch space, refilled for `r` only when there is work.
    fn for_each_at(&self, r: u64, want: u8, block: &mut Block, mut f: impl FnMut(&AtomicU8, Bitboard, &Block)) {
        let range = self.index.block(r);
        let cells = &self.cells[range.start as usize..range.end as usize];
        if !cells.iter().any(|c| c.load(Ordering::Relaxed) == want) {
            return;
        }
        self.kernel.block(r, block);
        for (cell, black) in cells.iter().zip(Subsets::new(block.safe, self.index.black())) {
            if cell.load(Ordering::Relaxed) == want {
                f(cell, black, block);
            }
        }
    }

    /// Pushes from every position of block `r` at `depth`: claims its
    /// unreached neighbours for `depth + 1`. Returns how many it claimed.
    fn push_block(&self, r: u64, depth: u8, block: &mut Block) -> u64 {
        let mut found = 0;
        self.for_each_at(r, depth, block, |_, black, block| {
            self.kernel.neighbours(block, black, |i| {
                found += self.claim(i, depth + 1);
                false
            });
        });
        found
    }

    /// Pulls into every unreached position of block `r`: it joins layer
    /// `depth + 1` when a neighbour is at `depth`. Only this call writes the
    /// block's cells, and it reads only cells equal to `depth`, which no one
    /// writes in this layer. Returns how many positions joined.
    ///
    /// `at_depth[r′]` says whether block `r′` holds a position at `depth`:
    /// moves into the others are not tried, and a block that none of its
    /// moves reaches is skipped.
    fn pull_block(&self, r: u64, depth: u8, at_depth: &[bool], block: &mut Block) -> u64 {
        let range = self.index.block(r);
        let cells = &self.cells[range.start as usize..range.end as usize];
        if !cells.iter().any(|c| c.load(Ordering::Relaxed) == UNSEEN) {
            return 0;
        }
        self.kernel.block_where(r, block, |t| at_depth[t as usize]);
        block.black_moves = at_depth[r as usize];
        if !block.black_moves && block.white_moves() == 0 {
            return 0;
        }
        let mut found = 0;
        for (cell, black) in cells.iter().zip(Subsets::new(block.safe, self.index.black())) {
            if cell.load(Ordering::Relaxed) != UNSEEN {
                continue;
            }
            if self.kernel.neighbours(block, black, |i| {
                self.cells[i as usize].load(Ordering::Relaxed) == depth
            }) {
                cell.store(depth + 1, Ordering::Relaxed);
                found += 1;
            }
        }
        found
    }

    /// Sets cell `i` to `next` if no layer has reached it; 1 if this call did.
    #[inline]
    fn claim(&self, i: u64, next: u8) -> u64 {
        let cell = &self.cells[i as usize];
        u64::from(
            cell.load(Ordering::Relaxed) == UNSEEN
                && cell
                    .compare_exchange(UNSEEN, next, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok(),
        )
    }
}
