//! The tables a tight search fills, as one worker holds its share of one:
//! a byte a position ([`bytes`], its remoteness) or two bits ([`codes`],
//! its remoteness mod 3). The search ([`search`](super::search)) is written
//! once over [`Table`]: a third kind of table is one more implementation.
//!
//! A *code* is what a table keeps of a remoteness, as [`Table::code`]
//! gives it: the remoteness itself in a byte table, the remoteness mod 3 in
//! a two-bit one. [`Table::UNSEEN`] is the code of a position no layer has
//! reached.

pub(super) mod bytes;
pub(super) mod codes;
pub(super) mod disk;
pub(super) mod seal;
mod spool;

use std::ops::Range;

use crate::bitboard::{Bitboard, Word};
use crate::error::Result;
use crate::tight::TightIndex;
use disk::{DiskStats, OnDisk};

use super::boundary::{Coding, Sealed, ShareCheckpoints, Snapshot, Stored, StoredRef, Wanted};
use super::contents::Said;

/// How a search claims a position of its own share for the next layer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Claim {
    /// In a push: a neighbour of the layer, an image of one, or a position
    /// another worker reached. Claimed if no layer has reached it, once
    /// however many threads reach it.
    Reached,
    /// In a pull: a canonical position the pull found, or one of its
    /// images. Only the pull of an orbit's canonical position writes it,
    /// and it was unreached.
    Unseen,
    /// In a pull: a position another worker sent. Written if no layer has
    /// reached it; only its sender names it, once.
    Sent,
}

/// One worker's share of a class's table, the positions `base..base + len`
/// in tight-index order: what the search reads and writes while the
/// threads of a layer share it, and what it hands to the checkpoints.
///
/// Every method taking `&self` may run on many threads at once.
pub(super) trait Table: Sized + Sync {
    /// What a search of this table ends with: the share's codes.
    type Done: Send;
    /// The deepest remoteness the table holds.
    const DEEPEST: u16;
    /// The code of a position no layer has reached.
    const UNSEEN: u8;
    /// Bits a position takes when a share moves to another worker.
    const BITS: u64;
    /// How the table keeps a position, in checkpoints too.
    const CODING: Coding;

    /// The code of remoteness `depth`.
    fn code(depth: u64) -> u8;

    /// The most positions a push of the newest layer could scan, from the
    /// count of each layer found so far: the layer itself when its code
    /// tells it from every other, all the layers sharing its code when not.
    fn scan_bound(found: &[u64]) -> u64;

    /// A share of `len` positions from `base`, none of them reached.
    fn unseen(base: u64, len: u64) -> Self;

    /// A new share of `len` positions from `base` for a search that
    /// resumes from nothing, when this kind of table is not made by
    /// [`unseen`](Self::unseen): a table on disk, in `disk`'s directory, its
    /// file named after `label` (`.VARIANT.CLASS`). `None`, the default: by
    /// `unseen`.
    ///
    /// # Errors
    ///
    /// When the table cannot be made.
    fn fresh(_base: u64, _len: u64, _disk: Option<&OnDisk>, _label: &str) -> Result<Option<Self>> {
        Ok(None)
    }

    /// The share of `len` positions from `base` whose codes are `words`,
    /// [`BITS`](Self::BITS) a position from the low bits of the first.
    fn from_words(base: u64, len: u64, words: Vec<u64>) -> Self;

    /// The codes as [`from_words`](Self::from_words) takes them.
    fn into_words(self) -> Vec<u64>;

    fn finish(self) -> Self::Done;

    /// Calls `f(i, black)` for every position `i` of block `r` of `index`
    /// coded `want`, whose safe cells are `safe`.
    fn scan<W: Word>(
        &self,
        index: &TightIndex<W>,
        r: u64,
        safe: Bitboard<W>,
        want: u8,
        f: impl FnMut(u64, Bitboard<W>),
    );

    /// How many of the positions `cells` are coded `want`.
    fn count(&self, cells: Range<u64>, want: u8) -> u64;

    /// Bit `k` set when position `start + k` (`k` below `len`, at most 64)
    /// is coded `want`.
    fn matching(&self, start: u64, len: usize, want: u8) -> u64;

    /// In a pull of the layer coded `here`: whether position `i` is of it.
    fn at(&self, i: u64, here: u8) -> bool;

    /// Whether position `i` has been reached, between layers.
    fn reached(&self, i: u64) -> bool;

    /// Claims position `i` for the layer coded `next` as `claim` says;
    /// whether this call did.
    fn claim(&self, i: u64, next: u8, claim: Claim) -> bool;

    /// Readies what [`claim`](Self::claim) of position `i` will touch.
    fn prefetch(&self, i: u64, claim: Claim);

    /// Before a layer from the one coded `here`, by a pull or a push, with
    /// no thread at work.
    fn begin_layer(&mut self, here: u8, pull: bool);

    /// After a layer coded `next`, found by a pull or a push, every
    /// position taken in, with no thread at work.
    fn end_layer(&mut self, next: u8, pull: bool);

    /// The table as a checkpoint saves it, with no thread at work.
    fn stored(&self) -> StoredRef<'_>;

