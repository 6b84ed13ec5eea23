//! A variant searched by the workers of a [`Transport`] (the ranks of an
//! MPI job), each keeping only its share of every searched class: the
//! positions of its range of blocks ([`Partition::by_work`], moved as the
//! search goes). Every worker knows every class's statistics and the
//! start's remoteness when each search ends ([`Shares::summary`]); each
//! searched class's table then comes to worker 0 ([`Shares::send`]), which
//! writes it a block at a time as it comes. One process's solve is the
//! same with one worker ([`Plan::solve`]).
//!
//! Every step is collective: every worker calls the same functions in the
//! same order, and a worker that fails leaves the others waiting, so the
//! caller ends the job (an MPI abort).

use std::ops::Range;
use std::time::Duration;

use rayon::prelude::*;

use super::layer::Event;
use super::search::{Asked, ClassSearch, Partition, Share, Transport, search_on};
use super::table::Table;
use super::table::bytes::ByteTable;
use super::table::codes::CodeTable;
use super::{ClassSolution, ClassStats, ClassTable, Plan, ShareCheckpoints, Solution};
use crate::bitboard::Word;
use crate::error::{Error, Result};
use crate::mod3::Mod3Table;
use crate::remoteness::Remoteness;
use crate::symmetry::Mirror;
use crate::tight::TightIndex;
use crate::variant::{Variant, Width};

/// The most bytes of its share a worker sends worker 0 in one exchange:
/// well under MPI's 2^31 elements a message.
pub const PIECE: u64 = 1 << 26;

/// Where worker 0 puts the cells [`Shares::send`] brings it, a piece at a time.
pub type Sink<'a> = &'a mut dyn FnMut(&[u8]) -> Result<()>;

/// One worker's share of every class of a variant after the search, of a
/// table whose shares are `D`: [`ByteShares`] or [`TwoBitShares`].
pub struct Shares<D, W: Word = u64> {
    /// Each class's tight index, which cuts a share into blocks.
    indices: Vec<TightIndex<W>>,
    mirrors: Vec<Option<(usize, Mirror)>>,
    /// For each searched class, this worker's share, of the partition its
    /// search ended with.
    shares: Vec<Option<Share<D>>>,
    summary: Summary,
    elapsed: Duration,
}

/// A variant searched by bytes a position, split between workers.
pub type ByteShares<W = u64> = Shares<Vec<u8>, W>;

/// A variant searched by two bits a position, split between workers.
pub type TwoBitShares<W = u64> = Shares<Mod3Table, W>;

impl<'a, W: Width> Plan<'a, W> {
    /// Searches every class not the mirror image of another with the byte
    /// search split between the workers `transport` reaches, every one of
    /// which runs this with the same plan, saving and resuming its share
    /// through `checkpoints` when every worker can: worker 0 tells
    /// `observe` of the search (a resumed search's saved layers first).
    /// Each worker keeps its share.
    ///
    /// # Errors
    ///
    /// As `search::search_on`.
    pub fn search_shares<X: Transport + ?Sized>(
        self,
        transport: &mut X,
        checkpoints: &mut dyn ShareCheckpoints,
        observe: &mut dyn FnMut(Event),
    ) -> Result<ByteShares<W>> {
        self.shares::<ByteTable, X>(transport, checkpoints, true, observe)
    }

    /// As [`search_shares`](Self::search_shares) (errors included), by two
    /// bits a position.
    pub fn search_two_bit_shares<X: Transport + ?Sized>(
        self,
        transport: &mut X,
        checkpoints: &mut dyn ShareCheckpoints,
        observe: &mut dyn FnMut(Event),
    ) -> Result<TwoBitShares<W>> {
        self.shares::<CodeTable, X>(transport, checkpoints, true, observe)
    }

    /// The positions the search of class `k` watches, by tight index: the
    /// start's place in the class, and when a later class mirrors it, the
    /// image there of that class's start (`u64::MAX` for an illegal one).
    /// What a checkpoint of the class holds the remoteness of.
    pub fn watched(&self, k: usize) -> Vec<u64> {
        let (specs, index) = (self.variant.specs::<W>(), &self.indices[k]);
        let starts = self.variant.class_hashes(self.variant.start());
        let mut watch = vec![index.rank(specs[k].index.unrank(starts[k])).unwrap_or(u64::MAX)];
        let partner = self.mirrors.iter().position(|m| matches!(m, Some((j, _)) if *j == k));
        if let Some((m, (_, onto))) = partner.and_then(|m| Some((m, self.mirrors[m].as_ref()?))) {
            let image = onto.part(specs[m].index.unrank(starts[m]));
            watch.push(index.rank(image).unwrap_or(u64::MAX));
        }
        watch
    }

