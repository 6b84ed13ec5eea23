//! The byte table of the tight search: one byte per legal position, its
//! remoteness or unreached, in tight-index order ([`ByteTable`]).
//!
//! The table is itself the frontier: layer `d` is every cell holding `d`,
//! so no list of positions is kept, and a share's cells are its whole
//! state at a layer boundary (with the count of each layer), which is what
//! its checkpoint holds.
//!
//! The random reads of a layer go to a bitmap, one bit per position,
//! rebuilt from the cells between layers: a push claims positions in a
//! bitmap of reached ones and writes `d + 1` into the cells claimed in one
//! pass after the layer ([`settle`]), so two threads reaching one position
//! count it once; a pull tests a bitmap of the layer ([`mark`]). For 11x8
//! the bitmap is 22 MB, which stays in the last-level cache, where the
//! 176 MB of cells do not.

use std::ops::Range;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use rayon::prelude::*;

use super::{Claim, Table};
use crate::bitboard::{Bitboard, Word};
use crate::remoteness::Cell;
use crate::solver::boundary::{Coding, Stored, StoredRef};
use crate::solver::layer::BYTE_DEEPEST;
use crate::tight::{TightIndex, for_each_piece, for_each_run, prefetch};

/// A cell no search layer has reached yet; left so, it is unreachable.
const UNSEEN: u8 = Cell::UNREACHABLE.0;

/// One worker's share of a byte table.
pub(in crate::solver) struct ByteTable {
    /// The tight index of the first cell.
    base: u64,
    /// The cells, which the threads of a pull fill at once, and a push
    /// through `bits` after the layer ([`settle`]).
    cells: Vec<AtomicU8>,
    /// One bit per cell: in a push, whether the position has been reached
    /// (and claimed as this layer reaches it); in a pull, whether it is at
    /// the layer's depth.
    bits: Vec<AtomicU64>,
    /// Whether `bits` marks every reached position (a push keeps it so).
    bits_reached: bool,
}

impl ByteTable {
    fn of(base: u64, cells: Vec<u8>) -> ByteTable {
        ByteTable {
            base,
            bits: (0..cells.len().div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            // In place: AtomicU8 and u8 have one layout.
            cells: cells.into_iter().map(AtomicU8::new).collect(),
            bits_reached: false,
        }
    }

    /// The cells as plain bytes, between layers.
    fn plain(&self) -> &[u8] {
        // SAFETY: AtomicU8 has the size, alignment and bit validity of u8,
        // and between layers, where this is called, no thread writes the
        // cells, so reading them as plain bytes while this borrow lives is
        // sound.
        unsafe { std::slice::from_raw_parts(self.cells.as_ptr().cast::<u8>(), self.cells.len()) }
    }

    #[inline(always)]
    fn cell(&self, i: u64) -> &AtomicU8 {
        &self.cells[(i - self.base) as usize]
    }
}

impl Table for ByteTable {
    type Done = Vec<u8>;

    const DEEPEST: u16 = BYTE_DEEPEST;
    const UNSEEN: u8 = UNSEEN;
    const BITS: u64 = 8;
    const CODING: Coding = Coding::Bytes;

    #[inline(always)]
    fn code(depth: u64) -> u8 {
        u8::try_from(depth).expect("the layer loop stops at the deepest a cell holds")
    }

    /// A byte tells the newest layer from every other, and a push scans it alone.
    fn scan_bound(found: &[u64]) -> u64 {
        *found.last().expect("the goal's layer")
    }

    fn unseen(base: u64, len: u64) -> ByteTable {
        ByteTable::of(base, vec![UNSEEN; len as usize])
    }

    fn from_words(base: u64, len: u64, words: Vec<u64>) -> ByteTable {
        let cells = words.iter().flat_map(|w| w.to_le_bytes()).take(len as usize).collect();
        ByteTable::of(base, cells)
    }

    fn into_words(self) -> Vec<u64> {
        self.finish()
            .chunks(8)
            .map(|chunk| {
                let mut word = [UNSEEN; 8];
                word[..chunk.len()].copy_from_slice(chunk);
                u64::from_le_bytes(word)
            })
            .collect()
    }

    fn finish(self) -> Vec<u8> {
        self.cells.into_iter().map(AtomicU8::into_inner).collect()
    }

