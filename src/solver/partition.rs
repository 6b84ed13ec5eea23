//! The byte search split between workers that share nothing but messages:
//! the shape a search across machines (MPI ranks) would take.
//!
//! The [`TightIndex`] already cuts a class into blocks, one per white set,
//! each a contiguous range of cells. A [`Partition`] gives each worker a
//! contiguous range of white-set ranks, balanced by positions, and the worker
//! keeps the cells of its range only, in a `Vec<u8>` of its own. A layer
//! runs on every worker in one of two directions, chosen by the same rule as
//! [`parallel`](super::parallel) from counts every worker knows:
//!
//! - *push*, while the frontier is small: the worker expands each of its
//!   positions at depth `d` (through the shared move generator, `kernel`). A neighbour in
//!   its own range is claimed for `d + 1` at once; one in another worker's
//!   range becomes a [`Message`], buffered per destination (sorted,
//!   repeats dropped). One all-to-all ([`Transport::all_to_all`]) hands every
//!   worker the streams the others buffered for it, and it claims the
//!   positions they name that no layer has reached.
//! - *pull*, once the frontier is large: each unreached position looks for a
//!   neighbour at `d`. A neighbour may be another worker's, so the layer
//!   starts with a *halo* exchange: every worker sends each other worker the
//!   frontier bits (is this cell at `d`?) of its blocks that the other's white
//!   moves reach, one bit per position. Black moves stay in a block, so the
//!   halo is only the blocks one white move away; which those are is settled
//!   once, at the first pull layer.
//!
//! A second, small all-to-all sums the layer's counts, so every worker knows
//! whether the search goes on and which way the next layer runs.
//!
//! A layer reads only cells at `d` and writes only unreached cells, so which
//! worker claims a position first does not matter: the table is the
//! breadth-first distance from the goal, byte for byte the table of
//! [`parallel::search`](super::parallel::search).
//!
//! [`search`] runs the workers as threads of this process, each single
//! threaded, with a [`ChannelTransport`]; [`run_worker`] is what one worker
//! (one MPI rank) runs, over any [`Transport`].

use std::cell::RefCell;
use std::ops::Range;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::remoteness::Cell;
use crate::tight::{Subsets, TightIndex};
use crate::variant::ClassSpec;

use super::direction::Direction;
use super::kernel::{Block, Kernel};
use super::layer::{Event, goal_index, report_saved, too_deep};

/// A cell no search layer has reached yet; left so, it is unreachable.
const UNSEEN: u8 = Cell::UNREACHABLE.0;

/// A layer pulls instead of pushing when its frontier times this is more
/// than the positions not reached yet: the rule of
/// [`parallel`](super::parallel), so both searches pull on the same layers.
const PULL_RATIO: u64 = 2;

/// The white-set ranks of a class cut into one contiguous range per worker,
/// balanced by the number of positions (not of blocks): the unit of
/// ownership of a partitioned search.
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
        let starts = bounds
            .iter()
            .map(|&r| if r < blocks { index.block(r).start } else { len })
            .collect();
        Ok(Partition { bounds, starts })
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
/// owns it: the position is at remoteness `d + 1` in the layer that sent it,
/// unless it already has a smaller one.
///
/// The position is named by its block (the colex rank of its white set) and
/// its offset in the block (the colex rank of its black set among the
/// subsets of the block's safe cells), not by its tight index: both parts
/// follow from the placement alone, so a sender needs no table of where
/// other workers' blocks start, and the receiver adds its own block offset.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Message {
    /// The colex rank of the position's white set.
    pub block: u64,
    /// The position's offset within its block.
    pub position: u64,
}

impl Message {
    /// Bytes per message on the wire: `block` then `position`, each a
    /// little-endian `u64`.
    pub const BYTES: usize = 16;

    /// The message's wire form.
    pub fn encode(self) -> [u8; Self::BYTES] {
        let mut bytes = [0; Self::BYTES];
        bytes[..8].copy_from_slice(&self.block.to_le_bytes());
        bytes[8..].copy_from_slice(&self.position.to_le_bytes());
        bytes
    }

