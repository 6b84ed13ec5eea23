//! The worker of a tight search ([`search`](super)), written once over its
//! `Table` (a byte a position or two bits). Its share is the positions of
//! a range of blocks and a summary byte per block of it, and nothing per
//! position of anyone else's.
//!
//! A layer `d` runs on every worker in the direction the layer loop
//! chooses (`layers::run_layers`):
//!
//! - *push*: the worker expands its canonical positions coded as layer `d`
//!   in the blocks that hold a position of it (older layers with that code
//!   too, for two bits). An unseen neighbour in its own range is claimed at
//!   once; one in another's range sets its bit in the halo's outbox, and
//!   its owner claims it if it is unseen there.
//! - *pull*: every unseen canonical position of the worker with a
//!   neighbour in layer `d` joins layer `d + 1`. A neighbour in another
//!   worker's range is read from the halo: before the layer, every worker
//!   sends the others one bit per position of its blocks their white moves
//!   reach, set where the position is in layer `d`.
//!
//! Every position found has its images under the class's symmetries
//! claimed with it, here or by [`Message`]. A worker works its blocks in
//! rounds (about 8 MiB of images each, every worker running as many) and
//! trades each round's images before the next, so it never holds a whole
//! layer's; a worker alone (one rank or one thread) sets every image at
//! once, in one round, with no halo to work out and no cut to balance. A
//! position is written by its owner only, so each worker knows the lowest
//! tight indices of the last layer in its range; the lowest of them all
//! are the class's hardest positions, agreed at the end.
//!
//! The ranges move: before a layer, when the workers' estimates of their
//! blocks' work are more unequal than a move costs, they agree on new
//! contiguous ranges of equal work and hand over the codes of the blocks
//! that change hands (`recut`, which says why no one cut suits every
//! layer). What a checkpoint holds stays with each worker's *home*, the
//! range it started with: the layers' counts and hardest positions are
//! kept by home whoever writes them, and the workers go home before they
//! save, so a share's file is as if the ranges had never moved.

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::exchange::{COUNTS, Outgoing, Worked, end_layer, message_at, post_images, take_images};
use super::halo::{Halo, Reach, Reached};
use super::layers::{LayerWorker, run_layers};
use super::recut::{Pace, Units, Worth, balanced_cut, changing_owner, move_share, overlap};
use super::share::{
    Agreed, ClassSearch, LayerStats, Message, Offer, Partition, Transport, agree, check_workers, save_now, saved, tell,
    words,
};
use crate::bitboard::Bitboard;
use crate::bitboard::Word;
use crate::error::{Error, Result};
use crate::index::{DenseIndex, colex_rank, colex_unrank};
use crate::rules::Part;
use crate::symmetry::{BlockTest, Mirror, Symmetries};
use crate::tight::TightIndex;
use crate::variant::ClassSpec;

use crate::solver::HARDEST;
use crate::solver::boundary::{LayerHardest, Save, ShareCheckpoints, ShareReport, Snapshot, SnapshotRef, Wanted};
use crate::solver::hardest::{Lowest, MirrorHashes};
use crate::solver::images::{Batch, canonical_blocks_in, set_images};
#[cfg(target_arch = "x86_64")]
use crate::solver::isa::Bmi2;
use crate::solver::isa::{Best, Isa, Ranks, Tables};
use crate::solver::kernel::{Block, Kernel, Via};
use crate::solver::layer::each_block;
use crate::solver::layer::{Event, Resumed, goal_index, report_saved};
use crate::solver::summary::{CURRENT, NEXT, UNSEEN_LEFT, next_layer};
use crate::solver::table::disk::{DiskStats, OnDisk, Windows};
use crate::solver::table::{self, Carried, Claim, Table};

/// What one worker of a search ends with.
#[derive(Clone, Debug)]
pub struct Share<D> {
    /// The worker.
    pub worker: usize,
    /// How the class was cut when the search ended, the same for every
    /// worker: the tables are shares of it, as ranges move during a search.
    pub partition: Partition,
    /// The tight indices of its positions: its cells of `partition`.
    pub range: Range<u64>,
    /// Their codes: position `range.start + k` is entry `k`.
    pub table: D,
    /// `layers[d]`: positions at remoteness `d`, over every worker.
    pub layers: Vec<u64>,
    /// The tight indices of up to [`HARDEST`] positions of the last layer,
    /// over every worker, lowest first.
    pub hardest: Vec<u64>,
    /// When the search was asked for them: the public hashes of the mirror
    /// images of up to [`HARDEST`] positions of the last layer, in the
    /// mirroring class, lowest first.
    pub mirrored_hardest: Option<Vec<u64>>,
    /// For each position the search was asked to watch: its remoteness,
    /// `None` when unreachable.
    pub watched: Vec<Option<u64>>,
}

/// What one worker of a two-bit search ends with.
pub type TwoBitShare = Share<crate::mod3::Mod3Table>;

/// What a worker is asked besides the codes.
#[derive(Clone, Copy, Default)]
pub struct Asked<'a, W: Word = u64> {
    /// When a class is the mirror image of this one: the map from this
    /// class's cells to that class's and that class's public hash. The
    /// search then keeps that class's hardest positions as well.
    pub mirrored: Option<(&'a Mirror, &'a DenseIndex<W>)>,
    /// Tight indices whose remoteness every worker learns (the start's
    /// place in this class, say).
    pub watch: &'a [u64],
}

/// Searches the class of `class` into a table of kind `T` as one worker of
/// the search `transport` reaches, finding what `asked` asks: every worker
/// runs this with the same arguments, and resumes from `checkpoints` when
/// every worker can ([`agree_on_resume`]). Worker 0 tells `observe` of each
/// layer (a resumed search's saved layers first), and of the bytes it
/// exchanged when `exchanges` (a job of ranks, even of one; not a whole
/// class in one process).
///
/// # Errors
///
/// As [`run`].
pub(in crate::solver) fn search_on<T: Table, X: Transport + ?Sized, W: Word>(
    class: &ClassSearch<'_, W>,
    transport: &mut X,
    asked: Asked<'_, W>,
    checkpoints: &mut dyn ShareCheckpoints,
    exchanges: bool,
    disk: Option<&OnDisk>,
    observe: &mut dyn FnMut(Event),
) -> Result<Share<T::Done>> {
    let (spec, index) = (class.spec, class.index);
    // A stop asked for during the resume is honoured after it.
    let _stoppable = checkpoints.stops_when_asked().then(crate::stop::Searching::new);
    let label = format!(".{}.{}", class.name, spec.class.name());
    let at = disk.map(|disk| (disk, label.as_str()));
    let resume = agree_on_resume::<T, X, W>(spec, index, class.partition, transport, checkpoints, asked, at)?;
    let fresh = match resume {
        Some(_) => None,
        None => {
            checkpoints.start_over(spec.class)?;
            let range = class.partition.cells(transport.worker());
            T::fresh(range.start, range.end - range.start, disk, &label)?
        }
    };
    let lead = transport.worker() == 0;
    let (legal, mut total) = (index.len(), 1);
    if lead {
        let saved = resume.as_ref().map_or(&[1][..], |(_, found)| &found[..]);
        total = report_saved(spec.class, saved, legal, observe);
    }
    let resume = resume.map(|(saved, _)| saved);
    run_from::<T, X, W>(class, transport, asked, resume, fresh, checkpoints, &mut |layer| {
        if lead {
            tell(observe, spec.class, legal, &mut total, layer, exchanges);
        }
    })
}

/// [`search_on`] from `resume`, the share every worker agreed to resume
/// ([`agree_on_resume`]), or from the goal, telling `report` every layer's
/// counts, summed over the workers, and saving to `checkpoints` at the
/// layer boundaries where worker 0 says so.
///
/// # Errors
///
/// [`Error::TooLarge`] when a remoteness would not fit (on every worker at
/// once), [`Error::Exchange`] when the transport fails, a stream names a
/// position outside this worker's range or `resume` is not a share of
/// this worker's range, what a save ran into, and [`Error::Stopped`] (on
/// every worker) when the test hook of the checkpoints asks to stop.
pub(in crate::solver) fn run<T: Table, X: Transport + ?Sized, W: Word>(
    class: &ClassSearch<'_, W>,
    transport: &mut X,
    asked: Asked<'_, W>,
    resume: Option<Snapshot<T>>,
    checkpoints: &mut dyn ShareCheckpoints,
    report: &mut dyn FnMut(&LayerStats),
) -> Result<Share<T::Done>> {
    run_from(class, transport, asked, resume, None, checkpoints, report)
}

/// [`run`], starting a search that resumes from nothing with `fresh` as
/// its table when given (a table on disk, made in its directory) rather
/// than a new one in memory. A table on disk is worked in the windows its
/// segments allow ([`Windows`]).
///
/// # Errors
///
/// As [`run`], and [`Error::TooLarge`] when one block of a table on disk
/// reaches more segments than may be resident.
pub(in crate::solver) fn run_from<T: Table, X: Transport + ?Sized, W: Word>(
    class: &ClassSearch<'_, W>,
    transport: &mut X,
    asked: Asked<'_, W>,
    resume: Option<Snapshot<T>>,
    fresh: Option<T>,
    checkpoints: &mut dyn ShareCheckpoints,
    report: &mut dyn FnMut(&LayerStats),
) -> Result<Share<T::Done>> {
    let ClassSearch {
        name,
        spec,
        index,
        ref symmetries,
        partition,
    } = *class;
    let _stoppable = checkpoints.stops_when_asked().then(crate::stop::Searching::new);
    let me = check_workers(transport, partition)?;
    let mirror = asked
        .mirrored
        .map(|(mirror, dense)| MirrorHashes::new(mirror, dense, spec));
    // What setting up a range's blocks takes, which a move does for the
    // blocks it gains: the first guess at what a move costs.
    let setting_up = Instant::now();
    let isa = Best::detect()?;
    let (mut share, known, found, done) = Holding::start(
        spec, index, partition, me, symmetries, asked, mirror, resume, fresh, isa,
    );
    if let Some((positions, segments, max)) = share.table.segments() {
        let kernel = &share.kernel;
        share.windows = Some(Windows::cut(share.blocks.clone(), segments, positions, max, |r, f| {
            let own = index.block(r);
            if !own.is_empty() {
                f(own);
                kernel.white_targets(r, |t| f(index.block(t)));
            }
        })?);
        if share.table.kept() && partition.workers() == 1 {
            share.marks = checkpoints.marks().map(|every| {
                Mutex::new(Marks {
                    every,
                    last: Instant::now(),
                    took: Duration::ZERO,
                    label: format!("{name} {}", spec.class.name()),
                    disk: share.table.disk_stats().unwrap_or_default(),
                })
            });
        }
    }
    let mut costs = Costs::default();
    costs.worth.cost = setting_up.elapsed();
    let mut worker = Searcher {
        share,
        known,
        costs,
        spec,
        watch: asked.watch,
        frontier: *found.last().expect("the goal's layer"),
        ended: (0, (Lowest::default(), Lowest::default())),
    };
    let found = run_layers(
        name,
        &mut worker,
        transport,
        index.len(),
        found,
        done,
        checkpoints,
        report,
    )?;
    // What the workers agree on at the end; each keeps its table in the
    // range the last layer left it.
    let (share, known) = (worker.share, worker.known);
    let mirrored_hardest = match share.mirror {
        Some(_) => Some(agree_on_lowest(transport, &known.hardest.1)?),
        None => None,
    };
    let hardest = agree_on_lowest(transport, &known.hardest.0)?;
    let watched = agree_on_watched(transport, &known.watched)?;
    Ok(Share {
        worker: me,
        partition: share.partition,
        range: share.range,
        table: share.table.finish(),
        layers: found,
        hardest,
        mirrored_hardest,
        watched,
    })
}

