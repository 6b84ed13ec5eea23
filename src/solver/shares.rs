//! A variant searched by the workers of a [`Transport`] (the ranks of an
//! MPI job), each keeping only its share of every searched class: the
//! cells of its range of blocks ([`Partition::by_work`]). What a writer
//! needs is then brought to worker 0 without any worker ever holding more:
//! first the statistics of every class ([`Shares::summary`], a few
//! hundred words from each worker), then each searched class's cells as a
//! stream in tight-index order, one worker's share after another in pieces
//! of [`PIECE`] bytes ([`Shares::send`]), which worker 0 writes a block at
//! a time as they come.
//!
//! Every step is collective: every worker calls the same functions in the
//! same order, and a worker that fails leaves the others waiting, so the
//! caller ends the job (an MPI abort).

use std::ops::Range;
use std::time::Duration;

use rayon::prelude::*;

use super::layer::Event;
use super::partition::worker::{self, Asked, TwoBitShare};
use super::partition::{self, ClassSearch, Partition, Transport};
use super::table::codes::CodeTable;
use super::twobit::{Residues, TwoBitClass, TwoBitSolution};
use super::{ClassStats, HARDEST, Plan, ShareCheckpoints};
use crate::error::{Error, Result};
use crate::remoteness::{Cell, Remoteness};
use crate::rules::Part;
use crate::symmetry::{Mirror, Symmetries};
use crate::tight::TightIndex;
use crate::variant::Variant;

/// The most bytes of its share a worker sends worker 0 in one exchange:
/// well under MPI's 2^31 elements a message.
pub const PIECE: u64 = 1 << 26;

/// Where worker 0 puts the cells [`Shares::send`] brings it, a piece at a time.
pub type Sink<'a> = &'a mut dyn FnMut(&[u8]) -> Result<()>;

/// One worker's share of every class of a variant, after the search.
pub struct Shares<'a> {
    variant: &'a Variant,
    indices: Vec<TightIndex>,
    mirrors: Vec<Option<(usize, Mirror)>>,
    /// For each searched class, how it was cut and this worker's cells.
    shares: Vec<Option<(Partition, Vec<u8>)>>,
    elapsed: Duration,
}

impl<'a> Plan<'a> {
    /// Searches every class not the mirror image of another with the byte
    /// search split between the workers `transport` reaches, every one of
    /// which runs this with the same plan ([`partition::search_on`]),
    /// saving and resuming its share through `checkpoints`: worker 0 tells
    /// `observe` of the search. Each worker keeps its share.
    ///
    /// # Errors
    ///
    /// As [`partition::search_on`].
    pub fn search_shares<T: Transport + ?Sized>(
        self,
        transport: &mut T,
        checkpoints: &mut dyn ShareCheckpoints,
        observe: &mut dyn FnMut(Event),
    ) -> Result<Shares<'a>> {
        let lead = transport.worker() == 0;
        let mut quiet = |_| {};
        let observe: &mut dyn FnMut(Event) = if lead { observe } else { &mut quiet };
        let specs = self.variant.classes();
        let mut shares = Vec::with_capacity(specs.len());
        for (k, spec) in specs.iter().enumerate() {
            let index = &self.indices[k];
            observe(Event::Counted {
                class: spec.class,
                legal: index.len(),
            });
            shares.push(match &self.mirrors[k] {
                Some((j, _)) => {
                    observe(Event::Mirrored {
                        class: spec.class,
                        from: specs[*j].class,
                    });
                    None
                }
                None => Some(partition::search_on(
                    self.variant.name(),
                    spec,
                    index,
                    transport,
                    checkpoints,
                    observe,
                )?),
            });
        }
        Ok(Shares {
            variant: self.variant,
            indices: self.indices,
            mirrors: self.mirrors,
            shares,
            elapsed: self.started.elapsed(),
        })
    }
}