    /// The share of `len` positions from `base` a checkpoint held as
    /// `stored`; `None` when it is not of this table's coding and length.
    fn from_stored(base: u64, len: u64, stored: Stored) -> Option<Self>;

    /// For a table kept on disk in segments (`disk`): the positions a
    /// segment, how many segments it has and how many may be resident at
    /// once. `None`, the default, for a table wholly in memory.
    fn segments(&self) -> Option<(u64, usize, usize)> {
        None
    }

    /// For a table on disk: makes exactly the segments `scope` resident,
    /// with no thread at work. Nothing for a table in memory.
    ///
    /// # Errors
    ///
    /// When the disk fails.
    fn reside(&self, _scope: &[u32]) -> Result<()> {
        Ok(())
    }

    /// For a table on disk: starts reading, beside the search, what making
    /// `scope` resident next will read, so that the disk works while the
    /// processors do. Only a hint: nothing for a table in memory.
    fn read_ahead(&self, _scope: &[u32]) {}

    /// Whether position `i`'s code is in memory: always, but for a table
    /// on disk, whose segments outside the window are not.
    #[inline(always)]
    fn resident(&self, _i: u64) -> bool {
        true
    }

    /// For a table on disk: keeps positions `images` of this share, found
    /// by this layer where their segments were not resident, to be claimed
    /// at the layer's end ([`unspool`](Self::unspool)). A table in memory,
    /// where every position is resident, is never asked.
    fn spool(&self, _images: impl Iterator<Item = u64>) {
        unreachable!("a table in memory spools nothing: every position is resident")
    }

    /// For a table on disk: what it has read and written so far. `None`,
    /// the default, for a table in memory.
    fn disk_stats(&self) -> Option<DiskStats> {
        None
    }

    /// For a table on disk: whether its spool holds its budget or more
    /// ([`OnDisk::spool_budget`]), so that the search should claim the
    /// images before it goes on. Never, for a table in memory.
    fn spool_full(&self) -> bool {
        false
    }

    /// For a table on disk: calls `take` with the spooled positions, a run
    /// at a time, their segments resident, and empties the spool; no thread
    /// may be in the table meanwhile. Nothing for a table in memory.
    ///
    /// # Errors
    ///
    /// When the disk fails.
    fn unspool(&self, _take: &mut dyn FnMut(&[u64])) -> Result<()> {
        Ok(())
    }

    /// For a table whose checkpoints keep it on disk in `disk`: positions a
    /// segment of its file. `None`, the default.
    fn kept_in(_disk: &OnDisk) -> Option<u64> {
        None
    }

    /// Whether its checkpoints keep it where it is, a table on disk that
    /// outlives the search: then every layer boundary saves, since the
    /// file moves on with the search and a checkpoint can only be resumed
    /// from the layer after it. `false`, the default.
    fn kept(&self) -> bool {
        false
    }

    /// Readies [`stored`](Self::stored) at a layer boundary, with no
    /// thread at work: a table kept on disk writes back and syncs its file
    /// and seals it. Nothing, the default, for a table in memory.
    ///
    /// # Errors
    ///
    /// When the disk fails.
    fn seal(&mut self) -> Result<()> {
        Ok(())
    }

    /// Notes that the layer being found wrote position `i`, the lowest it
    /// wrote so far, or one whose mirror image's hash `mirrored` is: a
    /// table kept on disk keeps them for a resume inside the layer.
    /// Nothing, the default.
    fn hardest(&self, _i: Option<u64>, _mirrored: Option<u64>) {}

    /// The share of `len` positions from `base` a checkpoint holds as
    /// `sealed`, for a table kept on disk in `disk` (named after `label`),
    /// with the layers and hardest positions it says: the file read back
    /// and checked against the seals and `said`, and what the layer after
    /// the checkpoint had written before the search stopped
    /// ([`take_carried`](Self::take_carried)).
    ///
    /// # Errors
    ///
    /// Why the checkpoint is refused; always, the default, for a table in
    /// memory.
    fn reopen(
        _base: u64,
        _len: u64,
        _sealed: &Sealed,
        _at: (&OnDisk, &str),
        _said: &Said<'_>,
        _wanted: &Wanted<'_>,
    ) -> std::result::Result<Self, String> {
        Err("is of a table on disk".into())
    }

    /// Once, at the first layer after [`reopen`](Self::reopen): what the
    /// layer had written before the search stopped inside it.
    fn take_carried(&mut self) -> Option<Carried> {
        None
    }

    /// What [`take_carried`](Self::take_carried) will give.
    fn carried(&self) -> Option<&Carried> {
        None
    }

