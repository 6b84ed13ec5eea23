//! The two-bit table of the tight search ([`CodeTable`], a share of a
//! [`Mod3Table`] in atomic words): per legal position a
//! [code](Mod3Table::get), unseen or the remoteness mod 3, and nothing
//! else, for boards whose byte table does not fit in memory (after Korf's
//! two-bit breadth-first search: R. E. Korf, "Minimizing Disk I/O in
//! Two-Bit Breadth-First Search", AAAI 2008). That is enough to run the
//! search, and exact values come back afterwards by
//! [`descent`](crate::mod3::exact).
//!
//! Layer `d` finds layer `d + 1` by a pull or a push (see
//! [`search`](crate::solver::search)), and the codes suffice for both:
//!
//! - *pull*: an unseen position lies deeper than `d`, so each of its
//!   neighbours lies at `d` or deeper, and one coded `d mod 3` is at `d`
//!   exactly.
//! - *push*: the code of layer `d` also marks layers `d − 3`, `d − 6`, …;
//!   their neighbours were all reached long ago, so expanding them again
//!   costs time and changes nothing. Only the blocks that hold a position
//!   of layer `d` are visited, so while the layers grow little is expanded
//!   twice.
//!
//! A code does not tell the newest layer from older ones of its residue:
//! the hardest positions are kept as the layer is written (`hardest`).
//! The table's memory is
//! [`Plan::two_bit_memory_bytes`](crate::solver::Plan::two_bit_memory_bytes):
//! 14.95 GiB of table for a class of 12x10.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::{Claim, Table};
use crate::bitboard::{Bitboard, Word};
use crate::mod3::{Codes, Mod3Table, UNSEEN, code_words, count_codes};
use crate::solver::boundary::{Coding, Stored, StoredRef};
use crate::tight::{TightIndex, prefetch};

/// One worker's share of a two-bit table.
pub(in crate::solver) struct CodeTable {
    /// The tight index of the first position.
    base: u64,
    /// Positions in the share.
    len: u64,
    /// Their codes, 32 a word from the first.
    words: Vec<AtomicU64>,
}

impl CodeTable {
    #[inline(always)]
    fn codes(&self) -> Codes<'_> {
        Codes::new(&self.words, self.base)
    }
}

impl Table for CodeTable {
    type Done = Mod3Table;

    const DEEPEST: u16 = u16::MAX;
    const UNSEEN: u8 = UNSEEN;
    const BITS: u64 = 2;
    const CODING: Coding = Coding::TwoBit;

    #[inline(always)]
    fn code(depth: u64) -> u8 {
        (depth % 3) as u8
    }

    /// A push scans every position of its residue in the blocks it visits.
    fn scan_bound(found: &[u64]) -> u64 {
        let here = (found.len() - 1) % 3;
        found.iter().skip(here).step_by(3).sum()
    }

    fn unseen(base: u64, len: u64) -> CodeTable {
        let words = (0..code_words(len))
            .into_par_iter()
            .map(|_| AtomicU64::new(u64::MAX))
            .collect();
        CodeTable { base, len, words }
    }

    fn from_words(base: u64, len: u64, words: Vec<u64>) -> CodeTable {
        debug_assert_eq!(words.len() as u64, code_words(len));
        // In place: AtomicU64 and u64 have one layout.
        let words = words.into_iter().map(AtomicU64::new).collect();
        CodeTable { base, len, words }
    }

    fn into_words(self) -> Vec<u64> {
        self.words.into_iter().map(AtomicU64::into_inner).collect()
    }

    fn finish(self) -> Mod3Table {
        let len = self.len;
        Mod3Table::from_words(self.into_words(), len)
    }

    #[inline(always)]
    fn scan<W: Word>(
        &self,
        index: &TightIndex<W>,
        r: u64,
        safe: Bitboard<W>,
        want: u8,
        f: impl FnMut(u64, Bitboard<W>),
    ) {
        self.codes().scan(index, r, safe, want, f);
    }

    fn count(&self, cells: Range<u64>, want: u8) -> u64 {
        let load = |w: &AtomicU64| w.load(Ordering::Relaxed);
        count_codes(&self.words, load, cells.start - self.base..cells.end - self.base, want)
    }

    #[inline(always)]
    fn matching(&self, start: u64, len: usize, want: u8) -> u64 {
        self.codes().matching(start, len, want)
    }

    #[inline(always)]
    fn at(&self, i: u64, here: u8) -> bool {
        self.codes().code(i) == here
    }

    fn reached(&self, i: u64) -> bool {
        self.codes().code(i) != UNSEEN
    }

    #[inline(always)]
    fn claim(&self, i: u64, next: u8, claim: Claim) -> bool {
        let codes = self.codes();
        match claim {
            // A neighbour may have been reached by an older layer: only an
            // unseen position is written.
            Claim::Reached | Claim::Sent => codes.code(i) == UNSEEN && codes.write(i, next),
            Claim::Unseen => codes.write(i, next),
        }
    }

    #[inline(always)]
    fn prefetch(&self, i: u64, _: Claim) {
        prefetch(self.codes().word(i));
    }

    fn begin_layer(&mut self, _: u8, _: bool) {}

    fn end_layer(&mut self, _: u8, _: bool) {}

    fn stored(&self) -> StoredRef<'_> {
        StoredRef::TwoBit(&self.words)
    }

    fn from_stored(base: u64, len: u64, stored: Stored) -> Option<CodeTable> {
        match stored {
            Stored::TwoBit(words) if words.len() as u64 == code_words(len) => {
                Some(CodeTable::from_words(base, len, words))
            }
            _ => None,
        }
    }
}
