//! How a class is cut between the workers of a search ([`Partition`]) and
//! how they talk ([`Transport`]): the ranks of an MPI job, threads of one
//! process in tests, or one worker alone, whose exchanges are no-ops
//! ([`ChannelTransport::solo`]). Each worker keeps only its share of the
//! table, and the workers exchange byte streams (positions as
//! [`Message`]s, bits, counts); worker 0 says when every worker saves its
//! share ([`save_now`]), and a search resumes only when every worker can
//! ([`agree`]); otherwise every worker starts over.

use std::ops::Range;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use crate::bitboard::Word;
use crate::board::Class;
use crate::error::{Error, Result};
use crate::symmetry::Symmetries;
use crate::tight::TightIndex;
use crate::variant::ClassSpec;

use crate::solver::boundary::{Save, ShareCheckpoints, ShareReport};
use crate::solver::direction::Direction;
use crate::solver::images::canonical_blocks_in;
use crate::solver::layer::{Event, Resumed};
use crate::solver::table::disk::DiskStats;

/// What a position of a block that may hold canonical positions weighs in
/// [`Partition::by_work`], against 1 for one of a block that holds none.
const EXPANDED_WEIGHT: u64 = 4;

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
    pub fn balanced<W: Word>(index: &TightIndex<W>, workers: usize) -> Result<Partition> {
        if workers == 0 {
            return Err(Error::Usage("a partitioned search needs at least one worker".into()));
        }
        let (blocks, len) = (index.white_sets(), index.len());
        // Cuts never go back: targets grow and `block_of` is monotone.
        let cuts = (1..workers).map(|w| {
            let target = (u128::from(len) * w as u128 / workers as u128) as u64;
            if target >= len { blocks } else { index.block_of(target) }
        });
        let bounds = [0].into_iter().chain(cuts).chain([blocks]).collect();
        Ok(Partition::of_bounds(index, bounds))
    }

    /// Cuts the blocks of `index` into `workers` contiguous ranges of about
    /// equal work, when a layer of the search of `spec` expands only the
    /// canonical positions of its symmetries: a block that may hold one
    /// weighs its positions 4 times (`EXPANDED_WEIGHT`), one that holds none
    /// (only images are set there) its positions once. With the reflection
    /// of 9x8 or 11x8, cutting by positions gave the last of 4 workers a
    /// third less to expand than the others.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] when `workers` is 0.
    pub fn by_work<W: Word>(spec: &ClassSpec<W>, index: &TightIndex<W>, workers: usize) -> Result<Partition> {
        if workers == 0 {
            return Err(Error::Usage("a partitioned search needs at least one worker".into()));
        }
        let blocks = index.white_sets();
        if workers == 1 {
            return Ok(Partition::of_bounds(index, vec![0, blocks]));
        }
        let weights: Vec<u64> = canonical_blocks_in(&Symmetries::of(&spec.geometry, spec.goal), index, 0..blocks)
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
    pub(super) fn of_bounds<W: Word>(index: &TightIndex<W>, bounds: Vec<u64>) -> Partition {
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
    pub(super) fn decode_each(stream: &[u8]) -> Result<impl Iterator<Item = Message> + '_> {
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
    /// every worker posted to this one; a worker takes each post before its
    /// next step of any kind.
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
    /// halo_bytes` (the layer counts, `8 · 9` bytes each way, left out).
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
    /// Positions whose codes changed owner before the layer: the workers
    /// re-cut their ranges when their shares of a layer's work would be
    /// unequal (`worker`).
    pub moved: u64,
    /// The positions a push scanned: those coded as the layer in the
    /// blocks it visited (for two bits, older layers of its residue too),
    /// the work its rate is measured in ([`Rates`](crate::solver::Rates)).
    pub scanned: u64,
    /// The layer's wall time, as worker 0 saw it.
    pub elapsed: Duration,
    /// For a table on disk, worker 0's: what it read and wrote from the
    /// last layer's end to this one's (its checkpoint's sync included).
    pub disk: Option<DiskStats>,
    /// When the layer went on from a mark of a stopped run (a table on
    /// disk worked alone): how far that run had worked it.
    pub resumed: Option<Resumed>,
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
pub(super) fn on_threads<R: Send>(
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
    let (done, failed): (Vec<_>, Vec<_>) = results.into_iter().partition(Result::is_ok);
    // Of equal keys, `min_by_key` keeps the first.
    match failed
        .into_iter()
        .filter_map(Result::err)
        .min_by_key(|e| matches!(e, Error::Exchange(_)))
    {
        Some(e) => Err(e),
        None => Ok((done.into_iter().filter_map(Result::ok).collect(), layers)),
    }
}

/// What every worker of a search of one class knows alike: the class, its
/// symmetries, and how it is cut.
pub(in crate::solver) struct ClassSearch<'a, W: Word = u64> {
    /// The variant's name, for the errors.
    pub name: &'a str,
    pub spec: &'a ClassSpec<W>,
    pub index: &'a TightIndex<W>,
    /// The symmetries whose orbits the search expands one position of.
    pub symmetries: Symmetries,
    pub partition: &'a Partition,
}

impl<'a, W: Word> ClassSearch<'a, W> {
    /// The search of class `spec` of variant `name`, cut as `partition`,
    /// expanding one position of each orbit of the class's symmetries
    /// (found from the rules).
    pub(in crate::solver) fn new(
        name: &'a str,
        spec: &'a ClassSpec<W>,
        index: &'a TightIndex<W>,
        partition: &'a Partition,
    ) -> ClassSearch<'a, W> {
        ClassSearch {
            name,
            spec,
            index,
            symmetries: Symmetries::of(&spec.geometry, spec.goal),
            partition,
        }
    }
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
    let on_disk = |observe: &mut dyn FnMut(Event)| {
        if let Some(disk) = layer.disk {
            observe(Event::OnDisk {
                class,
                depth: layer.depth,
                disk,
            });
        }
    };
    if layer.found == 0 {
        // The last layer's traffic is told too: on disk, a pull that
        // reads the whole table to find nothing.
        on_disk(observe);
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
        resumed: layer.resumed,
    });
    on_disk(observe);
    if exchanges {
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
}

