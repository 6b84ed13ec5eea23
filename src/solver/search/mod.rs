//! The one search engine: a class's retrograde breadth-first search, layer
//! by layer from the goal, into a table of any kind (`table::Table`: a byte
//! a position or two bits), by one worker or many.
//!
//! A class is cut between workers that share nothing but messages
//! (`share`), or searched whole by one worker whose exchanges are no-ops.
//! Every worker runs the same layer loop (`layers`: push or pull by
//! measured rates, the report, the too-deep error, the saves), and what
//! one worker does inside a layer is written once (`worker`: its blocks in
//! rounds, claims, images, the block summary, the hardest positions, moving
//! the cuts). At a layer's end the workers exchange what they found in
//! each other's ranges (`exchange`); the halo (`halo`) carries a push's
//! neighbours and a pull's frontier between workers; `recut` moves the
//! cuts when the work is uneven.
//!
//! Layer `d` finds layer `d + 1` by a *push* while the frontier is small
//! (the positions of layer `d` claim their unreached neighbours) or by a
//! *pull* once it is large next to what is left (each unreached position
//! looks for a neighbour at `d` and stops at the first), whichever should
//! cost less at the measured [`Rates`](super::Rates). It expands or tests
//! only the canonical position of each orbit of the class's
//! [symmetries](crate::Symmetries) and claims the images of each position
//! with it (`images`), and visits only the blocks its
//! [`summary`](super::summary) bytes call for. At a layer boundary a
//! worker's whole state is a [`Snapshot`](super::Snapshot) (its hardest
//! candidates kept as it writes, `hardest`), which it hands to its
//! [`ShareCheckpoints`] and can start from.
//!
//! The entry points:
//!
//! - [`bytes`] and [`two_bit_with`]: a whole class in one process;
//! - [`threads`]: a class by several workers, each a thread of this
//!   process, exchanging only message streams (to test the exchanges);
//! - the class loop ([`Plan::search_shares`](super::Plan::search_shares))
//!   runs every class of a variant by one worker of a job over any
//!   [`Transport`], MPI ranks included.
//!
//! A layer reads only positions at `d` and writes only unreached ones, so
//! which worker claims a position first does not matter: the table is the
//! breadth-first distance from the goal, whatever the number of workers.

mod exchange;
mod halo;
mod layers;
mod recut;
mod share;
mod worker;

pub(super) use share::ClassSearch;
use share::on_threads;
pub use share::{ChannelTransport, LayerStats, Message, Partition, Transport};
pub(super) use worker::search_on;
pub use worker::{Asked, Share, TwoBitShare};

use crate::bitboard::Word;
use crate::error::Result;
use crate::index::DenseIndex;
use crate::symmetry::Mirror;
use crate::tight::TightIndex;
use crate::variant::ClassSpec;

use super::boundary::{NoCheckpoints, ShareCheckpoints};
use super::layer::Event;
use super::table::Table;
use super::table::bytes::ByteTable;
use super::table::codes::CodeTable;
use super::table::disk::{DiskStats, DiskTable, OnDisk};
use crate::mod3::file::Mod3File;

/// What the workers of a search in one process end with.
#[derive(Clone, Debug)]
pub struct Partitioned<D = Vec<u8>> {
    /// Each worker's [`Share`] of the class, in worker order, each of the
    /// partition the search ended with.
    pub shares: Vec<Share<D>>,
    /// Every layer's counts, one per layer, the last one finding nothing.
    pub layers: Vec<LayerStats>,
}

impl<D> Partitioned<D> {
    /// `found[d]`: positions at remoteness `d` (as in a checkpoint).
    pub fn found(&self) -> &[u64] {
        &self.shares[0].layers
    }
}

impl Partitioned {
    /// The whole table in tight-index order, the workers' cells end to
    /// end: what [`bytes`] returns.
    pub fn assemble(&self) -> Vec<u8> {
        self.shares.iter().flat_map(|s| s.table.iter().copied()).collect()
    }
}

