//! A worker's state at a layer boundary ([`Snapshot`]), and where it is
//! saved ([`ShareCheckpoints`]): the seam between the searches and their
//! checkpoints ([`checkpoint`](crate::checkpoint) saves to files).

use std::ops::Range;
use std::sync::atomic::{AtomicU8, AtomicU64};

use crate::board::Class;
use crate::error::Result;
use crate::tight::Blocks;

use super::table::seal::Seal;

/// What a worker's saved share says of itself, for the workers to agree
/// on a resume: whether its search was over, the class's layer counts, and
/// the share's own counts of them.
#[derive(Clone, Debug)]
pub(super) struct ShareReport {
    pub done: bool,
    pub found: Vec<u64>,
    pub own: Vec<u64>,
}

/// Whether a search saves its state at a layer boundary.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Save {
    /// Not at this boundary.
    No,
    /// Saves, and goes on.
    Yes,
    /// Saves, and stops (a test hook: [`Error::Stopped`](crate::error::Error::Stopped)).
    AndStop,
}

/// How a table keeps a position.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Coding {
    /// A byte a position: the remoteness, or
    /// [`Cell::UNREACHABLE`](crate::remoteness::Cell::UNREACHABLE) unreached.
    Bytes,
    /// Two bits a position: the remoteness mod 3, or 3 unreached, 32 to a
    /// little-endian word.
    TwoBit,
}

impl Coding {
    /// The `--method` that fills such a table, as a checkpoint names it.
    pub fn method(self) -> &'static str {
        match self {
            Coding::Bytes => "tight",
            Coding::TwoBit => "two-bit",
        }
    }

    /// The code of remoteness `depth`.
    pub fn code(self, depth: u64) -> u8 {
        match self {
            Coding::Bytes => u8::try_from(depth).unwrap_or(u8::MAX),
            Coding::TwoBit => (depth % 3) as u8,
        }
    }

    /// The code of a position no layer has reached.
    pub fn unseen(self) -> u8 {
        match self {
            Coding::Bytes => crate::remoteness::Cell::UNREACHABLE.0,
            Coding::TwoBit => 3,
        }
    }

    /// The most layers such a table counts.
    pub fn most_layers(self) -> usize {
        match self {
            Coding::Bytes => usize::from(crate::remoteness::Cell::MAX_REMOTENESS) + 1,
            Coding::TwoBit => usize::from(u16::MAX) + 1,
        }
    }
}

/// A share's table as a checkpoint holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    /// A byte a position, from the first of the share's range.
    Bytes(Vec<u8>),
    /// Two bits a position, as [`Coding::TwoBit`] packs them; padding codes
    /// unseen.
    TwoBit(Vec<u64>),
    /// Two bits a position kept on disk, in the table's own file: what a
    /// checkpoint holds of it is the seal of each of its segments.
    Sealed(Sealed),
}

/// What a checkpoint keeps of a two-bit table on disk: the seal of each
/// segment of its file, in order, which the file must match when the
/// search resumes, up to what the layer after the checkpoint wrote
/// ([`Seal::written_by`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sealed {
    /// Positions a segment (the last may hold fewer).
    pub segment_positions: u64,
    /// Each segment's seal.
    pub seals: Vec<Seal>,
}

impl Sealed {
    /// How many positions of the table hold each code, padding counted
    /// unseen, as its seals count them.
    pub fn counts(&self) -> [u64; 4] {
        let mut counts = [0u64; 4];
        for seal in &self.seals {
            counts.iter_mut().zip(seal.counts).for_each(|(c, n)| *c += n);
        }
        counts
    }
}

impl Stored {
    /// How it keeps a position.
    pub fn coding(&self) -> Coding {
        match self {
            Stored::Bytes(_) => Coding::Bytes,
            Stored::TwoBit(_) | Stored::Sealed(_) => Coding::TwoBit,
        }
    }

    /// The code of the `k`-th position, of a table in memory (`None` for
    /// one on disk).
    pub fn code(&self, k: u64) -> Option<u8> {
        match self {
            Stored::Bytes(cells) => Some(cells[k as usize]),
            Stored::TwoBit(words) => Some((words[(k / 32) as usize] >> (2 * (k % 32))) as u8 & 3),
            Stored::Sealed(_) => None,
        }
    }
}

