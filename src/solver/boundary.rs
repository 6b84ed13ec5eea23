//! A search's state at a layer boundary, and where it is saved: the seam
//! between the searches and their checkpoints
//! ([`checkpoint`](crate::checkpoint) saves to files). Every tight search,
//! byte or two-bit, is run by the workers of a partitioned search (a whole
//! class being the share of one worker), and each worker hands its share's
//! state to a [`ShareCheckpoints`] at layer boundaries and can start from a
//! saved one.

use std::ops::Range;
use std::sync::atomic::{AtomicU8, AtomicU64};

use crate::board::Class;
use crate::error::Result;
use crate::tight::TightIndex;

/// A search's state at a layer boundary, from which it can go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resume {
    /// `found[d]`: positions at remoteness `d`, for every complete layer.
    pub found: Vec<u64>,
    /// Whether the search is over (the layer after the last found nothing).
    pub done: bool,
    /// The table in tight-index order: each cell its remoteness if at most
    /// `found.len() - 1`, else unreached.
    pub cells: Vec<u8>,
}

/// `counts[d]`: the cells of `cells` at remoteness `d`, for `d` below
/// `layers`.
///
/// ```
/// use bishops::solver::layer_counts;
/// assert_eq!(layer_counts(&[0, 2, 2, 254, 1], 3), [1, 1, 2]);
/// ```
pub fn layer_counts(cells: &[u8], layers: usize) -> Vec<u64> {
    let mut counts = vec![0u64; layers];
    for &c in cells {
        if let Some(n) = counts.get_mut(usize::from(c)) {
            *n += 1;
        }
    }
    counts
}

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

/// One worker's share of a partitioned search at a layer boundary.
#[derive(Debug)]
pub struct ShareBoundary<'a> {
    /// The class searched.
    pub class: Class,
    /// The tight indices of the worker's cells.
    pub range: Range<u64>,
    /// `found[d]`: positions of the whole class at remoteness `d`, for
    /// every complete layer.
    pub found: &'a [u64],
    /// Whether the search is over.
    pub done: bool,
    /// The worker's cells.
    pub cells: &'a [u8],
}

/// Where each worker of a partitioned search
/// ([`search`](super::search)) saves its share at layer boundaries
/// and finds a saved one. Worker 0 decides when all of them save
/// ([`due`](Self::due)); the workers then agree on a resume together.
pub trait ShareCheckpoints {
    /// This worker's saved share of `class`, its cells `range`, if there is
    /// one that can be trusted on its own: `found` counts the whole class,
    /// `cells` the share.
    fn resume_share(&mut self, class: Class, range: Range<u64>) -> Option<Resume>;

    /// Whether every worker saves at the boundary of `class` where `found`
    /// counts the complete layers; asked of worker 0 only.
    fn due(&mut self, class: Class, found: &[u64], done: bool) -> Save;

    /// Saves this worker's share.
    ///
    /// # Errors
    ///
    /// What the write ran into; the search stops with it.
    fn save_share(&mut self, boundary: ShareBoundary<'_>) -> Result<()>;

    /// Tells the user what they should know about checkpoints.
    fn note(&mut self, text: &str);

    /// The error that stops the search of `class` after the layers `found`
    /// counts, once every worker has saved its share there because
    /// [`due`](Self::due) said [`Save::AndStop`] (a test hook).
    fn stopped(&mut self, class: Class, found: &[u64]) -> crate::error::Error {
        crate::error::Error::Stopped(format!(
            "stopped after layer {} of class {}, as BISHOPS_STOP_AFTER_LAYER asks",
            found.len().saturating_sub(1),
            class.name()
        ))
    }

    /// This worker's saved share of the two-bit search
    /// ([`search`](super::search)) of `class`,
    /// whose tight index is `index`, if there is one that can be trusted on
    /// its own: the share of the blocks `blocks`, whose positions are
    /// `range`; `mirrored` says whether it must hold the hardest candidates
    /// of a class that mirrors this one, and `watch` lists the positions
    /// whose remoteness it must know where it owns them. None by default.
    fn resume_two_bit_share(
        &mut self,
        class: Class,
        index: &TightIndex,
        blocks: Range<u64>,
        range: Range<u64>,
        mirrored: bool,
        watch: &[u64],
    ) -> Option<TwoBitShareResume> {
        let _ = (class, index, blocks, range, mirrored, watch);
        None
    }

    /// Saves this worker's share of the two-bit search. Does nothing by
    /// default.
    ///
    /// # Errors
    ///
    /// What the write ran into; the search stops with it.
    fn save_two_bit_share(&mut self, boundary: TwoBitShareBoundary<'_>) -> Result<()> {
        let _ = boundary;
        Ok(())
    }
}

/// No checkpoints: nothing to resume, nothing saved.
pub struct NoCheckpoints;

impl ShareCheckpoints for NoCheckpoints {
    fn resume_share(&mut self, _: Class, _: Range<u64>) -> Option<Resume> {
        None
    }

