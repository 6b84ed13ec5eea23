//! The fast search: every core, one byte per legal position.
//!
//! The table itself is the frontier: layer `d` is every cell holding `d`, so
//! no list of positions is kept. Each layer is one parallel pass over the
//! blocks of the [`TightIndex`] (one block per white set), in one of two
//! directions:
//!
//! - *push*, while the frontier is small: a block with cells at `d` expands
//!   those positions and claims their unreached neighbours by an atomic or
//!   into a bitmap of reached positions, so two threads reaching one position
//!   count it once; one pass after the layer writes `d + 1` into the cells
//!   claimed;
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
//! On a board with an odd number of rows, a position and its
//! [`Reflection`] (mirrored top to bottom, colours exchanged) are equally
//! far from the goal, so every layer is closed under reflection. A layer
//! then expands only the canonical position of each pair and sets its
//! reflection with it: a push reflects each position it claims, a pull each
//! position it finds. That halves the moves generated, for one rank per
//! position found.
//!
//! The table is also the search's whole state at a layer boundary, with the
//! depth and the count of each layer: [`search_with`] hands that state to a
//! [`Checkpoints`] after every layer, and can start from a saved one.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::bitboard::Bitboard;
use crate::board::Class;
use crate::error::Result;
use crate::index::{colex_rank, colex_unrank};
use crate::remoteness::Cell;
use crate::rules::Part;
use crate::symmetry::Reflection;
use crate::tight::{TightIndex, for_each_run, prefetch};
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
    let reflection = Reflection::new(&spec.geometry, spec.goal);
    let canonical = reflection.as_ref().map(|r| canonical_blocks(r, index));
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
            reflection: reflection.as_ref().zip(canonical.as_deref()),
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
        if !pull {
            let settled = settle(&mut bits, &mut cells, depth + 1);
            debug_assert_eq!(settled, found);
        }
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