/// Cells of one value, per class, that a worker reports: the lowest
/// [`HARDEST`] tight indices (and, for a class mirroring this one, the
/// lowest public hashes of their images there).
fn lowest(cells: &[u8], first: u64, value: u8, mut key: impl FnMut(u64) -> u64) -> Vec<u64> {
    let mut found: Vec<u64> = cells
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c == value)
        .map(|(j, _)| key(first + j as u64))
        .collect();
    found.sort_unstable();
    found.truncate(HARDEST);
    found
}

impl Shares<'_> {
    /// The statistics of every class and the start's remoteness in each, at
    /// worker 0 (the others get `None`), gathered in two exchanges: every
    /// worker's histograms, then, once the largest remoteness of each class
    /// is known to all, the lowest positions each has at it and the start's
    /// value where it holds the start.
    ///
    /// # Errors
    ///
    /// [`Error::Exchange`] when a worker's report does not decode.
    pub fn summary<T: Transport + ?Sized>(&self, transport: &mut T) -> Result<Option<Summary>> {
        let classes = self.indices.len();
        // 1. Histograms, by cell value, to worker 0; the largest remoteness
        //    of each class back to everyone.
        let mut mine = Vec::new();
        for share in &self.shares {
            let mut histogram = [0u64; 256];
            if let Some((_, cells)) = share {
                cells.iter().for_each(|&c| histogram[usize::from(c)] += 1);
            }
            mine.extend(histogram);
        }
        let histograms = to_lead(transport, &mine)?;
        let mut totals = vec![[0u64; 256]; classes];
        if let Some(all) = &histograms {
            for words in all {
                for (k, total) in totals.iter_mut().enumerate() {
                    for (t, w) in total.iter_mut().zip(&words[256 * k..256 * (k + 1)]) {
                        *t += w;
                    }
                }
            }
        }
        let reach = usize::from(Cell::MAX_REMOTENESS);
        let tops: Vec<u64> = totals
            .iter()
            .map(|h| h[..=reach].iter().rposition(|&n| n > 0).map_or(u64::MAX, |t| t as u64))
            .collect();
        let tops = from_lead(transport, &tops)?;
        let top_of = |k: usize| {
            let source = self.mirrors[k].as_ref().map_or(k, |(j, _)| *j);
            u8::try_from(tops[source]).ok()
        };
        // 2. The lowest positions at the top of each class, and the start.
        let starts = self.variant.class_hashes(self.variant.start());
        let mut mine = Vec::new();
        for (k, &start_hash) in starts.iter().enumerate().take(classes) {
            let (source, image) = self.source_of(k);
            let spec = &self.variant.classes()[k];
            let index = &self.indices[source];
            let (list, start) = match &self.shares[source] {
                Some((partition, cells)) => {
                    let first = partition.cells(transport.worker()).start;
                    let list = match (top_of(k), &image) {
                        (None, _) => Vec::new(),
                        (Some(top), None) => lowest(cells, first, top, |i| i),
                        (Some(top), Some(back)) => {
                            lowest(cells, first, top, |i| spec.index.rank(back.part(index.unrank(i))))
                        }
                    };
                    let start_part = spec.index.unrank(start_hash);
                    let at = index.rank(image.map_or(start_part, |_| self.mirror(k, start_part)));
                    let start = at
                        .filter(|i| partition.cells(transport.worker()).contains(i))
                        .map(|i| u64::from(cells[(i - first) as usize]));
                    (list, start)
                }
                None => (Vec::new(), None),
            };
            mine.push(list.len() as u64);
            mine.extend(&list);
            mine.push(start.map_or(u64::MAX, |s| s));
        }
        let Some(reports) = to_lead(transport, &mine)? else {
            return Ok(None);
        };
        Ok(Some(self.merge(&totals, &reports)?))
    }

    /// The class whose table answers for class `k` (itself, or the one it
    /// mirrors) and, when it mirrors one, the map back from that class's
    /// cells to `k`'s.
    fn source_of(&self, k: usize) -> (usize, Option<Mirror>) {
        match &self.mirrors[k] {
            Some((j, mirror)) => (*j, Some(mirror.inverse())),
            None => (k, None),
        }
    }

    /// The image in its source class of `part` of class `k`, which mirrors it.
    fn mirror(&self, k: usize, part: Part) -> Part {
        self.mirrors[k].as_ref().map_or(part, |(_, mirror)| mirror.part(part))
    }

    /// Worker 0's statistics from every worker's reports of step 2.
    fn merge(&self, totals: &[[u64; 256]], reports: &[Vec<u64>]) -> Result<Summary> {
        let classes = self.indices.len();
        let mut hardest = vec![Vec::new(); classes];
        let mut starts = vec![None; classes];
        let bad = || Error::Exchange("a worker's statistics did not decode".into());
        for words in reports {
            let mut at = 0;
            for k in 0..classes {
                let n = *words.get(at).ok_or_else(bad)? as usize;
                let list = words.get(at + 1..at + 1 + n).ok_or_else(bad)?;
                hardest[k].extend_from_slice(list);
                let start = *words.get(at + 1 + n).ok_or_else(bad)?;
                if start != u64::MAX {
                    starts[k] = Some(Cell(u8::try_from(start).map_err(|_| bad())?).remoteness());
                }
                at += n + 2;
            }
        }
        let mut stats = Vec::with_capacity(classes);
        for (k, hardest) in hardest.iter_mut().enumerate() {
            let (source, image) = self.source_of(k);
            hardest.sort_unstable();
            hardest.truncate(HARDEST);
            if image.is_none() {
                // Tight indices, in hash order: their public hashes.
                for i in hardest.iter_mut() {
                    *i = self.indices[k].to_hash(*i);
                }
            }
            let reach = usize::from(Cell::MAX_REMOTENESS);
            let h = &totals[source];
            let top = h[..=reach].iter().rposition(|&n| n > 0);
            let histogram: Vec<u64> = top.map_or_else(Vec::new, |t| h[..=t].to_vec());
            stats.push(ClassStats {
                legal: self.indices[k].len(),
                reachable: histogram.iter().sum(),
                histogram,
                hardest: std::mem::take(hardest),
            });
        }
        let starts = starts
            .into_iter()
            .enumerate()
            .map(|(k, s)| s.ok_or_else(|| Error::Exchange(format!("no worker held the start of class {k}"))))
            .collect::<Result<_>>()?;
        Ok(Summary { stats, starts })
    }

    /// Sends the cells of searched class `k` to worker 0, one worker's
    /// share after another in pieces of [`PIECE`] bytes; worker 0 hands
    /// them, in tight-index order, to `sink` (which the others pass as
    /// `None`). Worker 0's own share goes straight to `sink`.
    ///
    /// # Errors
    ///
    /// What `sink` returns; [`Error::Exchange`] when the transport fails
    /// or a piece is not the length every worker expects.
    pub fn send<T: Transport + ?Sized>(&self, transport: &mut T, k: usize, sink: Option<Sink<'_>>) -> Result<()> {
        let (partition, cells) = self.shares[k]
            .as_ref()
            .ok_or_else(|| Error::Exchange(format!("class {k} is not searched here")))?;
        send_pieces(
            transport,
            k,
            |w| byte_pieces(partition.cells(w)),
            sink,
            |piece| cells[piece.start as usize..piece.end as usize].to_vec(),
        )
    }

    /// The classes searched here, in order: those whose cells [`send`](Self::send) sends.
    pub fn searched(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.shares.len()).filter(|&k| self.shares[k].is_some())
    }

    /// For each class that mirrors another: that class.
    pub fn mirrored(&self) -> Vec<Option<usize>> {
        self.mirrors.iter().map(|m| m.as_ref().map(|(j, _)| *j)).collect()
    }

    /// The time the search took, building the indices included.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }
}

