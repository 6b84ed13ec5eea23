//! The byte table of the tight search: one byte per legal position, its
//! remoteness or unreached, in tight-index order, and what a byte search
//! ([`partition`](super::partition)'s worker) reads and writes it with:
//! the scan of a block's cells ([`scan_cells`]), the per-block summary a
//! layer skips blocks by ([`summarize_blocks`]), and the passes between
//! layers that build the bitmap a layer's random reads go to ([`mark`])
//! and write the cells a push claimed there ([`settle`]).

use std::ops::Range;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::bitboard::Bitboard;
use crate::remoteness::Cell;
use crate::tight::{TightIndex, for_each_run};

/// A cell no search layer has reached yet; left so, it is unreachable.
const UNSEEN: u8 = Cell::UNREACHABLE.0;

/// [`Summary`] bit: the block holds a position at the layer's depth.
pub(super) const AT_DEPTH: u8 = 1;
/// [`Summary`] bit: the block holds a position no layer has reached.
pub(super) const HAS_UNSEEN: u8 = 2;

/// What each block holds at a layer boundary, [`AT_DEPTH`] and
/// [`HAS_UNSEEN`] bits, one byte per white set: a layer skips the blocks
/// with nothing to do without reading their cells.
pub(super) type Summary = Vec<u8>;

/// Calls `f(cell, black)` for every position of a block, whose cells are
/// `cells`, whose safe cells are `safe` and whose black sets have `black`
/// bishops, when its cell satisfies `matches`: a run of positions at a
/// time ([`for_each_run`]), the cells of a run tested together and a black
/// set made only for those that match. Every byte search scans a block
/// so. Always inlined, into searches compiled for more instructions than
/// the baseline.
#[inline(always)]
pub(super) fn scan_cells(
    mut cells: &[AtomicU8],
    safe: Bitboard,
    black: u32,
    matches: impl Fn(u8) -> bool,
    mut f: impl FnMut(&AtomicU8, Bitboard),
) {
    for_each_run(
        safe,
        black,
        #[inline(always)]
        |upper, lows| {
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
        },
    );
}

/// The [`Summary`] of the blocks `blocks` at the start of layer `depth`,
/// whose cells are `cells` (from the first cell of the first block): a
/// byte per block, the first block's first.
///
/// It takes the cells exclusively, which no thread writes between layers,
/// and reads them as plain bytes, so each block is searched 16 cells at a
/// time ([`holds`]) instead of one atomic load at a time.
pub(super) fn summarize_blocks(index: &TightIndex, blocks: Range<u64>, cells: &mut [AtomicU8], depth: u8) -> Summary {
    let base = index.block(blocks.start).start;
    let bytes = plain(cells);
    (blocks.start as usize..blocks.end as usize)
        .into_par_iter()
        .with_min_len(64)
        .map(|r| {
            let range = index.block(r as u64);
            let block = &bytes[(range.start - base) as usize..(range.end - base) as usize];
            let (at_depth, unseen) = holds(block, depth, UNSEEN);
            (u8::from(at_depth) * AT_DEPTH) | (u8::from(unseen) * HAS_UNSEEN)
        })
        .collect()
}

/// Whether `bytes` holds `a`, and whether it holds `b`: 16 bytes at a time
/// where SSE2 is (every x86-64).
fn holds(bytes: &[u8], a: u8, b: u8) -> (bool, bool) {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= 16 {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_setzero_si128,
        };
        // SAFETY: SSE2 is part of every x86-64, and each load reads the 16
        // bytes of `bytes` from `at`, at most `len - 16` (the last piece
        // overlaps the one before, which does not change the answer), with
        // no alignment needed.
        unsafe {
            let (splat_a, splat_b) = (_mm_set1_epi8(a as i8), _mm_set1_epi8(b as i8));
            let (mut any_a, mut any_b) = (_mm_setzero_si128(), _mm_setzero_si128());
            let last = bytes.len() - 16;
            let mut start = 0;
            loop {
                let at = start.min(last);
                let piece = _mm_loadu_si128(bytes.as_ptr().add(at).cast::<__m128i>());
                any_a = _mm_or_si128(any_a, _mm_cmpeq_epi8(piece, splat_a));
                any_b = _mm_or_si128(any_b, _mm_cmpeq_epi8(piece, splat_b));
                if at == last {
                    break;
                }
                start += 16;
            }
            return (_mm_movemask_epi8(any_a) != 0, _mm_movemask_epi8(any_b) != 0);
        }
    }
    (bytes.contains(&a), bytes.contains(&b))
}

