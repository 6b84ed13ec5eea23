//! The halo of a worker of a partitioned search ([`Halo`]), the moves it
//! is worked out from ([`Reach`]), and the wire form of a run of bit
//! words, whole or as its nonzero words ([`pack_words`]).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use super::recut::read_bits;
use super::share::{Partition, Transport, words};
use crate::bitboard::Bitboard;
use crate::bitboard::Word;
use crate::error::{Error, Result};
use crate::solver::isa::Isa;
use crate::solver::kernel::{Block, Kernel, Via};
use crate::tight::TightIndex;

/// A position another worker reached for this one: its tight index and its
/// block (white-set rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Reached {
    pub(super) index: u64,
    pub(super) block: u64,
}

/// How many received positions a worker takes at a time.
pub(super) const RUN: usize = 4096;

/// The blocks in other workers' ranges that one white move leads to from
/// this worker's blocks (black moves stay in a block), one bit per
/// position of each, twice over: what a pull layer reads of the others'
/// frontiers (`bits`, sent by the owners before the layer), and what a push
/// layer reached there (`outbox`, sent to the owners after it).
pub(super) struct Halo {
    /// The blocks, ascending (so grouped by owner, in worker order).
    blocks: Vec<u64>,
    /// `starts[k]`: the bit of `bits` where block `blocks[k]`'s bits start.
    starts: Vec<u64>,
    /// `any[k]`: whether block `blocks[k]` has a position in the frontier.
    pub(super) any: Vec<bool>,
    /// `segments[w]..segments[w + 1]`: the words of `bits` worker `w` sends.
    segments: Vec<usize>,
    /// `requests[w]`: this worker's blocks in worker `w`'s halo, ascending.
    requests: Vec<Vec<u64>>,
    /// One bit per position of the blocks: whether it is in the frontier.
    bits: Vec<u64>,
    /// One bit per position of the blocks: whether a push reached it.
    outbox: Vec<AtomicU64>,
}

/// How many white moves out of a worker's blocks lead to each block of
/// the class: what its halo is worked out from ([`outside`](Self::outside)).
/// Kept as the worker's range moves, so a move of the cuts recounts only
/// the blocks that change hands rather than every block of the range. Two
/// bytes a white set: a white set is reached by no more moves than lead
/// out of it (a white move is undone by one), at most 4 rays of 63 cells
/// for each of at most 64 bishops.
pub(super) struct Reach {
    /// `counts[t]`: the moves out of `blocks` that lead to block `t`.
    counts: Vec<u16>,
    /// The blocks counted.
    blocks: Range<u64>,
}

impl Reach {
    /// The moves out of no block: what a worker that owns every block
    /// starts from, having no halo to work out.
    pub(super) fn none<W: Word>(index: &TightIndex<W>) -> Reach {
        Reach {
            counts: vec![0; index.white_sets() as usize],
            blocks: 0..0,
        }
    }

    /// The moves out of `blocks`, counted.
    pub(super) fn new<W: Word>(kernel: &Kernel<'_, W>, index: &TightIndex<W>, blocks: Range<u64>) -> Reach {
        let mut reach = Reach::none(index);
        reach.move_to(kernel, blocks);
        reach
    }

    /// Counts the moves out of `blocks` instead: takes away those of the
    /// blocks it no longer counts and adds those of the blocks it gains.
    pub(super) fn move_to<W: Word>(&mut self, kernel: &Kernel<'_, W>, blocks: Range<u64>) {
        for lost in without(&self.blocks, &blocks) {
            for r in lost {
                kernel.white_targets(r, |t| self.counts[t as usize] -= 1);
            }
        }
        for gained in without(&blocks, &self.blocks) {
            for r in gained {
                kernel.white_targets(r, |t| self.counts[t as usize] += 1);
            }
        }
        self.blocks = blocks;
    }

    /// The blocks a move out of its blocks leads to that are not among
    /// them, ascending.
    fn outside(&self) -> Vec<u64> {
        (0..self.counts.len() as u64)
            .filter(|t| self.counts[*t as usize] > 0 && !self.blocks.contains(t))
            .collect()
    }
}

