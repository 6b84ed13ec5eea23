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
//! The random reads of both go to a bitmap, one bit per position, rebuilt
//! from the table between layers: a push tests and sets "reached", a pull
//! tests "at `d`". For 11x8 it is 22 MB, which stays in the last-level
//! cache, where the 176 MB table does not.
//!
//! Because a layer reads only cells equal to `d` and writes only `d + 1`, the
//! blocks are independent within a layer: the same pass could run block
//! ranges on different machines, exchanging only the frontier cells of the
//! ranges their white moves reach.
//!
//! The table is also the search's whole state at a layer boundary, with the
//! depth and the count of each layer: [`search_with`] hands that state to a
//! [`Checkpoints`] after every layer, and can start from a saved one.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

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
/// than the positions not reached yet. On 9x8, 2 beat 1, 3, 4 and 8; with
/// the bitmap, 2, 3 and 4 were alike and 6 slower.
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
    let kernel = Kernel::new(&spec.geometry, index);
    let mut cells = cells;
    let mut bits: Vec<AtomicU64> = (0..legal.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
    // Whether `bits` marks every reached position (a push keeps it so).
    let mut bits_reached = false;
    let first = found_per_layer.len() as u8 - 1;
    let mut frontier = *found_per_layer.last().expect("at least the goal's layer");
    for depth in first.. {
        // Push from a small frontier; once the frontier is large next to what
        // is left, it is cheaper to ask each unreached position whether it
        // has a neighbour in the frontier.
        let pull = frontier * PULL_RATIO > legal - total;
        let summary = summarize(index, &mut cells, depth);
        if pull {
            mark(&mut bits, &mut cells, |c| c == depth);
        } else if !bits_reached {
            mark(&mut bits, &mut cells, |c| c != UNSEEN);
        }
        bits_reached = !pull;
        let layer = Layer {
            kernel: &kernel,
            index,
            cells: &cells,
            summary: &summary,
            bits: &bits,
        };
        let found: u64 = (0..index.white_sets() as usize)
            .into_par_iter()
            .with_min_len(16)
            .map_init(Block::default, |block, r| {
                if pull {
                    layer.pull_block(r as u64, depth, block)
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

/// [`Summary`] bit: the block holds a position at the layer's depth.
const AT_DEPTH: u8 = 1;
/// [`Summary`] bit: the block holds a position no layer has reached.
const HAS_UNSEEN: u8 = 2;

/// What each block holds at a layer boundary, [`AT_DEPTH`] and
/// [`HAS_UNSEEN`] bits, one byte per white set: a layer skips the blocks
/// with nothing to do without reading their cells.
type Summary = Vec<u8>;

/// The [`Summary`] of the table at the start of layer `depth`.
///
/// It takes the table exclusively, which no thread writes between layers,
/// and reads it as plain bytes, so each block is searched with `memchr`
/// instead of one atomic load at a time.
fn summarize(index: &TightIndex, cells: &mut [AtomicU8], depth: u8) -> Summary {
    let bytes = plain(cells);
    (0..index.white_sets() as usize)
        .into_par_iter()
        .with_min_len(64)
        .map(|r| {
            let range = index.block(r as u64);
            let block = &bytes[range.start as usize..range.end as usize];
            let mut flags = 0;
            if block.contains(&depth) {
                flags |= AT_DEPTH;
            }
            if block.contains(&UNSEEN) {
                flags |= HAS_UNSEEN;
            }
            flags
        })
        .collect()
}

/// The table as plain bytes, for the passes between layers: the exclusive
/// borrow keeps every atomic access away while the bytes are read.
fn plain(cells: &mut [AtomicU8]) -> &[u8] {
    // SAFETY: AtomicU8 has the size, alignment and bit validity of u8, and
    // `cells` is borrowed exclusively for as long as the result lives.
    unsafe { std::slice::from_raw_parts(cells.as_ptr().cast::<u8>(), cells.len()) }
}

/// Sets bit `i` of `bits` exactly when cell `i` satisfies `keep`, reading
/// the table as plain bytes: it takes the table exclusively, which no thread
/// writes between layers.
fn mark(bits: &mut [AtomicU64], cells: &mut [AtomicU8], keep: impl Fn(u8) -> bool + Sync) {
    let bytes = plain(cells);
    bits.par_iter_mut()
        .zip(bytes.par_chunks(64))
        .with_min_len(1024)
        .for_each(|(word, chunk)| {
            *word.get_mut() = chunk
                .iter()
                .enumerate()
                .fold(0, |w, (i, &c)| w | u64::from(keep(c)) << i);
        });
}

/// One search layer's shared view of the table.
struct Layer<'a> {
    kernel: &'a Kernel<'a>,
    index: &'a TightIndex,
    cells: &'a [AtomicU8],
    /// The table's [`Summary`] at the start of the layer.
    summary: &'a [u8],
    /// One bit per position: in a push, whether it has been reached (and
    /// set as this layer reaches it); in a pull, whether it is at the
    /// layer's depth.
    bits: &'a [AtomicU64],
}

impl Layer<'_> {
    /// Calls `f(cell, black, block)` for every position of block `r` whose
    /// cell holds `want`, the layer's depth; skips the block at once when
    /// the summary says none does. `block` is scratch space, refilled for
    /// `r` only when there is work.
    fn for_each_at(&self, r: u64, want: u8, block: &mut Block, mut f: impl FnMut(&AtomicU8, Bitboard, &Block)) {
        if self.summary[r as usize] & AT_DEPTH == 0 {
            return;
        }
        let range = self.index.block(r);
        let cells = &self.cells[range.start as usize..range.end as usize];
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
    /// Moves into blocks that the summary says hold no position at `depth`
    /// are not tried, and a block that none of its moves reaches is skipped.
    fn pull_block(&self, r: u64, depth: u8, block: &mut Block) -> u64 {
        let at_depth = |t: u64| self.summary[t as usize] & AT_DEPTH != 0;
        if self.summary[r as usize] & HAS_UNSEEN == 0 {
            return 0;
        }
        let range = self.index.block(r);
        let cells = &self.cells[range.start as usize..range.end as usize];
        self.kernel.block_where(r, block, at_depth);
        block.black_moves = at_depth(r);
        if !block.black_moves && block.white_moves() == 0 {
            return 0;
        }
        let mut found = 0;
        for (cell, black) in cells.iter().zip(Subsets::new(block.safe, self.index.black())) {
            if cell.load(Ordering::Relaxed) != UNSEEN {
                continue;
            }
            if self.kernel.neighbours(block, black, |i| self.bit(i)) {
                cell.store(depth + 1, Ordering::Relaxed);
                found += 1;
            }
        }
        found
    }

    /// Bit `i` of the layer's bitmap.
    #[inline]
    fn bit(&self, i: u64) -> bool {
        self.bits[(i / 64) as usize].load(Ordering::Relaxed) >> (i % 64) & 1 != 0
    }

    /// Sets cell `i` to `next` if no layer has reached it; 1 if this call
    /// did. The bitmap decides, so that two threads reaching one position
    /// count it once.
    #[inline]
    fn claim(&self, i: u64, next: u8) -> u64 {
        let word = &self.bits[(i / 64) as usize];
        let bit = 1 << (i % 64);
        if word.load(Ordering::Relaxed) & bit != 0 || word.fetch_or(bit, Ordering::Relaxed) & bit != 0 {
            return 0;
        }
        self.cells[i as usize].store(next, Ordering::Relaxed);
        1
    }
}
