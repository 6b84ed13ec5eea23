//! What every search shares about its layers: where the first starts, what
//! a watching user is told of each, and the depth a byte table can hold.

use std::ops::Range;
use std::time::Duration;

use rayon::prelude::*;

use crate::bitboard::Word;
use crate::board::Class;
use crate::error::Error;
use crate::remoteness::Cell;
use crate::tight::TightIndex;
use crate::variant::ClassSpec;

use super::direction::Direction;
use super::kernel::Block;
use super::table::disk::DiskStats;

/// Something worth telling a watching user while solving.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A class's legal positions have been counted.
    Counted {
        /// The class.
        class: Class,
        /// How many legal positions it has.
        legal: u64,
    },
    /// A search layer is complete.
    Layer {
        /// The class.
        class: Class,
        /// The remoteness of the layer.
        depth: u16,
        /// Positions in the layer.
        found: u64,
        /// Positions found so far in the class, this layer included.
        total: u64,
        /// Legal positions of the class.
        legal: u64,
        /// How the layer was found; `None` for the goal's layer, for layers
        /// a resumed search reports again from its checkpoint, and for the
        /// dense search.
        direction: Option<Direction>,
        /// For the first layer of a search resumed inside it, past a mark
        /// of a table kept on disk: what the stopped run had worked of it,
        /// which this run did not work again. `None` otherwise.
        resumed: Option<Resumed>,
    },
    /// What the workers of a partitioned search sent each other for a
    /// layer that found positions (told after that layer).
    Exchanged {
        /// The class.
        class: Class,
        /// The remoteness of the layer.
        depth: u16,
        /// Bytes sent, summed over the workers: messages and halo.
        bytes: u64,
        /// The most bytes one worker sent.
        most: u64,
        /// The longest one worker worked on the layer, not waiting for
        /// the others.
        busiest: Duration,
        /// How long the workers worked on it, on average.
        mean_busy: Duration,
        /// Positions whose codes changed owner before the layer, when the
        /// workers re-cut their ranges to share its work.
        moved: u64,
    },
    /// What a search with its table on disk read and wrote for a layer
    /// that found positions (told after that layer).
    OnDisk {
        /// The class.
        class: Class,
        /// The remoteness of the layer.
        depth: u16,
        /// The layer's reads, writes, time waiting on the disk and spool.
        disk: DiskStats,
    },
    /// The database is being written: of class `class`'s `total` white
    /// sets, `done` are resolved to exact values and written (told every
    /// few thousand white sets of a two-bit table written as frames, which
    /// on the largest boards takes hours).
    Writing {
        /// The class.
        class: Class,
        /// White sets written.
        done: u64,
        /// White sets of the class.
        total: u64,
    },
    /// A resumable write goes on from white set `from` of class `class`'s
    /// `total`: what a stopped write left before it was read back and
    /// checked against the table.
    WriteResumed {
        /// The class.
        class: Class,
        /// The first white set not yet written.
        from: u64,
        /// White sets of the class.
        total: u64,
    },
    /// What a stopped write left of class `class` fails its checks from
    /// white set `at` on (at 0 of the first class: it is not a partial
    /// write of these tables at all), and is written again from there.
    WriteDiscarded {
        /// The class.
        class: Class,
        /// The first white set written again.
        at: u64,
    },
    /// A class was derived from its mirror image instead of searched.
    Mirrored {
        /// The derived class.
        class: Class,
        /// The class it was derived from.
        from: Class,
    },
}

/// The error of every search that goes deeper than its table holds:
/// `deepest` in a [`Cell`] ([`BYTE_DEEPEST`]), [`u16::MAX`] in a two-bit
/// table's layer counts.
pub(super) fn too_deep(name: &str, deepest: u16) -> Error {
    Error::TooLarge(format!(
        "variant {name}: a remoteness above {deepest} does not fit the table"
    ))
}

/// The deepest remoteness a byte table holds.
pub(super) const BYTE_DEEPEST: u16 = Cell::MAX_REMOTENESS as u16;

/// How far a stopped search had worked the layer it stopped in, when a
/// search on disk resumes inside that layer: its blocks (white sets) below
/// `through`, of `blocks` in all. The layer's time in the resumed run is
/// then for the rest only, which [`left`](Resumed::left) measures.
///
/// # Examples
///
/// ```
/// use bishops::solver::Resumed;
///
/// let resumed = Resumed { through: 5_630_630, blocks: 8_259_888 };
/// assert!((resumed.left() - 0.318).abs() < 0.001);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Resumed {
    /// The block below which the stopped run had worked the layer whole.
    pub through: u64,
    /// The blocks of the class.
    pub blocks: u64,
}

impl Resumed {
    /// The share of the layer's blocks the resumed run worked, from a
    /// hundredth (so that a time divided by it stays finite) to 1.
    pub fn left(&self) -> f64 {
        let worked = self.blocks.saturating_sub(self.through) as f64 / self.blocks.max(1) as f64;
        worked.clamp(0.01, 1.0)
    }
}

/// The tight index of the goal of `spec`, where a search starts.
pub(super) fn goal_index<W: Word>(spec: &ClassSpec<W>, index: &TightIndex<W>) -> u64 {
    index.rank(spec.goal).expect("a variant's goal is legal")
}

/// Tells `observe` of the layers a search starts from, the goal's or those
/// a resumed search saved: `found[d]` positions at remoteness `d` of
/// `class`, which has `legal` positions, none found by a direction of its
/// own. Returns how many positions they hold.
pub(super) fn report_saved(class: Class, found: &[u64], legal: u64, observe: &mut dyn FnMut(Event)) -> u64 {
    let mut total = 0;
    for (depth, &found) in found.iter().enumerate() {
        total += found;
        observe(Event::Layer {
            class,
            depth: depth as u16,
            found,
            total,
            legal,
            direction: None,
            resumed: None,
        });
    }
    total
}

/// Calls `work(r, block, state)` for every block `r` of `blocks` that
/// `wanted(r)` admits, the blocks shared by the threads of the rayon pool,
/// each thread with scratch space for a block and a state of its own made
/// by `state`; returns the states, merged by `merge`. Every search runs a
/// layer so. The blocks `wanted` refuses are passed over before anything is
/// made for them (with a small frontier they are nearly all), and a
/// thread's scratch and state go from block to block boxed: moving them by
/// value, a few hundred bytes a block, was 1.3 ms of a 1.7 ms small layer
/// of 9x8.
pub(super) fn each_block<S: Send, W: Word>(
    blocks: Range<u64>,
    wanted: impl Fn(u64) -> bool + Sync,
    state: impl Fn() -> S + Sync + Send,
    work: impl Fn(u64, &mut Block<W>, &mut S) + Sync,
    merge: impl Fn(S, S) -> S + Sync + Send,
) -> S {
    // u64 ranges are not indexed for rayon where usize is 32 bits.
    (blocks.start as usize..blocks.end as usize)
        .into_par_iter()
        .with_min_len(64)
        .filter(|&r| wanted(r as u64))
        .fold(
            || Box::new((Block::default(), state())),
            |mut scratch, r| {
                let (block, state) = &mut *scratch;
                work(r as u64, block, state);
                scratch
            },
        )
        .map(|scratch| scratch.1)
        .reduce(&state, merge)
}