/// A share's table, borrowed from a running search at a layer boundary.
#[derive(Copy, Clone, Debug)]
pub enum StoredRef<'a> {
    /// As [`Stored::Bytes`].
    Bytes(&'a [u8]),
    /// As [`Stored::TwoBit`]; no thread writes them while it is seen.
    TwoBit(&'a [AtomicU64]),
    /// As [`Stored::Sealed`]: the table's file is synced.
    Sealed(&'a Sealed),
}

impl StoredRef<'_> {
    /// How it keeps a position.
    pub fn coding(&self) -> Coding {
        match self {
            StoredRef::Bytes(_) => Coding::Bytes,
            StoredRef::TwoBit(_) | StoredRef::Sealed(_) => Coding::TwoBit,
        }
    }
}

/// One worker's share of a search at a layer boundary, from which it can go
/// on: what a checkpoint holds, for a table of either coding ([`Stored`]),
/// and what a worker starts from, its table `S` made of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot<S = Stored> {
    /// `found[d]`: positions of the whole class at remoteness `d`, for
    /// every complete layer.
    pub found: Vec<u64>,
    /// `own[d]`: the share's own positions at remoteness `d`.
    pub own: Vec<u64>,
    /// Whether the search is over (the layer after the last found nothing).
    pub done: bool,
    /// The share's table.
    pub table: S,
    /// The summary byte of each of its blocks, from the first:
    /// [`CURRENT`](super::summary::CURRENT) and
    /// [`UNSEEN_LEFT`](super::summary::UNSEEN_LEFT) bits.
    pub summary: Vec<u8>,
    /// The lowest tight indices the worker wrote into the newest layer (and
    /// the lowest public hashes of their mirror images, when asked for).
    pub hardest: LayerHardest,
    /// For each watched position: its remoteness, where the worker owns it
    /// and it has been reached.
    pub watched: Vec<Option<u64>>,
}

impl<S> Snapshot<S> {
    /// What it says of itself, for the workers to agree on a resume.
    pub(super) fn report(&self) -> ShareReport {
        ShareReport {
            done: self.done,
            found: self.found.clone(),
            own: self.own.clone(),
        }
    }
}

/// A [`Snapshot`] borrowed from the running search, as
/// [`ShareCheckpoints::save`] sees it.
#[derive(Debug)]
pub struct SnapshotRef<'a> {
    /// The class searched.
    pub class: Class,
    /// The tight indices of the worker's positions.
    pub range: Range<u64>,
    /// As [`Snapshot::found`].
    pub found: &'a [u64],
    /// As [`Snapshot::own`].
    pub own: &'a [u64],
    /// As [`Snapshot::done`].
    pub done: bool,
    /// The share's table.
    pub table: StoredRef<'a>,
    /// As [`Snapshot::summary`]; no thread writes them while it is seen.
    pub summary: &'a [AtomicU8],
    /// As [`Snapshot::hardest`].
    pub hardest: &'a LayerHardest,
    /// As [`Snapshot::watched`].
    pub watched: &'a [Option<u64>],
}

#[cfg(test)]
impl SnapshotRef<'_> {
    /// What this boundary saves, as a resume takes it back.
    pub(crate) fn to_owned(&self) -> Snapshot {
        use std::sync::atomic::Ordering;
        Snapshot {
            found: self.found.to_vec(),
            own: self.own.to_vec(),
            done: self.done,
            table: match self.table {
                StoredRef::Bytes(cells) => Stored::Bytes(cells.to_vec()),
                StoredRef::TwoBit(words) => Stored::TwoBit(words.iter().map(|w| w.load(Ordering::Relaxed)).collect()),
                StoredRef::Sealed(sealed) => Stored::Sealed(sealed.clone()),
            },
            summary: self.summary.iter().map(|s| s.load(Ordering::Relaxed)).collect(),
            hardest: self.hardest.clone(),
            watched: self.watched.to_vec(),
        }
    }
}

/// The share a worker asks its checkpoints for.
#[derive(Clone, Debug)]
pub struct Wanted<'a> {
    /// The class searched.
    pub class: Class,
    /// How its tight index is cut into blocks.
    pub index: &'a Blocks,
    /// How the table keeps a position.
    pub coding: Coding,
    /// The worker's white-set ranks.
    pub blocks: Range<u64>,
    /// Their positions' tight indices.
    pub range: Range<u64>,
    /// Whether it keeps the hardest candidates of a class that mirrors
    /// this one.
    pub mirrored: bool,
    /// The positions whose remoteness it knows where it owns them.
    pub watch: &'a [u64],
    /// For a table kept on disk: positions a segment of its file.
    pub on_disk: Option<u64>,
}