/// This worker's number, when `transport` has as many workers as
/// `partition` has shares.
///
/// # Errors
///
/// [`Error::Exchange`] when it has not.
pub(super) fn check_workers<T: Transport + ?Sized>(transport: &T, partition: &Partition) -> Result<usize> {
    let (me, workers) = (transport.worker(), transport.workers());
    if workers != partition.workers() || me >= workers {
        return Err(Error::Exchange(format!(
            "worker {me} of {workers} cannot run a partition for {} workers",
            partition.workers()
        )));
    }
    Ok(me)
}

/// Which share a worker offers to resume from, as it tells the others:
/// the first word of its report ([`resume_words`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Offer {
    /// It has no share to resume.
    Nothing = 0,
    /// Its checkpoint.
    Checkpoint = 1,
    /// Its share written aside and never put in its checkpoint's place
    /// ([`ShareCheckpoints::resume_aside`]).
    Aside = 2,
}

/// What each worker tells the others of the share it could resume: the
/// little-endian words `[from, done, layers, found…, own…]`, or `[0]`.
fn resume_words(report: Option<(Offer, ShareReport)>) -> Vec<u8> {
    let Some((from, report)) = report else {
        return 0u64.to_le_bytes().to_vec();
    };
    [from as u64, u64::from(report.done), report.found.len() as u64]
        .into_iter()
        .chain(report.found)
        .chain(report.own)
        .flat_map(u64::to_le_bytes)
        .collect()
}

/// Why the workers of a search do not resume a class from their saved
/// shares, as worker 0 tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NoResume {
    /// This rank has no share of the class that it could resume.
    NoShare(usize),
    /// The shares were saved at different layers.
    Layers,
    /// The shares' own counts at `remoteness` add up to `sum`, not the
    /// class's `class`.
    Counts { remoteness: usize, sum: u64, class: u64 },
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
    if let Some(w) = reports
        .iter()
        .position(|r| r.first().is_none_or(|&f| f == Offer::Nothing as u64))
    {
        return Err(NoResume::NoShare(w));
    }
    let layers = reports[0].get(2).copied().unwrap_or(0) as usize;
    // `done`, the layer count and the class's counts, alike on every worker.
    let whole = |r: &Vec<u64>| r.get(1..3 + layers).map(<[u64]>::to_vec);
    if reports
        .iter()
        .any(|r| r.len() != 3 + 2 * layers || whole(r) != whole(&reports[0]))
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

