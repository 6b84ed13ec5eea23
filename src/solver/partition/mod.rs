//! The byte search, split between workers that share nothing but messages:
//! the ranks of an MPI job, threads of one process in tests, or one worker
//! alone, a whole class in one process ([`parallel::search`](super::parallel::search)),
//! whose exchanges are no-ops ([`ChannelTransport::solo`]).
//!
//! The [`TightIndex`] already cuts a class into blocks, one per white set,
//! each a contiguous range of cells. A [`Partition`] gives each worker a
//! contiguous range of white-set ranks, balanced by positions, and the worker
//! keeps the cells of its range only, in a `Vec<u8>` of its own. A layer
//! runs on every worker in one of two directions, push or pull (as
//! [`parallel`](super::parallel) describes them), chosen by the rates
//! measured so far ([`Rates`](crate::solver::Rates)) from counts every worker knows:
//!
//! Both directions go through the worker's *halo*: the blocks in other
//! workers' ranges that one white move leads to from its own (black moves
//! stay in a block), one bit per position. Which blocks those are is
//! settled when the search starts (and again whenever the [`two_bit`]
//! search moves its ranges).
//!
//! - *push*, while the frontier is small: the worker expands each of its
//!   positions at depth `d` (through the shared move generator, `kernel`).
//!   A neighbour in its own range is claimed for `d + 1` at once; one in
//!   another worker's range sets its bit in the halo's *outbox*. At the end
//!   of the layer one all-to-all ([`Transport::all_to_all`]) hands every
//!   worker the bits the others set in its blocks, and it claims the
//!   positions they name that no layer has reached. A bit a position
//!   costs less than a [`Message`] from the first crossing neighbour in
//!   128 positions, needs no sorting to drop repeats, and bounds what a
//!   worker holds; a stream of few bits goes as its nonzero words only.
//! - *pull*, once the frontier is large: each unreached position looks for a
//!   neighbour at `d`. A neighbour may be another worker's, so the layer
//!   starts with a halo exchange the other way: every worker sends each
//!   other worker the frontier bits (is this cell at `d`?) of its blocks
//!   in the other's halo.
//!
//! A position found has its images under the class's symmetries set with
//! it; an image in another worker's range goes there as a [`Message`] (a
//! symmetry may exchange the colours, so an image's block does not follow
//! from the block it came from), in a second round.
//!
//! A second, small all-to-all sums the layer's counts, so every worker knows
//! whether the search goes on and which way the next layer runs; a third,
//! from worker 0, says whether every worker saves its share now
//! ([`ShareCheckpoints`]). A search resumes only when every worker has a
//! share saved at the same layer and the shares' counts add up to the
//! class's; otherwise every worker starts over.
//!
//! A layer reads only cells at `d` and writes only unreached cells, so which
//! worker claims a position first does not matter: the table is the
//! breadth-first distance from the goal, whatever the number of workers.
//!
//! Inside a worker, a layer's blocks are shared by the threads of the rayon
//! pool: a push claims its own positions in a bitmap of those reached, so
//! each is counted once, and writes their cells after the layer; a pull
//! reads the frontier from a bitmap of the positions at `d` and writes
//! only the block it pulls into and the images of what it finds.
//!
//! [`search`] runs the workers as threads of this process with a
//! [`ChannelTransport`]; [`run_worker`] is what one worker (one MPI rank)
//! runs, over any [`Transport`].

mod halo;
mod layers;
mod recut;
pub mod two_bit;

use std::ops::Range;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::board::Class;
use crate::error::{Error, Result};
use crate::index::colex_unrank;
use crate::remoteness::Cell;
use crate::rules::Part;
use crate::symmetry::Symmetries;
use crate::tight::{TightIndex, prefetch};
use crate::variant::ClassSpec;

use super::boundary::{NoCheckpoints, Resume, Save, ShareBoundary, ShareCheckpoints, layer_counts};
use super::bytes::{AT_DEPTH, HAS_UNSEEN, Summary, mark, scan_cells, settle, summarize_blocks};
use super::direction::Direction;
use super::images::{Batch, canonical_blocks_in, set_images};
#[cfg(target_arch = "x86_64")]
use super::isa::Bmi2;
use super::isa::{Best, Isa, Tables};
use super::kernel::{Block, Kernel};
use super::layer::each_block;
use super::layer::{BYTE_DEEPEST, Event, goal_index, report_saved};

use self::halo::{Halo, RUN, Reach, Reached};
use self::layers::{LayerWorker, run_layers};

/// A cell no search layer has reached yet; left so, it is unreachable.
const UNSEEN: u8 = Cell::UNREACHABLE.0;

/// What a position of a block that may hold canonical positions weighs in
/// [`Partition::by_work`], against 1 for one of a block that holds none.
pub const EXPANDED_WEIGHT: u64 = 4;

/// The white-set ranks of a class cut into one contiguous range per worker,
/// balanced by the number of positions ([`balanced`](Self::balanced)) or by
/// the work of a layer ([`by_work`](Self::by_work), which the searches
/// use): the unit of ownership of a partitioned search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// `bounds[w]..bounds[w + 1]`: the white-set ranks worker `w` owns.
    bounds: Vec<u64>,
    /// `starts[w]..starts[w + 1]`: the tight indices of worker `w`'s cells.
    starts: Vec<u64>,
}

impl Partition {
    /// Cuts the blocks of `index` into `workers` contiguous ranges of about
    /// `len / workers` positions each: every cut falls at the start of the
    /// block holding position `len · w / workers`. With more workers than
    /// blocks, some ranges are empty.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] when `workers` is 0.
    pub fn balanced(index: &TightIndex, workers: usize) -> Result<Partition> {
        if workers == 0 {
            return Err(Error::Usage("a partitioned search needs at least one worker".into()));
        }
        let blocks = index.white_sets();
        let len = index.len();
        let mut bounds = Vec::with_capacity(workers + 1);
        bounds.push(0);
        for w in 1..workers {
            let target = (u128::from(len) * w as u128 / workers as u128) as u64;
            let cut = if target >= len { blocks } else { index.block_of(target) };
            // Cuts never go back: targets grow and `block_of` is monotone.
            bounds.push(cut.clamp(*bounds.last().expect("a first bound"), blocks));
        }
        bounds.push(blocks);
        Ok(Partition::of_bounds(index, bounds))
    }

    /// Cuts the blocks of `index` into `workers` contiguous ranges of about
    /// equal work, when a layer of the search of `spec` expands only the
    /// canonical positions of its symmetries: a block that may hold one
    /// weighs its positions [`EXPANDED_WEIGHT`] times, one that holds none
    /// (only images are set there) its positions once. With the reflection
    /// of 9x8 or 11x8, cutting by positions gave the last of 4 workers a
    /// third less to expand than the others.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] when `workers` is 0.
    pub fn by_work(spec: &ClassSpec, index: &TightIndex, workers: usize) -> Result<Partition> {
        if workers == 0 {
            return Err(Error::Usage("a partitioned search needs at least one worker".into()));
        }
        let blocks = index.white_sets();
        if workers == 1 {
            return Ok(Partition::of_bounds(index, vec![0, blocks]));
        }
        let symmetries = Symmetries::of(&spec.geometry, spec.goal);
        let weights: Vec<u64> = canonical_blocks_in(&symmetries, index, 0..blocks)
            .into_iter()
            .enumerate()
            .map(|(r, expanded)| {
                let b = index.block(r as u64);
                (b.end - b.start) * if expanded { EXPANDED_WEIGHT } else { 1 }
            })
            .collect();
        let total: u128 = weights.iter().map(|&w| u128::from(w)).sum();
        let mut bounds = Vec::with_capacity(workers + 1);
        bounds.push(0);
        let (mut r, mut sum) = (0u64, 0u128);
        for w in 1..workers {
            let target = total * w as u128 / workers as u128;
            while r < blocks && sum + u128::from(weights[r as usize]) <= target {
                sum += u128::from(weights[r as usize]);
                r += 1;
            }
            bounds.push(r);
        }
        bounds.push(blocks);
        Ok(Partition::of_bounds(index, bounds))
    }

    /// The partition of `index` whose workers own the white-set ranks
    /// between consecutive `bounds`.
    fn of_bounds(index: &TightIndex, bounds: Vec<u64>) -> Partition {
        let (blocks, len) = (index.white_sets(), index.len());
        let starts = bounds
            .iter()
            .map(|&r| if r < blocks { index.block(r).start } else { len })
            .collect();
        Partition { bounds, starts }
    }

    /// How many workers share the class.
    pub fn workers(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The white-set ranks (blocks) worker `w` owns.
    pub fn blocks(&self, w: usize) -> Range<u64> {
        self.bounds[w]..self.bounds[w + 1]
    }

    /// The tight indices of the cells worker `w` owns.
    pub fn cells(&self, w: usize) -> Range<u64> {
        self.starts[w]..self.starts[w + 1]
    }

    /// The worker that owns block `block` (a white-set rank of the index).
    pub fn owner(&self, block: u64) -> usize {
        (self.bounds.partition_point(|&b| b <= block) - 1).min(self.workers() - 1)
    }

    /// The worker that owns the cell of tight index `i`.
    pub fn owner_of_index(&self, i: u64) -> usize {
        (self.starts.partition_point(|&s| s <= i) - 1).min(self.workers() - 1)
    }
}

/// One position sent from the worker that reached it to the worker that
/// owns it, by its tight index: the position is at remoteness `d + 1` in the
/// layer that sent it, unless it already has a smaller one. Every worker
/// holds the class's whole [`TightIndex`] (its block offsets, not its
/// cells), so a sender can name another worker's position by its index.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Message {
    /// The position's tight index.
    pub index: u64,
}

impl Message {
    /// Bytes per message on the wire: `index`, a little-endian `u64`.
    pub const BYTES: usize = 8;

    /// The message's wire form.
    pub fn encode(self) -> [u8; Self::BYTES] {
        self.index.to_le_bytes()
    }

    /// The message of wire form `bytes`.
    pub fn decode(bytes: [u8; Self::BYTES]) -> Message {
        Message {
            index: u64::from_le_bytes(bytes),
        }
    }

    /// Appends the wire form of every message of `messages` to `out`.
    pub fn encode_all(messages: &[Message], out: &mut Vec<u8>) {
        out.reserve(messages.len() * Self::BYTES);
        for m in messages {
            out.extend_from_slice(&m.encode());
        }
    }