/// Sends a searched class `k` to worker 0, one worker's share after
/// another in the pieces `pieces(w)` gives worker `w`'s share, each with
/// the bytes it takes; `piece(p)` gives this worker's bytes of its piece
/// `p`. Worker 0 checks each piece's length and hands the bytes, in
/// order, to `sink`.
fn send_pieces<T: Transport + ?Sized, P>(
    transport: &mut T,
    k: usize,
    pieces: impl Fn(usize) -> Vec<(P, u64)>,
    mut sink: Option<Sink<'_>>,
    piece: impl Fn(&P) -> Vec<u8>,
) -> Result<()> {
    let (me, workers) = (transport.worker(), transport.workers());
    if let (0, Some(sink)) = (me, sink.as_mut()) {
        for (p, _) in pieces(0) {
            sink(&piece(&p))?;
        }
    }
    for w in 1..workers {
        for (p, len) in pieces(w) {
            let mut outgoing = vec![Vec::new(); workers];
            if me == w {
                outgoing[0] = piece(&p);
            }
            let incoming = transport.all_to_all(outgoing)?;
            if let (0, Some(sink)) = (me, sink.as_mut()) {
                if incoming[w].len() as u64 != len {
                    return Err(Error::Exchange(format!(
                        "worker {w} sent a piece of {} bytes of class {k}, not {len}",
                        incoming[w].len()
                    )));
                }
                sink(&incoming[w])?;
            }
        }
    }
    Ok(())
}