/// Searches one class of variant `name` a byte a position, on the current
/// rayon pool, and returns its cells in `index` order: each its remoteness
/// or [`Cell::UNREACHABLE`](crate::Cell::UNREACHABLE).
///
/// # Errors
///
/// [`Error::TooLarge`](crate::Error::TooLarge) when a remoteness would not
/// fit a [`Cell`](crate::Cell).
pub fn bytes<W: Word>(
    name: &str,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    observe: &mut dyn FnMut(Event),
) -> Result<Vec<u8>> {
    bytes_with(name, spec, index, &mut NoCheckpoints, observe)
}

/// As [`bytes`], resuming from `checkpoints` when it has a saved state
/// for the class and handing it the state at layer boundaries.
///
/// # Errors
///
/// As [`bytes`], and whatever `checkpoints` fails with.
pub fn bytes_with<W: Word>(
    name: &str,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    checkpoints: &mut dyn ShareCheckpoints,
    observe: &mut dyn FnMut(Event),
) -> Result<Vec<u8>> {
    whole::<ByteTable, W>(name, spec, index, Asked::default(), checkpoints, None, observe).map(|share| share.table)
}

/// Searches one class by two bits a position (the remoteness mod 3), on
/// the current rayon pool, with `checkpoints` as [`bytes_with`] has them.
/// A resumed search reports its saved layers again, in order, before the
/// new ones. `mirrored` is as [`Asked::mirrored`], giving
/// [`Share::mirrored_hardest`].
///
/// # Errors
///
/// [`Error::TooLarge`](crate::Error::TooLarge) when a remoteness would not
/// fit a [`Remoteness`](crate::Remoteness), and whatever `checkpoints`
/// fails with.
pub fn two_bit_with<W: Word>(
    name: &str,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    mirrored: Option<(&Mirror, &DenseIndex<W>)>,
    checkpoints: &mut dyn ShareCheckpoints,
    observe: &mut dyn FnMut(Event),
) -> Result<TwoBitShare> {
    let asked = Asked { mirrored, watch: &[] };
    whole::<CodeTable, W>(name, spec, index, asked, checkpoints, None, observe)
}

/// Searches one class by two bits a position as [`two_bit_with`] does,
/// with its table kept on disk in `disk`'s directory and at most
/// `disk.max_bytes` of it in memory: the blocks are worked in windows
/// whose segments fit (see `table::disk`), and the images of a position
/// found that fall outside its window are spooled to disk and set at the
/// layer's end. Returns the codes, left in their file, and what the disk did.
///
/// # Errors
///
/// [`Error::Io`](crate::Error::Io) when the table's file cannot be made,
/// read or written; [`Error::TooLarge`](crate::Error::TooLarge) when one
/// block reaches more of the table than `disk.max_bytes` holds.
pub fn two_bit_on_disk<W: Word>(
    name: &str,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    disk: &OnDisk,
    observe: &mut dyn FnMut(Event),
) -> Result<(Mod3File, DiskStats)> {
    let asked = Asked::default();
    whole::<DiskTable, W>(name, spec, index, asked, &mut NoCheckpoints, Some(disk), observe)?.table
}

/// Searches one class of variant `name` a byte a position by `workers`
/// workers, each a thread of this process with its own share, exchanging
/// positions only as message streams through a [`ChannelTransport`].
/// `observe` sees each layer's counts as the layer ends, on the calling
/// thread.
///
/// # Errors
///
/// [`Error::Usage`](crate::Error::Usage) when `workers` is 0,
/// [`Error::TooLarge`](crate::Error::TooLarge) when a remoteness would not
/// fit a [`Cell`](crate::Cell), [`Error::Exchange`](crate::Error::Exchange)
/// when a worker fails.
pub fn threads<W: Word>(
    name: &str,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    workers: usize,
    observe: &mut dyn FnMut(&LayerStats),
) -> Result<Partitioned> {
    threads_of::<ByteTable, W>(name, spec, index, workers, Asked::default(), observe)
}