    fn due(&mut self, _: Class, _: &[u64], _: bool) -> Save {
        Save::No
    }

    fn save_share(&mut self, _: ShareBoundary<'_>) -> Result<()> {
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
/// One worker's share of a partitioned two-bit search
/// ([`search`](super::search)) at a layer
/// boundary, from which it can go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TwoBitShareResume {
    /// `found[d]`: positions of the whole class at remoteness `d`, for
    /// every complete layer.
    pub found: Vec<u64>,
    /// `own[d]`: the worker's own positions at remoteness `d`.
    pub own: Vec<u64>,
    /// Whether the search is over (the layer after the last found nothing).
    pub done: bool,
    /// The share's codes, as the words of a
    /// [`Mod3Table`](super::mod3::Mod3Table) of its positions (the first of
    /// its range is code 0), padding codes unseen.
    pub codes: Vec<u64>,
    /// The summary byte of each of its blocks, from the first:
    /// [`CURRENT`](super::mod3::CURRENT) and
    /// [`UNSEEN_LEFT`](super::mod3::UNSEEN_LEFT) bits.
    pub summary: Vec<u8>,
    /// The lowest tight indices the worker wrote into the newest layer (and
    /// the lowest public hashes of their mirror images, when asked for).
    pub hardest: LayerHardest,
    /// For each watched position: its remoteness, where the worker owns it
    /// and it has been reached.
    pub watched: Vec<Option<u64>>,
}

/// One worker's share of a partitioned two-bit search at a layer boundary,
/// as [`ShareCheckpoints::save_two_bit_share`] sees it.
#[derive(Debug)]
pub struct TwoBitShareBoundary<'a> {
    /// The class searched.
    pub class: Class,
    /// The tight indices of the worker's positions.
    pub range: Range<u64>,
    /// `found[d]`: positions of the whole class at remoteness `d`, for
    /// every complete layer.
    pub found: &'a [u64],
    /// `own[d]`: the worker's own positions at remoteness `d`.
    pub own: &'a [u64],
    /// Whether the search is over.
    pub done: bool,
    /// The share's codes, 32 positions a word from the first of `range`;
    /// no thread writes them while the boundary is seen.
    pub codes: &'a [AtomicU64],
    /// The summary byte of each of the worker's blocks; no thread writes
    /// them while the boundary is seen.
    pub summary: &'a [AtomicU8],
    /// The lowest positions the worker wrote into the newest layer.
    pub hardest: &'a LayerHardest,
    /// For each watched position: its remoteness, where the worker owns it
    /// and it has been reached.
    pub watched: &'a [Option<u64>],
}

#[cfg(test)]
impl TwoBitShareBoundary<'_> {
    /// What this boundary saves, as a resume takes it back.
    pub(crate) fn to_resume(&self) -> TwoBitShareResume {
        use std::sync::atomic::Ordering;
        TwoBitShareResume {
            found: self.found.to_vec(),
            own: self.own.to_vec(),
            done: self.done,
            codes: self.codes.iter().map(|w| w.load(Ordering::Relaxed)).collect(),
            summary: self.summary.iter().map(|s| s.load(Ordering::Relaxed)).collect(),
            hardest: self.hardest.clone(),
            watched: self.watched.to_vec(),
        }
    }
}

