//! The one layer loop of every tight search, whatever its table: each
//! worker runs [`run_layers`] over its own [`LayerWorker`], which knows how
//! its table finds a layer; the loop chooses push or pull by the measured
//! [`Rates`], reports each layer, refuses a remoteness the table cannot
//! hold, and hands every layer boundary to the checkpoints.

use std::time::Instant;

use crate::error::Result;
use crate::solver::boundary::ShareCheckpoints;
use crate::solver::direction::Rates;
use crate::solver::layer::too_deep;

use super::share::{LayerStats, Transport};

/// One worker's table in a layer-by-layer search: what [`run_layers`]
/// asks of it. Every call but [`scan_bound`](Self::scan_bound) is a
/// collective step: every worker makes it, in the same order.
pub(super) trait LayerWorker {
    /// The deepest remoteness the table holds.
    const DEEPEST: u16;

    /// The most positions a push of the newest layer could scan, from the
    /// count of each layer found so far: the layer itself when the table
    /// tells it from every other, all the layers it shares a code with
    /// when not.
    fn scan_bound(found: &[u64]) -> u64;

    /// The positions a push of layer `depth` would scan, over every
    /// worker: asked only when the bounds do not settle the direction.
    ///
    /// # Errors
    ///
    /// When the exchange fails.
    fn push_work<T: Transport + ?Sized>(&mut self, transport: &mut T, depth: u64) -> Result<u64>;

    /// Finds layer `depth + 1` from layer `depth` by pushing or pulling;
    /// its counts over every worker. A mark of how far the layer has gone
    /// is told to `checkpoints` ([`ShareCheckpoints::note`]).
    ///
    /// # Errors
    ///
    /// When the exchange fails or a message is out of range.
    fn layer<T: Transport + ?Sized>(
        &mut self,
        transport: &mut T,
        checkpoints: &mut dyn ShareCheckpoints,
        depth: u64,
        pull: bool,
    ) -> Result<LayerStats>;

    /// Takes the layer just found, `depth`, of `found` positions over
    /// every worker, as the newest one.
    fn add_layer(&mut self, depth: u64, found: u64);

    /// At a layer boundary, where `found` counts the complete layers and
    /// `done` says whether the search is over: saves the worker's share
    /// when the checkpoints say so.
    ///
    /// # Errors
    ///
    /// What the save ran into, and [`Error::Stopped`](crate::Error::Stopped)
    /// when the checkpoints' test hook asks to stop.
    fn boundary<T: Transport + ?Sized>(
        &mut self,
        transport: &mut T,
        checkpoints: &mut dyn ShareCheckpoints,
        found: &[u64],
        done: bool,
    ) -> Result<()>;
}

/// Runs `worker`'s search of a class of variant `name` with `legal`
/// positions from the layers `found` counts (the goal's alone at the
/// start; `done` when a resumed search was over) until a layer finds
/// nothing, telling `report` of every layer (the same on every worker).
/// Returns the count of each layer.
///
/// # Errors
///
/// [`Error::TooLarge`](crate::Error::TooLarge) when a remoteness would not
/// fit the table (on every worker at once), and whatever the worker's
/// steps fail with.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_layers<W: LayerWorker, T: Transport + ?Sized>(
    name: &str,
    worker: &mut W,
    transport: &mut T,
    legal: u64,
    mut found: Vec<u64>,
    done: bool,
    checkpoints: &mut dyn ShareCheckpoints,
    report: &mut dyn FnMut(&LayerStats),
) -> Result<Vec<u64>> {
    if found.len() - 1 > usize::from(W::DEEPEST) {
        return Err(too_deep(name, W::DEEPEST));
    }
    if done {
        return Ok(found);
    }
    let mut total: u64 = found.iter().sum();
    let mut rates = Rates::default();
    for depth in found.len() as u64 - 1.. {
        let started = Instant::now();
        let frontier = *found.last().expect("the goal's layer");
        let unseen = legal - total;
        // The direction that should cost less at the rates measured so
        // far; every worker knows the same, so all count a push's work
        // together or none does.
        let mut counted = Ok(0);
        let pull = rates.pull(frontier, W::scan_bound(&found), unseen, || {
            counted = worker.push_work(transport, depth);
            *counted.as_ref().unwrap_or(&0)
        });
        counted?;
        let layer = worker.layer(transport, checkpoints, depth, pull)?;
        rates.note(pull, layer.busiest, if pull { unseen } else { layer.scanned });
        report(&LayerStats {
            depth: u16::try_from(depth + 1).unwrap_or(u16::MAX),
            pull,
            elapsed: started.elapsed(),
            ..layer
        });
        let done = layer.found == 0;
        if !done {
            if depth + 1 > u64::from(W::DEEPEST) {
                return Err(too_deep(name, W::DEEPEST));
            }
            found.push(layer.found);
            total += layer.found;
            worker.add_layer(depth + 1, layer.found);
        }
        worker.boundary(transport, checkpoints, &found, done)?;
        if done {
            break;
        }
    }
    Ok(found)
}