    /// The message of wire form `bytes`.
    pub fn decode(bytes: [u8; Self::BYTES]) -> Message {
        let half = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        Message {
            block: half(0),
            position: half(8),
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
        if !stream.len().is_multiple_of(Self::BYTES) {
            return Err(Error::Exchange(format!(
                "a message stream of {} bytes is not a whole number of {}-byte messages",
                stream.len(),
                Self::BYTES
            )));
        }
        Ok(stream
            .chunks_exact(Self::BYTES)
            .map(|c| Message::decode(c.try_into().expect("chunks of BYTES")))
            .collect())
    }
}

/// How the workers of a partitioned search reach each other: the one
/// collective a layer needs, an all-to-all of byte streams (MPI's
/// `MPI_Alltoallv`). Every worker calls it the same number of times, in the
/// same order.
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
}

impl Transport for ChannelTransport {
    fn worker(&self) -> usize {
        self.worker
    }

    fn workers(&self) -> usize {
        self.to.len()
    }

    fn all_to_all(&mut self, mut outgoing: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        let gone = |w: usize| Error::Exchange(format!("worker {w} of a partitioned search stopped"));
        outgoing.resize(self.workers(), Vec::new());
        let own = std::mem::take(&mut outgoing[self.worker]);
        for (w, (stream, to)) in outgoing.into_iter().zip(&self.to).enumerate() {
            if let Some(to) = to {
                to.send(stream).map_err(|_| gone(w))?;
            }
        }
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

/// What one layer of a partitioned search did, summed over the workers.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LayerStats {
    /// The remoteness of the positions the layer found; it expanded those
    /// at `depth - 1`.
    pub depth: u8,
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
    /// Of those, the neighbours in another worker's range.
    pub crossing: u64,
    /// Messages sent between workers when pushing: the crossing neighbours
    /// without the repeats a sender had for one destination.
    pub messages: u64,
    /// Halo bytes sent between workers when pulling: one bit per position
    /// of every block a worker's white moves reach in another's range.
    pub halo_bytes: u64,
    /// Bytes sent between workers: `messages ·` [`Message::BYTES`] `+
    /// halo_bytes` (the layer counts, `8 · 7` bytes each way, left out).
    pub bytes: u64,
    /// The most bytes one worker sent.
    pub max_worker_bytes: u64,
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
    let partition = Partition::balanced(index, workers)?;
    let (report, reports) = mpsc::channel::<LayerStats>();
    let mut layers = Vec::new();
    let results: Vec<Result<(WorkerTable, Vec<u64>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ChannelTransport::connected(workers)
            .into_iter()
            .map(|mut transport| {
                // Every worker sees the same sums; worker 0 tells them.
                let report = (transport.worker() == 0).then(|| report.clone());
                let partition = &partition;
                scope.spawn(move || {
                    run_worker(name, spec, index, partition, &mut transport, &mut |layer| {
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
    // A failing worker makes the others fail to exchange: report its own
    // error rather than theirs.
    let mut tables = Vec::with_capacity(workers);
    let mut found = Vec::new();
    let mut exchange_error = None;
    let mut other_error = None;
    for result in results {
        match result {
            Ok((table, f)) => {
                found = f;
                tables.push(table);
            }
            Err(e @ Error::Exchange(_)) => {
                exchange_error.get_or_insert(e);
            }
            Err(e) => {
                other_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = other_error.or(exchange_error) {
        return Err(e);
    }
    Ok(Partitioned {
        partition,
        tables,
        found,
        layers,
    })
}

/// Searches one class of variant `name` as one worker of a partitioned
/// search whose workers are reached through `transport` (the ranks of an
/// MPI job, say): every worker runs this with the same class, each owning
/// its share of [`Partition::balanced`]. Worker 0 tells `observe` of each
/// layer (summed over the workers). Returns the partition and this
/// worker's cells, in tight-index order from the first of its range.
///
/// # Errors
///
/// As [`run_worker`].
pub fn search_on<T: Transport + ?Sized>(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    transport: &mut T,
    observe: &mut dyn FnMut(Event),
) -> Result<(Partition, Vec<u8>)> {
    let partition = Partition::balanced(index, transport.workers())?;
    let me = transport.worker();
    let legal = index.len();
    let mut total = if me == 0 {
        report_saved(spec.class, &[1], legal, observe)
    } else {
        1
    };
    let (table, _) = run_worker(name, spec, index, &partition, transport, &mut |layer| {
        if me == 0 && layer.found > 0 {
            total += layer.found;
            observe(Event::Layer {
                class: spec.class,
                depth: u16::from(layer.depth),
                found: layer.found,
                total,
                legal,
                direction: Some(if layer.pull { Direction::Pull } else { Direction::Push }),
            });
        }
    })?;
    Ok((partition, table.cells))
}

/// Counts one worker keeps over a layer and sums with the others': found,
/// expanded, neighbours, crossing, messages, bytes, halo bytes.
const COUNTS: usize = 7;

/// Runs worker `transport.worker()` of a partitioned search of one class:
/// owns the cells of its range of `partition`, expands its positions layer
/// by layer, and exchanges the positions it reaches in other ranges through
/// `transport`. `report` sees every layer's counts, summed over the workers
/// (the same on every worker). Returns the worker's cells and the
/// positions found at each remoteness.
///
/// Every worker of the search must run this with the same `spec`, `index`
/// and `partition`.
///
/// # Errors
///
/// [`Error::TooLarge`] when a remoteness would not fit a [`Cell`] (on every
/// worker at once), [`Error::Exchange`] when the transport fails or a
/// stream names a position outside this worker's range.
pub fn run_worker<T: Transport + ?Sized>(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    partition: &Partition,
    transport: &mut T,
    report: &mut dyn FnMut(&LayerStats),
) -> Result<(WorkerTable, Vec<u64>)> {
    let me = transport.worker();
    let workers = transport.workers();
    if workers != partition.workers() || me >= workers {
        return Err(Error::Exchange(format!(
            "worker {me} of {workers} cannot run a partition for {} workers",
            partition.workers()
        )));
    }
    let mut worker = Worker {
        kernel: Kernel::new(&spec.geometry, index),
        index,
        partition,
        me,
        range: partition.cells(me),
        cells: vec![UNSEEN; (partition.cells(me).end - partition.cells(me).start) as usize],
        block: Block::default(),
        outgoing: vec![Vec::new(); workers],
        halo: None,
    };
    let goal = goal_index(spec, index);
    if worker.range.contains(&goal) {
        worker.cells[(goal - worker.range.start) as usize] = 0;
    }
    let mut found = vec![1u64];
    let mut total = 1u64;
    for depth in 0u8.. {
        let started = Instant::now();
        let frontier = *found.last().expect("the goal's layer");
        let pull = frontier * PULL_RATIO > index.len() - total;
        let mut counts = if pull {
            if worker.halo.is_none() {
                worker.halo = Some(Halo::new(&worker, transport)?);
            }
            let halo_bytes = worker.exchange_halo(transport, depth)?;
            let mut counts = worker.pull(depth);
            counts[6] = halo_bytes;
            counts
        } else {
            worker.expand(depth)
        };
        // Sorted and without repeats: fewer bytes, and the receiver walks
        // its cells in order.
        let mut streams = Vec::with_capacity(workers);
        let mut sent = 0u64;
        for out in &mut worker.outgoing {
            out.sort_unstable();
            out.dedup();
            sent += out.len() as u64;
            let mut stream = Vec::new();
            Message::encode_all(out, &mut stream);
            out.clear();
            streams.push(stream);
        }
        let incoming = transport.all_to_all(streams)?;
        for (from, stream) in incoming.iter().enumerate() {
            if from != me {
                counts[0] += worker.receive(stream, depth + 1)?;
            }
        }
        counts[4] = sent;
        counts[5] = sent * Message::BYTES as u64;
        // The layer's counts, summed (and the bytes' maximum) on every worker.
        let mut mine = Vec::with_capacity(COUNTS * 8);
        for c in counts {
            mine.extend_from_slice(&c.to_le_bytes());
        }
        let all = transport.all_to_all(vec![mine; workers])?;
        let mut sums = [0u64; COUNTS];
        let mut max_worker_bytes = 0;
        for stream in &all {
            if stream.len() != COUNTS * 8 {
                return Err(Error::Exchange(format!(
                    "a worker's layer counts came as {} bytes, not {}",
                    stream.len(),
                    COUNTS * 8
                )));
            }
            let theirs: Vec<u64> = stream
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
                .collect();
            for (s, t) in sums.iter_mut().zip(&theirs) {
                *s += t;
            }
            max_worker_bytes = max_worker_bytes.max(theirs[5] + theirs[6]);
        }
        let [
            next,
            expanded,
            neighbours,
            crossing,
            messages,
            message_bytes,
            halo_bytes,
        ] = sums;
        report(&LayerStats {
            depth: depth.saturating_add(1),
            pull,
            found: next,
            expanded,
            neighbours,
            crossing,
            messages,
            halo_bytes,
            bytes: message_bytes + halo_bytes,
            max_worker_bytes,
            elapsed: started.elapsed(),
        });
        if next == 0 {
            break;
        }
        if depth + 1 > Cell::MAX_REMOTENESS {
            return Err(too_deep(name));
        }
        found.push(next);
        total += next;
    }
    let table = WorkerTable {
        worker: me,
        range: worker.range,
        cells: worker.cells,
    };
    Ok((table, found))
}

/// One worker's state: its cells, and what it buffers for the others.
struct Worker<'a> {
    kernel: Kernel<'a>,
    index: &'a TightIndex,
    partition: &'a Partition,
    me: usize,
    /// The tight indices of its cells.
    range: Range<u64>,
    cells: Vec<u8>,
    /// Scratch space for the block being expanded.
    block: Block,
    /// `outgoing[w]`: the positions found for worker `w` this layer.
    outgoing: Vec<Vec<Message>>,
    /// What a pull layer sees of other workers' cells, once one has run.
    halo: Option<Halo>,
}

/// The frontier bits of the blocks in other workers' ranges that one white
/// move leads to from this worker's blocks: all a pull layer reads of cells
/// it does not own (black moves stay in a block).
struct Halo {
    /// The blocks, ascending (so grouped by owner, in worker order).
    blocks: Vec<u64>,
    /// `starts[k]`: the bit of `bits` where block `blocks[k]`'s bits start.
    starts: Vec<u64>,
    /// `any[k]`: whether block `blocks[k]` has a position in the frontier.
    any: Vec<bool>,
    /// `segments[w]..segments[w + 1]`: the words of `bits` worker `w` sends.
    segments: Vec<usize>,
    /// `requests[w]`: this worker's blocks in worker `w`'s halo, ascending.
    requests: Vec<Vec<u64>>,
    /// One bit per position of the blocks: whether it is in the frontier.
    bits: Vec<u64>,
}

impl Halo {
    /// Works out `worker`'s halo and tells every other worker which of its
    /// blocks it needs: a collective step, which every worker runs at the
    /// first pull layer.
    fn new<T: Transport + ?Sized>(worker: &Worker<'_>, transport: &mut T) -> Result<Halo> {
        let mine = worker.partition.blocks(worker.me);
        let wanted = RefCell::new(Vec::new());
        let mut block = Block::default();
        for r in mine.clone() {
            worker.kernel.block_where(r, &mut block, |t| {
                if !mine.contains(&t) {
                    wanted.borrow_mut().push(t);
                }
                true
            });
        }
        let mut blocks = wanted.into_inner();
        blocks.sort_unstable();
        blocks.dedup();
        let workers = worker.partition.workers();
        let mut starts = Vec::with_capacity(blocks.len());
        let mut segments = vec![0; workers + 1];
        let mut asks = vec![Vec::new(); workers];
        let mut bit = 0u64;
        let mut k = 0;
        for w in 0..workers {
            segments[w] = (bit / 64) as usize;
            while k < blocks.len() && worker.partition.owner(blocks[k]) == w {
                starts.push(bit);
                let b = worker.index.block(blocks[k]);
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
                    "worker {w} asked worker {} for block {r}, which it does not own",
                    worker.me
                )));
            }
            requests.push(list);
        }
        Ok(Halo {
            any: vec![false; blocks.len()],
            blocks,
            starts,
            segments,
            requests,
            bits: vec![0; bit as usize / 64],
        })
    }

    /// Where block `t`'s bits start, if it is in the halo.
    #[inline]
    fn find(&self, t: u64) -> Option<usize> {
        self.blocks.binary_search(&t).ok()
    }

    /// Whether position `i` of another worker is in the frontier.
    #[inline]
    fn at(&self, index: &TightIndex, i: u64) -> bool {
        let t = index.block_of(i);
        self.find(t).is_some_and(|k| {
            let bit = self.starts[k] + i - index.block(t).start;
            self.bits[(bit / 64) as usize] >> (bit % 64) & 1 == 1
        })
    }
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

impl Worker<'_> {
    /// Pushes from every position of this worker at `depth`: claims its own
    /// unreached neighbours for `depth + 1` and buffers the others'. Returns
    /// the layer's counts so far: found, expanded, neighbours, crossing.
    fn expand(&mut self, depth: u8) -> [u64; COUNTS] {
        let [mut found, mut expanded, mut neighbours, mut crossing] = [0u64; 4];
        let Worker {
            kernel,
            index,
            partition,
            range,
            cells,
            block,
            outgoing,
            ..
        } = self;
        let base = range.start;
        for r in partition.blocks(self.me) {
            let b = index.block(r);
            let lo = (b.start - base) as usize;
            let hi = (b.end - base) as usize;
            if !cells[lo..hi].contains(&depth) {
                continue;
            }
            kernel.block(r, block);
            for (j, black) in Subsets::new(block.safe, index.black()).enumerate() {
                if cells[lo + j] != depth {
                    continue;
                }
                expanded += 1;
                kernel.neighbours(block, black, |i| {
                    neighbours += 1;
                    if range.contains(&i) {
                        let cell = &mut cells[(i - base) as usize];
                        if *cell == UNSEEN {
                            *cell = depth + 1;
                            found += 1;
                        }
                    } else {
                        crossing += 1;
                        let to = index.block_of(i);
                        outgoing[partition.owner(to)].push(Message {
                            block: to,
                            position: i - index.block(to).start,
                        });
                    }
                    false
                });
            }
        }
        [found, expanded, neighbours, crossing, 0, 0, 0]
    }

    /// Sends every worker the frontier bits (cells at `depth`) of the blocks
    /// of this worker in its halo, and takes theirs into this worker's halo.
    /// Returns the bytes sent.
    fn exchange_halo<T: Transport + ?Sized>(&mut self, transport: &mut T, depth: u8) -> Result<u64> {
        let halo = self.halo.as_mut().expect("a halo before a pull");
        let base = self.range.start;
        let mut streams = Vec::with_capacity(halo.requests.len());
        let mut sent = 0;
        for list in &halo.requests {
            let bits: u64 = list
                .iter()
                .map(|&r| self.index.block(r).end - self.index.block(r).start)
                .sum();
            let mut words = vec![0u64; bits.div_ceil(64) as usize];
            let mut bit = 0usize;
            for &r in list {
                let b = self.index.block(r);
                for &c in &self.cells[(b.start - base) as usize..(b.end - base) as usize] {
                    words[bit / 64] |= u64::from(c == depth) << (bit % 64);
                    bit += 1;
                }
            }
            let mut stream = Vec::with_capacity(words.len() * 8);
            for w in words {
                stream.extend_from_slice(&w.to_le_bytes());
            }
            sent += stream.len() as u64;
            streams.push(stream);
        }
        let incoming = transport.all_to_all(streams)?;
        for (w, stream) in incoming.iter().enumerate() {
            if w == self.me {
                continue;
            }
            let segment = halo.segments[w]..halo.segments[w + 1];
            let words = words(stream)?;
            if words.len() != segment.len() {
                return Err(Error::Exchange(format!(
                    "worker {w} sent {} halo words, not {}",
                    words.len(),
                    segment.len()
                )));
            }
            halo.bits[segment].copy_from_slice(&words);
        }
        for (k, &t) in halo.blocks.iter().enumerate() {
            let b = self.index.block(t);
            let first = halo.starts[k];
            halo.any[k] =
                (first..first + (b.end - b.start)).any(|bit| halo.bits[(bit / 64) as usize] >> (bit % 64) & 1 == 1);
        }
        Ok(sent)
    }

    /// Pulls into every unreached position of this worker: it joins layer
    /// `depth + 1` when a neighbour, here or in the halo, is at `depth`.
    /// Only moves into blocks with a position at `depth` are tried. Returns
    /// the layer's counts so far: found, expanded, neighbours, crossing.
    fn pull(&mut self, depth: u8) -> [u64; COUNTS] {
        let [mut found, mut expanded, mut neighbours, mut crossing] = [0u64; 4];
        let Worker {
            kernel,
            index,
            partition,
            range,
            cells,
            block,
            halo,
            me,
            ..
        } = self;
        let halo = halo.as_ref().expect("a halo before a pull");
        let base = range.start;
        let mine = partition.blocks(*me);
        let own_any: Vec<bool> = mine
            .clone()
            .map(|r| {
                let b = index.block(r);
                cells[(b.start - base) as usize..(b.end - base) as usize].contains(&depth)
            })
            .collect();
        for r in mine.clone() {
            let b = index.block(r);
            let lo = (b.start - base) as usize;
            let hi = (b.end - base) as usize;
            if !cells[lo..hi].contains(&UNSEEN) {
                continue;
            }
            kernel.block_where(r, block, |t| {
                if mine.contains(&t) {
                    own_any[(t - mine.start) as usize]
                } else {
                    halo.find(t).is_some_and(|k| halo.any[k])
                }
            });
            block.black_moves = own_any[(r - mine.start) as usize];
            if !block.black_moves && block.white_moves() == 0 {
                continue;
            }
            for (j, black) in Subsets::new(block.safe, index.black()).enumerate() {
                if cells[lo + j] != UNSEEN {
                    continue;
                }
                expanded += 1;
                let hit = kernel.neighbours(block, black, |i| {
                    neighbours += 1;
                    if range.contains(&i) {
                        cells[(i - base) as usize] == depth
                    } else {
                        crossing += 1;
                        halo.at(index, i)
                    }
                });
                if hit {
                    cells[lo + j] = depth + 1;
                    found += 1;
                }
            }
        }
        [found, expanded, neighbours, crossing, 0, 0, 0]
    }

    /// Claims for `next` the unreached positions of `stream`, which another
    /// worker sent. Returns how many it claimed.
    fn receive(&mut self, stream: &[u8], next: u8) -> Result<u64> {
        let mut found = 0;
        let mine = self.partition.blocks(self.me);
        for m in Message::decode_all(stream)? {
            let b = if mine.contains(&m.block) {
                self.index.block(m.block)
            } else {
                0..0
            };
            if m.position >= b.end - b.start {
                return Err(Error::Exchange(format!(
                    "worker {} was sent position {} of block {}, which it does not own",
                    self.me, m.position, m.block
                )));
            }
            let cell = &mut self.cells[(b.start + m.position - self.range.start) as usize];
            if *cell == UNSEEN {
                *cell = next;
                found += 1;
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::parallel;
    use crate::variant::Variant;

    /// The first class of variant `name` and its tight index.
    fn class(name: &str) -> (ClassSpec, TightIndex) {
        let variant = Variant::named(name).unwrap();
        let spec = variant.classes()[0].clone();
        let (w, b) = spec.counts();
        let index = TightIndex::new(&spec.geometry, w, b);
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
    fn messages_round_trip_little_endian() {
        let m = Message {
            block: 0x0102_0304_0506_0708,
            position: 0x1112_1314_1516_1718,
        };
        let bytes = m.encode();
        assert_eq!(bytes[0], 0x08);
        assert_eq!(bytes[8], 0x18);
        assert_eq!(Message::decode(bytes), m);
        let mut stream = Vec::new();
        Message::encode_all(&[m, Message { block: 3, position: 0 }], &mut stream);
        assert_eq!(stream.len(), 2 * Message::BYTES);
        assert_eq!(
            Message::decode_all(&stream).unwrap()[1],
            Message { block: 3, position: 0 }
        );
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
        let e = run_worker("5x4", &spec, &index, &partition, &mut transport, &mut |_| {}).unwrap_err();
        assert!(matches!(e, Error::Exchange(_)), "{e}");
    }

    #[test]
    fn a_position_outside_the_range_is_refused() {
        let (spec, index) = class("5x4");
        let partition = Partition::balanced(&index, 2).unwrap();
        let mut worker = Worker {
            kernel: Kernel::new(&spec.geometry, &index),
            index: &index,
            partition: &partition,
            me: 0,
            range: partition.cells(0),
            cells: vec![UNSEEN; (partition.cells(0).end - partition.cells(0).start) as usize],
            block: Block::default(),
            outgoing: vec![Vec::new(); 2],
            halo: None,
        };
        let foreign = Message {
            block: partition.blocks(1).start,
            position: 0,
        };
        let first = partition.blocks(0).start;
        let past_end = Message {
            block: first,
            position: index.block(first).end - index.block(first).start,
        };
        for bad in [foreign, past_end] {
            let e = worker.receive(&bad.encode(), 1).unwrap_err();
            assert!(matches!(e, Error::Exchange(_)), "{e}");
        }
        let fine = Message {
            block: first,
            position: 0,
        };
        assert_eq!(worker.receive(&fine.encode(), 1).unwrap(), 1);
        assert_eq!(worker.receive(&fine.encode(), 1).unwrap(), 0);
    }

    #[test]
    fn partitioned_tables_equal_the_parallel_search() {
        for name in ["5x4", "7x6"] {
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