/// The share of `cells` positions cut into pieces of [`PIECE`] positions,
/// a byte each: each piece's positions (counted from the share's first),
/// with its length in bytes.
fn byte_pieces(cells: Range<u64>) -> Vec<(Range<u64>, u64)> {
    let share = cells.end - cells.start;
    (0..share.div_ceil(PIECE))
        .map(|round| {
            let piece = round * PIECE..((round + 1) * PIECE).min(share);
            (piece.clone(), piece.end - piece.start)
        })
        .collect()
}

/// The blocks `blocks` of `index` cut into pieces of at most `most` bytes
/// of packed codes (or one block, should a block take more): each piece's
/// blocks, with the bytes they take. Blocks without positions take none,
/// and pieces of no bytes are left out.
fn packed_pieces(index: &TightIndex, blocks: Range<u64>, most: u64) -> Vec<(Range<u64>, u64)> {
    let mut pieces = Vec::new();
    let (mut from, mut bytes) = (blocks.start, 0);
    for r in blocks.clone() {
        let more = packed_len(index.block(r));
        if bytes > 0 && bytes + more > most {
            pieces.push((from..r, bytes));
            (from, bytes) = (r, 0);
        }
        bytes += more;
    }
    if bytes > 0 {
        pieces.push((from..blocks.end, bytes));
    }
    pieces
}

/// The bytes the codes of the positions `cells` take packed, four a byte.
fn packed_len(cells: Range<u64>) -> u64 {
    (cells.end - cells.start).div_ceil(4)
}

/// A variant searched by the two-bit search split between workers
/// ([`partition::worker`] over two bits): each worker keeps its share of every searched
/// class's codes, and every worker knows every class's statistics and the
/// start's remoteness, agreed at the end of each search.
pub struct TwoBitShares {
    /// Each class's tight index, which cuts a share into blocks.
    indices: Vec<TightIndex>,
    mirrors: Vec<Option<(usize, Mirror)>>,
    /// For each searched class, this worker's share, of the partition its
    /// search ended with.
    shares: Vec<Option<TwoBitShare>>,
    summary: Summary,
    elapsed: Duration,
}

impl<'a> Plan<'a> {
    /// Searches every class not the mirror image of another by two bits a
    /// position, split between the workers `transport` reaches, every one
    /// of which runs this with the same plan
    /// ([`partition::worker`]), saving and resuming its share through
    /// `checkpoints` when every worker can: worker 0 tells
    /// `observe` of the search (a resumed search's saved layers first).
    /// Each worker keeps its share.
    ///
    /// # Errors
    ///
    /// As [`partition::search_on`].
    pub fn search_two_bit_shares<T: Transport + ?Sized>(
        self,
        transport: &mut T,
        checkpoints: &mut dyn ShareCheckpoints,
        observe: &mut dyn FnMut(Event),
    ) -> Result<TwoBitShares> {
        self.two_bit_shares(transport, checkpoints, true, observe)
    }