    #[inline(always)]
    fn scan<W: Word>(
        &self,
        index: &TightIndex<W>,
        r: u64,
        safe: Bitboard<W>,
        want: u8,
        mut f: impl FnMut(u64, Bitboard<W>),
    ) {
        let block = index.block(r);
        let mut cells = &self.cells[(block.start - self.base) as usize..(block.end - self.base) as usize];
        let mut start = block.start;
        for_each_run(
            safe,
            index.black(),
            #[inline(always)]
            |upper, lows| {
                // A piece has at most 64 positions, and its matches fit a mask.
                for_each_piece(
                    lows,
                    #[inline(always)]
                    |lows| {
                        let (run, rest) = cells.split_at(lows.len());
                        cells = rest;
                        let mut hits = run
                            .iter()
                            .enumerate()
                            .fold(0u64, |m, (i, c)| m | u64::from(c.load(Ordering::Relaxed) == want) << i);
                        while hits != 0 {
                            let k = hits.trailing_zeros() as usize;
                            hits &= hits - 1;
                            f(start + k as u64, upper | lows[k]);
                        }
                        start += lows.len() as u64;
                    },
                );
            },
        );
    }

    fn count(&self, cells: Range<u64>, want: u8) -> u64 {
        self.cells[(cells.start - self.base) as usize..(cells.end - self.base) as usize]
            .iter()
            .filter(|c| c.load(Ordering::Relaxed) == want)
            .count() as u64
    }

    #[inline(always)]
    fn matching(&self, start: u64, len: usize, want: u8) -> u64 {
        let first = (start - self.base) as usize;
        self.cells[first..first + len]
            .iter()
            .enumerate()
            .fold(0, |mask, (k, c)| {
                mask | u64::from(c.load(Ordering::Relaxed) == want) << k
            })
    }

    #[inline(always)]
    fn at(&self, i: u64, _: u8) -> bool {
        let k = i - self.base;
        self.bits[(k / 64) as usize].load(Ordering::Relaxed) >> (k % 64) & 1 != 0
    }

    fn reached(&self, i: u64) -> bool {
        self.cell(i).load(Ordering::Relaxed) != UNSEEN
    }

    #[inline(always)]
    fn claim(&self, i: u64, next: u8, claim: Claim) -> bool {
        let k = i - self.base;
        match claim {
            Claim::Reached => {
                let word = &self.bits[(k / 64) as usize];
                let bit = 1 << (k % 64);
                word.load(Ordering::Relaxed) & bit == 0 && word.fetch_or(bit, Ordering::Relaxed) & bit == 0
            }
            Claim::Unseen => {
                self.cells[k as usize].store(next, Ordering::Relaxed);
                true
            }
            Claim::Sent => {
                let cell = &self.cells[k as usize];
                let unseen = cell.load(Ordering::Relaxed) == UNSEEN;
                if unseen {
                    cell.store(next, Ordering::Relaxed);
                }
                unseen
            }
        }
    }

    #[inline(always)]
    fn prefetch(&self, i: u64, claim: Claim) {
        let k = i - self.base;
        if claim == Claim::Reached {
            prefetch(&self.bits[(k / 64) as usize]);
        } else {
            prefetch(&self.cells[k as usize]);
        }
    }

    fn begin_layer(&mut self, here: u8, pull: bool) {
        if pull {
            mark(&mut self.bits, &mut self.cells, here, true);
        } else if !self.bits_reached {
            mark(&mut self.bits, &mut self.cells, UNSEEN, false);
        }
        self.bits_reached = !pull;
    }

    /// A push's claims, in the bitmap, go into the cells.
    fn end_layer(&mut self, next: u8, pull: bool) {
        if !pull {
            settle(&mut self.bits, &mut self.cells, next);
        }
    }

    fn stored(&self) -> StoredRef<'_> {
        StoredRef::Bytes(self.plain())
    }

    fn from_stored(base: u64, len: u64, stored: Stored) -> Option<ByteTable> {
        match stored {
            Stored::Bytes(cells) if cells.len() as u64 == len => Some(ByteTable::of(base, cells)),
            _ => None,
        }
    }
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

/// The table as plain bytes, for the passes between layers.
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
fn mark(bits: &mut [AtomicU64], cells: &mut [AtomicU8], value: u8, equal: bool) {
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
/// table does not yet hold to `next`, as plain bytes, as [`mark`] reads them.
fn settle(bits: &mut [AtomicU64], cells: &mut [AtomicU8], next: u8) {
    let bytes = plain_mut(cells);
    bits.par_iter_mut()
        .zip(bytes.par_chunks_mut(64))
        .with_min_len(1024)
        .for_each(|(word, chunk)| {
            let reached = *word.get_mut();
            if reached == 0 {
                return;
            }
            let mut new = reached & byte_mask(chunk, UNSEEN);
            while new != 0 {
                chunk[new.trailing_zeros() as usize] = next;
                new &= new - 1;
            }
        });
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
        }
    }
}