/// The bytes of `chunk` (at most 64) equal to `value`: bit `i` is set when
/// `chunk[i]` is. The passes between layers build their bitmaps with it, 16
/// bytes an instruction where SSE2 is (every x86-64).
#[inline]
fn byte_mask(chunk: &[u8], value: u8) -> u64 {
    debug_assert!(chunk.len() <= 64);
    #[cfg(target_arch = "x86_64")]
    let (mut mask, done) = {
        use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
        let mut mask = 0u64;
        // SAFETY: SSE2 is part of every x86-64, and each load reads the 16
        // bytes of one `piece`, with no alignment needed.
        unsafe {
            let splat = _mm_set1_epi8(value as i8);
            for (k, piece) in chunk.chunks_exact(16).enumerate() {
                let bytes = _mm_loadu_si128(piece.as_ptr().cast::<__m128i>());
                let equal = _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, splat)) as u16;
                mask |= u64::from(equal) << (16 * k);
            }
        }
        (mask, chunk.len() / 16 * 16)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let (mut mask, done) = (0u64, 0);
    for (i, &c) in chunk.iter().enumerate().skip(done) {
        mask |= u64::from(c == value) << i;
    }
    mask
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

/// Sets bit `i` of `bits` exactly when cell `i` holds `value` (`equal`) or
/// does not (`!equal`), reading the table as plain bytes: it takes the
/// table exclusively, which no thread writes between layers.
pub(super) fn mark(bits: &mut [AtomicU64], cells: &mut [AtomicU8], value: u8, equal: bool) {
    let bytes = plain(cells);
    bits.par_iter_mut()
        .zip(bytes.par_chunks(64))
        .with_min_len(1024)
        .for_each(|(word, chunk)| {
            let mask = byte_mask(chunk, value);
            *word.get_mut() = if equal {
                mask
            } else {
                !mask & (u64::MAX >> (64 - chunk.len()))
            };
        });
}

/// Ends a push layer: sets every cell that the bitmap marks reached and the
/// table does not yet hold to `next`; returns how many it set. Like
/// [`mark`], it reads and writes the table as plain bytes.
pub(super) fn settle(bits: &mut [AtomicU64], cells: &mut [AtomicU8], next: u8) -> u64 {
    let bytes = plain_mut(cells);
    bits.par_iter_mut()
        .zip(bytes.par_chunks_mut(64))
        .with_min_len(1024)
        .map(|(word, chunk)| {
            let reached = *word.get_mut();
            if reached == 0 {
                return 0;
            }
            let mut new = reached & byte_mask(chunk, UNSEEN);
            let count = u64::from(new.count_ones());
            while new != 0 {
                chunk[new.trailing_zeros() as usize] = next;
                new &= new - 1;
            }
            count
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte scans agree with a byte-at-a-time scan, at every length
    /// and offset.
    #[test]
    fn byte_scans_agree_with_the_plain_ones() {
        let bytes: Vec<u8> = (0..200u32).map(|i| (i * 7 % 11) as u8).collect();
        for start in 0..20 {
            for len in 0..=64 {
                let chunk = &bytes[start..start + len];
                for value in 0..12 {
                    let expected = chunk
                        .iter()
                        .enumerate()
                        .fold(0u64, |m, (i, &c)| m | u64::from(c == value) << i);
                    assert_eq!(byte_mask(chunk, value), expected);
                }
            }
            for len in 0..180 - start {
                let block = &bytes[start..start + len];
                for (a, b) in [(0, 10), (3, 11), (12, 13)] {
                    assert_eq!(holds(block, a, b), (block.contains(&a), block.contains(&b)));
                }
            }
        }
    }
}