/// Checkpoints in memory for tests.
#[cfg(test)]
pub(crate) mod memory {
    use std::ops::Range;
    use std::sync::Mutex;

    use super::{Resume, Save, ShareBoundary, ShareCheckpoints, TwoBitShareBoundary, TwoBitShareResume};
    use crate::board::Class;
    use crate::error::Result;
    use crate::tight::TightIndex;

    /// Checkpoints in memory, shared by the workers of a test: each saves
    /// its share into, and resumes it from, `shares[worker]`; worker 0
    /// saves at every boundary and stops after layer `stop`, if given.
    pub(crate) struct Memory<'a, S> {
        pub(crate) worker: usize,
        pub(crate) shares: &'a Mutex<Vec<Option<S>>>,
        pub(crate) stop: Option<usize>,
        pub(crate) notes: Vec<String>,
    }

    impl<'a, S> Memory<'a, S> {
        /// Worker `worker`'s checkpoints in `shares`, stopping after layer `stop`.
        pub(crate) fn new(worker: usize, shares: &'a Mutex<Vec<Option<S>>>, stop: Option<usize>) -> Self {
            Memory {
                worker,
                shares,
                stop,
                notes: Vec::new(),
            }
        }

        fn saved(&self) -> Option<S>
        where
            S: Clone,
        {
            self.shares.lock().unwrap()[self.worker].clone()
        }

        fn save(&self, share: S) {
            self.shares.lock().unwrap()[self.worker] = Some(share);
        }
    }

    impl ShareCheckpoints for Memory<'_, Resume> {
        fn resume_share(&mut self, _: Class, range: Range<u64>) -> Option<Resume> {
            let saved = self.saved()?;
            assert_eq!(saved.cells.len() as u64, range.end - range.start);
            Some(saved)
        }

        fn due(&mut self, _: Class, found: &[u64], done: bool) -> Save {
            due(self.stop, found, done)
        }

        fn save_share(&mut self, boundary: ShareBoundary<'_>) -> Result<()> {
            self.save(Resume {
                found: boundary.found.to_vec(),
                done: boundary.done,
                cells: boundary.cells.to_vec(),
            });
            Ok(())
        }

        fn note(&mut self, text: &str) {
            self.notes.push(text.to_owned());
        }
    }

    impl ShareCheckpoints for Memory<'_, TwoBitShareResume> {
        fn resume_share(&mut self, _: Class, _: Range<u64>) -> Option<Resume> {
            None
        }

        fn due(&mut self, _: Class, found: &[u64], done: bool) -> Save {
            due(self.stop, found, done)
        }

        fn save_share(&mut self, _: ShareBoundary<'_>) -> Result<()> {
            unreachable!("a two-bit worker saves two-bit shares")
        }

        fn note(&mut self, text: &str) {
            self.notes.push(text.to_owned());
        }

        fn resume_two_bit_share(
            &mut self,
            _: Class,
            _: &TightIndex,
            _: Range<u64>,
            _: Range<u64>,
            _: bool,
            _: &[u64],
        ) -> Option<TwoBitShareResume> {
            self.saved()
        }

        fn save_two_bit_share(&mut self, b: TwoBitShareBoundary<'_>) -> Result<()> {
            self.save(b.to_resume());
            Ok(())
        }
    }

    /// Saves at every boundary, and stops after layer `stop`.
    fn due(stop: Option<usize>, found: &[u64], done: bool) -> Save {
        if !done && Some(found.len() - 1) == stop {
            Save::AndStop
        } else {
            Save::Yes
        }
    }
}