/// A worker in the layer loop: its share, what its checkpoint holds
/// besides the codes, and what a layer's end leaves to take in.
struct Searcher<'a, T, W: Word> {
    share: Holding<'a, T, W>,
    known: Known,
    costs: Costs,
    spec: &'a ClassSpec<W>,
    /// The positions whose remoteness every worker learns.
    watch: &'a [u64],
    /// The positions of the newest layer, over every worker.
    frontier: u64,
    /// From the end of a layer to [`add_layer`](LayerWorker::add_layer):
    /// the positions every worker wrote into this one's home range, and
    /// the lowest of them.
    ended: (u64, (Lowest, Lowest)),
}

impl<T: Table, W: Word> LayerWorker for Searcher<'_, T, W> {
    const DEEPEST: u16 = T::DEEPEST;

    fn scan_bound(found: &[u64]) -> u64 {
        T::scan_bound(found)
    }

    fn push_work<X: Transport + ?Sized>(&mut self, transport: &mut X, depth: u64) -> Result<u64> {
        let work = self.share.push_work(T::code(depth))?;
        sum_over_workers(transport, work)
    }

    fn layer<X: Transport + ?Sized>(
        &mut self,
        transport: &mut X,
        checkpoints: &mut dyn ShareCheckpoints,
        depth: u64,
        pull: bool,
    ) -> Result<LayerStats> {
        let (share, costs, next) = (&mut self.share, &mut self.costs, T::code(depth + 1));
        let disk_before = share.table.disk_stats();
        let Balanced {
            work,
            moved,
            busiest,
            halo_bytes,
        } = share.balance(transport, &mut self.known, costs, depth, pull)?;
        share.table.begin_layer(T::code(depth), pull);
        let carried = share.table.take_carried();
        let mut resumed = None;
        if let Some(carried) = &carried {
            share.repair = share.changed_blocks(&carried.incomplete);
            if share.partition.workers() == 1 {
                share.skip_below = carried.through;
                resumed = (carried.through > share.blocks.start).then(|| Resumed {
                    through: carried.through - share.blocks.start,
                    blocks: share.blocks.end - share.blocks.start,
                });
            }
        }
        let (mut worked, mut own) = share.rounds(transport, checkpoints, &work, self.frontier, depth, pull)?;
        if let Some(carried) = carried {
            share.carry(carried, &mut worked.counts, &mut own);
        }
        // The layer's end: the last round's images and a push's halo go
        // out, what the others send is taken, and what every worker wrote
        // is settled by home.
        worked.counts[6] += halo_bytes; // the halo bytes, in the order of COUNTS
        let (busy, mut taking) = (worked.busy, Duration::ZERO);
        let stats = end_layer(transport, share.index, &share.partition, worked, |run, images| {
            let started = Instant::now();
            let taken = share.receive(run, next, pull, images, &mut own);
            taking += started.elapsed();
            Ok(taken)
        })?;
        self.ended = own.settle(transport, share.me)?;
        share.repair = Vec::new();
        share.skip_below = 0;
        share.table.end_layer(next, pull);
        // Its pace: the time it spent finding and taking, not waiting.
        costs.pace.note(pull, work.iter().sum(), busy + taking, stats.busiest);
        costs.units.note(pull, busiest, stats.busiest);
        let disk = share
            .table
            .disk_stats()
            .zip(disk_before)
            .map(|(now, before)| now.since(&before));
        Ok(LayerStats {
            moved,
            disk,
            resumed,
            ..stats
        })
    }

    /// Takes in [`ended`](Searcher::ended) and the watched positions this
    /// worker reached in layer `depth`.
    fn add_layer(&mut self, depth: u64, found: u64) {
        self.frontier = found;
        let (known, share) = (&mut self.known, &mut self.share);
        known.own.push(self.ended.0);
        known.hardest = self.ended.1;
        for (w, &i) in known.watched.iter_mut().zip(self.watch) {
            if w.is_none() && share.range.contains(&i) && share.table.reached(i) {
                *w = Some(depth);
            }
        }
        next_layer(&mut share.summary);
    }

    /// Saves when [`save_now`] says so, and from home: a worker that left
    /// its home range moves back first.
    fn boundary<X: Transport + ?Sized>(
        &mut self,
        transport: &mut X,
        checkpoints: &mut dyn ShareCheckpoints,
        found: &[u64],
        done: bool,
    ) -> Result<()> {
        let (known, share, class) = (&mut self.known, &mut self.share, self.spec.class);
        let save = match save_now(transport, checkpoints, class, found, done)? {
            // A table kept on disk moves on from its checkpoint with the
            // search: it is saved at every boundary (a sync and the seals).
            Save::No if share.table.kept() => Save::Yes,
            save => save,
        };
        if save == Save::No {
            return Ok(());
        }
        if share.partition != *share.home {
            share.move_to(share.home.clone(), transport)?;
            // As after every move: the new holder of a watched position
            // another worker reached learns its remoteness.
            known.watched = agree_on_watched(transport, &known.watched)?;
        }
        let hardest = LayerHardest {
            own: known.hardest.0.as_slice().to_vec(),
            mirrored: share.mirror.map(|_| known.hardest.1.as_slice().to_vec()),
        };
        // A share names the remoteness of the watched positions in its
        // range only.
        let watched: Vec<Option<u64>> = known
            .watched
            .iter()
            .zip(self.watch)
            .map(|(&w, i)| w.filter(|_| share.range.contains(i)))
            .collect();
        let sealed = share.table.seal();
        let wrote = sealed.and_then(|()| {
            checkpoints.save(SnapshotRef {
                class,
                range: share.range.clone(),
                found,
                own: &known.own,
                done,
                table: share.table.stored(),
                summary: &share.summary,
                hardest: &hardest,
                watched: &watched,
            })
        });
        saved(transport, checkpoints, wrote, save, class, found)?;
        // The save holds the whole table, as a mark would: the next mark is
        // due a whole interval after it, not after the last mark.
        if let Some(marks) = &self.share.marks {
            let disk = self.share.table.disk_stats().unwrap_or_default();
            marks.lock().unwrap_or_else(|e| e.into_inner()).saved(disk);
        }
        Ok(())
    }
}

/// What a worker has measured of the layers and moves so far, which
/// weighs its estimates of work and says whether a move of the cuts pays.
#[derive(Default)]
struct Costs {
    /// What a move costs, and the unit of work it is weighed in.
    worth: Worth,
    units: Units,
    /// Each worker's pace, which weighs its estimated work.
    pace: Pace,
}

/// A share ready for a layer ([`Holding::balance`]).
#[derive(Default)]
struct Balanced {
    /// The estimated work of each of its blocks.
    work: Vec<u64>,
    /// The positions that changed owner.
    moved: u64,
    /// The estimated work of the busiest share.
    busiest: u64,
    /// The bytes of halo it sent for a pull.
    halo_bytes: u64,
}

/// What a worker knows at a layer boundary besides its codes and summary:
/// what its share's checkpoint holds with them. All of it is of its home
/// range, the one it started with, wherever the ranges are now.
struct Known {
    /// `own[d]`: the positions of its home range at remoteness `d`.
    own: Vec<u64>,
    /// The lowest tight indices of its home range in the newest layer, and
    /// the lowest public hashes of their mirror images.
    hardest: (Lowest, Lowest),
    /// The remoteness of each watched position, once reached: of those in
    /// this worker's range, and of every one known when ranges last moved.
    watched: Vec<Option<u64>>,
}

/// Reads this worker's saved share of the class from `checkpoints`, if one
/// fits its range and what `asked` asks (each share's table holds its own
/// counts, which `checkpoints` checks as it reads it), and agrees with
/// every other worker whether all of them resume ([`agree`], a collective
/// step). Returns the share with the class's layer counts it was saved at,
/// or `None`: every worker starts from the goal.
///
/// A share written aside and never put in its checkpoint's place is
/// offered first: a job that ended between the workers' writes of a save
/// and their renames leaves some workers' checkpoints a layer ahead and the
/// others' shares of that layer aside. When the workers cannot agree on
/// those, they try their checkpoints. Only one share is in memory at once.
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails or a report does not decode.
pub(in crate::solver) fn agree_on_resume<T: Table, X: Transport + ?Sized, W: Word>(
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    partition: &Partition,
    transport: &mut X,
    checkpoints: &mut dyn ShareCheckpoints,
    asked: Asked<'_, W>,
    at: Option<(&OnDisk, &str)>,
) -> Result<Option<(Snapshot<T>, Vec<u64>)>> {
    let me = transport.worker();
    let wanted = Wanted {
        class: spec.class,
        index: index.blocks(),
        coding: T::CODING,
        blocks: partition.blocks(me),
        range: partition.cells(me),
        mirrored: asked.mirrored.is_some(),
        watch: asked.watch,
        on_disk: at.and_then(|(disk, _)| T::kept_in(disk)),
    };
    let report = |(report, _): &(ShareReport, Snapshot<T>)| report.clone();
    let with_report = |saved: Snapshot<T>| (saved.report(), saved);
    let aside = table::resume_aside::<T>(checkpoints, &wanted, at).map(|saved| (Offer::Aside, with_report(saved)));
    // Its checkpoint is read in the first round only when it has no share aside.
    let read_checkpoint = aside.is_none();
    let offered = aside
        .or_else(|| table::resume::<T>(checkpoints, &wanted, at).map(|saved| (Offer::Checkpoint, with_report(saved))));
    let from_aside = offered.as_ref().is_some_and(|(offer, _)| *offer == Offer::Aside);
    let (agreed, from_aside) = match agree(transport, spec.class, offered, report, checkpoints)? {
        Agreed::Again(kept) => {
            // This worker's checkpoint, read now if it offered its share
            // aside; one refused in the first round is not read again.
            let offered = kept
                .or_else(|| {
                    if read_checkpoint {
                        None
                    } else {
                        table::resume::<T>(checkpoints, &wanted, at).map(with_report)
                    }
                })
                .map(|saved| (Offer::Checkpoint, saved));
            (agree(transport, spec.class, offered, report, checkpoints)?, false)
        }
        agreed => (agreed, from_aside),
    };
    match agreed {
        Agreed::Resume((report, saved)) => {
            checkpoints.resumed(spec.class, from_aside)?;
            Ok(Some((saved, report.found)))
        }
        Agreed::Again(_) | Agreed::Start => Ok(None),
    }
}

/// The unit of a worker's estimate of a layer's work ([`Holding::work`]):
/// looking at a block. With one thread on 9x8 that took about 30 ns, a
/// position a push expanded about 12 times as long, and one a pull
/// searched about 3 times. A block costs something even when it has no
/// work: a worker with many such blocks and none with work is not idle.
const BLOCK_WORK: u64 = 1;

/// A position a push expands, in [`BLOCK_WORK`]s.
const PUSHED_WORK: f64 = 12.0;

/// A position a pull searches, in [`BLOCK_WORK`]s.
const PULLED_WORK: f64 = 3.0;

/// How many images outside its window a thread of a search on disk holds
/// before it spools them.
const SPOOL_BATCH: usize = 1 << 14;

/// Spooled positions a thread claims at a time ([`Holding::claim_spooled`]).
const CLAIM_CHUNK: usize = 1 << 13;