    /// For a table kept on disk, with no thread in it, after layer `layer`
    /// has worked its blocks below `through`: makes what they found
    /// durable (writes back, syncs) and records it, so that a search
    /// stopped later in the layer does not work those blocks again when it
    /// resumes. The search claims the spool first, so that the images of
    /// those positions' orbits are in the file too, and the table records
    /// its segments as the mark leaves them: a resume completes orbits only
    /// in the segments changed since, and in those of `owed`
    /// ([`Carried::incomplete`]). Returns whether it recorded it; `false`,
    /// the default, for a table whose file does not outlive the search.
    ///
    /// # Errors
    ///
    /// When the disk fails.
    ///
    /// `owed` are the positions whose orbits a resume has still to
    /// complete (in blocks from `through` on): a later resume completes
    /// them again whatever the file holds.
    fn mark(&self, _layer: u64, _through: u64, _owed: &[Range<u64>]) -> Result<bool> {
        Ok(false)
    }
}

/// What a layer had written into a table kept on disk when the search
/// stopped inside it, which the layer found again after a resume does not
/// write again ([`Table::take_carried`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Carried {
    /// Positions it wrote.
    pub count: u64,
    /// The lowest of them, and the lowest hashes of their mirror images,
    /// as far as the table's record of them goes.
    pub lowest: Vec<u64>,
    pub mirrored: Vec<u64>,
    /// The positions of the segments it wrote into, whose blocks hold the
    /// layer.
    pub changed: Vec<Range<u64>>,
    /// Those of them whose orbits the layer found again must complete:
    /// the segments changed since its last mark, or that mark still owed
    /// (every changed one when the mark left no record of its segments).
    pub incomplete: Vec<Range<u64>>,
    /// The block below which the layer was worked whole and all it found
    /// written before the search stopped ([`Table::mark`]): a resumed
    /// layer works only the blocks from it on, and completes the orbits
    /// of the positions of [`incomplete`](Self::incomplete) everywhere. 0
    /// when unmarked.
    pub through: u64,
}

/// This worker's saved share as `wanted` describes it, from `checkpoints`,
/// if its shape fits: a table of this kind and length, a summary byte for
/// each block, a count of its own for each layer, the hardest candidates of
/// a mirroring class when asked for, and a slot for each watched position.
/// Its contents are for `checkpoints` to check (a file's checkpoints check
/// every byte) and for the workers to agree on.
pub(super) fn resume<T: Table>(
    checkpoints: &mut dyn ShareCheckpoints,
    wanted: &Wanted<'_>,
    at: Option<(&OnDisk, &str)>,
) -> Option<Snapshot<T>> {
    let saved = checkpoints.resume(wanted)?;
    fitting(saved, wanted, at, checkpoints)
}

/// As [`resume`], the share this worker wrote aside and never put in its
/// checkpoint's place ([`ShareCheckpoints::resume_aside`]).
pub(super) fn resume_aside<T: Table>(
    checkpoints: &mut dyn ShareCheckpoints,
    wanted: &Wanted<'_>,
    at: Option<(&OnDisk, &str)>,
) -> Option<Snapshot<T>> {
    let saved = checkpoints.resume_aside(wanted)?;
    fitting(saved, wanted, at, checkpoints)
}

/// `saved` as a table of this kind, if its shape fits `wanted` ([`resume`]);
/// a table kept on disk (in `at`) is read back and checked, and
/// `checkpoints` told why when it is refused.
fn fitting<T: Table>(
    saved: Snapshot,
    wanted: &Wanted<'_>,
    at: Option<(&OnDisk, &str)>,
    checkpoints: &mut dyn ShareCheckpoints,
) -> Option<Snapshot<T>> {
    let Wanted { blocks, range, .. } = wanted;
    let fits = saved.summary.len() as u64 == blocks.end - blocks.start
        && !saved.found.is_empty()
        && saved.own.len() == saved.found.len()
        && saved.hardest.mirrored.is_some() == wanted.mirrored
        && saved.watched.len() == wanted.watch.len();
    if !fits {
        return None;
    }
    let len = range.end - range.start;
    let table = match (&saved.table, at) {
        (Stored::Sealed(sealed), Some(at)) => {
            let said = Said {
                found: &saved.found,
                own: &saved.own,
                summary: &saved.summary,
                hardest: &saved.hardest,
                watched: &saved.watched,
            };
            match T::reopen(range.start, len, sealed, at, &said, wanted) {
                Ok(table) => {
                    if let Some(carried) = table.carried().filter(|c| c.count > 0) {
                        let through = match carried.through {
                            0 => String::new(),
                            r => format!(
                                ", and its white sets below {r} of {} were worked whole: they are not worked again",
                                blocks.end
                            ),
                        };
                        checkpoints.note(&format!(
                            "the layer after the checkpoint of class {} had written {} positions into the table's file when it stopped: they are kept{through}; the orbits of its positions in {} of the {} segments it changed are completed again",
                            wanted.class.name(),
                            carried.count,
                            carried.incomplete.len(),
                            carried.changed.len()
                        ));
                    }
                    table
                }
                Err(why) => {
                    checkpoints.refused(wanted.class, &why);
                    return None;
                }
            }
        }
        (Stored::Sealed(_), None) => return None,
        _ => T::from_stored(range.start, len, saved.table)?,
    };
    Some(Snapshot {
        table,
        summary: saved.summary,
        found: saved.found,
        own: saved.own,
        done: saved.done,
        hardest: saved.hardest,
        watched: saved.watched,
    })
}