    /// The messages of a stream of wire forms.
    ///
    /// # Errors
    ///
    /// [`Error::Exchange`] when the stream's length is not a whole number
    /// of messages.
    pub fn decode_all(stream: &[u8]) -> Result<Vec<Message>> {
        Ok(Self::decode_each(stream)?.collect())
    }

    /// The messages of a stream of wire forms, one at a time: a layer's
    /// streams are large, and are read once.
    ///
    /// # Errors
    ///
    /// As [`decode_all`](Self::decode_all).
    pub fn decode_each(stream: &[u8]) -> Result<impl Iterator<Item = Message> + '_> {
        if !stream.len().is_multiple_of(Self::BYTES) {
            return Err(Error::Exchange(format!(
                "a message stream of {} bytes is not a whole number of {}-byte messages",
                stream.len(),
                Self::BYTES
            )));
        }
        Ok(stream
            .chunks_exact(Self::BYTES)
            .map(|c| Message::decode(c.try_into().expect("chunks of BYTES"))))
    }
}

/// How the workers of a partitioned search reach each other: the one
/// exchange a layer needs, an all-to-all of byte streams (MPI's
/// `MPI_Alltoallv`), whole or in two steps between which a worker works on
/// ([`post`](Self::post), [`take`](Self::take)). Every worker calls it the
/// same number of times, in the same order.
pub trait Transport {
    /// This worker's number, below [`workers`](Self::workers).
    fn worker(&self) -> usize;

    /// How many workers take part.
    fn workers(&self) -> usize;

    /// Sends `outgoing[w]` to worker `w` and returns what every worker sent
    /// this one, indexed by sender (`outgoing[self]` comes back as is).
    ///
    /// # Errors
    ///
    /// [`Error::Exchange`] when a worker is gone.
    fn all_to_all(&mut self, outgoing: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>>;

    /// [`all_to_all`](Self::all_to_all) in two steps, so that a worker can
    /// work between them: sends `outgoing[w]` to worker `w` and returns at
    /// once, waiting for no worker. [`take`](Self::take) then returns what
    /// every worker posted to this one. Every worker posts and takes the
    /// same exchanges in the same order, and takes each before its next
    /// step of any kind.
    ///
    /// # Errors
    ///
    /// [`Error::Exchange`] when a worker is gone, or this worker posted
    /// twice without a take between.
    fn post(&mut self, outgoing: Vec<Vec<u8>>) -> Result<()>;

    /// What every worker posted to this one in the exchange it posted last
    /// ([`post`](Self::post)), indexed by sender.
    ///
    /// # Errors
    ///
    /// [`Error::Exchange`] when a worker is gone, or nothing was posted.
    fn take(&mut self) -> Result<Vec<Vec<u8>>>;
}

/// A [`Transport`] between threads of one process: one channel for each
/// ordered pair of workers, so streams from one sender arrive in order.
#[derive(Debug)]
pub struct ChannelTransport {
    worker: usize,
    /// `to[w]`: the channel to worker `w` (`None` for this worker).
    to: Vec<Option<Sender<Vec<u8>>>>,
    /// `from[w]`: the channel from worker `w` (`None` for this worker).
    from: Vec<Option<Receiver<Vec<u8>>>>,
    /// What this worker posted to itself, until it takes it.
    posted: Option<Vec<u8>>,
}

impl ChannelTransport {
    /// The transports of `workers` workers, connected to each other; the
    /// `w`-th is worker `w`'s.
    pub fn connected(workers: usize) -> Vec<ChannelTransport> {
        let mut transports: Vec<ChannelTransport> = (0..workers)
            .map(|worker| ChannelTransport {
                worker,
                to: (0..workers).map(|_| None).collect(),
                from: (0..workers).map(|_| None).collect(),
                posted: None,
            })
            .collect();
        for a in 0..workers {
            for b in 0..workers {
                if a != b {
                    let (tx, rx) = mpsc::channel();
                    transports[a].to[b] = Some(tx);
                    transports[b].from[a] = Some(rx);
                }
            }
        }
        transports
    }

    /// The transport of a search by one worker, a whole class in one
    /// process: what it posts comes back to it, and no exchange waits.
    pub fn solo() -> ChannelTransport {
        ChannelTransport::connected(1).pop().expect("one worker")
    }
}

impl Transport for ChannelTransport {
    fn worker(&self) -> usize {
        self.worker
    }

    fn workers(&self) -> usize {
        self.to.len()
    }

    fn all_to_all(&mut self, outgoing: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        self.post(outgoing)?;
        self.take()
    }

    fn post(&mut self, mut outgoing: Vec<Vec<u8>>) -> Result<()> {
        if self.posted.is_some() {
            return Err(Error::Exchange("a worker posted twice without taking".into()));
        }
        outgoing.resize(self.workers(), Vec::new());
        self.posted = Some(std::mem::take(&mut outgoing[self.worker]));
        for (w, (stream, to)) in outgoing.into_iter().zip(&self.to).enumerate() {
            if let Some(to) = to {
                to.send(stream).map_err(|_| gone(w))?;
            }
        }
        Ok(())
    }

    fn take(&mut self) -> Result<Vec<Vec<u8>>> {
        let own = (self.posted.take()).ok_or_else(|| Error::Exchange("a worker took what it never posted".into()))?;
        let mut incoming = Vec::with_capacity(self.workers());
        for (w, from) in self.from.iter().enumerate() {
            match from {
                Some(from) => incoming.push(from.recv().map_err(|_| gone(w))?),
                None => incoming.push(Vec::new()),
            }
        }
        incoming[self.worker] = own;
        Ok(incoming)
    }
}

/// The error of a channel whose other end, worker `w`'s, is gone.
fn gone(w: usize) -> Error {
    Error::Exchange(format!("worker {w} of a partitioned search stopped"))
}

/// What one layer of a partitioned search did, summed over the workers.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LayerStats {
    /// The remoteness of the positions the layer found; it expanded those
    /// at `depth - 1`.
    pub depth: u16,
    /// Whether the layer pulled (through a halo) rather than pushed.
    pub pull: bool,
    /// Positions found (0 for the last layer, which ends the search).
    pub found: u64,
    /// Positions expanded: the previous layer when pushing, the positions
    /// not reached yet when pulling.
    pub expanded: u64,
    /// Neighbours looked at, counted with repeats (a pull stops at the
    /// first neighbour in the frontier).
    pub neighbours: u64,
    /// Of those, the neighbours in another worker's range; and the images
    /// of the positions found that lie in another worker's range.
    pub crossing: u64,
    /// Messages sent between workers: the images in another worker's
    /// range, without the repeats a sender had for one destination.
    pub messages: u64,
    /// Halo bytes sent between workers: one bit per position of every
    /// block a worker's white moves reach in another's range, the frontier
    /// before a pull, the positions reached after a push (only the nonzero
    /// words when fewer bytes).
    pub halo_bytes: u64,
    /// Bytes sent between workers: `messages ·` [`Message::BYTES`] `+
    /// halo_bytes` (the layer counts, `8 · 7` bytes each way, left out).
    pub bytes: u64,
    /// The most bytes one worker sent.
    pub max_worker_bytes: u64,
    /// The longest one worker worked on the layer: expanding, and taking
    /// what the others sent, but not waiting for them. A layer takes at
    /// least this long; the rest is the exchange.
    pub busiest: Duration,
    /// And how long the workers worked, on average: where it falls short
    /// of `busiest`, the workers had unequal shares of the layer.
    pub mean_busy: Duration,
    /// Positions whose codes changed owner before the layer: the
    /// [`two_bit`] search re-cuts its workers' ranges when their shares of
    /// a layer's work would be unequal.
    pub moved: u64,
    /// The positions a push of the [`two_bit`] search scanned: those coded
    /// with the layer's residue in the blocks it visited, the work its
    /// rate is measured in ([`Rates`](crate::solver::Rates)).
    pub scanned: u64,
    /// The layer's wall time, as worker 0 saw it.
    pub elapsed: Duration,
}

/// The cells one worker owns after a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerTable {
    /// The worker.
    pub worker: usize,
    /// The tight indices of its cells.
    pub range: Range<u64>,
    /// Its cells in tight-index order: remoteness, or
    /// [`Cell::UNREACHABLE`].
    pub cells: Vec<u8>,
}

/// A partitioned search's result: every worker's table and every layer's
/// counts.
#[derive(Clone, Debug)]
pub struct Partitioned {
    /// How the class was cut.
    pub partition: Partition,
    /// One per worker, in worker order.
    pub tables: Vec<WorkerTable>,
    /// `found[d]`: positions at remoteness `d` (as in a checkpoint).
    pub found: Vec<u64>,
    /// One per layer, the last one finding nothing.
    pub layers: Vec<LayerStats>,
}

impl Partitioned {
    /// The whole table in tight-index order, the workers' tables end to end:
    /// what [`parallel::search`](super::parallel::search) returns.
    pub fn assemble(&self) -> Vec<u8> {
        let mut cells = Vec::with_capacity(self.tables.iter().map(|t| t.cells.len()).sum());
        for table in &self.tables {
            cells.extend_from_slice(&table.cells);
        }
        cells
    }
}

/// Searches one class of variant `name` by `workers` workers, each a thread
/// of this process with its own cells, exchanging positions only as message
/// streams through a [`ChannelTransport`]. `observe` sees each layer's
/// counts as the layer ends, on the calling thread.
///
/// # Errors
///
/// [`Error::Usage`] when `workers` is 0, [`Error::TooLarge`] when a
/// remoteness would not fit a [`Cell`], [`Error::Exchange`] when a worker
/// fails.
pub fn search(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    workers: usize,
    observe: &mut dyn FnMut(&LayerStats),
) -> Result<Partitioned> {
    let partition = Partition::by_work(spec, index, workers)?;
    let (results, layers) = on_threads(workers, observe, |transport, report| {
        let start = Start::fresh(spec, index, &partition, transport.worker());
        run_worker(
            name,
            spec,
            index,
            &partition,
            transport,
            start,
            &mut NoCheckpoints,
            report,
        )
    })?;
    let mut tables = Vec::with_capacity(workers);
    let mut found = Vec::new();
    for (table, f) in results {
        found = f;
        tables.push(table);
    }
    Ok(Partitioned {
        partition,
        tables,
        found,
        layers,
    })
}