/// Where each worker of a search ([`search`](super::search)) saves its
/// share at layer boundaries and finds a saved one. Worker 0 decides when
/// all of them save ([`due`](Self::due)); the workers then agree on a
/// resume together.
pub trait ShareCheckpoints {
    /// This worker's saved share, as `wanted` describes it, if there is one
    /// that can be trusted on its own.
    fn resume(&mut self, wanted: &Wanted<'_>) -> Option<Snapshot>;

    /// This worker's share written aside at a save and never put in its
    /// checkpoint's place, as `wanted` describes it, if there is one that
    /// can be trusted on its own: what a job left that ended after every
    /// worker had written its share and before every one had put it in
    /// place, so that some workers' checkpoints are a layer ahead of the
    /// others'. The workers try it before their checkpoints. `None`, the
    /// default, for checkpoints that put every share in place at once.
    fn resume_aside(&mut self, _wanted: &Wanted<'_>) -> Option<Snapshot> {
        None
    }

    /// Once the workers have agreed to resume `class`: puts the share
    /// written aside in its checkpoint's place when it is what they resume
    /// (`aside`), and otherwise drops it, since no other worker has its
    /// layer.
    ///
    /// # Errors
    ///
    /// What the rename ran into; the search stops with it.
    fn resumed(&mut self, _class: Class, _aside: bool) -> Result<()> {
        Ok(())
    }

    /// Whether every worker saves at the boundary of `class` where `found`
    /// counts the complete layers; asked of worker 0 only.
    fn due(&mut self, class: Class, found: &[u64], done: bool) -> Save;

    /// Whether a search saving here stops at its next save point when a
    /// stop is asked for ([`stop`](crate::stop)): [`due`](Self::due) then
    /// says [`Save::AndStop`]. `false`, the default: nothing is saved.
    fn stops_when_asked(&self) -> bool {
        false
    }

    /// How much search time may pass, at least, between two marks of how
    /// far a layer has gone, which a search working alone with its table
    /// kept on disk makes between its windows so that a stop inside a
    /// long layer loses at most that much of it (`docs/scaling.md`,
    /// "Marks inside a layer"). `None`, the default: no marks.
    fn marks(&self) -> Option<std::time::Duration> {
        None
    }

    /// Writes this worker's share aside, to take the place of its last
    /// checkpoint at [`commit`](Self::commit) once every worker has
    /// written its own: a worker whose write fails leaves every worker's
    /// last checkpoint, all of one layer, in place ([`abandon`](Self::abandon)).
    ///
    /// # Errors
    ///
    /// What the write ran into; the search stops with it.
    fn save(&mut self, snapshot: SnapshotRef<'_>) -> Result<()>;

    /// Puts the share saved last in its checkpoint's place.
    ///
    /// # Errors
    ///
    /// What the rename ran into; the search stops with it.
    fn commit(&mut self, _class: Class) -> Result<()> {
        Ok(())
    }

    /// Drops the share saved last, leaving the checkpoint before it.
    fn abandon(&mut self, _class: Class) {}

    /// Tells the user what they should know about checkpoints.
    fn note(&mut self, text: &str);

    /// A saved share of `class` that [`resume`](Self::resume) gave is
    /// refused once its table is read back (a table kept on disk whose
    /// file is not as sealed), for the reason `why`: by default, says so.
    fn refused(&mut self, class: Class, why: &str) {
        self.note(&format!(
            "the checkpoint of class {} {why}; the search starts over",
            class.name()
        ));
    }

    /// Before this worker searches `class` from the goal, as no saved
    /// share was resumed.
    ///
    /// # Errors
    ///
    /// When starting over would throw away what must not be (a search
    /// kept on disk whose checkpoint was refused): the search stops with
    /// it, before its table is made.
    fn start_over(&mut self, _class: Class) -> Result<()> {
        Ok(())
    }

    /// The error that stops the search of `class` after the layers `found`
    /// counts, once every worker has saved its share there because
    /// [`due`](Self::due) said [`Save::AndStop`] (a test hook, or a stop
    /// asked for).
    fn stopped(&mut self, class: Class, found: &[u64]) -> crate::error::Error {
        crate::error::Error::Stopped(format!(
            "stopped after layer {} of class {}, as BISHOPS_STOP_AFTER_LAYER asks",
            found.len().saturating_sub(1),
            class.name()
        ))
    }
}

/// No checkpoints: nothing to resume, nothing saved.
pub struct NoCheckpoints;

impl ShareCheckpoints for NoCheckpoints {
    fn resume(&mut self, _: &Wanted<'_>) -> Option<Snapshot> {
        None
    }

    fn due(&mut self, _: Class, _: &[u64], _: bool) -> Save {
        Save::No
    }

    fn save(&mut self, _: SnapshotRef<'_>) -> Result<()> {
        Ok(())
    }

    fn note(&mut self, _: &str) {}
}

/// The hardest candidates of the newest layer a search has found: what its
/// statistics take if the next layer finds nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LayerHardest {
    /// The tight indices of up to [`HARDEST`](super::HARDEST) positions of the layer,
    /// lowest first.
    pub own: Vec<u64>,
    /// When a class is the mirror image of the searched one: the public
    /// hashes, in that class, of the mirror images of up to [`HARDEST`](super::HARDEST)
    /// positions of the layer, lowest first.
    pub mirrored: Option<Vec<u64>>,
}