/// The blocks of `a` that are not in `b`: below `b` and above it.
fn without(a: &Range<u64>, b: &Range<u64>) -> [Range<u64>; 2] {
    [a.start..a.end.min(b.start), a.start.max(b.end)..a.end]
}

impl Halo {
    /// The halo of a worker that owns every block: no move leaves its
    /// range, so it holds nothing, and is made without counting moves.
    pub(super) fn alone() -> Halo {
        Halo {
            blocks: Vec::new(),
            starts: Vec::new(),
            any: Vec::new(),
            segments: vec![0, 0],
            requests: vec![Vec::new()],
            bits: Vec::new(),
            outbox: Vec::new(),
        }
    }

    /// Works out the halo of worker `me` of `partition` from the moves out
    /// of its blocks (`reach`, which counts those) and tells every other
    /// worker which of its blocks it needs: a collective step, which every
    /// worker runs before the first layer and after each move of ranges.
    pub(super) fn new<T: Transport + ?Sized, W: Word>(
        reach: &Reach,
        index: &TightIndex<W>,
        partition: &Partition,
        me: usize,
        transport: &mut T,
    ) -> Result<Halo> {
        let mine = partition.blocks(me);
        if reach.blocks != mine {
            return Err(Error::Exchange(format!(
                "worker {me} counted the moves of blocks {:?}, not of its blocks {mine:?}",
                reach.blocks
            )));
        }
        let blocks = reach.outside();
        let workers = partition.workers();
        let mut starts = Vec::with_capacity(blocks.len());
        let mut segments = vec![0; workers + 1];
        let mut asks = vec![Vec::new(); workers];
        let mut bit = 0u64;
        let mut k = 0;
        for w in 0..workers {
            segments[w] = (bit / 64) as usize;
            while k < blocks.len() && partition.owner(blocks[k]) == w {
                starts.push(bit);
                let b = index.block(blocks[k]);
                bit += b.end - b.start;
                asks[w].extend_from_slice(&blocks[k].to_le_bytes());
                k += 1;
            }
            // Each sender's bits start on a word.
            bit = bit.div_ceil(64) * 64;
        }
        segments[workers] = (bit / 64) as usize;
        let asked = transport.all_to_all(asks)?;
        let mut requests = Vec::with_capacity(workers);
        for (w, stream) in asked.iter().enumerate() {
            let list = words(stream)?;
            if let Some(r) = list.iter().find(|r| !mine.contains(r)) {
                return Err(Error::Exchange(format!(
                    "worker {w} asked worker {me} for block {r}, which it does not own"
                )));
            }
            if list.windows(2).any(|pair| pair[0] >= pair[1]) {
                return Err(Error::Exchange(format!("worker {w} asked for blocks out of order")));
            }
            requests.push(list);
        }
        let words = bit as usize / 64;
        Ok(Halo {
            any: vec![false; blocks.len()],
            blocks,
            starts,
            segments,
            requests,
            bits: vec![0; words],
            outbox: (0..words).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// Sends every worker the frontier bits of this worker's blocks in its
    /// halo (`frontier(i, n)`: bit `k` set when position `i + k` is in the
    /// frontier, for `k` below `n`, at most 64), and takes theirs into this
    /// worker's halo: a collective step. Returns the bytes sent.
    pub(super) fn exchange<T: Transport + ?Sized, W: Word>(
        &mut self,
        index: &TightIndex<W>,
        me: usize,
        transport: &mut T,
        frontier: impl Fn(u64, usize) -> u64,
    ) -> Result<u64> {
        let mut streams = Vec::with_capacity(self.requests.len());
        let mut sent = 0;
        for (w, list) in self.requests.iter().enumerate() {
            if w == me {
                streams.push(Vec::new());
                continue;
            }
            let bits: u64 = list.iter().map(|&r| index.block(r).end - index.block(r).start).sum();
            let mut words = vec![0u64; bits.div_ceil(64) as usize];
            let mut bit = 0u64;
            for &r in list {
                let b = index.block(r);
                for i in b.clone().step_by(64) {
                    let n = (b.end - i).min(64);
                    let mask = frontier(i, n as usize);
                    let (word, offset) = ((bit / 64) as usize, bit % 64);
                    words[word] |= mask << offset;
                    if offset > 0 && offset + n > 64 {
                        words[word + 1] |= mask >> (64 - offset);
                    }
                    bit += n;
                }
            }
            let stream = pack_words(&words);
            sent += stream.len() as u64;
            streams.push(stream);
        }
        let incoming = transport.all_to_all(streams)?;
        for (w, stream) in incoming.iter().enumerate() {
            if w == me {
                continue;
            }
            let segment = self.segments[w]..self.segments[w + 1];
            unpack_words(stream, &mut self.bits[segment])
                .map_err(|why| Error::Exchange(format!("worker {w} sent a halo that {why}")))?;
        }
        for (k, &t) in self.blocks.iter().enumerate() {
            let b = index.block(t);
            self.any[k] = any_bit(&self.bits, self.starts[k], b.end - b.start);
        }
        Ok(sent)
    }

    /// The place `k` of block `t` among the halo's blocks, if it is one.
    #[inline]
    pub(super) fn find(&self, t: u64) -> Option<usize> {
        self.blocks.binary_search(&t).ok()
    }

    /// Fills `block.routes` for worker `me` of `partition`: `None` for a
    /// white move into its own blocks, else the bit of the halo that the
    /// move's neighbour `j` has, less `j` (wrapping). Returns whether any
    /// move leads to another worker's block.
    pub(super) fn route<W: Word>(&self, partition: &Partition, me: usize, block: &mut Block<W>) -> bool {
        let mine = partition.blocks(me);
        block.routes.clear();
        let mut crosses = false;
        for k in 0..block.white_moves() {
            let (t, start) = block.white_target(k);
            let route = (!mine.contains(&t)).then(|| {
                let k = self.find(t).expect("every block one white move away is in the halo");
                self.starts[k].wrapping_sub(start)
            });
            crosses |= route.is_some();
            block.routes.push(route);
        }
        crosses
    }

    /// Readies `block`, white set `r` of worker `me` of `partition`, for a
    /// pull: its moves into the blocks that hold the frontier (`current`
    /// says which of the worker's own do, the halo which of the others'),
    /// and their routes. `None` when no move of the block reaches the
    /// frontier; else whether a white move leads to another worker's
    /// range, the only case where [`pull_hit`](Self::pull_hit) reads the
    /// halo.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pull_moves<I: Isa, W: Word>(
        &self,
        kernel: &Kernel<'_, W>,
        isa: I,
        partition: &Partition,
        me: usize,
        r: u64,
        block: &mut Block<W>,
        current: impl Fn(u64) -> bool,
    ) -> Option<bool> {
        let mine = partition.blocks(me);
        kernel.block_in(isa, r, block, |t| {
            if mine.contains(&t) {
                current(t)
            } else {
                self.find(t).is_some_and(|k| self.any[k])
            }
        });
        block.black_moves = current(r);
        if !block.black_moves && block.white_moves() == 0 {
            return None;
        }
        Some(self.route(partition, me, block))
    }

    /// Whether position `black` of `block`, readied by
    /// [`pull_moves`](Self::pull_moves), has a neighbour in the frontier:
    /// `current(j)` says so of a neighbour `j` in the worker's range, the
    /// halo of one a routed white move reaches (only when `routed`).
    /// Adds the neighbours looked at, and those in the halo, to `looked`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pull_hit<I: Isa, W: Word>(
        &self,
        kernel: &Kernel<'_, W>,
        isa: I,
        block: &Block<W>,
        black: Bitboard<W>,
        routed: bool,
        looked: &mut (u64, u64),
        current: impl Fn(u64) -> bool,
    ) -> bool {
        if !routed {
            return kernel.neighbours_in(
                isa,
                block,
                black,
                #[inline(always)]
                |j| {
                    looked.0 += 1;
                    current(j)
                },
            );
        }
        kernel.neighbours_via_in(
            isa,
            block,
            black,
            #[inline(always)]
            |j, _, via| {
                looked.0 += 1;
                if let Via::White(k) = via
                    && let Some(route) = block.routes[k]
                {
                    looked.1 += 1;
                    self.at(route.wrapping_add(j))
                } else {
                    current(j)
                }
            },
        )
    }

    /// Whether the halo position at bit `bit` is in the frontier.
    #[inline(always)]
    pub(super) fn at(&self, bit: u64) -> bool {
        self.bits[(bit / 64) as usize] >> (bit % 64) & 1 == 1
    }

    /// Notes that a push reached the halo position at bit `bit`.
    #[inline(always)]
    pub(super) fn reach(&self, bit: u64) {
        let (word, mask) = (&self.outbox[(bit / 64) as usize], 1u64 << (bit % 64));
        if word.load(Ordering::Relaxed) & mask == 0 {
            word.fetch_or(mask, Ordering::Relaxed);
        }
    }

    /// Sends every worker the bits of its positions a push of this worker
    /// reached, and empties the outbox: a collective step. Returns what
    /// each worker sent this one and the bytes sent.
    pub(super) fn send_outbox<T: Transport + ?Sized>(
        &self,
        me: usize,
        transport: &mut T,
    ) -> Result<(Vec<Vec<u8>>, u64)> {
        let mut streams = Vec::with_capacity(transport.workers());
        let mut sent = 0;
        for w in 0..transport.workers() {
            let words: Vec<u64> = self.outbox[self.segments[w]..self.segments[w + 1]]
                .iter()
                .map(|word| word.swap(0, Ordering::Relaxed))
                .collect();
            let stream = if w == me { Vec::new() } else { pack_words(&words) };
            sent += stream.len() as u64;
            streams.push(stream);
        }
        Ok((transport.all_to_all(streams)?, sent))
    }

    /// Calls `take` with the positions of this worker that worker `from`
    /// reached, as it sent them in `stream` ([`send_outbox`](Self::send_outbox)),
    /// a run of at most [`RUN`] at a time, in order; returns the sum of
    /// what `take` returned.
    ///
    /// # Errors
    ///
    /// [`Error::Exchange`] when the stream is not the bits of this
    /// worker's blocks in `from`'s halo, and what `take` returns.
    pub(super) fn reached<W: Word>(
        &self,
        index: &TightIndex<W>,
        from: usize,
        stream: &[u8],
        mut take: impl FnMut(&[Reached]) -> Result<u64>,
    ) -> Result<u64> {
        let list = &self.requests[from];
        let bits: u64 = list.iter().map(|&r| index.block(r).end - index.block(r).start).sum();
        let words = unpack_bits(stream, bits)
            .map_err(|why| Error::Exchange(format!("worker {from} sent reached positions that {why}")))?;
        let mut run = Vec::with_capacity(RUN);
        let mut taken = 0;
        // The blocks of `list` in order, with the bit each starts at.
        let (mut k, mut first, mut end) = (0usize, 0u64, 0u64);
        each_bit(&words, |bit| {
            while bit >= end {
                first = end;
                let b = index.block(list[k]);
                end = first + (b.end - b.start);
                k += 1;
            }
            let r = list[k - 1];
            run.push(Reached {
                index: index.block(r).start + (bit - first),
                block: r,
            });
            if run.len() == RUN {
                taken += take(&run)?;
                run.clear();
            }
            Ok(())
        })?;
        Ok(taken + take(&run)?)
    }
}

/// The `len` bits of a [`pack_words`] stream, as words; else what is
/// wrong with the stream, a bit set past `len` included.
pub(super) fn unpack_bits(stream: &[u8], len: u64) -> std::result::Result<Vec<u64>, Garbled> {
    let mut words = vec![0u64; len.div_ceil(64) as usize];
    unpack_words(stream, &mut words)?;
    if !len.is_multiple_of(64) && words.last().is_some_and(|&w| w >> (len % 64) != 0) {
        return Err(Garbled::PastEnd(len));
    }
    Ok(words)
}

/// Calls `f` with the place of each bit set in `words`, in order, until
/// it fails.
pub(super) fn each_bit(words: &[u64], mut f: impl FnMut(u64) -> Result<()>) -> Result<()> {
    for (w, &word) in words.iter().enumerate() {
        let mut rest = word;
        while rest != 0 {
            f(64 * w as u64 + u64::from(rest.trailing_zeros()))?;
            rest &= rest - 1;
        }
    }
    Ok(())
}

/// Whether any of the `len` bits of `bits` from bit `first` is set.
fn any_bit(bits: &[u64], first: u64, len: u64) -> bool {
    let end = first + len;
    (first..end)
        .step_by(64)
        .any(|bit| read_bits(bits, bit, (end - bit).min(64) as u32) != 0)
}

/// The wire form of a run of bit words: the words as they are (a `0`
/// byte, then each little-endian) or, when fewer bytes, only the words
/// that are not zero (a `1` byte, then each one's place as a little-endian
/// `u32` and the word): pushes early in a search reach few positions.
pub(super) fn pack_words(words: &[u64]) -> Vec<u8> {
    if words.is_empty() {
        return Vec::new();
    }
    let nonzero = words.iter().filter(|&&w| w != 0).count();
    if nonzero * 12 < words.len() * 8 && u32::try_from(words.len()).is_ok() {
        let mut stream = Vec::with_capacity(1 + nonzero * 12);
        stream.push(1);
        for (k, &w) in words.iter().enumerate() {
            if w != 0 {
                stream.extend_from_slice(&(k as u32).to_le_bytes());
                stream.extend_from_slice(&w.to_le_bytes());
            }
        }
        stream
    } else {
        let mut stream = Vec::with_capacity(1 + words.len() * 8);
        stream.push(0);
        for &w in words {
            stream.extend_from_slice(&w.to_le_bytes());
        }
        stream
    }
}

/// Reads the words of a [`pack_words`] stream into `words`, whose length
/// the receiver knows; else what is wrong with the stream.
fn unpack_words(stream: &[u8], words: &mut [u64]) -> std::result::Result<(), Garbled> {
    let word = |bytes: &[u8]| u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
    match stream.split_first() {
        None if words.is_empty() => Ok(()),
        Some((0, rest)) if rest.len() == words.len() * 8 => {
            for (w, bytes) in words.iter_mut().zip(rest.chunks_exact(8)) {
                *w = word(bytes);
            }
            Ok(())
        }
        Some((1, rest)) if rest.len().is_multiple_of(12) => {
            words.fill(0);
            let mut next = 0usize;
            for pair in rest.chunks_exact(12) {
                let k = u32::from_le_bytes(pair[..4].try_into().expect("4 bytes")) as usize;
                if k < next || k >= words.len() {
                    return Err(Garbled::Order {
                        word: k,
                        of: words.len(),
                    });
                }
                words[k] = word(&pair[4..]);
                next = k + 1;
            }
            Ok(())
        }
        _ => Err(Garbled::Length {
            bytes: stream.len(),
            words: words.len(),
        }),
    }
}

/// Why a stream of words from another worker does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Garbled {
    /// Its length, `bytes`, fits neither form of a stream of `words` words.
    Length { bytes: usize, words: usize },
    /// Its sparse form names `word` out of order or past the `of` words.
    Order { word: usize, of: usize },
    /// It sets a bit past the bits it carries, this many.
    PastEnd(u64),
}