    /// The class loop of every tight search: searches each class not the
    /// mirror image of another into a table of kind `T`, asking the search
    /// for what the class that mirrors it needs (its hardest positions and
    /// the start's remoteness there), and telling `observe` of the bytes
    /// each layer exchanged when `exchanges` (a job of ranks, not a whole
    /// variant in one process).
    pub(super) fn shares<T: Table, X: Transport + ?Sized>(
        self,
        transport: &mut X,
        checkpoints: &mut dyn ShareCheckpoints,
        exchanges: bool,
        observe: &mut dyn FnMut(Event),
    ) -> Result<Shares<T::Done, W>> {
        let lead = transport.worker() == 0;
        let mut quiet = |_| {};
        let observe: &mut dyn FnMut(Event) = if lead { observe } else { &mut quiet };
        let specs = self.variant.specs::<W>();
        let mut shares = Vec::with_capacity(specs.len());
        let mut stats = vec![ClassStats::default(); specs.len()];
        let mut starts = vec![None; specs.len()];
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
            let watch = self.watched(k);
            let asked = Asked {
                mirrored: back.as_ref().zip(partner.map(|m| &specs[m].index)),
                watch: &watch,
            };
            let partition = Partition::by_work(spec, index, transport.workers())?;
            let class = ClassSearch::new(self.variant.name(), spec, index, &partition);
            let disk = self.disk.as_ref();
            let share = search_on::<T, X, W>(&class, transport, asked, checkpoints, exchanges, disk, observe)?;
            let remoteness = |w: Option<u64>| w.map(|d| Remoteness(u16::try_from(d).unwrap_or(u16::MAX)));
            let reachable = share.layers.iter().sum();
            let of = |hardest: Vec<u64>, legal: u64| ClassStats {
                legal,
                reachable,
                histogram: share.layers.clone(),
                hardest,
            };
            stats[k] = of(share.hardest.iter().map(|&i| index.to_hash(i)).collect(), index.len());
            starts[k] = remoteness(share.watched[0]);
            if let Some(m) = partner {
                let hardest = share.mirrored_hardest.clone().unwrap_or_default();
                stats[m] = of(hardest, self.indices[m].len());
                starts[m] = remoteness(share.watched[1]);
            }
            shares.push(Some(share));
        }
        Ok(Shares {
            indices: self.indices,
            mirrors: self.mirrors,
            shares,
            summary: Summary { stats, starts },
            elapsed: self.started.elapsed(),
        })
    }
}

impl<D, W: Word> Shares<D, W> {
    /// The statistics of every class and the start's remoteness in each,
    /// at worker 0 (the others get `None`): known to every worker already.
    pub fn summary<X: Transport + ?Sized>(&self, transport: &X) -> Option<Summary> {
        (transport.worker() == 0).then(|| self.summary.clone())
    }

    /// The classes searched here, in order: those whose cells
    /// [`send`](Shares::send) sends.
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

    /// This worker's share of searched class `k`.
    fn share(&self, k: usize) -> Result<&Share<D>> {
        self.shares[k]
            .as_ref()
            .ok_or_else(|| Error::Exchange(format!("class {k} is not searched here")))
    }

    /// The solution of `variant`, whose every class this worker searched
    /// alone: the share of each searched class is its whole table.
    pub(super) fn into_solution(self, variant: &Variant) -> Solution<D, W>
    where
        W: Width,
    {
        let classes = variant
            .specs::<W>()
            .iter()
            .zip(self.indices)
            .zip(self.mirrors)
            .zip(self.summary.stats)
            .zip(self.shares)
            .map(|((((spec, index), mirror), stats), share)| {
                let table = match (mirror, share) {
                    (Some((from, mirror)), _) => ClassTable::Mirrored { from, mirror },
                    (None, Some(share)) => {
                        assert_eq!(share.range, 0..index.len(), "a share of the whole class");
                        ClassTable::Own(share.table)
                    }
                    (None, None) => unreachable!("every class searched or mirrored"),
                };
                ClassSolution {
                    class: spec.class,
                    dense: spec.index,
                    index,
                    table,
                    stats,
                }
            })
            .collect();
        Solution {
            classes,
            elapsed: self.elapsed,
        }
    }
}