/// How many positions ahead of the one it claims [`Holding::receive`]
/// asks for the word of: a run's positions lie anywhere in its table.
const CLAIM_AHEAD: usize = 16;

/// The parts a window of a search on disk is worked in, between which the
/// spool is claimed when it holds its budget: what one part spools is all
/// a spool holds past it.
const WINDOW_PARTS: u64 = 16;

/// About how many bytes of images a rank sends in one round of a layer
/// (a kilobyte in this crate's unit tests, so that their small boards
/// trade images in many rounds too).
const ROUND_BYTES: u64 = if cfg!(test) { 1 << 10 } else { 8 << 20 };

/// In how many rounds a layer whose frontier holds `frontier` positions
/// trades its images: about [`ROUND_BYTES`] a round if the next layer is
/// as large, at most 64. Every worker works it out from what all know, so
/// all run as many rounds (a worker with fewer blocks has empty ones).
fn image_rounds(frontier: u64) -> u64 {
    (frontier.saturating_mul(Message::BYTES as u64) / ROUND_BYTES).clamp(1, 64)
}

/// The bounds of the `rounds` rounds of a layer on `blocks`, whose work is
/// estimated at `work[k]` for block `blocks.start + k`: contiguous runs of
/// blocks, about as much work each (at whole blocks), together all of them.
fn round_cuts(blocks: &Range<u64>, work: &[u64], rounds: u64) -> Vec<u64> {
    let total: u128 = work.iter().map(|&w| u128::from(w)).sum();
    let mut cuts = Vec::with_capacity(rounds as usize + 1);
    cuts.push(blocks.start);
    let (mut acc, mut at) = (0u128, 0);
    for k in 1..rounds {
        let target = total * u128::from(k) / u128::from(rounds);
        while at < work.len() && acc < target {
            acc += u128::from(work[at]);
            at += 1;
        }
        cuts.push(blocks.start + at as u64);
    }
    cuts.push(blocks.end);
    cuts
}

/// `blocks` cut into at most `n` runs of as many blocks each as can be,
/// in order, none empty.
fn parts(blocks: Range<u64>, n: u64) -> impl Iterator<Item = Range<u64>> {
    let (start, len) = (blocks.start, blocks.end - blocks.start);
    (0..n)
        .map(move |k| start + len * k / n..start + len * (k + 1) / n)
        .filter(|part| !part.is_empty())
}

/// What `old`, one entry for each block of `from`, becomes for the blocks
/// of `to`: the entries of the blocks in both kept, those of the others
/// worked out by `gained` for a run of them.
fn carried<T: Clone>(old: &[T], from: &Range<u64>, to: &Range<u64>, gained: impl Fn(Range<u64>) -> Vec<T>) -> Vec<T> {
    let kept = overlap(from, to);
    if kept.is_empty() {
        return gained(to.clone());
    }
    let mut new = gained(to.start..kept.start);
    new.extend_from_slice(&old[(kept.start - from.start) as usize..(kept.end - from.start) as usize]);
    new.extend(gained(kept.end..to.end));
    new
}

/// About what share of the positions of each block of `blocks` are
/// canonical under `symmetries` ([`BlockTest::canonical_share`]; none in a
/// block whose white set says none is).
fn canonical_shares<W: Word>(symmetries: &Symmetries, index: &TightIndex<W>, blocks: Range<u64>) -> Vec<f32> {
    (blocks.start as usize..blocks.end as usize)
        .into_par_iter()
        .with_min_len(1 << 10)
        .map(|r| {
            let r = r as u64;
            symmetries
                .block_test(colex_unrank(r, index.white()))
                .map_or(0.0, |test| test.canonical_share(index.safe(r), index.black()) as f32)
        })
        .collect()
}

/// The sum of every worker's `mine`, on every worker: a collective step.
fn sum_over_workers<X: Transport + ?Sized>(transport: &mut X, mine: u64) -> Result<u64> {
    let mut sum = 0u64;
    for stream in transport.all_to_all(vec![mine.to_le_bytes().to_vec(); transport.workers()])? {
        match *words(&stream)? {
            [theirs] => sum = sum.saturating_add(theirs),
            _ => return Err(Error::Exchange("a worker's count is not one word".into())),
        }
    }
    Ok(sum)
}

/// The remoteness of each watched position that any worker knows, the
/// lowest if two differ, on every worker: a collective step.
fn agree_on_watched<X: Transport + ?Sized>(transport: &mut X, watched: &[Option<u64>]) -> Result<Vec<Option<u64>>> {
    let mine: Vec<u8> = watched
        .iter()
        .flat_map(|w| w.map_or(u64::MAX, |d| d).to_le_bytes())
        .collect();
    let mut agreed = vec![None; watched.len()];
    for stream in transport.all_to_all(vec![mine; transport.workers()])? {
        let theirs = words(&stream)?;
        if theirs.len() != watched.len() {
            return Err(Error::Exchange(format!(
                "a worker sent {} watched positions, not {}",
                theirs.len(),
                watched.len()
            )));
        }
        // The earliest: a worker that learned of a position's layer late
        // could only have put it later.
        for (a, t) in agreed.iter_mut().zip(theirs) {
            if t != u64::MAX && a.is_none_or(|a| t < a) {
                *a = Some(t);
            }
        }
    }
    Ok(agreed)
}

/// The lowest of every worker's `lowest`, on each: a collective step.
fn agree_on_lowest<X: Transport + ?Sized>(transport: &mut X, lowest: &Lowest) -> Result<Vec<u64>> {
    let mine: Vec<u8> = lowest.as_slice().iter().flat_map(|i| i.to_le_bytes()).collect();
    let all = transport.all_to_all(vec![mine; transport.workers()])?;
    let mut merged = Lowest::default();
    for stream in &all {
        for i in words(stream)? {
            merged.offer(i);
        }
    }
    Ok(merged.as_slice().to_vec())
}

/// What one thread's share of a layer found: the counts of
/// [`LayerStats`] (found, expanded, neighbours, crossing, …), what it
/// wrote by home, and the positions for other workers.
struct Found {
    counts: [u64; COUNTS],
    own: Homes,
    outgoing: Outgoing,
}

impl Found {
    fn new(workers: usize) -> Found {
        Found {
            counts: [0; COUNTS],
            own: Homes::new(workers),
            outgoing: Outgoing::new(workers),
        }
    }

    fn merge(mut self, other: Found) -> Found {
        self.counts.iter_mut().zip(other.counts).for_each(|(c, o)| *c += o);
        self.own = self.own.merge(&other.own);
        self.outgoing = self.outgoing.join(other.outgoing);
        self
    }
}

/// What a worker wrote into a layer, by *home*: the worker whose range
/// held each position when the search started. Ranges move between layers
/// ([`recut`](super::recut)), but a share's checkpoint holds its home
/// range, so the counts and hardest positions of a layer are kept by home
/// and handed to it at the layer's end ([`settle`](Self::settle)).
#[derive(Clone, Debug)]
struct Homes {
    homes: Vec<Wrote>,
    /// The block last written into, and the lower bound of its positions'
    /// mirror images' hashes ([`MirrorHashes::lower_bound`]): a thread
    /// mostly writes into one block after another.
    bound: (u64, u64),
}

/// What a worker wrote into one home's range in a layer.
#[derive(Clone, Copy, Debug, Default)]
struct Wrote {
    count: u64,
    /// The lowest tight indices written.
    lowest: Lowest,
    /// The lowest public hashes of their mirror images, when asked for.
    mirrored: Lowest,
}

impl Homes {
    fn new(workers: usize) -> Homes {
        Homes {
            homes: vec![Wrote::default(); workers],
            bound: (u64::MAX, 0),
        }
    }

    /// A start for another part of the same work: what this one keeps
    /// of the lowest, so that a position the merge of the two would drop
    /// is not offered at all, and nothing counted. Merged back, it adds
    /// nothing twice: a value offered twice is kept once.
    fn seed(&self) -> Homes {
        Homes {
            homes: self.homes.iter().map(|wrote| Wrote { count: 0, ..*wrote }).collect(),
            bound: (u64::MAX, 0),
        }
    }

    fn merge(mut self, other: &Homes) -> Homes {
        for (a, b) in self.homes.iter_mut().zip(&other.homes) {
            a.count += b.count;
            a.lowest = a.lowest.merge(&b.lowest);
            a.mirrored = a.mirrored.merge(&b.mirrored);
        }
        self
    }

    /// Hands each home what this worker wrote there and gathers what every
    /// worker wrote into worker `me`'s home range, a collective step: how
    /// many positions, their lowest tight indices and the lowest hashes of
    /// their mirror images.
    fn settle<X: Transport + ?Sized>(self, transport: &mut X, me: usize) -> Result<(u64, (Lowest, Lowest))> {
        let outgoing = self
            .homes
            .iter()
            .map(|wrote| {
                let (lowest, mirrored) = (wrote.lowest.as_slice(), wrote.mirrored.as_slice());
                [wrote.count, lowest.len() as u64]
                    .into_iter()
                    .chain(lowest.iter().copied())
                    .chain(std::iter::once(mirrored.len() as u64))
                    .chain(mirrored.iter().copied())
                    .flat_map(u64::to_le_bytes)
                    .collect()
            })
            .collect();
        let mut home = Wrote::default();
        for (from, stream) in transport.all_to_all(outgoing)?.iter().enumerate() {
            let bad = || {
                Error::Exchange(format!(
                    "worker {from} sent worker {me} a layer's writes that do not decode"
                ))
            };
            let words = words(stream)?;
            let (&count, rest) = words.split_first().ok_or_else(bad)?;
            let (lowest, rest) = counted(rest).ok_or_else(bad)?;
            let (mirrored, rest) = counted(rest).ok_or_else(bad)?;
            if !rest.is_empty() {
                return Err(bad());
            }
            home.count += count;
            lowest.iter().for_each(|&i| home.lowest.offer(i));
            mirrored.iter().for_each(|&h| home.mirrored.offer(h));
        }
        Ok((home.count, (home.lowest, home.mirrored)))
    }
}

/// Splits `words` after a length word and at most [`HARDEST`] words it
/// counts: those words, and the rest.
fn counted(words: &[u64]) -> Option<(&[u64], &[u64])> {
    let (&n, rest) = words.split_first()?;
    let n = usize::try_from(n).ok().filter(|&n| n <= HARDEST && n <= rest.len())?;
    Some(rest.split_at(n))
}