/// What the workers agreed on a resume ([`agree`]).
#[derive(Debug)]
pub(super) enum Agreed<S> {
    /// Every worker resumes from the share it offered.
    Resume(S),
    /// Some worker offered a share written aside and they could not agree
    /// on it: every worker that did offers its checkpoint instead, and the
    /// others the same share again (given back).
    Again(Option<S>),
    /// Every worker searches the class from the start.
    Start,
}

/// Agrees with every other worker whether all of them resume the class
/// `class` from their saved shares (a collective step), this worker's
/// being `saved`, from where `from` says, which `report` describes: only
/// when they are [`resumable`]. When they are not and some worker offered
/// a share written aside, they try again with their checkpoints
/// ([`Agreed::Again`]); when they are not otherwise, worker 0 says why.
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails or a report does not decode.
pub(super) fn agree<T: Transport + ?Sized, S>(
    transport: &mut T,
    class: Class,
    saved: Option<(Offer, S)>,
    report: impl FnOnce(&S) -> ShareReport,
    checkpoints: &mut dyn ShareCheckpoints,
) -> Result<Agreed<S>> {
    let words_out = resume_words(saved.as_ref().map(|(from, s)| (*from, report(s))));
    let reports = transport
        .all_to_all(vec![words_out; transport.workers()])?
        .iter()
        .map(|stream| words(stream))
        .collect::<Result<Vec<_>>>()?;
    match resumable(&reports) {
        // Every report says a share, this worker's among them: `saved` is one.
        Ok(()) => Ok(saved.map_or(Agreed::Start, |(_, s)| Agreed::Resume(s))),
        Err(_) if reports.iter().any(|r| r.first() == Some(&(Offer::Aside as u64))) => Ok(Agreed::Again(
            saved.filter(|(from, _)| *from != Offer::Aside).map(|(_, s)| s),
        )),
        Err(why) => {
            if transport.worker() == 0 && reports.iter().any(|r| r.first() != Some(&(Offer::Nothing as u64))) {
                checkpoints.note(&format!(
                    "not resuming class {}: {why}; every rank searches it from the start",
                    class.name()
                ));
            }
            Ok(Agreed::Start)
        }
    }
}