/// Runs `work` on `workers` threads of this process, each with its own
/// end of a [`ChannelTransport`], as the workers of one partitioned
/// search; `observe` sees, on the calling thread, what worker 0 reports of
/// each layer (every worker sees the same sums). Returns each worker's
/// result, in worker order, and the layers reported.
///
/// # Errors
///
/// The first worker's error, preferring one that is not
/// [`Error::Exchange`]: a failing worker makes the others fail to
/// exchange, and its own error says why.
fn on_threads<R: Send>(
    workers: usize,
    observe: &mut dyn FnMut(&LayerStats),
    work: impl Fn(&mut ChannelTransport, &mut dyn FnMut(&LayerStats)) -> Result<R> + Sync,
) -> Result<(Vec<R>, Vec<LayerStats>)> {
    let (report, reports) = mpsc::channel::<LayerStats>();
    let mut layers = Vec::new();
    let work = &work;
    let results: Vec<Result<R>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ChannelTransport::connected(workers)
            .into_iter()
            .map(|mut transport| {
                let report = (transport.worker() == 0).then(|| report.clone());
                scope.spawn(move || {
                    work(&mut transport, &mut |layer| {
                        if let Some(report) = &report {
                            // The receiver outlives the workers.
                            let _ = report.send(*layer);
                        }
                    })
                })
            })
            .collect();
        drop(report);
        for layer in reports {
            observe(&layer);
            layers.push(layer);
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    let mut done = Vec::with_capacity(workers);
    let mut exchange_error = None;
    let mut other_error = None;
    for result in results {
        match result {
            Ok(r) => done.push(r),
            Err(e @ Error::Exchange(_)) => {
                exchange_error.get_or_insert(e);
            }
            Err(e) => {
                other_error.get_or_insert(e);
            }
        }
    }
    match other_error.or(exchange_error) {
        Some(e) => Err(e),
        None => Ok((done, layers)),
    }
}

/// Searches one class of variant `name` as one worker of a partitioned
/// search whose workers are reached through `transport` (the ranks of an
/// MPI job, say): every worker runs this with the same class, each owning
/// its share of [`Partition::by_work`], and resumes from `checkpoints`
/// when every worker can ([`agree_on_resume`]). Worker 0 tells `observe`
/// of each layer (summed over the workers; a resumed search's saved
/// layers first). Returns the partition and this worker's cells, in
/// tight-index order from the first of its range.
///
/// # Errors
///
/// As [`run_worker`].
pub fn search_on<T: Transport + ?Sized>(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    transport: &mut T,
    checkpoints: &mut dyn ShareCheckpoints,
    observe: &mut dyn FnMut(Event),
) -> Result<(Partition, Vec<u8>)> {
    let symmetries = Symmetries::of(&spec.geometry, spec.goal);
    search_on_by(name, spec, index, &symmetries, true, transport, checkpoints, observe)
}

/// As [`search_on`], expanding one position of each orbit of
/// `symmetries`, which must be symmetries of the class, and telling
/// `observe` of the bytes each layer exchanged when `exchanges` (a job of
/// ranks, even of one; not a whole class in one process).
#[allow(clippy::too_many_arguments)]
pub(super) fn search_on_by<T: Transport + ?Sized>(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    symmetries: &Symmetries,
    exchanges: bool,
    transport: &mut T,
    checkpoints: &mut dyn ShareCheckpoints,
    observe: &mut dyn FnMut(Event),
) -> Result<(Partition, Vec<u8>)> {
    let partition = Partition::by_work(spec, index, transport.workers())?;
    let me = transport.worker();
    let legal = index.len();
    let start = agree_on_resume(spec, index, &partition, transport, checkpoints)?;
    let mut total = if me == 0 {
        report_saved(spec.class, &start.found, legal, observe)
    } else {
        1
    };
    let share = ClassSearch {
        name,
        spec,
        index,
        symmetries,
        partition: &partition,
    };
    let (table, _) = run_share(&share, transport, start, checkpoints, &mut |layer| {
        if me == 0 {
            tell(observe, spec.class, legal, &mut total, layer, exchanges);
        }
    })?;
    Ok((partition, table.cells))
}

/// What every worker of a search of one class knows alike: the class, its
/// symmetries, and how it is cut.
#[derive(Clone, Copy)]
pub(in crate::solver) struct ClassSearch<'a> {
    /// The variant's name, for the errors.
    pub name: &'a str,
    /// The class.
    pub spec: &'a ClassSpec,
    /// Its tight index.
    pub index: &'a TightIndex,
    /// The symmetries whose orbits the search expands one position of.
    pub symmetries: &'a Symmetries,
    /// The workers' shares.
    pub partition: &'a Partition,
}

/// Tells `observe` of a layer that found positions, and, when `exchanges`
/// (a job of ranks), of the bytes it exchanged; `total` counts the
/// positions found so far, this layer's added.
pub(super) fn tell(
    observe: &mut dyn FnMut(Event),
    class: Class,
    legal: u64,
    total: &mut u64,
    layer: &LayerStats,
    exchanges: bool,
) {
    if layer.found == 0 {
        return;
    }
    *total += layer.found;
    let depth = layer.depth;
    observe(Event::Layer {
        class,
        depth,
        found: layer.found,
        total: *total,
        legal,
        direction: Some(if layer.pull { Direction::Pull } else { Direction::Push }),
    });
    if !exchanges {
        return;
    }
    observe(Event::Exchanged {
        class,
        depth,
        bytes: layer.bytes,
        most: layer.max_worker_bytes,
        busiest: layer.busiest,
        mean_busy: layer.mean_busy,
        moved: layer.moved,
    });
}

/// Counts one worker keeps over a layer and sums with the others': found,
/// expanded, neighbours, crossing, messages, bytes, halo bytes, the
/// nanoseconds it worked (the layer's time less its waits for the others),
/// and the positions a two-bit push scanned.
const COUNTS: usize = 9;

/// Where one worker's search of a class starts: from the goal, or from a
/// saved share that every worker agreed to resume.
#[derive(Debug)]
pub struct Start {
    /// `found[d]`: positions of the whole class at remoteness `d`, for
    /// every complete layer.
    pub found: Vec<u64>,
    /// Whether the search is over.
    pub done: bool,
    /// The worker's cells.
    pub cells: Vec<u8>,
}

impl Start {
    /// The start of a fresh search for worker `me`: every cell unreached
    /// but the goal's, if it is this worker's.
    pub fn fresh(spec: &ClassSpec, index: &TightIndex, partition: &Partition, me: usize) -> Start {
        let range = partition.cells(me);
        let mut cells = vec![UNSEEN; (range.end - range.start) as usize];
        let goal = goal_index(spec, index);
        if range.contains(&goal) {
            cells[(goal - range.start) as usize] = 0;
        }
        Start {
            found: vec![1],
            done: false,
            cells,
        }
    }
}

/// What a worker's saved share says of itself: whether its search was
/// over, the class's layer counts, and the share's own counts of them.
pub(super) struct ShareReport {
    pub done: bool,
    pub found: Vec<u64>,
    pub own: Vec<u64>,
}

/// This worker's number, when `transport` has as many workers as
/// `partition` has shares.
///
/// # Errors
///
/// [`Error::Exchange`] when it has not.
fn check_workers<T: Transport + ?Sized>(transport: &T, partition: &Partition) -> Result<usize> {
    let (me, workers) = (transport.worker(), transport.workers());
    if workers != partition.workers() || me >= workers {
        return Err(Error::Exchange(format!(
            "worker {me} of {workers} cannot run a partition for {} workers",
            partition.workers()
        )));
    }
    Ok(me)
}

/// What each worker tells the others of the share it could resume: the
/// little-endian words `[1, done, layers, found…, own counts…]`, or `[0]`.
fn resume_words(report: Option<ShareReport>) -> Vec<u8> {
    let Some(report) = report else {
        return 0u64.to_le_bytes().to_vec();
    };
    [1, u64::from(report.done), report.found.len() as u64]
        .into_iter()
        .chain(report.found)
        .chain(report.own)
        .flat_map(u64::to_le_bytes)
        .collect()
}

/// Why the workers of a partitioned search do not resume a class from
/// their saved shares.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NoResume {
    /// This rank has no share of the class that it could resume.
    NoShare(usize),
    /// The shares were saved at different layers.
    Layers,
    /// The shares' own counts at a remoteness do not add up to the class's.
    Counts {
        /// The remoteness.
        remoteness: usize,
        /// The shares' counts, added.
        sum: u64,
        /// The class's count.
        class: u64,
    },
}

impl std::fmt::Display for NoResume {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoResume::NoShare(rank) => write!(f, "rank {rank} has no share of it to resume"),
            NoResume::Layers => f.write_str("the ranks' shares were saved at different layers"),
            NoResume::Counts { remoteness, sum, class } => write!(
                f,
                "the ranks' shares hold {sum} positions at remoteness {remoteness}, not {class}"
            ),
        }
    }
}

/// Whether the workers' reports ([`resume_words`]) let them all resume:
/// every worker has a share, all at the same layers, whose counts add up
/// to the class's.
fn resumable(reports: &[Vec<u64>]) -> std::result::Result<(), NoResume> {
    if let Some(w) = reports.iter().position(|r| r.first() != Some(&1)) {
        return Err(NoResume::NoShare(w));
    }
    let head = |r: &Vec<u64>| r.get(1..3).map(<[u64]>::to_vec);
    let layers = reports[0].get(2).copied().unwrap_or(0) as usize;
    let whole = |r: &Vec<u64>| r.get(1..3 + layers).map(<[u64]>::to_vec);
    if reports
        .iter()
        .any(|r| r.len() != 3 + 2 * layers || head(r) != head(&reports[0]) || whole(r) != whole(&reports[0]))
    {
        return Err(NoResume::Layers);
    }
    let found = &reports[0][3..3 + layers];
    for (d, &n) in found.iter().enumerate() {
        let sum: u64 = reports.iter().map(|r| r[3 + layers + d]).sum();
        if sum != n {
            return Err(NoResume::Counts {
                remoteness: d,
                sum,
                class: n,
            });
        }
    }
    Ok(())
}