/// One worker's state: its share of the table and the summary of its
/// blocks, and what it knows of the others' frontiers.
struct Holding<'a, T, W: Word> {
    kernel: Kernel<'a, W>,
    /// The instruction sets the kernel may use here.
    isa: Best,
    index: &'a TightIndex<W>,
    /// The ranges of blocks the workers own now.
    partition: Partition,
    /// The ranges they owned when the search started, whose shares their
    /// checkpoints hold: each position's *home*.
    home: &'a Partition,
    /// Whether `partition` differs from `home`.
    moved: bool,
    me: usize,
    symmetries: &'a Symmetries,
    /// For each of its blocks: whether it may hold a canonical position.
    canonical: Vec<bool>,
    /// For each of its blocks: about what share of its positions are
    /// canonical ([`BlockTest::canonical_share`]); none when it works alone.
    shares: Vec<f32>,
    /// Its share of the table: the positions of `range`.
    table: T,
    /// Its blocks' summary bytes ([`CURRENT`], [`NEXT`], [`UNSEEN_LEFT`]).
    summary: Vec<AtomicU8>,
    /// Its white-set ranks.
    blocks: Range<u64>,
    /// The tight indices of its positions.
    range: Range<u64>,
    /// The moves out of its blocks, counted, which its halo is made from.
    reach: Reach,
    /// What a pull layer sees of other workers' codes, once one has run.
    halo: Option<Halo>,
    /// The public hashes of mirror images, when asked for.
    mirror: Option<MirrorHashes<'a, W>>,
    /// For a table on disk: the windows its blocks are worked in.
    windows: Option<Windows>,
    /// In the first layer after a resume inside it: the blocks of the
    /// segments whose orbits may lack an image ([`Carried::incomplete`]),
    /// whose positions of the layer's code have their images claimed
    /// ([`complete_orbits`](Self::complete_orbits)).
    repair: Vec<bool>,
    /// In the first layer after a resume inside it: the block below which
    /// the stopped search had worked the layer whole ([`Carried::through`]),
    /// which it does not work again.
    skip_below: u64,
    /// For a table kept on disk worked alone: when it last marked how far
    /// a layer has gone ([`Table::mark`]).
    marks: Option<Mutex<Marks>>,
}

/// When a search on disk marks how far a layer has gone: at the end of a
/// window, once `every` has passed since the last mark, and so has
/// [`MARK_SHARE`] times what the last one took (writing back the window's
/// changed segments, which leaving it would do anyway, and a sync), so
/// that marks never take more than about a fifth of a search's time.
struct Marks {
    every: Duration,
    last: Instant,
    took: Duration,
    /// The variant and class searched, which a mark's note names.
    label: String,
    /// What the table had read and written at the last mark (or when the
    /// search started), which the next mark's note counts from.
    disk: DiskStats,
}

/// How many times what a mark took must pass before the next one.
const MARK_SHARE: u32 = 4;

impl Marks {
    /// Whether a mark is due; always, when `every` is zero (a test's way
    /// to mark after every window).
    fn due(&self) -> bool {
        let since = self.last.elapsed();
        self.every.is_zero() || (since >= self.every && since >= self.took * MARK_SHARE)
    }

    /// After a save at a layer's end, with the table's traffic `disk`
    /// then: the work is kept as far as a mark would keep it, so the next
    /// mark is due `every` from now and counts the traffic from here. (On
    /// 13x10 a mark came 29 s after the save that ended layer 9, as the
    /// hour had passed since the search began.)
    fn saved(&mut self, disk: DiskStats) {
        (self.last, self.disk) = (Instant::now(), disk);
    }
}

impl<'a, T: Table, W: Word> Holding<'a, T, W> {
    /// The share of worker `me` of `partition` in the search of `spec` as
    /// it starts: `resumed`, or the goal at layer 0, written in when it is
    /// the worker's. Returns it, what it knows, the count of each layer
    /// over every worker, and whether the search is over already.
    #[allow(clippy::too_many_arguments)]
    fn start(
        spec: &'a ClassSpec<W>,
        index: &'a TightIndex<W>,
        partition: &'a Partition,
        me: usize,
        symmetries: &'a Symmetries,
        asked: Asked<'a, W>,
        mirror: Option<MirrorHashes<'a, W>>,
        resumed: Option<Snapshot<T>>,
        new_table: Option<T>,
        isa: Best,
    ) -> (Holding<'a, T, W>, Known, Vec<u64>, bool) {
        let (blocks, range) = (partition.blocks(me), partition.cells(me));
        let goal = goal_index(spec, index);
        let fresh = resumed.is_none();
        let resumed = resumed.unwrap_or_else(|| Snapshot {
            table: new_table.unwrap_or_else(|| T::unseen(range.start, range.end - range.start)),
            summary: blocks
                .clone()
                .into_par_iter()
                .map(|r| if index.block(r).is_empty() { 0 } else { UNSEEN_LEFT })
                .collect(),
            found: vec![1],
            own: vec![u64::from(range.contains(&goal))],
            done: false,
            hardest: LayerHardest::default(),
            // The layer of each watched position this worker owns, once reached.
            watched: asked
                .watch
                .iter()
                .map(|&i| (i == goal && range.contains(&i)).then_some(0))
                .collect(),
        });
        let kernel = Kernel::new(&spec.geometry, index);
        let alone = partition.workers() == 1;
        let holding = Holding {
            reach: if alone {
                Reach::none(index)
            } else {
                Reach::new(&kernel, index, blocks.clone())
            },
            kernel,
            isa,
            index,
            partition: partition.clone(),
            home: partition,
            moved: false,
            me,
            symmetries,
            canonical: canonical_blocks_in(symmetries, index, blocks.clone()),
            // Only a worker among others estimates its blocks' work.
            shares: if alone {
                Vec::new()
            } else {
                canonical_shares(symmetries, index, blocks.clone())
            },
            table: resumed.table,
            // In place: the atomics have the layout of the plain integers.
            summary: resumed.summary.into_iter().map(AtomicU8::new).collect(),
            blocks,
            range,
            halo: None,
            mirror,
            windows: None,
            repair: Vec::new(),
            skip_below: 0,
            marks: None,
        };
        let mut known = Known {
            own: resumed.own,
            hardest: (Lowest::default(), Lowest::default()),
            watched: resumed.watched,
        };
        resumed.hardest.own.iter().for_each(|&i| known.hardest.0.offer(i));
        for &h in resumed.hardest.mirrored.iter().flatten() {
            known.hardest.1.offer(h);
        }
        if fresh && holding.range.contains(&goal) {
            holding.table.claim(goal, T::code(0), Claim::Unseen);
            holding
                .summary_of(colex_rank(spec.goal.white))
                .fetch_or(CURRENT, Ordering::Relaxed);
            known.hardest.0.offer(goal);
            if let Some(mirror) = &holding.mirror {
                known.hardest.1.offer(mirror.hash(spec.goal));
            }
        }
        (holding, known, resumed.found, resumed.done)
    }

    /// Readies the share for layer `depth + 1` (a pull or a push): moves
    /// the cuts when a balanced cut is worth what `costs` says a move costs
    /// (agreeing on the watched positions of `known` then), makes its halo
    /// when it has none, and for a pull trades the halo's codes.
    fn balance<X: Transport + ?Sized>(
        &mut self,
        transport: &mut X,
        known: &mut Known,
        costs: &mut Costs,
        depth: u64,
        pull: bool,
    ) -> Result<Balanced> {
        let (index, me, here) = (self.index, self.me, T::code(depth));
        if self.partition.workers() == 1 {
            // Nothing to balance, and no halo: every block is its own.
            self.halo.get_or_insert_with(Halo::alone);
            return Ok(Balanced::default());
        }
        let mut work = self.work(self.blocks.clone(), depth, pull);
        // Unit tests move ranges whenever shares are unequal, so that their
        // small boards move them too.
        costs.worth.unit = costs.units.of(pull);
        let asked_worth = (!cfg!(test)).then_some(costs.worth);
        let moving = Instant::now();
        let mut moved = 0;
        let weighed = costs.pace.weigh(transport, pull, &work)?;
        let cut = balanced_cut(transport, index, &self.partition, &weighed, asked_worth)?;
        let first = self.halo.is_none();
        if let Some(cut) = cut.to {
            moved = changing_owner(&self.partition, &cut);
            let before = self.blocks.clone();
            self.move_to(cut, transport)?;
            known.watched = agree_on_watched(transport, &known.watched)?;
            // The blocks it kept are estimated already.
            work = carried(&work, &before, &self.blocks, |gained| self.work(gained, depth, pull));
        }
        let mut halo_bytes = 0;
        if self.halo.is_none() {
            self.halo = Some(Halo::new(&self.reach, index, &self.partition, me, transport)?);
            // A move and its halo; the first halo adds to setting up.
            costs.worth.cost = if first { costs.worth.cost } else { Duration::ZERO } + moving.elapsed();
        }
        if pull {
            let (table, halo) = (&self.table, self.halo.as_mut().expect("a halo was just made"));
            halo_bytes = halo.exchange(index, me, transport, |i, n| table.matching(i, n, here))?;
        }
        Ok(Balanced {
            work,
            moved,
            busiest: cut.busiest,
            halo_bytes,
        })
    }

    /// Layer `depth + 1` (by a pull or a push), found in rounds: the
    /// layer's images go to their owners a share of the `work` at a time
    /// (as many rounds as the `frontier` asks), so no rank holds a whole
    /// layer's and every rank works about as long between two trades. A
    /// round's images go out when it ends and are taken when the next one
    /// does: a rank done with a round sooner than the others works on
    /// rather than waits, and waits for another only when a whole round
    /// ahead of it. Returns the last round's images and a push's halo, for
    /// [`end_layer`], and what this worker wrote, by home.
    fn rounds<X: Transport + ?Sized>(
        &self,
        transport: &mut X,
        checkpoints: &mut dyn ShareCheckpoints,
        work: &[u64],
        frontier: u64,
        depth: u64,
        pull: bool,
    ) -> Result<(Worked<'_>, Homes)> {
        let next = T::code(depth + 1);
        // One worker sets every image at once, holding none: one round.
        let rounds = if self.partition.workers() == 1 {
            1
        } else {
            image_rounds(frontier)
        };
        let cuts = round_cuts(&self.blocks, work, rounds);
        let mut own = Homes::new(self.home.workers());
        let (mut counts, mut busy) = ([0; COUNTS], Duration::ZERO);
        let (mut images, mut posted) = (Vec::new(), false);
        for (round, blocks) in cuts.windows(2).enumerate() {
            let working = Instant::now();
            let found = self.windowed(blocks[0]..blocks[1], depth, pull, checkpoints)?;
            counts.iter_mut().zip(found.counts).for_each(|(c, m)| *c += m);
            own = own.merge(&found.own);
            busy += working.elapsed();
            if posted {
                counts[0] += take_images(transport, self.index, &self.partition, |run| {
                    let working = Instant::now();
                    let taken = self.receive(run, next, pull, None, &mut own);
                    busy += working.elapsed();
                    Ok(taken)
                })?;
            }
            if round as u64 + 1 == rounds {
                images = found.outgoing.images;
                break;
            }
            let sent = post_images(transport, &self.partition, found.outgoing.images)?;
            posted = true;
            counts[3] += sent.0;
            counts[4] += sent.1;
            counts[5] += sent.2;
        }
        let push = (!pull).then(|| self.halo.as_ref().expect("a halo from the first layer"));
        let worked = Worked {
            counts,
            push,
            images,
            busy,
        };
        Ok((worked, own))
    }

    /// The summary byte of its block `r`.
    #[inline]
    fn summary_of(&self, r: u64) -> &AtomicU8 {
        &self.summary[(r - self.blocks.start) as usize]
    }

    /// Whether a layer works block `r`: it may hold a canonical position
    /// and its summary byte has `flag` ([`CURRENT`] for a push,
    /// [`UNSEEN_LEFT`] for a pull).
    #[inline]
    fn busy(&self, r: u64, flag: u8) -> bool {
        self.canonical(r) && self.summary_of(r).load(Ordering::Relaxed) & flag != 0
    }

    /// Whether a layer works block `r` ([`busy`](Self::busy)) and has
    /// not worked it before a resume inside it ([`skip_below`](Holding::skip_below)).
    #[inline]
    fn works(&self, r: u64, flag: u8) -> bool {
        r >= self.skip_below && self.busy(r, flag)
    }

