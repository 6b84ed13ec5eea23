//! A search stopped on purpose where a kill would leave it, for the tests
//! and examples that resume one: every call passes through to a real
//! [`Checkpointer`] but the one that stops.
//!
//! Shared by `tests/on_disk.rs` (through `common`) and `examples/resume.rs`
//! (by its path), so that both stop a search the same way and neither
//! forgets a call to pass through.

use std::time::Duration;

use bishops::checkpoint::Checkpointer;
use bishops::solver::{Save, ShareCheckpoints, Snapshot, SnapshotRef, Wanted};
use bishops::{Class, Error, Result};

/// Where a [`Stopping`] search stops.
#[derive(Clone, Copy, Debug)]
pub enum Stop {
    /// The save at the boundary after this layer (of the first class to
    /// reach it) fails: the search stops with the layer's writes in its
    /// table's file and the checkpoint before it in place, as a search
    /// killed late in the layer leaves them.
    SaveAfter(usize),
    /// A panic just after the `nth` mark (from 1) inside this layer is on
    /// disk: the table's file is left as a kill would leave it, the
    /// segments resident then not written back.
    Mark { layer: usize, nth: usize },
}

/// A [`Checkpointer`] that stops its search at [`Stop`].
pub struct Stopping<'a> {
    pub inner: Checkpointer<'a>,
    pub stop: Stop,
    /// Whether the search marks its layers, as its checkpointer asks; a
    /// search that does not resumes a stopped layer from its checkpoint
    /// before.
    pub marks: bool,
}

impl<'a> Stopping<'a> {
    pub fn new(inner: Checkpointer<'a>, stop: Stop) -> Stopping<'a> {
        Stopping {
            inner,
            stop,
            marks: true,
        }
    }

    /// The same, but the search makes no marks inside its layers.
    pub fn without_marks(self) -> Stopping<'a> {
        Stopping { marks: false, ..self }
    }
}

impl ShareCheckpoints for Stopping<'_> {
    fn resume(&mut self, wanted: &Wanted<'_>) -> Option<Snapshot> {
        self.inner.resume(wanted)
    }

    fn resume_aside(&mut self, wanted: &Wanted<'_>) -> Option<Snapshot> {
        self.inner.resume_aside(wanted)
    }

    fn resumed(&mut self, class: Class, aside: bool) -> Result<()> {
        self.inner.resumed(class, aside)
    }

    fn due(&mut self, class: Class, found: &[u64], done: bool) -> Save {
        self.inner.due(class, found, done)
    }

    fn marks(&self) -> Option<Duration> {
        if self.marks { self.inner.marks() } else { None }
    }

    fn save(&mut self, snapshot: SnapshotRef<'_>) -> Result<()> {
        if let Stop::SaveAfter(layer) = self.stop
            && snapshot.found.len() == layer + 1
        {
            return Err(Error::Usage("a save that fails, on purpose".into()));
        }
        self.inner.save(snapshot)
    }

    fn commit(&mut self, class: Class) -> Result<()> {
        self.inner.commit(class)
    }

    fn abandon(&mut self, class: Class) {
        self.inner.abandon(class);
    }

    fn note(&mut self, text: &str) {
        self.inner.note(text);
        if let Stop::Mark { layer, nth } = &mut self.stop
            && text.contains(&format!(" layer {layer}: its white sets below "))
        {
            *nth -= 1;
            if *nth == 0 {
                panic!("stopped at a mark, on purpose");
            }
        }
    }

    fn refused(&mut self, class: Class, why: &str) {
        self.inner.refused(class, why);
    }

    fn start_over(&mut self, class: Class) -> Result<()> {
        self.inner.start_over(class)
    }

    fn stopped(&mut self, class: Class, found: &[u64]) -> Error {
        self.inner.stopped(class, found)
    }
}