/// [`two_bit_on_disk`] finding what `asked` asks, for the tests of the
/// table on disk: the whole share.
#[cfg(test)]
pub(crate) fn on_disk_asked<W: Word>(
    name: &str,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    disk: &OnDisk,
    asked: Asked<'_, W>,
) -> Result<Share<Result<(Mod3File, DiskStats)>>> {
    whole::<DiskTable, W>(name, spec, index, asked, &mut NoCheckpoints, Some(disk), &mut |_| {})
}

/// [`two_bit_with`] finding what `asked` asks, for the tests of the table
/// on disk.
#[cfg(test)]
pub(crate) fn in_memory_asked<W: Word>(
    name: &str,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    asked: Asked<'_, W>,
) -> Result<TwoBitShare> {
    whole::<CodeTable, W>(name, spec, index, asked, &mut NoCheckpoints, None, &mut |_| {})
}

/// A whole class in one process: the search by one worker, whose
/// exchanges do nothing and are not told of.
fn whole<T: Table, W: Word>(
    name: &str,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    asked: Asked<'_, W>,
    checkpoints: &mut dyn ShareCheckpoints,
    disk: Option<&OnDisk>,
    observe: &mut dyn FnMut(Event),
) -> Result<Share<T::Done>> {
    let partition = Partition::by_work(spec, index, 1)?;
    let class = ClassSearch::new(name, spec, index, &partition);
    let solo = &mut ChannelTransport::solo();
    search_on::<T, _, W>(&class, solo, asked, checkpoints, false, disk, observe)
}

/// [`threads`] into a table of kind `T`, finding what `asked` asks.
fn threads_of<T: Table, W: Word>(
    name: &str,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    workers: usize,
    asked: Asked<'_, W>,
    observe: &mut dyn FnMut(&LayerStats),
) -> Result<Partitioned<T::Done>> {
    let partition = Partition::by_work(spec, index, workers)?;
    let class = ClassSearch::new(name, spec, index, &partition);
    let (shares, layers) = on_threads(workers, observe, |transport: &mut ChannelTransport, report| {
        worker::run::<T, _, W>(&class, transport, asked, None, &mut NoCheckpoints, report)
    })?;
    Ok(Partitioned { shares, layers })
}

/// A worker's search in [`saving`], with the checkpoints it is given.
#[cfg(test)]
pub(crate) type Searching<'a> = &'a mut dyn FnMut(&mut dyn ShareCheckpoints);

/// Class 0 of `name` as [`board`] has it, searched into a `T` table by
/// `workers` threads, `each(w, wanted, note, search)` making worker `w`'s
/// checkpoints for the share `wanted`, which tell `note` what they note,
/// and searching with them, which resumes when every worker can: each
/// worker's share or error, the layers it started from (1: the goal's),
/// its notes and what `each` returned; and every layer's counts.
#[cfg(test)]
#[allow(clippy::type_complexity)]
fn saving<T: Table, R: Send>(
    name: &str,
    workers: usize,
    each: impl Fn(usize, &super::Wanted<'_>, &mut dyn FnMut(&str), Searching<'_>) -> R + Sync,
) -> (Vec<(Result<Share<T::Done>>, usize, Vec<String>, R)>, Vec<LayerStats>) {
    let (variant, index, back, watch) = board(name);
    let (spec, index) = (&variant.classes()[0], &index);
    let mirrored = back.as_ref().map(|m| (m, &variant.classes()[1].index));
    let asked = Asked {
        mirrored,
        watch: &watch,
    };
    let partition = Partition::by_work(spec, index, workers).unwrap();
    let class = ClassSearch::new(name, spec, index, &partition);
    let searched = on_threads(workers, &mut |_| {}, |transport, report| {
        let me = transport.worker();
        let wanted = super::Wanted {
            class: spec.class,
            index: index.blocks(),
            coding: T::CODING,
            blocks: partition.blocks(me),
            range: partition.cells(me),
            mirrored: mirrored.is_some(),
            watch: &watch,
            on_disk: None,
        };
        let (mut share, mut from, mut notes) = (None, 1, Vec::new());
        let mut note = |text: &str| notes.push(text.to_owned());
        let made = each(me, &wanted, &mut note, &mut |checkpoints| {
            let mut search = || {
                let resume =
                    worker::agree_on_resume::<T, _, u64>(spec, index, &partition, transport, checkpoints, asked, None)?;
                from = resume.as_ref().map_or(1, |(_, found)| found.len());
                worker::run::<T, _, u64>(&class, transport, asked, resume.map(|r| r.0), checkpoints, report)
            };
            share = Some(search());
        });
        Ok((share.expect("a search"), from, notes, made))
    });
    searched.unwrap()
}