    /// The estimated work of layer `depth` (a pull or a push) on each of
    /// its blocks `blocks`, in [`BLOCK_WORK`]s: the canonical positions it
    /// expands (coded as layer `depth` in a block holding the frontier) or
    /// searches (unseen in a block with some left), as the block's
    /// canonical share of those codes, weighed by [`PUSHED_WORK`] or
    /// [`PULLED_WORK`], plus one for the block.
    fn work(&self, blocks: Range<u64>, depth: u64, pull: bool) -> Vec<u64> {
        let (flag, want, weight) = if pull {
            (UNSEEN_LEFT, T::UNSEEN, PULLED_WORK)
        } else {
            (CURRENT, T::code(depth), PUSHED_WORK)
        };
        (blocks.start as usize..blocks.end as usize)
            .into_par_iter()
            .with_min_len(1 << 10)
            .map(|r| {
                let r = r as u64;
                if !self.busy(r, flag) {
                    return BLOCK_WORK;
                }
                let share = f64::from(self.shares[(r - self.blocks.start) as usize]);
                BLOCK_WORK + (self.table.count(self.index.block(r), want) as f64 * share * weight) as u64
            })
            .collect()
    }

    /// How many positions a push of the layer coded `here` scans in its
    /// blocks: those coded `here` in the blocks flagged [`CURRENT`] that
    /// may hold a canonical position.
    fn push_work(&self, here: u8) -> Result<u64> {
        let count = |blocks: Range<u64>| -> u64 {
            (blocks.start as usize..blocks.end as usize)
                .into_par_iter()
                .with_min_len(1 << 10)
                .map(|r| r as u64)
                .filter(|&r| self.busy(r, CURRENT))
                .map(|r| self.table.count(self.index.block(r), here))
                .sum()
        };
        let Some(windows) = &self.windows else {
            return Ok(count(self.blocks.clone()));
        };
        let mut total = 0;
        for (mut blocks, scope) in windows.blocks().zip(&windows.scopes) {
            if blocks.any(|r| self.busy(r, CURRENT)) {
                self.table.reside(scope)?;
                total += count(blocks);
            }
        }
        Ok(total)
    }

    /// [`layer`](Self::layer) on `blocks`, window by window for a table on
    /// disk, each window's segments made resident before it. The images of
    /// the positions found that fall outside the window are spooled, and
    /// claimed at the end, a bucket of segments at a time, as images
    /// another worker sent are; or sooner, between two parts of a window,
    /// when the spool holds its budget. An image claimed inside the layer
    /// is what a table in memory would have claimed at once: it takes the
    /// next layer's code, which this layer neither expands nor searches.
    fn windowed(
        &self,
        blocks: Range<u64>,
        depth: u64,
        pull: bool,
        checkpoints: &mut dyn ShareCheckpoints,
    ) -> Result<Found> {
        let Some(windows) = &self.windows else {
            return Ok(self.layer(blocks, depth, pull));
        };
        let flag = if pull { UNSEEN_LEFT } else { CURRENT };
        let mut found = Found::new(self.partition.workers());
        // Its blocks in `blocks`, if it has any work: a window with nothing
        // to do is not read in.
        let work = |window: Range<u64>| {
            let (start, end) = (window.start.max(blocks.start), window.end.min(blocks.end));
            (start..end)
                .any(|r| self.works(r, flag) || self.repairs(r))
                .then_some(start..end)
        };
        let windows: Vec<_> = windows.blocks().zip(&windows.scopes).collect();
        for (k, (window, scope)) in windows.iter().enumerate() {
            let Some(Range { start, end }) = work(window.clone()) else {
                continue;
            };
            let mut resident = false;
            for part in parts(start..end, WINDOW_PARTS) {
                if !resident {
                    self.table.reside(scope)?;
                    resident = true;
                    // The disk reads what the next window with work will,
                    // while this one is worked.
                    if let Some((_, next)) = windows[k + 1..].iter().find(|(w, _)| work(w.clone()).is_some()) {
                        self.table.read_ahead(next);
                    }
                }
                let part_end = part.end;
                found = found.merge(self.layer(part, depth, pull));
                let spooled = &mut found.outgoing.images[self.me];
                self.table.spool(spooled.drain(..).map(|m| m.index));
                // A stop asked for: marked here, the work so far is kept.
                if crate::stop::asked() && self.mark_after(part_end, depth, pull, checkpoints, &mut found, true)? {
                    return Err(self.stopped_at_mark(part_end, depth));
                }
                if self.table.spool_full() {
                    self.claim_spooled(&mut found, depth, pull)?;
                    resident = false;
                }
            }
            self.mark_after(end, depth, pull, checkpoints, &mut found, false)?;
        }
        self.claim_spooled(&mut found, depth, pull)?;
        Ok(found)
    }

    /// After a window of layer `depth + 1` whose blocks end at `end` (or a
    /// part of one, when a stop is asked for), for a table kept on disk
    /// worked alone: marks those below `end` as worked whole when a mark
    /// is due ([`Marks`]) or `now`, and tells `checkpoints` so: a long
    /// layer's progress. Returns whether it marked. What they found is in
    /// the window's segments, which the mark writes back; the images of
    /// its orbits that lie outside the window are claimed from the spool
    /// first (into `found`), so that a resume completes orbits
    /// ([`complete_orbits`](Self::complete_orbits)) only in the segments
    /// changed after the mark, and in those whose completion, after a
    /// resume, the mark has not reached.
    fn mark_after(
        &self,
        end: u64,
        depth: u64,
        pull: bool,
        checkpoints: &mut dyn ShareCheckpoints,
        found: &mut Found,
        now: bool,
    ) -> Result<bool> {
        // Below the blocks a resume did not work again, a mark would say
        // less than the one it resumed from.
        let Some(marks) = self.marks.as_ref().filter(|_| end > self.skip_below) else {
            return Ok(false);
        };
        let mut marks = marks.lock().unwrap_or_else(|e| e.into_inner());
        if !now && !marks.due() {
            return Ok(false);
        }
        let started = Instant::now();
        self.claim_spooled(found, depth, pull)?;
        if self.table.mark(depth + 1, end, &self.owed_from(end))? {
            let took = started.elapsed();
            let disk = self.table.disk_stats().unwrap_or_default();
            let moved = disk.since(&marks.disk);
            checkpoints.note(&format!(
                "{} layer {}: its white sets below {end} of {} are worked whole, marked on disk in {:.1} s; in the {:.0} s since the last mark or save, {} images spooled and claimed, {} segments read and {} written ({} MiB), {:.0} s of it reading and writing",
                marks.label,
                depth + 1,
                self.blocks.end,
                took.as_secs_f64(),
                marks.last.elapsed().as_secs_f64(),
                moved.spooled,
                moved.reads,
                moved.writes,
                moved.bytes >> 20,
                moved.waited_ns as f64 / 1e9,
            ));
            (marks.last, marks.took, marks.disk) = (Instant::now(), took, disk);
            return Ok(true);
        }
        Ok(false)
    }

    /// The error that stops layer `depth + 1` once a stop asked for has
    /// marked its white sets below `end` as worked whole.
    fn stopped_at_mark(&self, end: u64, depth: u64) -> Error {
        let label = self.marks.as_ref().map_or_else(String::new, |marks| {
            marks.lock().unwrap_or_else(|e| e.into_inner()).label.clone()
        });
        Error::Stopped(format!(
            "stopped inside layer {} of {label}, as asked (SIGUSR1): its white sets below {end} of {} are worked \
             whole and marked on disk beside its checkpoint, and the same command goes on from there",
            depth + 1,
            self.blocks.end,
        ))
    }

    /// Claims the images spooled so far for layer `depth`'s `found`, as
    /// images another worker sent are: a bucket of segments at a time,
    /// which leaves none of the window's segments resident.
    ///
    /// A run is claimed on every thread, a chunk of [`CLAIM_CHUNK`] each:
    /// a claim is one atomic write, and each chunk keeps its own count and
    /// lowest positions until they are merged. A chunk starts from the
    /// lowest the layer has found so far ([`Homes::seed`]): from none, the
    /// first claims of every chunk would each unrank its position and hash
    /// its mirror image (about a quarter of the samples of a profile of a
    /// 13x10 mark).
    fn claim_spooled(&self, found: &mut Found, depth: u64, pull: bool) -> Result<()> {
        let next = T::code(depth + 1);
        let (index, workers) = (self.index, self.partition.workers());
        self.table.unspool(&mut |spooled| {
            let seed = found.own.seed();
            let (count, own) = spooled
                .par_chunks(CLAIM_CHUNK)
                .map(|chunk| {
                    let mut own = seed.seed();
                    let Some(&first) = chunk.first() else {
                        return (0, own);
                    };
                    let mut near = index.block_of(first);
                    let run: Vec<Reached> = chunk
                        .iter()
                        .map(|&i| {
                            if !index.block(near).contains(&i) {
                                near = index.block_of_after(near, i);
                            }
                            Reached { index: i, block: near }
                        })
                        .collect();
                    (self.receive(&run, next, pull, None, &mut own), own)
                })
                .reduce(|| (0, Homes::new(workers)), |(a, x), (b, y)| (a + b, x.merge(&y)));
            found.counts[0] += count;
            found.own = std::mem::replace(&mut found.own, Homes::new(workers)).merge(&own);
        })
    }

    /// Moves this worker to its range of `to`, a collective step every
    /// worker takes with the same `to`: hands the others the codes and
    /// summary bytes of the blocks it gives up, takes those of the blocks
    /// it gains, and forgets its halo, which the next layer works out anew.
    fn move_to<X: Transport + ?Sized>(&mut self, to: Partition, transport: &mut X) -> Result<()> {
        if to == self.partition {
            return Ok(());
        }
        let table = std::mem::replace(&mut self.table, T::unseen(0, 0));
        let summary = std::mem::take(&mut self.summary)
            .into_iter()
            .map(AtomicU8::into_inner)
            .collect();
        let (words, summary) = move_share(transport, &self.partition, &to, T::BITS, table.into_words(), summary)?;
        let range = to.cells(self.me);
        self.table = T::from_words(range.start, range.end - range.start, words);
        self.summary = summary.into_iter().map(AtomicU8::new).collect();
        let blocks = to.blocks(self.me);
        self.canonical = carried(&self.canonical, &self.blocks, &blocks, |gained| {
            canonical_blocks_in(self.symmetries, self.index, gained)
        });
        self.shares = carried(&self.shares, &self.blocks, &blocks, |gained| {
            canonical_shares(self.symmetries, self.index, gained)
        });
        self.reach.move_to(&self.kernel, blocks.clone());
        self.blocks = blocks;
        self.range = to.cells(self.me);
        self.halo = None;
        self.moved = to != *self.home;
        self.partition = to;
        Ok(())
    }

    /// Whether its block `r` may hold a canonical position.
    #[inline]
    fn canonical(&self, r: u64) -> bool {
        self.canonical[(r - self.blocks.start) as usize]
    }