    /// [`search_two_bit_shares`](Self::search_two_bit_shares), telling
    /// `observe` of the bytes each layer exchanged when `exchanges` (a job
    /// of ranks, not a whole variant in one process).
    pub(super) fn two_bit_shares<T: Transport + ?Sized>(
        self,
        transport: &mut T,
        checkpoints: &mut dyn ShareCheckpoints,
        exchanges: bool,
        observe: &mut dyn FnMut(Event),
    ) -> Result<TwoBitShares> {
        let lead = transport.worker() == 0;
        let mut quiet = |_| {};
        let observe: &mut dyn FnMut(Event) = if lead { observe } else { &mut quiet };
        let specs = self.variant.classes();
        let starts = self.variant.class_hashes(self.variant.start());
        let mut shares = Vec::with_capacity(specs.len());
        let mut stats = vec![ClassStats::default(); specs.len()];
        let mut start_remoteness = vec![None; specs.len()];
        for (k, spec) in specs.iter().enumerate() {
            let index = &self.indices[k];
            observe(Event::Counted {
                class: spec.class,
                legal: index.len(),
            });
            if let Some((j, _)) = &self.mirrors[k] {
                observe(Event::Mirrored {
                    class: spec.class,
                    from: specs[*j].class,
                });
                shares.push(None);
                continue;
            }
            // A class mirroring this one takes its hardest positions and
            // its start's remoteness from this search. A variant has two
            // classes, so there is at most one.
            let partner = self
                .mirrors
                .iter()
                .position(|later| matches!(later, Some((j, _)) if *j == k));
            let back = partner.map(|m| {
                Mirror::left_right(&spec.geometry, &specs[m].geometry).expect("the mirror of a mirror image is one")
            });
            let mut watch = vec![index.rank(spec.index.unrank(starts[k])).unwrap_or(u64::MAX)];
            if let Some(m) = partner {
                let (_, onto) = self.mirrors[m].as_ref().expect("a partner mirrors this class");
                let image = onto.part(specs[m].index.unrank(starts[m]));
                watch.push(index.rank(image).unwrap_or(u64::MAX));
            }
            let asked = Asked {
                mirrored: back.as_ref().zip(partner.map(|m| &specs[m].index)),
                watch: &watch,
            };
            let symmetries = Symmetries::of(&spec.geometry, spec.goal);
            let class = ClassSearch {
                name: self.variant.name(),
                spec,
                index,
                symmetries: &symmetries,
                partition: &Partition::by_work(spec, index, transport.workers())?,
            };
            let share = worker::search_on::<CodeTable, _>(&class, transport, asked, checkpoints, exchanges, observe)?;
            let remoteness = |w: Option<u64>| w.map(|d| Remoteness(u16::try_from(d).unwrap_or(u16::MAX)));
            let reachable = share.layers.iter().sum();
            let of = |hardest: Vec<u64>, legal: u64| ClassStats {
                legal,
                reachable,
                histogram: share.layers.clone(),
                hardest,
            };
            stats[k] = of(share.hardest.iter().map(|&i| index.to_hash(i)).collect(), index.len());
            start_remoteness[k] = remoteness(share.watched[0]);
            if let Some(m) = partner {
                let hardest = share.mirrored_hardest.clone().unwrap_or_default();
                stats[m] = of(hardest, self.indices[m].len());
                start_remoteness[m] = remoteness(share.watched[1]);
            }
            shares.push(Some(share));
        }
        Ok(TwoBitShares {
            indices: self.indices,
            mirrors: self.mirrors,
            shares,
            summary: Summary {
                stats,
                starts: start_remoteness,
            },
            elapsed: self.started.elapsed(),
        })
    }
}

impl TwoBitShares {
    /// The statistics of every class and the start's remoteness in each,
    /// at worker 0 (the others get `None`): known to every worker already.
    pub fn summary<T: Transport + ?Sized>(&self, transport: &T) -> Option<Summary> {
        (transport.worker() == 0).then(|| self.summary.clone())
    }