/// [`saving`] into a table of `coding`, for the tests of other modules:
/// each worker's result, not its share; its notes; and what `each` returned.
#[cfg(test)]
pub(crate) fn saving_in<R: Send>(
    coding: super::Coding,
    name: &str,
    workers: usize,
    each: impl Fn(usize, &super::Wanted<'_>, &mut dyn FnMut(&str), Searching<'_>) -> R + Sync,
) -> Vec<(Result<()>, Vec<String>, R)> {
    fn results<S, R>(searched: Vec<(Result<S>, usize, Vec<String>, R)>) -> Vec<(Result<()>, Vec<String>, R)> {
        searched
            .into_iter()
            .map(|(share, _, notes, made)| (share.map(drop), notes, made))
            .collect()
    }
    match coding {
        super::Coding::Bytes => results(saving::<ByteTable, R>(name, workers, each).0),
        super::Coding::TwoBit => results(saving::<CodeTable, R>(name, workers, each).0),
    }
}

/// Class 0 of `name`, its tight index, the mirror back from the class
/// that mirrors it (if one does), and the positions to watch: the start's
/// and a few others. For tests.
#[cfg(test)]
pub(crate) fn board(name: &str) -> (crate::Variant, TightIndex, Option<Mirror>, Vec<u64>) {
    let variant = crate::Variant::named(name).unwrap();
    let specs = variant.classes();
    let spec = &specs[0];
    let index = spec.tight_index();
    let back = specs
        .get(1)
        .and_then(|other| Mirror::left_right(&spec.geometry, &other.geometry));
    let start = index.rank(spec.index.unrank(variant.class_hashes(variant.start())[0]));
    let watch = start.into_iter().chain([0, index.len() / 2, index.len() - 1]).collect();
    (variant, index, back, watch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoteness::Cell;
    use crate::solver::{Method, Plan};
    use crate::symmetry::Symmetries;
    use crate::variant::Variant;

    /// The searches of class `spec` into a `T` table by one worker, as
    /// [`whole`], with the class's symmetries and with none, finding what
    /// `asked` asks.
    fn with_and_without<T: Table>(name: &str, spec: &ClassSpec, asked: Asked<'_>) -> [Share<T::Done>; 2] {
        let index = spec.tight_index();
        let partition = Partition::by_work(spec, &index, 1).unwrap();
        let class = ClassSearch::new(name, spec, &index, &partition);
        [class.symmetries.clone(), Symmetries::trivial(&spec.geometry)].map(|symmetries| {
            let class = ClassSearch { symmetries, ..class };
            let solo = &mut ChannelTransport::solo();
            search_on::<T, _, u64>(&class, solo, asked, &mut NoCheckpoints, false, None, &mut |_| {}).unwrap()
        })
    }

    /// Every named board has a symmetry to use, and the searches with and
    /// without it give one table, on boards with each kind of group; by
    /// two bits, one set of statistics too, the mirrored class's hardest
    /// included.
    #[test]
    fn the_group_changes_nothing_but_the_work() {
        for (name, order) in [
            ("5x4", 2),
            ("7x6", 2),
            ("5x4-full", 2),
            ("9x6", 2),
            ("6x4-full", 2),
            ("8x4-full", 2),
            ("5x3-full", 4),
            ("7x5-full", 4),
            ("8x6-a2", 2),
        ] {
            let variant = Variant::named(name).unwrap();
            let specs = variant.classes();
            for spec in specs {
                assert_eq!(Symmetries::of(&spec.geometry, spec.goal).order(), order, "{name}");
                let [with, without] = with_and_without::<ByteTable>(name, spec, Asked::default());
                assert!(with.table == without.table, "{name} {:?}", spec.class);
            }
            let spec = &specs[0];
            let partner = specs.get(1).and_then(|other| {
                let mirror = Mirror::left_right(&spec.geometry, &other.geometry)?;
                (mirror.part(spec.start) == other.start).then_some((mirror, other.index))
            });
            let mirrored = partner.as_ref().map(|(m, d)| (m, d));
            let [with, without] = with_and_without::<CodeTable>(name, spec, Asked { mirrored, watch: &[] });
            assert!(with.table == without.table, "{name}");
            assert_eq!(with.layers, without.layers, "{name}");
            assert_eq!(with.hardest, without.hardest, "{name}");
            assert_eq!(with.mirrored_hardest, without.mirrored_hardest, "{name}");
            assert_eq!(with.mirrored_hardest.is_some(), partner.is_some(), "{name}");
        }
        for name in ["9x8", "11x8", "11x10", "7x4"] {
            for spec in Variant::named(name).unwrap().classes() {
                assert!(!Symmetries::of(&spec.geometry, spec.goal).is_trivial(), "{name}");
            }
        }
    }

    #[test]
    fn two_bit_search_matches_the_byte_search() {
        for name in ["5x4", "7x4", "5x4-full", "7x5-full", "5x3-full", "6x4-full", "8x4-full"] {
            let variant = Variant::named(name).unwrap();
            let bytes = Plan::new(&variant, Method::Tight).solve(&mut |_| {}).unwrap();
            let two = Plan::new(&variant, Method::Tight).solve_two_bit(&mut |_| {}).unwrap();
            for (k, (b, t)) in bytes.classes.iter().zip(&two.classes).enumerate() {
                assert_eq!(b.stats, t.stats, "{name} class {k}");
                let cells = bytes.class_cells(k);
                for i in 0..b.index.len() {
                    let expected = Cell(cells[i as usize]).remoteness().map(|r| (r.0 % 3) as u8);
                    let residue = two.residue(k, b.index.unrank(i));
                    assert_eq!(residue, expected, "{name} class {k} index {i}");
                }
            }
        }
    }

    #[test]
    fn threads_give_the_table_of_one_worker() {
        for name in ["5x4", "7x6", "7x5-a1", "9x7-a2"] {
            let (variant, index, ..) = board(name);
            let spec = &variant.classes()[0];
            let expected = bytes(name, spec, &index, &mut |_| {}).unwrap();
            for workers in [1, 2, 3, 5] {
                let mut seen = Vec::new();
                let run = threads(name, spec, &index, workers, &mut |l| seen.push(*l)).unwrap();
                assert!(run.assemble() == expected, "{name} by {workers}");
                assert_eq!(run.layers, seen);
                // One layer per count but the goal's, the last finding nothing.
                let found: Vec<u64> = run.layers.iter().map(|l| l.found).collect();
                assert_eq!(found, [&run.found()[1..], &[0]].concat());
                let messages: u64 = run.layers.iter().map(|l| l.messages).sum();
                assert_eq!(messages == 0, workers == 1, "{name} by {workers}");
            }
        }
    }
}
