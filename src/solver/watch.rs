//! A watch over the ranks of an MPI job, so that a rank gone silent ends
//! the job instead of hanging it.
//!
//! MPI itself notices a rank whose process died, but not one that stopped
//! (`SIGSTOP`, a machine frozen in swap) or one whose network link is cut:
//! TCP keeps a connection with nothing in flight open for ever, and one
//! with data in flight retries for some fifteen minutes. The others then
//! wait in the exchange for ever. So every rank runs a [`Watch`]: a thread
//! that says "alive" to every other rank every [`BEAT`], on a communicator
//! of its own, and hears theirs. When a rank hears nothing from another for
//! the silence bound ([`silence`]: 20 s, or `BISHOPS_MPI_SILENCE_SECONDS`),
//! it says which rank and host went silent and ends the job
//! (`MPI_Abort`). The beat comes from its own thread, so a rank busy for
//! minutes on a layer or a checkpoint still beats.
//!
//! A rank that is done says so ([`Watch::stop`]) and is watched no more:
//! rank 0 writes the database after the others have finished.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::error::{Error, Result};

/// How often a rank says it is alive.
pub const BEAT: Duration = Duration::from_secs(1);

/// The silence bound when `BISHOPS_MPI_SILENCE_SECONDS` does not set one.
pub const SILENCE: Duration = Duration::from_secs(20);

/// The tag of the watch's messages (on its own communicator).
const TAG: mpi::Tag = 7;

/// What a rank says: alive, or done and no longer to be watched.
static ALIVE: [u8; 1] = [1];
static DONE: [u8; 1] = [2];

/// The longest a name of a host is shown (MPI's own limit is 256).
const HOST_BYTES: usize = 64;

/// The silence bound: `BISHOPS_MPI_SILENCE_SECONDS` (whole seconds, 2 to
/// 3600) or [`SILENCE`].
///
/// # Errors
///
/// [`Error::Usage`] when the variable is set to anything else.
pub fn silence() -> Result<Duration> {
    let Some(value) = std::env::var_os("BISHOPS_MPI_SILENCE_SECONDS") else {
        return Ok(SILENCE);
    };
    match value.to_str().and_then(|v| v.parse::<u64>().ok()) {
        Some(seconds @ 2..=3600) => Ok(Duration::from_secs(seconds)),
        _ => Err(Error::Usage(format!(
            "BISHOPS_MPI_SILENCE_SECONDS is whole seconds from 2 to 3600, not {value:?}"
        ))),
    }
}

/// The watch of this rank over the others: see the module.
pub struct Watch {
    stop: Sender<()>,
    thread: Option<JoinHandle<()>>,
    /// Each rank's host, as MPI names it.
    hosts: Vec<String>,
}

/// A communicator the watch thread alone uses.
struct Own(SimpleCommunicator);

// SAFETY: MPI runs at the `Multiple` thread level when a watch starts
// ([`Watch::start`]), and only the watch's thread uses this communicator.
unsafe impl Send for Own {}

impl Watch {
    /// Starts watching: a collective call, made by every rank of `world`
    /// once MPI runs at the `Multiple` thread level.
    pub fn start(world: &SimpleCommunicator, silence: Duration) -> Watch {
        let hosts = hosts(world);
        let own = Own(world.duplicate());
        let (stop, stopped) = mpsc::channel();
        let names = hosts.clone();
        let thread = std::thread::Builder::new()
            .name("mpi-watch".into())
            .spawn(move || {
                // The whole of `own` moves here, not its field alone.
                let own = own;
                watch(&own.0, &names, silence, || {
                    !matches!(stopped.recv_timeout(BEAT), Err(RecvTimeoutError::Timeout))
                });
            })
            .expect("a thread starts");
        Watch {
            stop,
            thread: Some(thread),
            hosts,
        }
    }

    /// The host of rank `rank`, as MPI names it.
    pub fn host(&self, rank: usize) -> &str {
        self.hosts.get(rank).map_or("?", String::as_str)
    }