/// Whether each block (by white-set rank) holds a canonical position of
/// `reflection`: the blocks a layer that uses it visits at all.
fn canonical_blocks(reflection: &Reflection, index: &TightIndex) -> Vec<bool> {
    (0..index.white_sets() as usize)
        .into_par_iter()
        .with_min_len(1024)
        .map(|r| {
            reflection.has_canonical(
                colex_unrank(r as u64, index.white()),
                index.safe(r as u64),
                index.black(),
            )
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

/// As [`plain`], writable.
fn plain_mut(cells: &mut [AtomicU8]) -> &mut [u8] {
    // SAFETY: as in `plain`; the exclusive borrow also makes writes safe.
    unsafe { std::slice::from_raw_parts_mut(cells.as_mut_ptr().cast::<u8>(), cells.len()) }
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

/// Ends a push layer: sets every cell that the bitmap marks reached and the
/// table does not yet hold to `next`; returns how many it set. Like
/// [`mark`], it reads and writes the table as plain bytes.
fn settle(bits: &mut [AtomicU64], cells: &mut [AtomicU8], next: u8) -> u64 {
    let bytes = plain_mut(cells);
    bits.par_iter_mut()
        .zip(bytes.par_chunks_mut(64))
        .with_min_len(1024)
        .map(|(word, chunk)| {
            let reached = *word.get_mut();
            if reached == 0 {
                return 0;
            }
            let unseen = chunk
                .iter()
                .enumerate()
                .fold(0, |w, (i, &c)| w | u64::from(c == UNSEEN) << i);
            let mut new = reached & unseen;
            let count = u64::from(new.count_ones());
            while new != 0 {
                chunk[new.trailing_zeros() as usize] = next;
                new &= new - 1;
            }
            count
        })
        .sum()
}

/// How many reflections a layer gathers before it sets them.
const REFLECTIONS: usize = 16;

/// The reflections of positions a layer has found, waiting to be set in one
/// batch ([`Layer::set_reflections`]).
#[derive(Default)]
struct Reflections {
    images: [Part; REFLECTIONS],
    len: usize,
}

impl Reflections {
    /// Adds the reflection of `part`, unless it is its own; returns whether
    /// the batch is full.
    #[inline]
    fn push(&mut self, reflection: &Reflection, part: Part) -> bool {
        let image = reflection.part(part);
        if image != part {
            self.images[self.len] = image;
            self.len += 1;
        }
        self.len == REFLECTIONS
    }
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
    /// The class's reflection, if it has one, and which blocks hold a
    /// canonical position of it: then only canonical positions are
    /// expanded, and each found position's reflection is set with it.
    reflection: Option<(&'a Reflection, &'a [bool])>,
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
        self.kernel.block(r, block);
        let block = &*block;
        self.scan(r, block.safe, |c| c == want, |cell, black| f(cell, black, block));
    }

    /// Calls `f(cell, black)` for every position of block `r`, whose safe
    /// cells are `safe`, whose cell satisfies `matches`. It goes a run of
    /// positions at a time ([`for_each_run`]): the cells of a run are tested
    /// together, and a black set is made only for those that match.
    #[inline]
    fn scan(&self, r: u64, safe: Bitboard, matches: impl Fn(u8) -> bool, mut f: impl FnMut(&AtomicU8, Bitboard)) {
        let range = self.index.block(r);
        let mut cells = &self.cells[range.start as usize..range.end as usize];
        for_each_run(safe, self.index.black(), |upper, lows| {
            let (run, rest) = cells.split_at(lows.len());
            cells = rest;
            // A run has at most 64 positions: one per cell of `safe`.
            let mut hits = run
                .iter()
                .enumerate()
                .fold(0u64, |m, (i, c)| m | u64::from(matches(c.load(Ordering::Relaxed))) << i);
            while hits != 0 {
                let i = hits.trailing_zeros() as usize;
                hits &= hits - 1;
                f(&run[i], upper | lows[i]);
            }
        });
    }

    /// Pushes from every position of block `r` at `depth`: claims its
    /// unreached neighbours for `depth + 1`. Returns how many it claimed.
    fn push_block(&self, r: u64, depth: u8, block: &mut Block) -> u64 {
        let mut found = 0;
        let Some((reflection, canonical)) = self.reflection else {
            self.for_each_at(r, depth, block, |_, black, block| {
                self.kernel.neighbours(block, black, |i| {
                    found += self.claim(i);
                    false
                });
            });
            return found;
        };
        // Only canonical positions are expanded; each claim is reflected,
        // which keeps the layer closed under reflection.
        if !canonical[r as usize] {
            return 0;
        }
        let mut claimed = Reflections::default();
        self.for_each_at(r, depth, block, |_, black, block| {
            if !reflection.is_canonical(Part {
                white: block.white,
                black,
            }) {
                return;
            }
            self.kernel.neighbour_parts(block, black, |i, after| {
                if self.claim(i) == 1 {
                    found += 1;
                    if claimed.push(reflection, after) {
                        found += self.claim_reflections(&mut claimed);
                    }
                }
                false
            });
        });
        found + self.claim_reflections(&mut claimed)
    }

    /// Sets the reflections in `batch` and empties it: ranks each one, asks
    /// `touch` to prefetch what `set` will use, then calls `set` with each
    /// tight index; returns the sum of what `set` returned. The reflections'
    /// blocks are scattered over memory, so the batch is worked in stages,
    /// each asking for the next stage's memory for all of them before using
    /// any: the cache misses overlap instead of following one another.
    fn set_reflections(&self, batch: &mut Reflections, touch: impl Fn(u64), set: impl Fn(u64) -> u64) -> u64 {
        let images = &batch.images[..batch.len];
        let mut blocks = [0u64; REFLECTIONS];
        for (r, image) in blocks.iter_mut().zip(images) {
            *r = colex_rank(image.white);
            self.index.prefetch_block(*r);
        }
        let mut indices = [0u64; REFLECTIONS];
        for ((i, &r), image) in indices.iter_mut().zip(&blocks).zip(images) {
            *i = self
                .index
                .rank_in_block(r, image.black)
                .expect("the reflection of a legal position is legal");
            touch(*i);
        }
        let found = indices[..batch.len].iter().map(|&i| set(i)).sum();
        batch.len = 0;
        found
    }

    /// [`set_reflections`](Self::set_reflections) for a push: claims them.
    fn claim_reflections(&self, batch: &mut Reflections) -> u64 {
        self.set_reflections(batch, |i| prefetch(&self.bits[(i / 64) as usize]), |i| self.claim(i))
    }

    /// [`set_reflections`](Self::set_reflections) for a pull: they join
    /// layer `next`, unreached till now as their reflections were.
    fn store_reflections(&self, batch: &mut Reflections, next: u8) -> u64 {
        self.set_reflections(
            batch,
            |i| prefetch(&self.cells[i as usize]),
            |i| {
                self.cells[i as usize].store(next, Ordering::Relaxed);
                1
            },
        )
    }

    /// Pulls into every unreached position of block `r`: it joins layer
    /// `depth + 1` when a neighbour is at `depth`. Only this call writes the
    /// block's canonical cells (with a reflection; else all of them), and
    /// its neighbours are read from the bitmap of positions at `depth`,
    /// which no one writes in this layer. The reflections of the positions
    /// it finds are written here too: non-canonical cells, which no pull
    /// reads. Returns how many positions joined, reflections included.
    ///
    /// Moves into blocks that the summary says hold no position at `depth`
    /// are not tried, and a block that none of its moves reaches is skipped.
    fn pull_block(&self, r: u64, depth: u8, block: &mut Block) -> u64 {
        let at_depth = |t: u64| self.summary[t as usize] & AT_DEPTH != 0;
        if self.summary[r as usize] & HAS_UNSEEN == 0 {
            return 0;
        }
        if let Some((_, canonical)) = self.reflection
            && !canonical[r as usize]
        {
            return 0;
        }
        self.kernel.block_where(r, block, at_depth);
        block.black_moves = at_depth(r);
        if !block.black_moves && block.white_moves() == 0 {
            return 0;
        }
        let block = &*block;
        let mut found = 0;
        let mut pulled = Reflections::default();
        self.scan(
            r,
            block.safe,
            |c| c == UNSEEN,
            |cell, black| {
                let part = Part {
                    white: block.white,
                    black,
                };
                // A non-canonical position is set by its reflection's pull,
                // and only by it: no other pull reads or writes its cell.
                if let Some((reflection, _)) = self.reflection
                    && !reflection.is_canonical(part)
                {
                    return;
                }
                if self.kernel.neighbours(block, black, |i| self.bit(i)) {
                    cell.store(depth + 1, Ordering::Relaxed);
                    found += 1;
                    if let Some((reflection, _)) = self.reflection
                        && pulled.push(reflection, part)
                    {
                        found += self.store_reflections(&mut pulled, depth + 1);
                    }
                }
            },
        );
        found + self.store_reflections(&mut pulled, depth + 1)
    }

    /// Bit `i` of the layer's bitmap.
    #[inline]
    fn bit(&self, i: u64) -> bool {
        self.bits[(i / 64) as usize].load(Ordering::Relaxed) >> (i % 64) & 1 != 0
    }

    /// Marks position `i` reached if no layer has reached it; 1 if this
    /// call did. The bitmap decides, so that two threads reaching one
    /// position count it once. The cell is written after the layer, by
    /// [`settle`], in one pass over the table instead of one cache miss per
    /// position.
    #[inline]
    fn claim(&self, i: u64) -> u64 {
        let word = &self.bits[(i / 64) as usize];
        let bit = 1 << (i % 64);
        u64::from(word.load(Ordering::Relaxed) & bit == 0 && word.fetch_or(bit, Ordering::Relaxed) & bit == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    /// The reference tests (`tests/reference.rs`) check these boards'
    /// tables position by position; this keeps them on the reflection path.
    #[test]
    fn odd_row_boards_are_searched_by_reflection() {
        for name in ["5x4", "5x4-full", "7x4", "7x6", "9x6", "9x8", "11x8"] {
            let variant = Variant::named(name).unwrap();
            for spec in variant.classes() {
                assert!(Reflection::new(&spec.geometry, spec.goal).is_some(), "{name}");
            }
        }
    }

    /// A board with an even number of rows has no reflection (the solver's
    /// `tight_and_dense_searches_agree` solves one).
    #[test]
    fn even_row_boards_have_none() {
        for name in ["6x4-full", "8x6-a2"] {
            let variant = Variant::named(name).unwrap();
            for spec in variant.classes() {
                assert!(Reflection::new(&spec.geometry, spec.goal).is_none(), "{name}");
            }
        }
    }
}