    /// Sends the codes of searched class `k` to worker 0, each block's
    /// packed four a byte as the residues layout stores them
    /// ([`Mod3Table::pack_range`](super::mod3::Mod3Table::pack_range)),
    /// one worker's blocks after another in pieces of at most [`PIECE`]
    /// bytes; worker 0 hands them, in white-set order, to `sink` (which the
    /// others pass as `None`). Each worker packs its own blocks, so worker
    /// 0 only checks and writes them.
    ///
    /// # Errors
    ///
    /// What `sink` returns; [`Error::Exchange`] when the transport fails
    /// or a piece is not the length every worker expects.
    pub fn send<T: Transport + ?Sized>(&self, transport: &mut T, k: usize, sink: Option<Sink<'_>>) -> Result<()> {
        let share = self.shares[k]
            .as_ref()
            .ok_or_else(|| Error::Exchange(format!("class {k} is not searched here")))?;
        let (index, partition) = (&self.indices[k], &share.partition);
        let first = share.range.start;
        send_pieces(
            transport,
            k,
            |w| packed_pieces(index, partition.blocks(w), PIECE),
            sink,
            |blocks| {
                blocks
                    .clone()
                    .into_par_iter()
                    .flat_map_iter(|r| {
                        let cells = index.block(r);
                        share.table.pack_range(cells.start - first..cells.end - first)
                    })
                    .collect()
            },
        )
    }

    /// The classes searched here, in order: those whose codes [`send`](Self::send) sends.
    pub fn searched(&self) -> Vec<usize> {
        (0..self.shares.len()).filter(|&k| self.shares[k].is_some()).collect()
    }

    /// For each class that mirrors another: that class.
    pub fn mirrored(&self) -> Vec<Option<usize>> {
        self.mirrors.iter().map(|m| m.as_ref().map(|(j, _)| *j)).collect()
    }

    /// The time the search took, building the indices included.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The solution of `variant`, whose every class this worker searched
    /// alone: the share of each searched class is its whole table.
    pub(super) fn into_solution(self, variant: &Variant) -> TwoBitSolution {
        let mut shares = self.shares;
        let classes = variant
            .classes()
            .iter()
            .zip(self.indices)
            .zip(self.mirrors)
            .zip(self.summary.stats)
            .enumerate()
            .map(|(k, (((spec, index), mirror), stats))| {
                let residues = match (mirror, shares[k].take()) {
                    (Some((from, mirror)), _) => Residues::Mirrored { from, mirror },
                    (None, Some(share)) => {
                        assert_eq!(share.range, 0..index.len(), "a share of the whole class");
                        Residues::Searched(share.table)
                    }
                    (None, None) => unreachable!("every class searched or mirrored"),
                };
                TwoBitClass {
                    class: spec.class,
                    dense: spec.index,
                    index,
                    residues,
                    stats,
                }
            })
            .collect();
        TwoBitSolution {
            classes,
            elapsed: self.elapsed,
        }
    }
}

/// What worker 0 learns of every class before any cell is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The statistics of each class, as a single process computes them.
    pub stats: Vec<ClassStats>,
    /// The start's remoteness in each class.
    pub starts: Vec<Option<Remoteness>>,
}

/// Every worker's `words` at worker 0, in worker order; `None` elsewhere.
fn to_lead<T: Transport + ?Sized>(transport: &mut T, words: &[u64]) -> Result<Option<Vec<Vec<u64>>>> {
    let mut outgoing = vec![Vec::new(); transport.workers()];
    outgoing[0] = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let incoming = transport.all_to_all(outgoing)?;
    if transport.worker() != 0 {
        return Ok(None);
    }
    incoming.iter().map(|s| decode(s)).collect::<Result<_>>().map(Some)
}

/// Worker 0's `words` at every worker (the others' are not looked at).
fn from_lead<T: Transport + ?Sized>(transport: &mut T, words: &[u64]) -> Result<Vec<u64>> {
    let outgoing = if transport.worker() == 0 {
        vec![words.iter().flat_map(|w| w.to_le_bytes()).collect(); transport.workers()]
    } else {
        vec![Vec::new(); transport.workers()]
    };
    decode(&transport.all_to_all(outgoing)?[0])
}