/// Agrees with every other worker whether all of them resume the class
/// `class` from their saved shares (a collective step), this worker's
/// being `saved`, which `report` describes: only when every worker has a
/// share saved at the same layers and the shares' counts add up to the
/// whole class's. Returns `saved` then, else `None`, and worker 0 says why.
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails or a report does not decode.
pub(super) fn agree<T: Transport + ?Sized, S>(
    transport: &mut T,
    class: Class,
    saved: Option<S>,
    report: impl FnOnce(&S) -> ShareReport,
    checkpoints: &mut dyn ShareCheckpoints,
) -> Result<Option<S>> {
    let me = transport.worker();
    let words_out = resume_words(saved.as_ref().map(report));
    let reports = transport
        .all_to_all(vec![words_out; transport.workers()])?
        .iter()
        .map(|stream| words(stream))
        .collect::<Result<Vec<_>>>()?;
    match (resumable(&reports), saved) {
        (Ok(()), Some(saved)) => Ok(Some(saved)),
        (verdict, _) => {
            // Every report says a share, so this worker's is among them.
            let why = verdict.err().unwrap_or(NoResume::NoShare(me));
            if me == 0 && reports.iter().any(|r| r.first() == Some(&1)) {
                checkpoints.note(&format!(
                    "not resuming class {}: {why}; every rank searches it from the start",
                    class.name()
                ));
            }
            Ok(None)
        }
    }
}

/// Reads this worker's saved share of the class from `checkpoints` and
/// agrees with every other worker whether all of them resume (a
/// collective step): only when every worker has a share saved at the same
/// layers and the shares' counts add up to the whole class's. Otherwise
/// every worker starts from the goal, and worker 0 says why.
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails or a report does not decode.
pub fn agree_on_resume<T: Transport + ?Sized>(
    spec: &ClassSpec,
    index: &TightIndex,
    partition: &Partition,
    transport: &mut T,
    checkpoints: &mut dyn ShareCheckpoints,
) -> Result<Start> {
    let me = transport.worker();
    let saved = checkpoints.resume_share(spec.class, partition.cells(me));
    let report = |saved: &Resume| ShareReport {
        done: saved.done,
        found: saved.found.clone(),
        own: layer_counts(&saved.cells, saved.found.len()),
    };
    Ok(match agree(transport, spec.class, saved, report, checkpoints)? {
        Some(saved) => Start {
            found: saved.found,
            done: saved.done,
            cells: saved.cells,
        },
        None => Start::fresh(spec, index, partition, me),
    })
}

/// Runs worker `transport.worker()` of a partitioned search of one class
/// from `start`: owns the cells of its range of `partition`, expands its
/// positions layer by layer, and exchanges the positions it reaches in
/// other ranges through `transport`. `report` sees every new layer's
/// counts, summed over the workers (the same on every worker). At every
/// layer boundary worker 0 asks `checkpoints` whether to save, and then
/// every worker saves its share there. Returns the worker's cells and the
/// positions found at each remoteness.
///
/// Every worker of the search must run this with the same `spec`, `index`
/// and `partition`, and starts that agree ([`agree_on_resume`]).
///
/// # Errors
///
/// [`Error::TooLarge`] when a remoteness would not fit a [`Cell`] (on every
/// worker at once), [`Error::Exchange`] when the transport fails or a
/// stream names a position outside this worker's range, what a save ran
/// into, and [`Error::Stopped`] (on every worker) when the test hook of
/// the checkpoints asks to stop.
#[allow(clippy::too_many_arguments)]
pub fn run_worker<T: Transport + ?Sized>(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    partition: &Partition,
    transport: &mut T,
    start: Start,
    checkpoints: &mut dyn ShareCheckpoints,
    report: &mut dyn FnMut(&LayerStats),
) -> Result<(WorkerTable, Vec<u64>)> {
    let symmetries = Symmetries::of(&spec.geometry, spec.goal);
    let share = ClassSearch {
        name,
        spec,
        index,
        symmetries: &symmetries,
        partition,
    };
    run_share(&share, transport, start, checkpoints, report)
}

/// [`run_worker`] of `share`.
fn run_share<T: Transport + ?Sized>(
    share: &ClassSearch<'_>,
    transport: &mut T,
    start: Start,
    checkpoints: &mut dyn ShareCheckpoints,
    report: &mut dyn FnMut(&LayerStats),
) -> Result<(WorkerTable, Vec<u64>)> {
    let ClassSearch {
        name,
        spec,
        index,
        symmetries,
        partition,
    } = *share;
    let me = check_workers(transport, partition)?;
    let canonical = canonical_blocks_in(symmetries, index, partition.blocks(me));
    let mut worker = Worker {
        kernel: Kernel::new(&spec.geometry, index),
        index,
        partition,
        me,
        symmetries,
        canonical,
        isa: Best::detect(),
        range: partition.cells(me),
        bits: (0..start.cells.len().div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        bits_reached: false,
        // In place: AtomicU8 and u8 have one layout.
        cells: start.cells.into_iter().map(AtomicU8::new).collect(),
        halo: None,
        summary: Summary::new(),
        frontier: *start.found.last().expect("the goal's layer"),
        class: spec.class,
    };
    if worker.cells.len() as u64 != worker.range.end - worker.range.start {
        return Err(Error::Exchange(format!(
            "worker {me} started with {} cells for a share of {}",
            worker.cells.len(),
            worker.range.end - worker.range.start
        )));
    }
    let found = run_layers(
        name,
        &mut worker,
        transport,
        index.len(),
        start.found,
        start.done,
        checkpoints,
        report,
    )?;
    let table = WorkerTable {
        worker: me,
        range: worker.range,
        cells: worker.cells.into_iter().map(AtomicU8::into_inner).collect(),
    };
    Ok((table, found))
}

/// What a worker's own part of a layer left for [`end_layer`].
struct Worked<'a> {
    /// Its counts ([`COUNTS`]), those of images it already traded in
    /// rounds of the layer included.
    counts: [u64; COUNTS],
    /// On a push layer, the halo whose outbox holds the positions it
    /// reached in other workers' ranges.
    push: Option<&'a Halo>,
    /// The images it found in other workers' ranges, by owner.
    images: Vec<Vec<Message>>,
    /// How long it worked.
    busy: Duration,
}

/// Ends a layer on this worker, a collective step: on a push layer sends
/// each other worker the bits of its positions this worker reached
/// (`worked.push`'s outbox, emptied), then, in a second round, the images
/// of those their owners took and of those found here; takes what
/// the others send with `receive`, a run of positions at a time (given
/// where to put images in the first round; it returns how many positions
/// it took), and sums the layer's counts over the workers, with the time
/// each worked: `worked.busy` before this call, and in `receive`. The depth,
/// direction and time are left for the caller to fill in.
fn end_layer<T: Transport + ?Sized>(
    transport: &mut T,
    index: &TightIndex,
    partition: &Partition,
    worked: Worked<'_>,
    mut receive: impl FnMut(&[Reached], Option<&mut Vec<Vec<Message>>>) -> Result<u64>,
) -> Result<LayerStats> {
    let Worked {
        mut counts,
        push,
        mut images,
        mut busy,
    } = worked;
    let me = transport.worker();
    let mut receive = |run: &[Reached], images: Option<&mut Vec<Vec<Message>>>| {
        let started = Instant::now();
        let taken = receive(run, images);
        busy += started.elapsed();
        taken
    };
    if let Some(halo) = push {
        let (incoming, sent) = halo.send_outbox(me, transport)?;
        counts[6] += sent;
        for (from, stream) in incoming.iter().enumerate() {
            if from != me {
                counts[0] += halo.reached(index, from, stream, |run| receive(run, Some(&mut images)))?;
            }
        }
    }
    let (taken, sent) = trade_images(transport, index, partition, images, |run| receive(run, None))?;
    counts[0] += taken;
    counts[3] += sent.0;
    counts[4] += sent.1;
    counts[5] += sent.2;
    counts[7] = u64::try_from(busy.as_nanos()).unwrap_or(u64::MAX);
    let (sums, max_worker_bytes, busiest) = sum_counts(transport, counts)?;
    let [
        found,
        expanded,
        neighbours,
        crossing,
        messages,
        message_bytes,
        halo_bytes,
        worked,
        scanned,
    ] = sums;
    Ok(LayerStats {
        found,
        expanded,
        scanned,
        neighbours,
        crossing,
        messages,
        halo_bytes,
        bytes: message_bytes + halo_bytes,
        max_worker_bytes,
        busiest: Duration::from_nanos(busiest),
        mean_busy: Duration::from_nanos(worked / transport.workers() as u64),
        ..LayerStats::default()
    })
}

/// Sends each worker the images this one found in its range (`images`, by
/// owner) and takes what the others sent with `receive`, a run at a time:
/// a collective step. Returns how many positions `receive` took, and how
/// many images this worker had and sent (repeats dropped) and in how many
/// bytes.
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails or a stream names a
/// position outside this worker's range, and what `receive` returns.
fn trade_images<T: Transport + ?Sized>(
    transport: &mut T,
    index: &TightIndex,
    partition: &Partition,
    images: Vec<Vec<Message>>,
    receive: impl FnMut(&[Reached]) -> Result<u64>,
) -> Result<(u64, (u64, u64, u64))> {
    let sent = post_images(transport, partition, images)?;
    Ok((take_images(transport, index, partition, receive)?, sent))
}

/// The first half of [`trade_images`]: posts each worker the images this
/// one found in its range (`images`, by owner), and returns how many it
/// had and sent (repeats dropped) and in how many bytes.
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails.
fn post_images<T: Transport + ?Sized>(
    transport: &mut T,
    partition: &Partition,
    images: Vec<Vec<Message>>,
) -> Result<(u64, u64, u64)> {
    let had = images.iter().map(|list| list.len() as u64).sum::<u64>();
    let mut streams = Vec::with_capacity(images.len());
    let (mut sent, mut bytes) = (0u64, 0u64);
    for (w, out) in images.into_iter().enumerate() {
        let (stream, count) = encode_images(out, partition.cells(w));
        sent += count;
        bytes += stream.len() as u64;
        streams.push(stream);
    }
    transport.post(streams)?;
    Ok((had, sent, bytes))
}

/// The second half of [`trade_images`]: takes the images the others posted
/// this worker with `receive`, a run at a time, and returns how many
/// positions `receive` took.
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails or a stream names a
/// position outside this worker's range, and what `receive` returns.
fn take_images<T: Transport + ?Sized>(
    transport: &mut T,
    index: &TightIndex,
    partition: &Partition,
    mut receive: impl FnMut(&[Reached]) -> Result<u64>,
) -> Result<u64> {
    let me = transport.worker();
    let incoming = transport.take()?;
    let mut taken = 0;
    let mut run = Vec::with_capacity(RUN);
    for (from, stream) in incoming.iter().enumerate() {
        if from == me {
            continue;
        }
        let mut near = partition.blocks(me).start;
        each_image(stream, partition.cells(me), |i| {
            let reached = own_index(index, partition, me, Message { index: i }, near)?;
            near = reached.block;
            run.push(reached);
            if run.len() == RUN {
                taken += receive(&run)?;
                run.clear();
            }
            Ok(())
        })
        .map_err(|e| match e {
            Error::Exchange(why) => Error::Exchange(format!("worker {from} sent images that {why}")),
            other => other,
        })?;
        taken += receive(&run)?;
        run.clear();
    }
    Ok(taken)
}