    /// Tells every other rank that this one is done, and stops watching.
    pub fn stop(mut self) {
        let _ = self.stop.send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Each rank's host (`MPI_Get_processor_name`), gathered on every rank.
fn hosts(world: &SimpleCommunicator) -> Vec<String> {
    let mut mine = [0u8; HOST_BYTES];
    let name = mpi::environment::processor_name().unwrap_or_default();
    let name = &name.as_bytes()[..name.len().min(HOST_BYTES)];
    mine[..name.len()].copy_from_slice(name);
    let mut all = vec![0u8; HOST_BYTES * world.size() as usize];
    world.all_gather_into(&mine[..], &mut all[..]);
    all.chunks(HOST_BYTES)
        .map(|name| {
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            String::from_utf8_lossy(&name[..end]).into_owned()
        })
        .collect()
}

/// A peer as the watch sees it.
struct Peer {
    heard: Instant,
    done: bool,
    /// The send under way to it, at most one: a send to a rank that does
    /// not take it (a cut link) must not pile up.
    sending: Option<Request<'static, [u8]>>,
}

/// The watch's loop on `comm`: beats, hears, and ends the job on a
/// silence; returns when `stopped` says so (it waits up to a beat each
/// call), after telling every other rank this one is done.
fn watch(comm: &SimpleCommunicator, hosts: &[String], silence: Duration, mut stopped: impl FnMut() -> bool) {
    let me = comm.rank() as usize;
    let mut peers: Vec<Peer> = (0..comm.size())
        .map(|_| Peer {
            heard: Instant::now(),
            done: false,
            sending: None,
        })
        .collect();
    peers[me].done = true;
    while !stopped() {
        let now = Instant::now();
        // Everything that arrived, from anyone.
        while let Some(status) = comm.any_process().immediate_probe_with_tag(TAG) {
            let from = status.source_rank();
            let (word, _) = comm.process_at_rank(from).receive_with_tag::<u8>(TAG);
            if let Some(peer) = peers.get_mut(from as usize) {
                peer.heard = now;
                peer.done |= word == DONE[0];
            }
        }
        for (rank, peer) in peers.iter_mut().enumerate() {
            if peer.done {
                continue;
            }
            if now.duration_since(peer.heard) > silence {
                crate::text::say!(
                    "bishops: rank {me} of {} ({}): no word from rank {rank} ({}) for {} s; ending the job",
                    hosts.len(),
                    hosts[me],
                    hosts[rank],
                    silence.as_secs()
                );
                SimpleCommunicator::world().abort(Error::Exchange(String::new()).exit_code());
            }
            if let Some(request) = peer.sending.take() {
                peer.sending = request.test().err();
            }
            if peer.sending.is_none() {
                peer.sending = Some(send(comm, rank, &ALIVE));
            }
        }
    }
    // The last word goes to every rank before MPI ends; a send that does
    // not finish within a few beats (its rank gone) is left to MPI.
    let until = Instant::now() + 3 * BEAT;
    for (rank, peer) in peers.iter_mut().enumerate() {
        if rank == me {
            continue;
        }
        // A rank that has not taken the last beat will not take this.
        if let Some(request) = peer.sending.take()
            && !finish(request, until)
        {
            continue;
        }
        finish(send(comm, rank, &DONE), until);
    }
}

/// Starts sending `word` to rank `to`.
fn send(comm: &SimpleCommunicator, to: usize, word: &'static [u8]) -> Request<'static, [u8]> {
    comm.process_at_rank(to as i32)
        .immediate_send_with_tag(StaticScope, word, TAG)
}

/// Waits for `request` until `until`: whether it finished. One that did
/// not is left to MPI (forgotten, not cancelled).
fn finish(mut request: Request<'static, [u8]>, until: Instant) -> bool {
    loop {
        match request.test() {
            Ok(_) => return true,
            Err(pending) if Instant::now() < until => {
                request = pending;
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(pending) => {
                std::mem::forget(pending);
                return false;
            }
        }
    }
}