/// The little-endian `u64` words of `stream`.
pub(super) fn words(stream: &[u8]) -> Result<Vec<u64>> {
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
pub(super) fn save_now<T: Transport + ?Sized>(
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

/// Once this worker has written its share of `class` (`wrote`) as `save`
/// (from [`save_now`]) asked, after the layers `found` counts: hears from
/// every worker whether it wrote its own (a collective step), puts the
/// shares in their checkpoints' places when all did, and then stops when
/// `save` asks to.
///
/// # Errors
///
/// This worker's own write error; [`Error::Exchange`] naming the workers
/// whose writes failed, or when the transport fails; [`Error::Stopped`]
/// for [`Save::AndStop`].
pub(super) fn saved<T: Transport + ?Sized>(
    transport: &mut T,
    checkpoints: &mut dyn ShareCheckpoints,
    wrote: Result<()>,
    save: Save,
    class: Class,
    found: &[u64],
) -> Result<()> {
    // Every worker says whether it wrote its share, and the shares take
    // their checkpoints' places only when all did: otherwise every worker
    // keeps its last checkpoint, all of one layer, to resume from. And
    // every worker has saved before any goes on or stops: a worker that
    // stopped at once would end an MPI job under one still saving.
    let votes = transport.all_to_all(vec![vec![u8::from(wrote.is_ok())]; transport.workers()])?;
    let failed: Vec<String> = (votes.iter().enumerate())
        .filter(|(_, vote)| vote.as_slice() != [1])
        .map(|(worker, _)| worker.to_string())
        .collect();
    if failed.is_empty() {
        let committed = checkpoints.commit(class);
        if save == Save::AndStop {
            // A stop waits for every share to be in its place: the first
            // worker to stop ends an MPI job, which would leave the shares
            // of workers still renaming aside.
            transport.all_to_all(vec![vec![u8::from(committed.is_ok())]; transport.workers()])?;
        }
        committed?;
    } else {
        checkpoints.abandon(class);
        wrote?;
        return Err(Error::Exchange(format!(
            "worker {} could not save its share of class {} at layer {}, so every worker keeps its last checkpoint",
            failed.join(", "),
            class.name(),
            found.len().saturating_sub(1)
        )));
    }
    if save == Save::AndStop {
        return Err(checkpoints.stopped(class, found));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::colex_unrank;
    use crate::solver::search::board;

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

    /// `p` cuts the blocks of `index` into `workers` contiguous ranges
    /// from the first block to the last, each block owned once and its
    /// cells among its owner's.
    fn assert_covers(p: &Partition, index: &TightIndex, workers: usize) {
        assert_eq!(p.workers(), workers);
        assert_eq!((p.blocks(0).start, p.cells(0).start), (0, 0));
        assert_eq!(p.blocks(workers - 1).end, index.white_sets());
        assert_eq!(p.cells(workers - 1).end, index.len());
        for w in 0..workers {
            if w + 1 < workers {
                assert_eq!(p.blocks(w).end, p.blocks(w + 1).start);
            }
            for r in p.blocks(w) {
                assert_eq!(p.owner(r), w);
                assert!(index.block(r).all(|i| p.cells(w).contains(&i)));
            }
        }
    }

    #[test]
    fn a_partition_covers_every_block_once_balanced_by_positions() {
        let (_, index, ..) = board("7x6");
        let largest = (0..index.white_sets())
            .map(|r| index.block(r).end - index.block(r).start)
            .max()
            .unwrap();
        for workers in [1, 2, 3, 5, 8] {
            let p = Partition::balanced(&index, workers).unwrap();
            assert_covers(&p, &index, workers);
            for w in 0..workers {
                let size = p.cells(w).end - p.cells(w).start;
                assert!(
                    size.abs_diff(index.len() / workers as u64) <= largest,
                    "{workers}: worker {w} has {size}"
                );
            }
        }
        assert!(matches!(Partition::balanced(&index, 0), Err(Error::Usage(_))));
    }

    #[test]
    fn a_partition_by_work_covers_every_block_once_balanced_by_work() {
        let (variant, index, ..) = board("9x6-a1");
        let spec = &variant.classes()[0];
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
            let p = Partition::by_work(spec, &index, workers).unwrap();
            assert_covers(&p, &index, workers);
            for w in 0..workers {
                let work: u64 = p.blocks(w).map(weight).sum();
                assert!(
                    work.abs_diff(total / workers as u64) <= 2 * heaviest,
                    "{workers}: worker {w} has {work} of {total}"
                );
            }
        }
        assert!(matches!(Partition::by_work(spec, &index, 0), Err(Error::Usage(_))));
    }

    #[test]
    fn messages_round_trip_little_endian() {
        let m = Message {
            index: 0x0102_0304_0506_0708,
        };
        assert_eq!(m.encode(), [8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(Message::decode(m.encode()), m);
        let mut stream = Vec::new();
        Message::encode_all(&[m, Message { index: 3 }], &mut stream);
        assert_eq!(Message::decode_all(&stream).unwrap(), [m, Message { index: 3 }]);
        assert!(matches!(Message::decode_all(&stream[1..]), Err(Error::Exchange(_))));
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
        let (_, index, ..) = board("5x4");
        let partition = Partition::balanced(&index, 3).unwrap();
        let transport = ChannelTransport::connected(2).swap_remove(0);
        let e = check_workers(&transport, &partition).unwrap_err();
        assert!(matches!(e, Error::Exchange(_)), "{e}");
    }
}