/// A layer's counts of every worker, summed, the most bytes one worker
/// sent (message and halo bytes, `counts[5] + counts[6]`) and the longest
/// one worked (`counts[7]`): the same on every worker, a collective step.
fn sum_counts<T: Transport + ?Sized>(transport: &mut T, counts: [u64; COUNTS]) -> Result<([u64; COUNTS], u64, u64)> {
    let mut mine = Vec::with_capacity(COUNTS * 8);
    for c in counts {
        mine.extend_from_slice(&c.to_le_bytes());
    }
    let all = transport.all_to_all(vec![mine; transport.workers()])?;
    let mut sums = [0u64; COUNTS];
    let (mut max_worker_bytes, mut busiest) = (0, 0);
    for stream in &all {
        if stream.len() != COUNTS * 8 {
            return Err(Error::Exchange(format!(
                "a worker's layer counts came as {} bytes, not {}",
                stream.len(),
                COUNTS * 8
            )));
        }
        let theirs = words(stream)?;
        for (s, t) in sums.iter_mut().zip(&theirs) {
            *s += t;
        }
        max_worker_bytes = max_worker_bytes.max(theirs[5] + theirs[6]);
        busiest = busiest.max(theirs[7]);
    }
    Ok((sums, max_worker_bytes, busiest))
}

/// The first byte of a stream of images: their messages follow, in order.
const IMAGE_LIST: u8 = 0;

/// The first byte of a stream of images: a bitmap of the receiver's cells
/// follows, as [`halo::pack_words`] sends bit words.
const IMAGE_BITS: u8 = 1;

/// The wire form of `images`, all positions of `cells` (the receiver's),
/// and how many distinct ones it holds: nothing for none. When they are
/// many for those positions (one for each 64 or more), a bitmap of them,
/// which is then no larger than their messages and needs no sort: on 2
/// ranks, 9x8 took 0.988 of the time when the bitmap only sorted, then
/// 0.984 of that when it was sent too, and its ranks sent 28 MB where
/// they sent 54 MB. Otherwise, or when an image is not of `cells`, their
/// messages, sorted and without repeats, so the receiver's writes stay
/// near each other.
fn encode_images(mut images: Vec<Message>, cells: Range<u64>) -> (Vec<u8>, u64) {
    if images.is_empty() {
        return (Vec::new(), 0);
    }
    let len = cells.end - cells.start;
    if images.len() as u64 >= len / 64 {
        let mut bits = vec![0u64; len.div_ceil(64) as usize];
        let mut inside = true;
        for m in &images {
            let k = m.index.wrapping_sub(cells.start);
            inside &= k < len;
            if let Some(word) = bits.get_mut((k / 64) as usize) {
                *word |= 1 << (k % 64);
            }
        }
        if inside {
            let count = bits.iter().map(|w| u64::from(w.count_ones())).sum();
            let mut stream = vec![IMAGE_BITS];
            stream.extend_from_slice(&halo::pack_words(&bits));
            return (stream, count);
        }
    }
    sort_messages(&mut images);
    images.dedup();
    let mut stream = Vec::with_capacity(1 + images.len() * Message::BYTES);
    stream.push(IMAGE_LIST);
    Message::encode_all(&images, &mut stream);
    (stream, images.len() as u64)
}

/// Calls `f` with each image of a stream [`encode_images`] made for the
/// positions `cells`, in the stream's order.
///
/// # Errors
///
/// [`Error::Exchange`] when the stream does not decode or names a bit past
/// `cells`; what `f` returns.
fn each_image(stream: &[u8], cells: Range<u64>, mut f: impl FnMut(u64) -> Result<()>) -> Result<()> {
    let Some((&form, rest)) = stream.split_first() else {
        return Ok(());
    };
    match form {
        IMAGE_LIST => Message::decode_each(rest)?.try_for_each(|m| f(m.index)),
        IMAGE_BITS => {
            let bits = halo::unpack_bits(rest, cells.end - cells.start)
                .map_err(|why| Error::Exchange(format!("as bits {why}")))?;
            halo::each_bit(&bits, |k| f(cells.start + k))
        }
        other => Err(Error::Exchange(format!("start with the unknown form {other}"))),
    }
}

/// Sorts `messages` by index, in parallel when the rank has more than one
/// thread: rayon's parallel sort in a one-thread pool took 1.6 times as
/// long as the standard library's on a layer's 14 M images.
fn sort_messages(messages: &mut [Message]) {
    if rayon::current_num_threads() > 1 {
        messages.par_sort_unstable();
    } else {
        messages.sort_unstable();
    }
}

/// The images a layer of one worker found in other workers' ranges, by
/// owner. (The neighbours it reached there go by the halo's outbox.)
struct Outgoing {
    images: Vec<Vec<Message>>,
}

impl Outgoing {
    fn new(workers: usize) -> Outgoing {
        Outgoing {
            images: vec![Vec::new(); workers],
        }
    }

    /// The lists of `other` added to these.
    fn join(mut self, other: Outgoing) -> Outgoing {
        for (out, mut more) in self.images.iter_mut().zip(other.images) {
            if out.len() < more.len() {
                std::mem::swap(out, &mut more);
            }
            out.append(&mut more);
        }
        self
    }
}

/// The position `m` names, which worker `me` of `partition` was sent, with
/// its block: `near` when that block holds it (messages come in order, so
/// mostly a block at a time), else found.
///
/// # Errors
///
/// [`Error::Exchange`] when `m` names a position outside the worker's range.
fn own_index(index: &TightIndex, partition: &Partition, me: usize, m: Message, near: u64) -> Result<Reached> {
    if !partition.cells(me).contains(&m.index) {
        return Err(Error::Exchange(format!(
            "worker {me} was sent position {}, which it does not own",
            m.index
        )));
    }
    let block = if index.block(near).contains(&m.index) {
        near
    } else {
        index.block_of(m.index)
    };
    Ok(Reached { index: m.index, block })
}

/// The message for tight index `i` of `index`, in block `r`, and the
/// worker it goes to.
#[inline]
fn message_at(partition: &Partition, i: u64, r: u64) -> (usize, Message) {
    (partition.owner(r), Message { index: i })
}

/// One worker's state: its cells, and what it buffers for the others.
///
/// Like the single-process searches, a worker expands only the canonical
/// position of each orbit of the class's symmetries and sets the images of
/// every position it finds: its own at once, the others' by message.
struct Worker<'a> {
    kernel: Kernel<'a>,
    index: &'a TightIndex,
    partition: &'a Partition,
    me: usize,
    symmetries: &'a Symmetries,
    /// For each of its blocks: whether it may hold a canonical position.
    canonical: Vec<bool>,
    /// The instruction sets the kernel may use here.
    isa: Best,
    /// The tight indices of its cells.
    range: Range<u64>,
    /// Its cells, which the threads of a pull fill at once, and a push
    /// through `bits` after the layer ([`settle`]).
    cells: Vec<AtomicU8>,
    /// One bit per cell: in a push, whether
    /// the position has been reached (and claimed as this layer reaches
    /// it); in a pull, whether it is at the layer's depth. The random
    /// reads of a layer go here, an eighth of the cells, which a cache
    /// holds where it does not hold the cells.
    bits: Vec<AtomicU64>,
    /// Whether `bits` marks every reached position (a push keeps it so).
    bits_reached: bool,
    /// What a pull layer sees of other workers' cells, once one has run.
    halo: Option<Halo>,
    /// For each of its blocks, at the start of the layer: whether it holds
    /// a position of the layer, and an unreached one (the one-process
    /// search's [`Summary`]).
    summary: Summary,
    /// The positions of the newest layer, over every worker.
    frontier: u64,
    /// The class searched.
    class: Class,
}

/// How a worker claims a position of its own for the next layer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Claim {
    /// In a push: it sets the position's bit in the bitmap of reached
    /// positions, if no one has, so that two threads reaching one position
    /// count it once; [`settle`] writes the cells after the layer, in one
    /// pass over them instead of a cache miss a position.
    Reached,
    /// In a pull, an image of a position the pull found: unreached, as
    /// that position was, and written by this call only (only the pull of
    /// an orbit's canonical position writes its images), so it is stored
    /// without being read.
    Unseen,
    /// In a pull, a position another worker sent: written if no layer has
    /// reached it. Only its sender names it, once.
    Sent,
}

/// The little-endian `u64` words of `stream`.
fn words(stream: &[u8]) -> Result<Vec<u64>> {
    if !stream.len().is_multiple_of(8) {
        return Err(Error::Exchange(format!(
            "a stream of {} bytes is not a whole number of words",
            stream.len()
        )));
    }
    Ok(stream
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
        .collect())
}

/// Whether every worker saves its share at a layer boundary of `class`,
/// where `found` counts the complete layers: worker 0 asks `checkpoints`
/// and tells the others, a collective step.
fn save_now<T: Transport + ?Sized>(
    transport: &mut T,
    checkpoints: &mut dyn ShareCheckpoints,
    class: Class,
    found: &[u64],
    done: bool,
) -> Result<Save> {
    let decision = if transport.worker() == 0 {
        let save = checkpoints.due(class, found, done) as u8;
        vec![vec![save]; transport.workers()]
    } else {
        Vec::new()
    };
    match transport.all_to_all(decision)?[0][..] {
        [s] if s == Save::No as u8 => Ok(Save::No),
        [s] if s == Save::Yes as u8 => Ok(Save::Yes),
        [s] if s == Save::AndStop as u8 => Ok(Save::AndStop),
        ref other => Err(Error::Exchange(format!("worker 0 sent {other:?} for whether to save"))),
    }
}