impl std::fmt::Display for Garbled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Garbled::Length { bytes, words } => write!(f, "is {bytes} bytes, not {words} words"),
            Garbled::Order { word, of } => write!(f, "names word {word} out of order or past its {of}"),
            Garbled::PastEnd(len) => write!(f, "names a bit past its {len}"),
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::search::board;

    /// Bit words go whole or as their nonzero words, whichever is
    /// shorter, and come back as they were; a stream cut short, whole words
    /// of the wrong count, an unknown form, or words out of order or past
    /// the end are refused.
    #[test]
    fn bit_words_round_trip_in_the_shorter_form() {
        let sparse = [0, 0, 5, 0, 0, 0, 0, u64::MAX, 0, 0];
        let dense = [1, 2, 3, 0, 4];
        for (words, form) in [(&sparse[..], 1u8), (&dense[..], 0u8)] {
            let stream = pack_words(words);
            assert_eq!(stream[0], form);
            assert!(stream.len() <= 1 + words.len() * 8);
            let mut back = vec![9; words.len()];
            unpack_words(&stream, &mut back).unwrap();
            assert_eq!(back, words);
            if form == 0 {
                assert!(unpack_words(&stream, &mut vec![0; words.len() + 1]).is_err());
            }
            assert!(unpack_words(&stream[..stream.len() - 1], &mut back).is_err());
        }
        assert!(pack_words(&[]).is_empty());
        unpack_words(&[], &mut []).unwrap();
        assert!(unpack_words(&[], &mut [0]).is_err());
        assert!(unpack_words(&[2, 0, 0, 0, 0, 0, 0, 0, 0], &mut [0]).is_err());
        let pair = |k: u32, w: u64| [k.to_le_bytes().to_vec(), w.to_le_bytes().to_vec()].concat();
        let past = [vec![1u8], pair(3, 1)].concat();
        assert!(unpack_words(&past, &mut [0; 3]).is_err());
        let backwards = [vec![1u8], pair(2, 1), pair(1, 1)].concat();
        assert!(unpack_words(&backwards, &mut [0; 3]).is_err());
    }

    /// The positions another worker reached come back as the tight
    /// indices of this worker's blocks it asked for, in order; a bit past
    /// those blocks is refused.
    #[test]
    fn reached_bits_name_the_blocks_asked_for() {
        let (_, index, ..) = board("5x4");
        let asked: Vec<u64> = (0..index.white_sets())
            .filter(|&r| !index.block(r).is_empty())
            .take(2)
            .collect();
        let halo = Halo {
            segments: vec![0; 3],
            requests: vec![Vec::new(), asked.clone()],
            ..Halo::alone()
        };
        let (a, b) = (asked[0], asked[1]);
        let len = |r: u64| index.block(r).end - index.block(r).start;
        let (first, second) = (len(a), len(b));
        let bits = first + second;
        let mut words = vec![0u64; bits.div_ceil(64) as usize];
        for bit in [0, first - 1, first, bits - 1] {
            words[(bit / 64) as usize] |= 1 << (bit % 64);
        }
        let mut got = Vec::new();
        let taken = halo
            .reached(&index, 1, &pack_words(&words), |run| {
                got.extend_from_slice(run);
                Ok(run.len() as u64)
            })
            .unwrap();
        assert_eq!(taken, 4);
        let at = |(r, k): (u64, u64)| Reached {
            index: index.block(r).start + k,
            block: r,
        };
        let want = [(a, 0), (a, first - 1), (b, 0), (b, second - 1)];
        assert_eq!(got, want.map(at));
        assert_ne!(bits % 64, 0, "the blocks fill their last word");
        words[(bits / 64) as usize] |= 1 << (bits % 64);
        let e = halo.reached(&index, 1, &pack_words(&words), |_| Ok(0)).unwrap_err();
        assert!(matches!(e, Error::Exchange(_)), "{e}");
    }

    /// Counts kept through moves of the range equal counts made afresh,
    /// and the blocks outside are those some move out of the range
    /// reaches, as a plain search over the moves finds them.
    #[test]
    fn reach_moved_equals_reach_counted_afresh() {
        let (variant, index, ..) = board("7x6");
        let kernel = Kernel::new(&variant.classes()[0].geometry, &index);
        let n = index.white_sets();
        let mut reach = Reach::new(&kernel, &index, 0..n / 3);
        for blocks in [n / 4..n / 2, n / 2..n, 0..n, 5..5, n / 3..2 * n / 3] {
            reach.move_to(&kernel, blocks.clone());
            let fresh = Reach::new(&kernel, &index, blocks.clone());
            assert_eq!(reach.counts, fresh.counts, "{blocks:?}");
            let mut outside = std::collections::BTreeSet::new();
            for r in blocks.clone() {
                kernel.white_targets(r, |t| {
                    if !blocks.contains(&t) {
                        outside.insert(t);
                    }
                });
            }
            assert_eq!(reach.outside(), outside.into_iter().collect::<Vec<_>>(), "{blocks:?}");
        }
    }

    #[test]
    fn any_bit_looks_at_its_bits_only() {
        let bits = [1u64 << 63, 1];
        assert!(any_bit(&bits, 63, 1));
        assert!(any_bit(&bits, 60, 5));
        assert!(!any_bit(&bits, 0, 63));
        assert!(any_bit(&bits, 64, 1));
        assert!(!any_bit(&bits, 65, 63));
        assert!(!any_bit(&bits, 10, 0));
    }
}