    /// The canonical test of block `r`'s positions; `None` when it holds none.
    #[inline]
    fn block_test(&self, r: u64) -> Option<BlockTest<'_, W>> {
        self.symmetries.block_test(colex_unrank(r, self.index.white()))
    }

    /// Layer `depth` on `blocks`, some of this worker's, shared by the
    /// threads of the rayon pool: a pull or a push.
    fn layer(&self, blocks: Range<u64>, depth: u64, pull: bool) -> Found {
        let workers = self.partition.workers();
        // A push visits the blocks holding the layer, a pull those that may
        // hold an unseen position.
        let flag = if pull { UNSEEN_LEFT } else { CURRENT };
        let me = self.me;
        let next = T::code(depth + 1);
        // A table on disk's images outside the window, a batch at a time.
        let spool = |found: &mut Found| {
            let spooled = &mut found.outgoing.images[me];
            if spooled.len() >= SPOOL_BATCH {
                self.table.spool(spooled.drain(..).map(|m| m.index));
            }
        };
        // Orbits completed first, after a resume inside the layer: a pull
        // counts every canonical position it finds unseen as its own write,
        // which it would not be if the completion claimed it meanwhile.
        let completed = match self.repair.is_empty() {
            true => Found::new(workers),
            false => each_block(
                blocks.clone(),
                |r| self.repairs(r),
                || Found::new(workers),
                |r, _: &mut Block<W>, found| {
                    self.complete_orbits(r, next, found);
                    spool(found);
                },
                Found::merge,
            ),
        };
        let found = each_block(
            blocks,
            |r| self.works(r, flag),
            || Found::new(workers),
            |r, block, found| {
                self.block_layer(r, depth, pull, block, found);
                spool(found);
            },
            Found::merge,
        );
        completed.merge(found)
    }

    /// Notes that this worker wrote its position `i` (block `r`,
    /// placement `part`) into the new layer: counts it, flags its block
    /// [`NEXT`] and offers it to the hardest candidates.
    #[inline]
    fn wrote(&self, counts: &mut [u64; COUNTS], own: &mut Homes, i: u64, r: u64, part: Part<W>) {
        self.wrote_lazily(counts, own, i, r, || part.white, || part);
    }

    /// [`wrote`](Self::wrote) for a position whose white set and placement
    /// are worked out only if its mirror image may be among the hardest.
    #[inline(always)]
    fn wrote_lazily(
        &self,
        counts: &mut [u64; COUNTS],
        own: &mut Homes,
        i: u64,
        r: u64,
        white: impl FnOnce() -> Bitboard<W>,
        part: impl FnOnce() -> Part<W>,
    ) {
        counts[0] += 1;
        let summary = self.summary_of(r);
        if summary.load(Ordering::Relaxed) & NEXT == 0 {
            summary.fetch_or(NEXT, Ordering::Relaxed);
        }
        let home = &mut own.homes[if self.moved { self.home.owner(r) } else { self.me }];
        home.count += 1;
        if home.lowest.admits(i) {
            home.lowest.offer(i);
            self.table.hardest(Some(i), None);
        }
        if let Some(mirror) = &self.mirror {
            if own.bound.0 != r {
                own.bound = (r, mirror.lower_bound(white()));
            }
            if home.mirrored.admits(own.bound.1) {
                let hash = mirror.hash(part());
                if home.mirrored.admits(hash) {
                    home.mirrored.offer(hash);
                    self.table.hardest(None, Some(hash));
                }
            }
        }
    }

    /// Takes in what the layer being found had written into a table kept
    /// on disk before a resume ([`Table::take_carried`]), once the layer
    /// is found again: its count, its lowest positions, and [`NEXT`] on
    /// the blocks of the segments it wrote into (more than hold the layer,
    /// which costs a look only).
    fn carry(&self, carried: Carried, counts: &mut [u64; COUNTS], own: &mut Homes) {
        counts[0] += carried.count;
        let home = &mut own.homes[self.me];
        home.count += carried.count;
        carried.lowest.iter().for_each(|&i| home.lowest.offer(i));
        carried.mirrored.iter().for_each(|&h| home.mirrored.offer(h));
        let changed = self.changed_blocks(&carried.changed);
        for (flags, _) in self.summary.iter().zip(&changed).filter(|(_, changed)| **changed) {
            flags.fetch_or(NEXT, Ordering::Relaxed);
        }
    }

    /// For each of its blocks: whether it holds a position of `cells`.
    fn changed_blocks(&self, cells: &[Range<u64>]) -> Vec<bool> {
        let mut blocks = vec![false; (self.blocks.end - self.blocks.start) as usize];
        for cells in cells.iter().filter(|c| !c.is_empty()) {
            let first = self.index.block_of(cells.start).max(self.blocks.start);
            let last = self.index.block_of(cells.end - 1).min(self.blocks.end - 1);
            (first..=last).for_each(|r| blocks[(r - self.blocks.start) as usize] = true);
        }
        blocks
    }

    /// The positions of the blocks from `end` on whose orbits
    /// [`complete_orbits`](Self::complete_orbits) is still to complete in
    /// this layer, in runs.
    fn owed_from(&self, end: u64) -> Vec<Range<u64>> {
        let mut owed: Vec<Range<u64>> = Vec::new();
        for r in end.max(self.blocks.start)..self.blocks.end {
            if !self.repairs(r) {
                continue;
            }
            let cells = self.index.block(r);
            match owed.last_mut() {
                Some(last) if last.end == cells.start => last.end = cells.end,
                _ => owed.push(cells),
            }
        }
        owed
    }

    /// Whether block `r` is one [`complete_orbits`](Self::complete_orbits)
    /// works in this layer.
    #[inline]
    fn repairs(&self, r: u64) -> bool {
        !self.repair.is_empty() && self.repair[(r - self.blocks.start) as usize]
    }

    /// In the first layer after a resume inside it, coded `next`: claims
    /// the unseen images of every position of block `r` with that code. A
    /// search stopped inside the layer may have written a position into
    /// the table's file and not its images, which lie in segments it had
    /// not written back; the layer found again would not write them, as it
    /// writes a position's images only when it writes the position. The
    /// older positions of the code have every image seen already.
    fn complete_orbits(&self, r: u64, next: u8, found: &mut Found) {
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = self.isa.bmi2 {
            // SAFETY: a `Bmi2` exists only where the processor has it.
            return unsafe { self.complete_orbits_bmi2(isa, r, next, found) };
        }
        self.complete_orbits_in(r, next, found);
    }

    /// [`complete_orbits`](Self::complete_orbits) compiled for BMI2: its
    /// scan of the block and the ranks of the images count cells by
    /// `popcnt`, not a dozen instructions each.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
    fn complete_orbits_bmi2(&self, _: Bmi2, r: u64, next: u8, found: &mut Found) {
        self.complete_orbits_in(r, next, found);
    }

    /// [`complete_orbits`](Self::complete_orbits), inlined into each
    /// instruction set's copy.
    #[inline(always)]
    fn complete_orbits_in(&self, r: u64, next: u8, found: &mut Found) {
        let white = colex_unrank(r, self.index.white());
        let mut batch = Batch::default();
        let Found { counts, own, outgoing } = found;
        self.table.scan(
            self.index,
            r,
            self.index.safe(r),
            next,
            // Inlined, so that it is compiled for the instruction set too.
            #[inline(always)]
            |_, black| {
                if batch.push(self.symmetries, Part { white, black }) {
                    self.write_images(&mut batch, next, Claim::Reached, counts, own, &mut outgoing.images);
                }
            },
        );
        self.write_images(&mut batch, next, Claim::Reached, counts, own, &mut outgoing.images);
    }

    /// Claims the images in `batch` (emptying it) for the layer coded
    /// `next` as `claim` says: its own when unseen, the others' by message.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn write_images(
        &self,
        batch: &mut Batch<W>,
        next: u8,
        claim: Claim,
        counts: &mut [u64; COUNTS],
        own: &mut Homes,
        images: &mut [Vec<Message>],
    ) {
        let table = &self.table;
        set_images(
            self.index,
            batch,
            #[inline(always)]
            |i| {
                if self.range.contains(&i) {
                    table.prefetch(i, claim);
                }
            },
            #[inline(always)]
            |i, r, image| {
                if !self.range.contains(&i) {
                    let (owner, message) = message_at(&self.partition, i, r);
                    images[owner].push(message);
                } else if !table.resident(i) {
                    // On disk, outside the window: spooled ([`windowed`](Self::windowed)).
                    images[self.me].push(Message { index: i });
                } else if table.claim(i, next, claim) {
                    self.wrote(counts, own, i, r, image);
                }
                0
            },
        );
    }

    /// Layer `depth + 1` in block `r`, by a pull or a push.
    fn block_layer(&self, r: u64, depth: u64, pull: bool, block: &mut Block<W>, found: &mut Found) {
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = self.isa.bmi2 {
            // SAFETY: a `Bmi2` exists only where the processor has it.
            return unsafe {
                match self.isa.ranks {
                    Ranks::Pext => self.block_layer_bmi2(isa, r, depth, pull, block, found),
                    Ranks::TablesCounted | Ranks::Tables => self.block_layer_counted(isa, r, depth, pull, block, found),
                }
            };
        }
        self.block_layer_in(Tables, r, depth, pull, block, found);
    }

    /// [`block_layer`](Self::block_layer) compiled for BMI2, ranking by
    /// `pext`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
    fn block_layer_bmi2(&self, isa: Bmi2, r: u64, depth: u64, pull: bool, block: &mut Block<W>, found: &mut Found) {
        self.block_layer_in(isa, r, depth, pull, block, found);
    }

    /// [`block_layer`](Self::block_layer) compiled for BMI2, ranking by
    /// tables: for a processor whose `pext` is microcoded.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
    fn block_layer_counted(&self, _: Bmi2, r: u64, depth: u64, pull: bool, block: &mut Block<W>, found: &mut Found) {
        self.block_layer_in(Tables, r, depth, pull, block, found);
    }

    /// [`block_layer`](Self::block_layer) for `isa`.
    #[inline(always)]
    fn block_layer_in<I: Isa>(&self, isa: I, r: u64, depth: u64, pull: bool, block: &mut Block<W>, found: &mut Found) {
        if pull {
            self.pull_block_in(isa, r, depth, block, found);
        } else {
            self.push_block_in(isa, r, depth, block, found);
        }
    }

    /// A push out of block `r` for `isa`: every canonical position coded
    /// as layer `depth` claims its unseen neighbours here for `depth + 1`
    /// and sends the others to their owners, with their images.
    #[inline(always)]
    fn push_block_in<I: Isa>(&self, isa: I, r: u64, depth: u64, block: &mut Block<W>, found: &mut Found) {
        let (here, next) = (T::code(depth), T::code(depth + 1));
        let Some(test) = self.block_test(r) else {
            return;
        };
        self.kernel.block_in(isa, r, block, |_| true);
        let table = &self.table;
        let mut blacks = std::mem::take(&mut block.blacks);
        blacks.clear();
        let mut scanned = 0;
        table.scan(self.index, r, block.safe, here, |_, black| {
            scanned += 1;
            if test.is_canonical(black) {
                blacks.push(black);
            }
        });
        let Found { counts, own, outgoing } = found;
        counts[1] += blacks.len() as u64;
        counts[8] += scanned;
        let halo = self.halo.as_ref().expect("a halo from the first layer");
        let _ = halo.route(&self.partition, self.me, block);
        let mut batch = Batch::default();
        // Kept here, not in `counts`, so that it may live in a register.
        let mut crossing = 0;
        let mut listed = std::mem::take(&mut block.listed);
        let neighbours = self.kernel.each_neighbour_routed_in(
            isa,
            block,
            &blacks,
            &mut listed,
            #[inline(always)]
            |bit| {
                crossing += 1;
                halo.reach(bit);
            },
            #[inline(always)]
            |j, after, via| {
                if table.claim(j, next, Claim::Reached) {
                    let t = match via {
                        Via::Black => r,
                        Via::White(k) => block.white_target(k).0,
                    };
                    self.wrote(counts, own, j, t, after);
                    if batch.push(self.symmetries, after) {
                        self.write_images(&mut batch, next, Claim::Reached, counts, own, &mut outgoing.images);
                    }
                }
            },
        );
        self.write_images(&mut batch, next, Claim::Reached, counts, own, &mut outgoing.images);
        counts[2] += neighbours;
        counts[3] += crossing;
        block.blacks = blacks;
        block.listed = listed;
    }

    /// A pull into block `r` for `isa`: every unseen canonical
    /// position with a neighbour in layer `depth`, here or in the halo,
    /// joins the layer with its images. Only this call writes the block's
    /// canonical positions; moves into blocks that hold no position of
    /// layer `depth` are not tried.
    #[inline(always)]
    fn pull_block_in<I: Isa>(&self, isa: I, r: u64, depth: u64, block: &mut Block<W>, found: &mut Found) {
        let (here, next) = (T::code(depth), T::code(depth + 1));
        let Some(test) = self.block_test(r) else {
            return;
        };
        let halo = self.halo.as_ref().expect("a halo before a pull");
        let current = |t: u64| self.summary_of(t).load(Ordering::Relaxed) & CURRENT != 0;
        let Some(routed) = halo.pull_moves(&self.kernel, isa, &self.partition, self.me, r, block, current) else {
            return;
        };
        let block = &*block;
        let table = &self.table;
        let Found { counts, own, outgoing } = found;
        let mut batch = Batch::default();
        let mut left = 0u64;
        // Kept here, not in `counts`, so that they may live in registers.
        let (mut expanded, mut looked) = (0, (0, 0));
        table.scan(
            self.index,
            r,
            block.safe,
            T::UNSEEN,
            #[inline(always)]
            |i, black| {
                left += 1;
                if !test.is_canonical(black) {
                    return;
                }
                expanded += 1;
                let hit = halo.pull_hit(
                    &self.kernel,
                    isa,
                    block,
                    black,
                    routed,
                    &mut looked,
                    #[inline(always)]
                    |j| table.at(j, here),
                );
                if hit {
                    let unseen = table.claim(i, next, Claim::Unseen);
                    debug_assert!(unseen, "only this pull writes a canonical position");
                    left -= 1;
                    let part = Part {
                        white: block.white,
                        black,
                    };
                    self.wrote(counts, own, i, r, part);
                    if batch.push(self.symmetries, part) {
                        self.write_images(&mut batch, next, Claim::Unseen, counts, own, &mut outgoing.images);
                    }
                }
            },
        );
        self.write_images(&mut batch, next, Claim::Unseen, counts, own, &mut outgoing.images);
        counts[1] += expanded;
        counts[2] += looked.0;
        counts[3] += looked.1;
        if left == 0 {
            self.summary_of(r).fetch_and(!UNSEEN_LEFT, Ordering::Relaxed);
        }
    }

    /// Claims for the layer coded `next`, found by a pull or a push, the
    /// unseen positions of `reached`, which another worker sent, and, given
    /// `images`, the images of each it claims (adding the others' to
    /// `images`); returns how many it claimed.
    fn receive(
        &self,
        reached: &[Reached],
        next: u8,
        pull: bool,
        mut images: Option<&mut Vec<Vec<Message>>>,
        own: &mut Homes,
    ) -> u64 {
        let mut counts = [0; COUNTS];
        let counts = &mut counts;
        let claim = if pull { Claim::Sent } else { Claim::Reached };
        let mut batch = Batch::default();
        // The runs come in order, so mostly a block at a time.
        let mut white = (u64::MAX, Bitboard::EMPTY);
        for (k, &Reached { index: i, block: r }) in reached.iter().enumerate() {
            if let Some(ahead) = reached.get(k + CLAIM_AHEAD) {
                self.table.prefetch(ahead.index, claim);
            }
            // A neighbour may have been reached by an older layer: only an
            // unseen position is written.
            if !self.table.claim(i, next, claim) {
                continue;
            }
            let Some(images) = images.as_deref_mut() else {
                // An image: its own images were set with it.
                let white = || {
                    if white.0 != r {
                        white = (r, colex_unrank(r, self.index.white()));
                    }
                    white.1
                };
                self.wrote_lazily(counts, own, i, r, white, || self.index.unrank_in_block(r, i));
                continue;
            };
            let part = self.index.unrank_in_block(r, i);
            self.wrote(counts, own, i, r, part);
            if batch.push(self.symmetries, part) {
                self.write_images(&mut batch, next, claim, counts, own, images);
            }
        }
        if let Some(images) = images {
            self.write_images(&mut batch, next, claim, counts, own, images);
        }
        counts[0]
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::remoteness::Cell;
    use crate::solver::boundary::NoCheckpoints;
    use crate::solver::search::{board, bytes, saving};
    use crate::solver::table::codes::CodeTable;

    /// A mark is due once its interval has passed since the last mark or
    /// save, and what a save at a layer's end restarts: the next mark
    /// counts its time and traffic from the save.
    #[test]
    fn a_save_restarts_the_clock_of_marks() {
        let every = std::time::Duration::from_millis(40);
        let mut marks = Marks {
            every,
            last: Instant::now(),
            took: std::time::Duration::ZERO,
            label: "9x8 a1".into(),
            disk: DiskStats::default(),
        };
        assert!(!marks.due());
        std::thread::sleep(every);
        assert!(marks.due(), "the interval has passed");
        let disk = DiskStats {
            reads: 7,
            ..DiskStats::default()
        };
        marks.saved(disk);
        assert!(!marks.due(), "a save was just made");
        assert_eq!(marks.disk.reads, 7, "the next mark counts from the save");
        std::thread::sleep(every);
        assert!(marks.due());
    }

    /// The rounds of a layer cover a worker's blocks once, in order, even
    /// with more rounds than blocks, and hold about as much work each;
    /// large layers take more rounds, up to 64, and these tests' boards
    /// more than one.
    #[test]
    fn rounds_cover_the_blocks_once() {
        for (blocks, rounds) in [(10..110, 7), (5..8, 64), (3..3, 4), (0..1, 1)] {
            // Heavy blocks first.
            let work: Vec<u64> = blocks.clone().map(|r| if r < 20 { 50 } else { 1 }).collect();
            let cuts = round_cuts(&blocks, &work, rounds);
            assert_eq!(cuts.len() as u64, rounds + 1);
            assert_eq!((cuts[0], *cuts.last().unwrap()), (blocks.start, blocks.end));
            assert!(cuts.windows(2).all(|w| w[0] <= w[1]));
            let total: u64 = work.iter().sum();
            for w in cuts.windows(2) {
                let round: u64 = (w[0]..w[1]).map(|r| work[(r - blocks.start) as usize]).sum();
                assert!(round <= total / rounds + 50, "{blocks:?} in {rounds}: {cuts:?}");
            }
        }
        assert_eq!(image_rounds(0), 1);
        assert_eq!(image_rounds(u64::MAX), 64);
        assert!(image_rounds(1_000) > 1);
        assert!(image_rounds(1_000) <= image_rounds(10_000));
    }

    /// A window's parts cover it once, in order, none empty, as even as
    /// whole blocks allow, however few blocks it has.
    #[test]
    fn a_windows_parts_cover_it_once() {
        for (blocks, n) in [(10..110, 16), (5..8, 16), (3..3, 16), (0..1, 1), (7..40, 4)] {
            let parts: Vec<_> = parts(blocks.clone(), n).collect();
            assert!(parts.len() as u64 <= n && parts.iter().all(|p| !p.is_empty()));
            let joined: Vec<u64> = parts.iter().flat_map(|p| p.clone()).collect();
            assert_eq!(joined, blocks.clone().collect::<Vec<_>>(), "{blocks:?} in {n}");
            let len = blocks.end - blocks.start;
            assert!(parts.iter().all(|p| p.end - p.start <= len.div_ceil(n)), "{parts:?}");
        }
    }

    /// What a worker knows of each block follows the block to its new
    /// range, and only blocks it did not have are worked out.
    #[test]
    fn block_facts_follow_the_blocks() {
        let fact = |r: u64| r * 10;
        for (from, to) in [
            (10..20, 15..30),
            (10..20, 5..12),
            (10..20, 0..40),
            (10..20, 12..14),
            (10..20, 30..35),
            (10..20, 20..20),
        ] {
            let old: Vec<u64> = from.clone().map(fact).collect();
            let worked = std::cell::Cell::new(0);
            let new = carried(&old, &from, &to, |gained| {
                assert!(
                    gained.end <= from.start || gained.start >= from.end || gained.is_empty(),
                    "{gained:?}"
                );
                worked.set(worked.get() + gained.end - gained.start);
                gained.map(fact).collect()
            });
            assert_eq!(new, to.clone().map(fact).collect::<Vec<_>>(), "{from:?} to {to:?}");
            let overlap = to.end.min(from.end).saturating_sub(to.start.max(from.start));
            assert_eq!(worked.get(), (to.end - to.start) - overlap);
        }
    }

    /// Every worker count gives, position for position, the codes, layers
    /// and hardest positions (the mirrored class's too) of the one-process
    /// two-bit search, and the byte search's remoteness of the positions it
    /// watches: on boards whose symmetry groups have 2 and 4 elements, and
    /// one whose classes mirror each other, pushing and pulling.
    #[test]
    fn shares_equal_the_one_process_search() {
        let mut mirrors = 0;
        for name in ["5x4", "7x6", "7x5-a1", "9x7-a2", "9x6"] {
            let (variant, index, back, watch) = board(name);
            let specs = variant.classes();
            let spec = &specs[0];
            let mirrored = back.as_ref().map(|m| (m, &specs[1].index));
            mirrors += usize::from(mirrored.is_some());
            // The byte search by one worker gives what every two-bit share
            // must agree with.
            let cells = bytes(name, spec, &index, &mut |_| {}).unwrap();
            let deepest = *cells.iter().filter(|&&c| c < Cell::UNREACHABLE.0).max().unwrap();
            let layers: Vec<u64> = (0..=deepest)
                .map(|d| cells.iter().filter(|&&c| c == d).count() as u64)
                .collect();
            let lowest = |key: &dyn Fn(u64) -> u64| {
                let mut at_last: Vec<u64> = (0..index.len())
                    .filter(|&i| cells[i as usize] == deepest)
                    .map(key)
                    .collect();
                at_last.sort_unstable();
                at_last.truncate(HARDEST);
                at_last
            };
            let hardest = lowest(&|i| i);
            let mirrored_hardest = mirrored.map(|(m, dense)| lowest(&|i| dense.rank(m.part(index.unrank(i)))));
            let remoteness = |i: u64| Cell(cells[i as usize]).remoteness().map(|r| u64::from(r.0));
            for workers in [1, 2, 3, 5] {
                let (searched, stats) =
                    saving::<CodeTable, _>(name, workers, |_, _, _, search| search(&mut NoCheckpoints));
                let shares: Vec<_> = searched.into_iter().map(|s| s.0.unwrap()).collect();
                assert!(stats.iter().any(|l| l.pull) || name == "5x4", "{name}: no layer pulled");
                // The ranges moved on the way, and the shares are of where
                // they ended.
                let moved = stats.iter().any(|l| l.moved > 0);
                assert!(moved || workers == 1, "{name}, {workers} workers: no range moved");
                assert_eq!(shares.len(), workers);
                for (w, share) in shares.iter().enumerate() {
                    assert_eq!(share.partition, shares[0].partition);
                    assert_eq!(share.range, share.partition.cells(w));
                    assert_eq!(share.layers, layers, "{name} {workers}");
                    assert_eq!(share.hardest, hardest, "{name} {workers}");
                    assert_eq!(share.mirrored_hardest, mirrored_hardest, "{name} {workers}");
                    let expected: Vec<Option<u64>> = watch.iter().map(|&i| remoteness(i)).collect();
                    assert_eq!(share.watched, expected, "{name} {workers}");
                    for i in share.range.clone() {
                        assert_eq!(
                            share.table.get(i - share.range.start),
                            remoteness(i).map(|d| (d % 3) as u8),
                            "{name}, {workers} workers, position {i}"
                        );
                    }
                }
            }
        }
        assert!(mirrors > 0, "no board with a mirrored class");
    }

    /// Checkpoints in memory, shared by the workers of a test: each saves
    /// its share into, and resumes it from, `shares[worker]`, and offers
    /// `asides[worker]` as its share written aside; worker 0 saves at every
    /// boundary and stops after layer `stop`, if given.
    struct Memory<'a> {
        worker: usize,
        shares: &'a Mutex<Vec<Option<Snapshot>>>,
        asides: &'a Mutex<Vec<Option<Snapshot>>>,
        stop: Option<usize>,
        note: &'a mut dyn FnMut(&str),
    }

    impl ShareCheckpoints for Memory<'_> {
        fn resume(&mut self, _: &Wanted<'_>) -> Option<Snapshot> {
            self.shares.lock().unwrap()[self.worker].clone()
        }

        fn resume_aside(&mut self, _: &Wanted<'_>) -> Option<Snapshot> {
            self.asides.lock().unwrap()[self.worker].clone()
        }

        fn resumed(&mut self, _: crate::board::Class, aside: bool) -> Result<()> {
            let written = self.asides.lock().unwrap()[self.worker].take();
            if aside {
                self.shares.lock().unwrap()[self.worker] = written;
            }
            Ok(())
        }

        fn due(&mut self, _: crate::board::Class, found: &[u64], done: bool) -> Save {
            if !done && Some(found.len() - 1) == self.stop {
                Save::AndStop
            } else {
                Save::Yes
            }
        }

        fn save(&mut self, snapshot: SnapshotRef<'_>) -> Result<()> {
            self.shares.lock().unwrap()[self.worker] = Some(snapshot.to_owned());
            Ok(())
        }

        fn note(&mut self, text: &str) {
            (self.note)(text);
        }
    }

    /// What the workers of [`search_saving`] end with: each worker's share,
    /// or the first error; worker 0's notes; and the layers the workers
    /// started from (1: the goal's).
    type Saving<D> = (Result<Vec<Share<D>>>, Vec<String>, usize);

    /// Searches class 0 of `name` by a thread for each of `shares`, which
    /// the threads agree to resume from and save into, stopping after layer
    /// `stop` if given.
    fn search_saving<T: Table>(
        name: &str,
        shares: &Mutex<Vec<Option<Snapshot>>>,
        stop: Option<usize>,
    ) -> Saving<T::Done> {
        let asides = Mutex::new(vec![None; shares.lock().unwrap().len()]);
        search_saving_aside::<T>(name, shares, &asides, stop)
    }

    /// [`search_saving`], each worker offering `asides[worker]` as its
    /// share written aside.
    fn search_saving_aside<T: Table>(
        name: &str,
        shares: &Mutex<Vec<Option<Snapshot>>>,
        asides: &Mutex<Vec<Option<Snapshot>>>,
        stop: Option<usize>,
    ) -> Saving<T::Done> {
        let workers = shares.lock().unwrap().len();
        let (searched, _) = saving::<T, _>(name, workers, |worker, _, note, search| {
            search(&mut Memory {
                worker,
                shares,
                asides,
                stop,
                note,
            })
        });
        let from = searched[0].1;
        assert!(
            searched.iter().all(|s| s.1 == from),
            "the workers started from one layer"
        );
        let notes = searched[0].2.clone();
        (searched.into_iter().map(|s| s.0).collect(), notes, from)
    }

    /// Asserts that `got` and `want` are the same shares, their tables as
    /// `codes` reads them.
    fn same<D>(got: &[Share<D>], want: &[Share<D>], codes: fn(&D) -> Vec<u8>, what: &str) {
        assert_eq!(got.len(), want.len(), "{what}");
        // The shares may end cut elsewhere: their tables end to end agree.
        let whole = |shares: &[Share<D>]| shares.iter().flat_map(|s| codes(&s.table)).collect::<Vec<u8>>();
        assert!(whole(got) == whole(want), "{what}: the table");
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g.layers, w.layers, "{what}");
            assert_eq!(g.hardest, w.hardest, "{what}");
            assert_eq!(g.mirrored_hardest, w.mirrored_hardest, "{what}");
            assert_eq!(g.watched, w.watched, "{what}");
        }
    }

    /// Workers stopped after a layer, pushing or pulling, resume together
    /// from their shares, either table, to the table, layers, hardest
    /// positions and watched remoteness of a search that did not stop;
    /// shares that do not agree are not resumed, and worker 0 says why.
    #[test]
    fn stopped_workers_resume_together_to_the_same_shares() {
        stopped_workers_resume::<CodeTable>(|t| (0..t.len()).map(|i| t.get(i).unwrap_or(3)).collect());
        stopped_workers_resume::<crate::solver::table::bytes::ByteTable>(Vec::clone);
    }

    fn stopped_workers_resume<T: Table>(codes: fn(&T::Done) -> Vec<u8>) {
        for name in ["7x5-a1", "9x6"] {
            let workers = 3;
            let (searched, stats) = saving::<T, _>(name, workers, |_, _, _, search| search(&mut NoCheckpoints));
            let want: Vec<_> = searched.into_iter().map(|s| s.0.unwrap()).collect();
            assert_eq!(
                want[0].mirrored_hardest.is_some(),
                name == "9x6",
                "{name}: a mirrored class"
            );
            let layers = want[0].layers.len();
            // A stop before the first pull, just before the first pull and
            // after it, before the last layer and after it (the resumed
            // search then finds nothing more: its hardest positions are the
            // saved ones).
            let first_pull = stats.iter().position(|l| l.pull).expect("a pull layer");
            let mut stops = vec![1, first_pull, first_pull + 1, layers - 2, layers - 1];
            stops.dedup();
            for stop in stops {
                let what = format!("{name} stopped after layer {stop}");
                let shares = Mutex::new(vec![None; workers]);
                let (stopped, _, _) = search_saving::<T>(name, &shares, Some(stop));
                assert!(
                    stopped.as_ref().err().is_some_and(|e| matches!(e, Error::Stopped(_))),
                    "{what}: {:?}",
                    stopped.err()
                );
                let saved = shares.lock().unwrap().clone();
                assert!(
                    saved
                        .iter()
                        .all(|s| s.as_ref().is_some_and(|s| s.found.len() == stop + 1))
                );

                // Resumed, and resumed once over, when the search only
                // agrees on the ends.
                for saved_layers in [stop + 1, layers] {
                    let (resumed, notes, from) = search_saving::<T>(name, &shares, None);
                    same(&resumed.unwrap(), &want, codes, &what);
                    assert!(notes.is_empty(), "{what}: {notes:?}");
                    assert_eq!(from, saved_layers, "{what}: the layers that came from the shares");
                    assert!(shares.lock().unwrap().iter().all(|s| s.as_ref().unwrap().done));
                }

                // One share missing, one saved at another layer, or own
                // counts that do not add up to the class's: every worker
                // starts over, and worker 0 says why.
                type Spoil = fn(&mut Vec<Option<Snapshot>>);
                let spoils: [(Spoil, &str); 3] = [
                    (|all| all[1] = None, "rank 1 has no share"),
                    (
                        |all| {
                            let s = all[2].as_mut().unwrap();
                            s.found.pop();
                            s.own.pop();
                        },
                        "different layers",
                    ),
                    (
                        |all| {
                            let own = all.iter_mut().flat_map(|s| s.as_mut().unwrap().own.iter_mut());
                            *own.filter(|n| **n > 0).last().unwrap() -= 1;
                        },
                        "not ",
                    ),
                ];
                for (spoil, why) in spoils {
                    let mut spoiled = saved.clone();
                    spoil(&mut spoiled);
                    *shares.lock().unwrap() = spoiled;
                    let (again, notes, from) = search_saving::<T>(name, &shares, None);
                    same(&again.unwrap(), &want, codes, &what);
                    assert!(notes.len() == 1 && notes[0].contains(why), "{what}: {notes:?}");
                    assert_eq!(from, 1, "{what}: only the goal's layer");
                }
            }
        }
    }

    /// A job that ended between its workers' renames of a save leaves some
    /// workers' checkpoints a layer ahead and the others' shares of that
    /// layer written aside: the workers resume that layer, and the shares
    /// aside take their checkpoints' places. Shares aside that not every
    /// worker has are dropped and the checkpoints resumed; and with no layer
    /// every worker has, every worker starts over, and worker 0 says why.
    #[test]
    fn workers_resume_from_their_shares_written_aside() {
        let (name, workers, stop) = ("7x5-a1", 3, 3);
        let (searched, _) = saving::<CodeTable, _>(name, workers, |_, _, _, search| search(&mut NoCheckpoints));
        let want: Vec<_> = searched.into_iter().map(|s| s.0.unwrap()).collect();
        let codes = |t: &<CodeTable as Table>::Done| (0..t.len()).map(|i| t.get(i).unwrap_or(3)).collect();
        let stopped_after = |layer: usize| {
            let shares = Mutex::new(vec![None; workers]);
            let (stopped, _, _) = search_saving::<CodeTable>(name, &shares, Some(layer));
            assert!(matches!(stopped, Err(Error::Stopped(_))));
            shares.into_inner().unwrap()
        };
        let (earlier, later) = (stopped_after(stop - 1), stopped_after(stop));
        // What befell the job; each worker's share in place (0: of the
        // earlier layer, 1: of the later, 2: none) and whether it has the
        // later one aside; the layers they then take; why not, if not.
        type Case = (&'static str, [usize; 3], [bool; 3], usize, &'static str);
        let cases: [Case; 3] = [
            (
                "worker 2 renamed, 0 and 1 did not",
                [0, 0, 1],
                [true, true, false],
                stop + 1,
                "",
            ),
            ("only worker 0 wrote aside", [0, 0, 0], [true, false, false], stop, ""),
            (
                "worker 1 has nothing",
                [0, 2, 0],
                [true, false, false],
                1,
                "rank 1 has no share",
            ),
        ];
        for (what, placed, aside, from_layer, why) in cases {
            let pick = |k: usize, w: usize| [&earlier, &later].get(k).and_then(|s| s[w].clone());
            let shares = Mutex::new((0..workers).map(|w| pick(placed[w], w)).collect());
            let asides = Mutex::new((0..workers).map(|w| pick(if aside[w] { 1 } else { 2 }, w)).collect());
            let (resumed, notes, from) = search_saving_aside::<CodeTable>(name, &shares, &asides, None);
            same(&resumed.unwrap(), &want, codes, what);
            assert_eq!(from, from_layer, "{what}: the layers that came from the shares");
            if why.is_empty() {
                assert!(notes.is_empty(), "{what}: {notes:?}");
                assert!(
                    asides.lock().unwrap().iter().all(Option::is_none),
                    "{what}: a share left aside"
                );
            } else {
                assert!(notes.len() == 1 && notes[0].contains(why), "{what}: {notes:?}");
            }
        }
    }
}