/// Once this worker has saved its share of `class` as `save` (from
/// [`save_now`]) asked, after the layers `found` counts: waits for every
/// worker to have saved theirs (a collective step), and then stops when
/// `save` asks to.
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails, [`Error::Stopped`] for
/// [`Save::AndStop`].
fn saved<T: Transport + ?Sized>(
    transport: &mut T,
    checkpoints: &mut dyn ShareCheckpoints,
    save: Save,
    class: Class,
    found: &[u64],
) -> Result<()> {
    // Every worker has saved before any goes on or stops: a worker
    // that stopped at once would end an MPI job under one still saving.
    transport.all_to_all(vec![Vec::new(); transport.workers()])?;
    if save == Save::AndStop {
        return Err(checkpoints.stopped(class, found));
    }
    Ok(())
}

impl LayerWorker for Worker<'_> {
    const DEEPEST: u16 = BYTE_DEEPEST;

    /// A byte table tells the newest layer from every other, and a push
    /// scans it alone.
    fn scan_bound(found: &[u64]) -> u64 {
        *found.last().expect("the goal's layer")
    }

    fn push_work<T: Transport + ?Sized>(&mut self, _: &mut T, _: u64) -> Result<u64> {
        Ok(self.frontier)
    }

    fn layer<T: Transport + ?Sized>(&mut self, transport: &mut T, depth: u64, pull: bool) -> Result<LayerStats> {
        let depth = u8::try_from(depth).expect("the loop stops at the deepest a cell holds");
        let (counts, outgoing, busy) = self.pass(transport, depth, pull)?;
        let push = (!pull).then(|| self.halo.as_ref().expect("a halo from the first layer"));
        let worked = Worked {
            counts,
            push,
            images: outgoing.images,
            busy,
        };
        let layer = end_layer(transport, self.index, self.partition, worked, |run, images| {
            Ok(self.receive(run, depth + 1, !pull, images))
        })?;
        if !pull {
            let settled = settle(&mut self.bits, &mut self.cells, depth + 1);
            debug_assert!(transport.workers() > 1 || settled == layer.found);
        }
        // A push's rate is per position of the layer it expanded.
        Ok(LayerStats {
            scanned: self.frontier,
            ..layer
        })
    }

    fn add_layer(&mut self, _: u64, found: u64) {
        self.frontier = found;
    }

    /// Worker 0 asks `checkpoints` whether to save and tells the others,
    /// and then every worker saves its share and waits for the others to
    /// have saved theirs.
    fn boundary<T: Transport + ?Sized>(
        &mut self,
        transport: &mut T,
        checkpoints: &mut dyn ShareCheckpoints,
        found: &[u64],
        done: bool,
    ) -> Result<()> {
        let save = save_now(transport, checkpoints, self.class, found, done)?;
        if save == Save::No {
            return Ok(());
        }
        checkpoints.save_share(ShareBoundary {
            class: self.class,
            range: self.range.clone(),
            found,
            done,
            cells: self.plain(),
        })?;
        saved(transport, checkpoints, save, self.class, found)
    }
}