/// The little-endian words of `stream`.
fn decode(stream: &[u8]) -> Result<Vec<u64>> {
    if !stream.len().is_multiple_of(8) {
        return Err(Error::Exchange(format!("{} bytes are not whole words", stream.len())));
    }
    Ok(stream
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::partition::ChannelTransport;
    use crate::solver::{Method, NoCheckpoints, Solution};

    /// Packed pieces follow one another over the blocks asked, each at
    /// most the bytes allowed unless it is one block, with the bytes its
    /// blocks take.
    #[test]
    fn packed_pieces_cover_the_blocks() {
        let variant = Variant::named("7x6").unwrap();
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let blocks = 3..index.white_sets() - 2;
        let bytes = |r: Range<u64>| r.map(|r| packed_len(index.block(r))).sum::<u64>();
        for most in [1, 10, 100, 1 << 40] {
            let pieces = packed_pieces(&index, blocks.clone(), most);
            assert_eq!(
                pieces.iter().map(|(_, n)| n).sum::<u64>(),
                bytes(blocks.clone()),
                "{most}"
            );
            for (p, n) in &pieces {
                assert_eq!(bytes(p.clone()), *n);
                let filled = p.clone().filter(|&r| !index.block(r).is_empty()).count();
                assert!(
                    *n > 0 && (*n <= most || filled == 1),
                    "{p:?} of {n} bytes, {most} at most"
                );
            }
            for pair in pieces.windows(2) {
                assert_eq!(pair[0].0.end, pair[1].0.start);
            }
            let (first, last) = (&pieces[0].0, &pieces[pieces.len() - 1].0);
            assert!(
                first.start == blocks.start && last.end == blocks.end,
                "{most}: {first:?} {last:?}"
            );
        }
        assert_eq!(packed_pieces(&index, 5..5, 100), []);
    }

    /// Workers on threads, each with its share: the summary at worker 0 is
    /// the statistics one process computes, and the cells sent are its
    /// table, for any number of workers and classes that mirror others.
    #[test]
    fn shares_add_up_to_the_solution() {
        for name in ["7x6", "5x4-full", "9x6"] {
            let variant = Variant::named(name).unwrap();
            let whole: Solution = Plan::new(&variant, Method::Tight).solve(&mut |_| {}).unwrap();
            for workers in [1, 2, 3] {
                let results: Vec<(Option<Summary>, Vec<Vec<u8>>)> = std::thread::scope(|scope| {
                    let handles: Vec<_> = ChannelTransport::connected(workers)
                        .into_iter()
                        .map(|mut transport| {
                            let variant = &variant;
                            scope.spawn(move || {
                                let plan = Plan::new(variant, Method::Tight);
                                let shares = plan
                                    .search_shares(&mut transport, &mut NoCheckpoints, &mut |_| {})
                                    .unwrap();
                                let summary = shares.summary(&mut transport).unwrap();
                                let mut tables = Vec::new();
                                for k in shares.searched().collect::<Vec<_>>() {
                                    let mut cells = Vec::new();
                                    let mut sink = |piece: &[u8]| {
                                        cells.extend_from_slice(piece);
                                        Ok(())
                                    };
                                    let lead = transport.worker() == 0;
                                    let sink: Option<Sink<'_>> = if lead { Some(&mut sink) } else { None };
                                    shares.send(&mut transport, k, sink).unwrap();
                                    tables.push(cells);
                                }
                                (summary, tables)
                            })
                        })
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap()).collect()
                });
                let (summary, tables) = &results[0];
                let summary = summary.as_ref().expect("worker 0 has the summary");
                assert!(results[1..].iter().all(|(s, _)| s.is_none()));
                let starts = variant.class_hashes(variant.start());
                for (k, class) in whole.classes.iter().enumerate() {
                    assert_eq!(summary.stats[k], class.stats, "{name} on {workers}: class {k}");
                    assert_eq!(summary.starts[k], whole.cell(k, starts[k]).remoteness(), "{name}");
                }
                let own: Vec<&[u8]> = whole.classes.iter().filter_map(|c| c.own_cells()).collect();
                assert_eq!(tables.len(), own.len());
                for (sent, cells) in tables.iter().zip(own) {
                    assert!(sent == cells, "{name} on {workers}: the cells sent");
                }
            }
        }
    }
}