/// A worker's share of a class's table, as it goes to worker 0.
pub trait Cells: Sized {
    /// As [`Streamed::residues`](super::Streamed::residues).
    const RESIDUES: bool;

    /// [`Shares::send`] for shares of this kind, errors included.
    fn send<X: Transport + ?Sized, W: Word>(
        shares: &Shares<Self, W>,
        transport: &mut X,
        k: usize,
        sink: Option<Sink<'_>>,
    ) -> Result<()>;
}

impl<D: Cells, W: Word> Shares<D, W> {
    /// Sends the cells of searched class `k` to worker 0, one worker's
    /// share after another in pieces of at most [`PIECE`] bytes; worker 0
    /// hands them, in tight-index order, to `sink` (which the others pass
    /// as `None`). Worker 0's own share goes straight to `sink`.
    ///
    /// # Errors
    ///
    /// What `sink` returns; [`Error::Exchange`] when the transport fails
    /// or a piece is not the length every worker expects.
    pub fn send<X: Transport + ?Sized>(&self, transport: &mut X, k: usize, sink: Option<Sink<'_>>) -> Result<()> {
        D::send(self, transport, k, sink)
    }
}

/// Bytes of remoteness, a piece at a time.
impl Cells for Vec<u8> {
    const RESIDUES: bool = false;

    fn send<X: Transport + ?Sized, W: Word>(
        shares: &ByteShares<W>,
        transport: &mut X,
        k: usize,
        sink: Option<Sink<'_>>,
    ) -> Result<()> {
        let share = shares.share(k)?;
        send_pieces(
            transport,
            k,
            |w| byte_pieces(share.partition.cells(w)),
            sink,
            |piece| share.table[piece.start as usize..piece.end as usize].to_vec(),
        )
    }
}

/// Each block's codes packed four a byte as the residues layout stores them
/// ([`Mod3Table::pack_range`]), whole blocks a piece: each worker packs its
/// own blocks, so worker 0 only checks and writes them.
impl Cells for Mod3Table {
    const RESIDUES: bool = true;

    fn send<X: Transport + ?Sized, W: Word>(
        shares: &TwoBitShares<W>,
        transport: &mut X,
        k: usize,
        sink: Option<Sink<'_>>,
    ) -> Result<()> {
        let share = shares.share(k)?;
        let (index, partition) = (&shares.indices[k], &share.partition);
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
}

/// What worker 0 learns of every class before any cell is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The statistics of each class, as a single process computes them.
    pub stats: Vec<ClassStats>,
    /// The start's remoteness in each class.
    pub starts: Vec<Option<Remoteness>>,
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
fn packed_pieces<W: Word>(index: &TightIndex<W>, blocks: Range<u64>, most: u64) -> Vec<(Range<u64>, u64)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::search::ChannelTransport;
    use crate::solver::{Method, NoCheckpoints, Solution};

    /// Packed pieces follow one another over the blocks asked, each at
    /// most the bytes allowed unless it is one block, with the bytes its
    /// blocks take.
    #[test]
    fn packed_pieces_cover_the_blocks() {
        let index = Variant::named("7x6").unwrap().classes()[0].tight_index();
        let blocks = 3..index.white_sets() - 2;
        let bytes = |r: Range<u64>| r.map(|r| packed_len(index.block(r))).sum::<u64>();
        for most in [1, 10, 100, 1 << 40] {
            let pieces = packed_pieces(&index, blocks.clone(), most);
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
                                let summary = shares.summary(&transport);
                                let mut tables = Vec::new();
                                for k in shares.searched() {
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
                let own: Vec<&[u8]> = whole
                    .classes
                    .iter()
                    .filter_map(|c| c.own().map(Vec::as_slice))
                    .collect();
                assert_eq!(tables.len(), own.len());
                for (sent, cells) in tables.iter().zip(own) {
                    assert!(sent == cells, "{name} on {workers}: the cells sent");
                }
            }
        }
    }
}