impl Worker<'_> {
    /// This worker's part of layer `depth + 1`, by a pull or a push: its
    /// counts ([`COUNTS`]), the messages for the others, and how long it
    /// worked (not counting the wait for the halo). The first layer makes
    /// the halo; a pull trades it first.
    fn pass<T: Transport + ?Sized>(
        &mut self,
        transport: &mut T,
        depth: u8,
        pull: bool,
    ) -> Result<([u64; COUNTS], Outgoing, Duration)> {
        let (index, partition, me) = (self.index, self.partition, self.me);
        if self.halo.is_none() {
            self.halo = Some(if partition.workers() == 1 {
                Halo::alone()
            } else {
                let reach = Reach::new(&self.kernel, index, partition.blocks(me));
                Halo::new(&reach, index, partition, me, transport)?
            });
        }
        self.summary = summarize_blocks(index, partition.blocks(me), &mut self.cells, depth);
        if pull {
            mark(&mut self.bits, &mut self.cells, depth, true);
        } else if !self.bits_reached {
            mark(&mut self.bits, &mut self.cells, UNSEEN, false);
        }
        self.bits_reached = !pull;
        let mut working = Instant::now();
        let (counts, outgoing) = if pull {
            let (cells, base) = (&self.cells, self.range.start);
            let halo = self.halo.as_mut().expect("a halo was just made");
            let halo_bytes = halo.exchange(index, me, transport, |i, n| {
                let first = (i - base) as usize;
                cells[first..first + n].iter().enumerate().fold(0, |mask, (k, c)| {
                    mask | u64::from(c.load(Ordering::Relaxed) == depth) << k
                })
            })?;
            // The halo's exchange waits for the others: not work.
            working = Instant::now();
            let (mut counts, outgoing) = self.pull(depth);
            counts[6] = halo_bytes;
            (counts, outgoing)
        } else {
            self.expand(depth)
        };
        Ok((counts, outgoing, working.elapsed()))
    }

    /// The worker's cells as plain bytes, between layers.
    fn plain(&self) -> &[u8] {
        // SAFETY: AtomicU8 has the size, alignment and bit validity of u8,
        // and between layers, where this is called, no thread writes the
        // cells, so reading them as plain bytes while this borrow lives is
        // sound.
        unsafe { std::slice::from_raw_parts(self.cells.as_ptr().cast::<u8>(), self.cells.len()) }
    }

    /// The worker's cells of block `r`.
    fn cells_of(&self, r: u64) -> &[AtomicU8] {
        let b = self.index.block(r);
        &self.cells[(b.start - self.range.start) as usize..(b.end - self.range.start) as usize]
    }

    /// Pushes from every position of this worker at `depth`, its blocks
    /// shared by the threads of the rayon pool: claims its own unreached
    /// neighbours for `depth + 1` and gathers the others' for them. Returns
    /// the layer's counts so far (found, expanded, neighbours, crossing)
    /// and, for each worker, the positions found in its range.
    fn expand(&self, depth: u8) -> ([u64; COUNTS], Outgoing) {
        self.each_block(AT_DEPTH, |r, block, counts, outgoing| {
            self.expand_block(r, depth, block, counts, outgoing);
        })
    }

    /// Calls `work` with every block of this worker that may hold a
    /// canonical position and whose summary has a bit of `wanted`
    /// ([`each_block`]), with its own counts and messages; returns those,
    /// added up.
    fn each_block(
        &self,
        wanted: u8,
        work: impl Fn(u64, &mut Block, &mut [u64; COUNTS], &mut Outgoing) + Sync,
    ) -> ([u64; COUNTS], Outgoing) {
        let mine = self.partition.blocks(self.me);
        let workers = self.partition.workers();
        let at = |r: u64| (r - mine.start) as usize;
        each_block(
            mine.clone(),
            |r| self.canonical[at(r)] && self.summary[at(r)] & wanted != 0,
            || ([0u64; COUNTS], Outgoing::new(workers)),
            |r, block, (counts, outgoing)| work(r, block, counts, outgoing),
            |(mut counts, outgoing), (more, theirs)| {
                counts.iter_mut().zip(more).for_each(|(c, m)| *c += m);
                (counts, outgoing.join(theirs))
            },
        )
    }

    /// Claims position `i` of this worker for `next` as `claim` says;
    /// whether this call did.
    #[inline(always)]
    fn claim(&self, i: u64, next: u8, claim: Claim) -> bool {
        let k = i - self.range.start;
        let cell = &self.cells[k as usize];
        match claim {
            Claim::Reached => {
                let word = &self.bits[(k / 64) as usize];
                let bit = 1 << (k % 64);
                word.load(Ordering::Relaxed) & bit == 0 && word.fetch_or(bit, Ordering::Relaxed) & bit == 0
            }
            Claim::Unseen => {
                cell.store(next, Ordering::Relaxed);
                true
            }
            Claim::Sent => {
                let unseen = cell.load(Ordering::Relaxed) == UNSEEN;
                if unseen {
                    cell.store(next, Ordering::Relaxed);
                }
                unseen
            }
        }
    }

    /// Whether position `i` of this worker is at the depth of the pull
    /// under way.
    #[inline]
    fn at_depth(&self, i: u64) -> bool {
        let k = i - self.range.start;
        self.bits[(k / 64) as usize].load(Ordering::Relaxed) >> (k % 64) & 1 != 0
    }

    /// Sets the images in `batch`, found for `next` ([`set_images`]) by a
    /// push or not: claims this worker's and adds the others' to `images`.
    /// Returns how many it claimed.
    #[inline(always)]
    fn set_images(&self, batch: &mut Batch, next: u8, claim: Claim, images: &mut [Vec<Message>]) -> u64 {
        let range = &self.range;
        set_images(
            self.index,
            batch,
            #[inline(always)]
            |i| {
                if range.contains(&i) {
                    let k = i - range.start;
                    if claim == Claim::Reached {
                        prefetch(&self.bits[(k / 64) as usize]);
                    } else {
                        prefetch(&self.cells[k as usize]);
                    }
                }
            },
            #[inline(always)]
            |i, r, _| {
                if range.contains(&i) {
                    u64::from(self.claim(i, next, claim))
                } else {
                    let (owner, message) = message_at(self.partition, i, r);
                    images[owner].push(message);
                    0
                }
            },
        )
    }

    /// [`expand`](Self::expand) of block `r`, adding to `counts` and
    /// `outgoing`.
    fn expand_block(&self, r: u64, depth: u8, block: &mut Block, counts: &mut [u64; COUNTS], outgoing: &mut Outgoing) {
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = self.isa.bmi2 {
            // SAFETY: a `Bmi2` exists only where the processor has it.
            return unsafe { self.expand_block_bmi2(isa, r, depth, block, counts, outgoing) };
        }
        self.expand_block_in(Tables, r, depth, block, counts, outgoing);
    }

    /// [`expand_block`](Self::expand_block) compiled for BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
    fn expand_block_bmi2(
        &self,
        isa: Bmi2,
        r: u64,
        depth: u8,
        block: &mut Block,
        counts: &mut [u64; COUNTS],
        outgoing: &mut Outgoing,
    ) {
        self.expand_block_in(isa, r, depth, block, counts, outgoing);
    }

    /// [`expand_block`](Self::expand_block) for `isa`.
    #[inline(always)]
    fn expand_block_in<I: Isa>(
        &self,
        isa: I,
        r: u64,
        depth: u8,
        block: &mut Block,
        counts: &mut [u64; COUNTS],
        outgoing: &mut Outgoing,
    ) {
        let own = self.cells_of(r);
        let Some(test) = self.symmetries.block_test(colex_unrank(r, self.index.white())) else {
            return;
        };
        self.kernel.block_in(isa, r, block, |_| true);
        // The canonical positions at `depth`, then their neighbours move by
        // move ([`Kernel::each_neighbour_routed_in`]).
        let mut blacks = std::mem::take(&mut block.blacks);
        blacks.clear();
        scan_cells(
            own,
            block.safe,
            self.index.black(),
            #[inline(always)]
            |c| c == depth,
            #[inline(always)]
            |_, black| {
                if test.is_canonical(black) {
                    blacks.push(black);
                }
            },
        );
        counts[1] += blacks.len() as u64;
        let halo = self.halo.as_ref().expect("a halo from the first layer");
        halo.route(self.partition, self.me, block);
        let mut batch = Batch::default();
        // Kept here, not in `counts`, so that they may live in registers.
        let (mut found, mut crossing) = (0, 0);
        let neighbours = self.kernel.each_neighbour_routed_in(
            isa,
            block,
            &blacks,
            #[inline(always)]
            |bit| {
                crossing += 1;
                halo.reach(bit);
            },
            #[inline(always)]
            |i, after, _| {
                if self.claim(i, depth + 1, Claim::Reached) {
                    found += 1;
                    if batch.push(self.symmetries, after) {
                        found += self.set_images(&mut batch, depth + 1, Claim::Reached, &mut outgoing.images);
                    }
                }
            },
        );
        found += self.set_images(&mut batch, depth + 1, Claim::Reached, &mut outgoing.images);
        counts[0] += found;
        counts[2] += neighbours;
        counts[3] += crossing;
        block.blacks = blacks;
    }

    /// Pulls into every unreached position of this worker, its blocks
    /// shared by the threads of the rayon pool: it joins layer `depth + 1`
    /// when a neighbour, here or in the halo, is at `depth`. Only moves
    /// into blocks with a position at `depth` are tried. A block's pull
    /// writes only its own cells, and reads only cells at `depth`, which no
    /// pull writes. Returns the layer's counts so far: found, expanded,
    /// neighbours, crossing.
    fn pull(&self, depth: u8) -> ([u64; COUNTS], Outgoing) {
        self.each_block(HAS_UNSEEN, |r, block, counts, outgoing| {
            self.pull_block(r, depth, block, counts, outgoing);
        })
    }

    /// [`pull`](Self::pull) into block `r`, adding to `counts`; `own_any`
    /// says which of this worker's blocks hold a position at `depth`.
    fn pull_block(&self, r: u64, depth: u8, block: &mut Block, counts: &mut [u64; COUNTS], outgoing: &mut Outgoing) {
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = self.isa.bmi2 {
            // SAFETY: a `Bmi2` exists only where the processor has it.
            return unsafe { self.pull_block_bmi2(isa, r, depth, block, counts, outgoing) };
        }
        self.pull_block_in(Tables, r, depth, block, counts, outgoing);
    }

    /// [`pull_block`](Self::pull_block) compiled for BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
    #[allow(clippy::too_many_arguments)]
    fn pull_block_bmi2(
        &self,
        isa: Bmi2,
        r: u64,
        depth: u8,
        block: &mut Block,
        counts: &mut [u64; COUNTS],
        outgoing: &mut Outgoing,
    ) {
        self.pull_block_in(isa, r, depth, block, counts, outgoing);
    }

    /// [`pull_block`](Self::pull_block) for `isa`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn pull_block_in<I: Isa>(
        &self,
        isa: I,
        r: u64,
        depth: u8,
        block: &mut Block,
        counts: &mut [u64; COUNTS],
        outgoing: &mut Outgoing,
    ) {
        let own = self.cells_of(r);
        let mine = self.partition.blocks(self.me);
        let flags = |t: u64| self.summary[(t - mine.start) as usize];
        let Some(test) = self.symmetries.block_test(colex_unrank(r, self.index.white())) else {
            return;
        };
        let index = self.index;
        let halo = self.halo.as_ref().expect("a halo before a pull");
        let current = |t: u64| flags(t) & AT_DEPTH != 0;
        let Some(routed) = halo.pull_moves(&self.kernel, isa, self.partition, self.me, r, block, current) else {
            return;
        };
        let block = &*block;
        let mut batch = Batch::default();
        // Kept here, not in `counts`, so that they may live in registers.
        let (mut found, mut expanded, mut looked) = (0, 0, (0, 0));
        scan_cells(
            own,
            block.safe,
            index.black(),
            #[inline(always)]
            |c| c == UNSEEN,
            #[inline(always)]
            |cell, black| {
                if !test.is_canonical(black) {
                    return;
                }
                expanded += 1;
                if halo.pull_hit(&self.kernel, isa, block, black, routed, &mut looked, |i| {
                    self.at_depth(i)
                }) {
                    // Only this pull writes a canonical cell.
                    cell.store(depth + 1, Ordering::Relaxed);
                    let part = Part {
                        white: block.white,
                        black,
                    };
                    found += 1;
                    if batch.push(self.symmetries, part) {
                        found += self.set_images(&mut batch, depth + 1, Claim::Unseen, &mut outgoing.images);
                    }
                }
            },
        );
        found += self.set_images(&mut batch, depth + 1, Claim::Unseen, &mut outgoing.images);
        counts[0] += found;
        counts[1] += expanded;
        counts[2] += looked.0;
        counts[3] += looked.1;
    }

    /// Claims for `next` the unreached positions of `reached`, which another
    /// worker sent, and, given `images`, sets the images of each it claims
    /// (adding the others' to `images`). Returns how many it claimed.
    fn receive(&self, reached: &[Reached], next: u8, push: bool, mut images: Option<&mut Vec<Vec<Message>>>) -> u64 {
        let claim = if push { Claim::Reached } else { Claim::Sent };
        let mut found = 0;
        let mut batch = Batch::default();
        for &Reached { index: i, block: r } in reached {
            if self.claim(i, next, claim) {
                found += 1;
                if let Some(images) = images.as_deref_mut()
                    && batch.push(self.symmetries, self.index.unrank_in_block(r, i))
                {
                    found += self.set_images(&mut batch, next, claim, images);
                }
            }
        }
        if let Some(images) = images {
            found += self.set_images(&mut batch, next, claim, images);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A posted exchange comes back as the all-to-all does, and a worker
    /// posts once before it takes and takes only what it posted.
    #[test]
    fn posts_are_taken_as_all_to_all_returns() {
        let (taken, _) = on_threads(3, &mut |_| {}, |transport, _| {
            let me = transport.worker() as u8;
            let streams = |round: u8| (0..3).map(|to| vec![round, me, to]).collect::<Vec<_>>();
            transport.post(streams(1)).unwrap();
            assert!(matches!(transport.post(streams(9)), Err(Error::Exchange(_))));
            let first = transport.take().unwrap();
            assert!(matches!(transport.take(), Err(Error::Exchange(_))));
            Ok((first, transport.all_to_all(streams(2)).unwrap()))
        })
        .unwrap();
        for (me, (first, second)) in taken.into_iter().enumerate() {
            let me = me as u8;
            assert_eq!(first, (0..3).map(|from| vec![1, from, me]).collect::<Vec<_>>());
            assert_eq!(second, (0..3).map(|from| vec![2, from, me]).collect::<Vec<_>>());
        }
    }

    use crate::solver::boundary::memory::Memory;
    use crate::solver::parallel;
    use crate::variant::Variant;

    /// The first class of variant `name` and its tight index.
    fn class(name: &str) -> (ClassSpec, TightIndex) {
        let variant = Variant::named(name).unwrap();
        let spec = variant.classes()[0].clone();
        let index = spec.tight_index();
        (spec, index)
    }

    #[test]
    fn a_partition_covers_every_block_once_balanced_by_positions() {
        let (_, index) = class("7x6");
        let largest = (0..index.white_sets())
            .map(|r| index.block(r).end - index.block(r).start)
            .max()
            .unwrap();
        for workers in [1, 2, 3, 5, 8] {
            let p = Partition::balanced(&index, workers).unwrap();
            assert_eq!(p.workers(), workers);
            assert_eq!(p.blocks(0).start, 0);
            assert_eq!(p.blocks(workers - 1).end, index.white_sets());
            assert_eq!(p.cells(0).start, 0);
            assert_eq!(p.cells(workers - 1).end, index.len());
            for w in 0..workers {
                if w + 1 < workers {
                    assert_eq!(p.blocks(w).end, p.blocks(w + 1).start);
                }
                let cells = p.cells(w);
                let size = cells.end - cells.start;
                assert!(
                    size.abs_diff(index.len() / workers as u64) <= largest,
                    "{workers}: worker {w} has {size}"
                );
                for r in p.blocks(w) {
                    assert_eq!(p.owner(r), w);
                    for i in index.block(r) {
                        assert!(cells.contains(&i));
                        assert_eq!(p.owner_of_index(i), w);
                    }
                }
            }
        }
        assert!(matches!(Partition::balanced(&index, 0), Err(Error::Usage(_))));
    }

    #[test]
    fn a_partition_by_work_covers_every_block_once_balanced_by_work() {
        let (spec, index) = class("9x6-a1");
        let symmetries = Symmetries::of(&spec.geometry, spec.goal);
        assert!(!symmetries.is_trivial());
        let weight = |r: u64| {
            let b = index.block(r);
            let expanded = symmetries.may_hold_canonical(colex_unrank(r, index.white()), index.safe(r), index.black());
            (b.end - b.start) * if expanded { EXPANDED_WEIGHT } else { 1 }
        };
        let total: u64 = (0..index.white_sets()).map(weight).sum();
        let heaviest = (0..index.white_sets()).map(weight).max().unwrap();
        for workers in [1, 2, 3, 4, 7] {
            let p = Partition::by_work(&spec, &index, workers).unwrap();
            assert_eq!(p.blocks(0).start, 0);
            assert_eq!(p.blocks(workers - 1).end, index.white_sets());
            for w in 0..workers {
                if w + 1 < workers {
                    assert_eq!(p.blocks(w).end, p.blocks(w + 1).start);
                }
                let work: u64 = p.blocks(w).map(weight).sum();
                assert!(
                    work.abs_diff(total / workers as u64) <= 2 * heaviest,
                    "{workers}: worker {w} has {work} of {total}"
                );
            }
        }
        assert!(matches!(Partition::by_work(&spec, &index, 0), Err(Error::Usage(_))));
    }

    /// Images come back sorted and distinct whether sent as a bitmap
    /// (many for their cells) or as messages (few, or one outside the
    /// cells); a bitmap with a bit past the cells, or an unknown form, is
    /// refused.
    #[test]
    fn images_round_trip_sorted_and_distinct_either_way() {
        let cells = 1_000..1_630u64;
        let of = |list: &[u64]| list.iter().map(|&index| Message { index }).collect::<Vec<_>>();
        let many: Vec<u64> = (0..40)
            .map(|k| 1_000 + (k * 37) % 630)
            .chain([1_629, 1_000, 1_629])
            .collect();
        let few = [1_500, 1_200, 1_500];
        let stray: Vec<u64> = many.iter().copied().chain([7]).collect();
        for (list, form) in [
            (&many[..], Some(IMAGE_BITS)),
            (&few[..], Some(IMAGE_LIST)),
            (&stray[..], Some(IMAGE_LIST)),
            (&[], None),
        ] {
            let (stream, count) = encode_images(of(list), cells.clone());
            assert_eq!(stream.first().copied(), form, "{list:?}");
            let mut want = list.to_vec();
            want.sort_unstable();
            want.dedup();
            assert_eq!(count, want.len() as u64);
            let mut got = Vec::new();
            each_image(&stream, cells.clone(), |i| {
                got.push(i);
                Ok(())
            })
            .unwrap();
            assert_eq!(got, want, "{list:?}");
        }
        let (mut past, _) = encode_images(of(&many), cells.clone());
        let last = past.len() - 1;
        past[last] |= 0x80;
        let refused = |stream: &[u8]| matches!(each_image(stream, cells.clone(), |_| Ok(())), Err(Error::Exchange(_)));
        assert!(refused(&past));
        assert!(refused(&[9, 0, 0]));
        assert!(refused(&[IMAGE_LIST, 1, 2, 3]));
    }

    #[test]
    fn messages_round_trip_little_endian() {
        let m = Message {
            index: 0x0102_0304_0506_0708,
        };
        let bytes = m.encode();
        assert_eq!(bytes[0], 0x08);
        assert_eq!(bytes[7], 0x01);
        assert_eq!(Message::decode(bytes), m);
        let mut stream = Vec::new();
        Message::encode_all(&[m, Message { index: 3 }], &mut stream);
        assert_eq!(stream.len(), 2 * Message::BYTES);
        assert_eq!(Message::decode_all(&stream).unwrap()[1], Message { index: 3 });
        assert!(matches!(Message::decode_all(&stream[1..]), Err(Error::Exchange(_))));
    }

    #[test]
    fn channels_deliver_all_to_all_by_sender() {
        let transports = ChannelTransport::connected(3);
        let got: Vec<Vec<Vec<u8>>> = std::thread::scope(|s| {
            let hs: Vec<_> = transports
                .into_iter()
                .map(|mut t| {
                    s.spawn(move || {
                        let me = t.worker() as u8;
                        t.all_to_all((0..3).map(|to| vec![me, to]).collect()).unwrap()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (me, incoming) in got.iter().enumerate() {
            for (from, stream) in incoming.iter().enumerate() {
                assert_eq!(stream, &vec![from as u8, me as u8]);
            }
        }
    }

    #[test]
    fn a_lost_worker_is_an_error_not_a_hang() {
        let mut transports = ChannelTransport::connected(2);
        drop(transports.pop());
        let e = transports[0].all_to_all(vec![vec![1], vec![2]]).unwrap_err();
        assert!(matches!(e, Error::Exchange(_)), "{e}");
    }

    #[test]
    fn a_transport_for_other_workers_is_refused() {
        let (spec, index) = class("5x4");
        let partition = Partition::balanced(&index, 3).unwrap();
        let mut transport = ChannelTransport::connected(2).swap_remove(0);
        let start = Start::fresh(&spec, &index, &partition, 0);
        let e = run_worker(
            "5x4",
            &spec,
            &index,
            &partition,
            &mut transport,
            start,
            &mut NoCheckpoints,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(matches!(e, Error::Exchange(_)), "{e}");
    }

    #[test]
    fn a_position_outside_the_range_is_refused() {
        let (spec, index) = class("5x4");
        let partition = Partition::balanced(&index, 2).unwrap();
        let symmetries = Symmetries::trivial(&spec.geometry);
        let worker = Worker {
            kernel: Kernel::new(&spec.geometry, &index),
            index: &index,
            partition: &partition,
            me: 0,
            symmetries: &symmetries,
            canonical: vec![true; partition.blocks(0).end as usize],
            isa: Best::detect(),
            range: partition.cells(0),
            cells: (partition.cells(0).start..partition.cells(0).end)
                .map(|_| AtomicU8::new(UNSEEN))
                .collect(),
            bits: Vec::new(),
            bits_reached: false,
            halo: None,
            summary: Summary::new(),
            frontier: 1,
            class: spec.class,
        };
        let foreign = Message {
            index: partition.cells(1).start,
        };
        let past_end = Message {
            index: partition.cells(0).end,
        };
        let first = partition.blocks(0).start;
        for bad in [foreign, past_end] {
            let e = own_index(&index, &partition, 0, bad, first).unwrap_err();
            assert!(matches!(e, Error::Exchange(_)), "{e}");
        }
        let last = partition.cells(0).end - 1;
        let fine = own_index(&index, &partition, 0, Message { index: last }, first).unwrap();
        assert_eq!(fine.block, index.block_of(last));
        let reached = [fine];
        assert_eq!(worker.receive(&reached, 1, false, None), 1);
        assert_eq!(worker.receive(&reached, 1, false, None), 0);
    }

    /// What one worker of [`search_saving`] ends with: its share or its
    /// error, its notes, and the layers it reported as saved ones.
    type WorkerRun = (Result<(Partition, Vec<u8>)>, Vec<String>, usize);

    /// Searches class 0 of `name` by `workers` threads through
    /// [`search_on`] with `shares` as their checkpoints: the assembled
    /// table, or the first error, and worker 0's notes and how many layers
    /// it reported as saved ones (those of a resume, or the goal's).
    fn search_saving(
        name: &str,
        workers: usize,
        shares: &std::sync::Mutex<Vec<Option<Resume>>>,
        stop: Option<usize>,
    ) -> (Result<Vec<u8>>, Vec<String>, usize) {
        let (spec, index) = class(name);
        let results: Vec<WorkerRun> = std::thread::scope(|scope| {
            let handles: Vec<_> = ChannelTransport::connected(workers)
                .into_iter()
                .map(|mut transport| {
                    let (spec, index) = (&spec, &index);
                    scope.spawn(move || {
                        let mut memory = Memory::new(transport.worker(), shares, stop);
                        let mut saved = 0;
                        let mut observe = |event| {
                            if let Event::Layer { direction: None, .. } = event {
                                saved += 1;
                            }
                        };
                        let result = search_on(name, spec, index, &mut transport, &mut memory, &mut observe);
                        (result, memory.notes, saved)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let (notes, saved) = (results[0].1.clone(), results[0].2);
        let mut cells = Vec::new();
        for (result, _, _) in results {
            match result {
                Ok((_, share)) => cells.extend(share),
                Err(e) => return (Err(e), notes, saved),
            }
        }
        (Ok(cells), notes, saved)
    }

    #[test]
    fn stopped_workers_resume_together_to_the_same_table() {
        let (spec, index) = class("7x6");
        let expected = parallel::search("7x6", &spec, &index, &mut |_| {}).unwrap();
        let shares = std::sync::Mutex::new(vec![None; 3]);
        let (stopped, _, _) = search_saving("7x6", 3, &shares, Some(6));
        assert!(matches!(stopped, Err(Error::Stopped(_))), "{stopped:?}");
        let saved = shares.lock().unwrap().clone();
        assert!(saved.iter().all(|s| s.as_ref().is_some_and(|s| s.found.len() == 7)));

        // All three resume at layer 6 and finish the same table.
        let (resumed, notes, saved_layers) = search_saving("7x6", 3, &shares, None);
        assert!(resumed.unwrap() == expected);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(saved_layers, 7, "layers 0 to 6 came from the shares");
        assert!(shares.lock().unwrap().iter().all(|s| s.as_ref().unwrap().done));

        // One share missing, or one saved at another layer: every worker
        // starts over, and worker 0 says why.
        for (spoil, why) in [(0, "rank 1 has no share"), (1, "different layers")] {
            *shares.lock().unwrap() = saved.clone();
            let mut all = shares.lock().unwrap();
            if spoil == 0 {
                all[1] = None;
            } else {
                all[2].as_mut().unwrap().found.pop();
            }
            drop(all);
            let (again, notes, saved_layers) = search_saving("7x6", 3, &shares, None);
            assert!(again.unwrap() == expected);
            assert!(notes.len() == 1 && notes[0].contains(why), "{notes:?}");
            assert_eq!(saved_layers, 1, "only the goal's layer");
        }

        // Shares whose counts do not add up to the class's are not resumed.
        *shares.lock().unwrap() = saved.clone();
        let cell = shares.lock().unwrap()[0]
            .as_mut()
            .unwrap()
            .cells
            .iter_mut()
            .find(|c| **c == 6)
            .map(|c| *c = UNSEEN);
        assert!(cell.is_some());
        let (again, notes, saved_layers) = search_saving("7x6", 3, &shares, None);
        assert!(again.unwrap() == expected);
        assert!(notes.len() == 1 && notes[0].contains("not "), "{notes:?}");
        assert_eq!(saved_layers, 1);
    }

    #[test]
    fn partitioned_tables_equal_the_parallel_search() {
        for name in ["5x4", "7x6", "7x5-a1", "9x7-a2"] {
            let (spec, index) = class(name);
            let expected = parallel::search(name, &spec, &index, &mut |_| {}).unwrap();
            for workers in [1, 2, 3, 5] {
                let mut seen = Vec::new();
                let run = search(name, &spec, &index, workers, &mut |l| seen.push(*l)).unwrap();
                assert!(run.assemble() == expected, "{name} by {workers}");
                assert_eq!(run.layers, seen);
                assert_eq!(run.layers.len(), run.found.len());
                assert_eq!(run.layers.last().unwrap().found, 0);
                for (layer, &f) in run.layers.iter().zip(&run.found[1..]) {
                    assert_eq!(layer.found, f);
                }
                let messages: u64 = run.layers.iter().map(|l| l.messages).sum();
                assert_eq!(messages == 0, workers == 1, "{name} by {workers}");
            }
        }
    }
}
