//! The workers of a search ([`search`](super::search)) as the ranks of an
//! MPI job: `mpirun -np N bishops solve VARIANT` on one machine or many.
//! Built only with the cargo feature `mpi`, over the system's MPI library
//! (rsmpi's `mpi` crate).
//!
//! [`MpiTransport`] carries the one collective a partitioned search needs,
//! an all-to-all of byte streams, as `MPI_Alltoallv`: the lengths go first
//! (one `MPI_Alltoall` of 64-bit counts), then the bytes, in as many rounds
//! as it takes to keep every message and every buffer of a round under the
//! 2^31 elements MPI counts with `int`. The number of rounds is agreed by
//! an `MPI_Allreduce`, so every rank makes the same calls. The same
//! exchange in two steps ([`Transport::post`], [`Transport::take`]), which
//! the two-bit search's rounds of images use so that a rank works on
//! while the others catch up, goes as point-to-point messages: `MPI_Isend`
//! when posted, a blocking receive of each sender's when taken.
//!
//! Every call of the transport comes from the thread that initialized
//! MPI: the search's workers call it from that thread only. MPI runs at
//! the `Multiple` level all the same, for the [`watch`](super::watch)'s
//! thread, which keeps to a communicator of its own.

use mpi::Count;
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::search::Transport;
use crate::error::{Error, Result};

/// The most bytes all of one rank's messages of one round add up to, and
/// so the most it receives: under 2^31, MPI's `int` counts and offsets.
const ROUND_BYTES: u64 = 1 << 30;

/// The tag of the messages of [`Transport::post`].
const POSTED: mpi::Tag = 1;

/// A [`Transport`] between the ranks of an MPI communicator: worker `w` is
/// rank `w`.
pub struct MpiTransport {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    /// What this rank posted itself, until it takes it.
    posted: Option<Vec<u8>>,
    /// The sends of posted exchanges still under way, each with its buffer.
    sending: Vec<Sending>,
    /// What this rank's exchanges have cost so far.
    traffic: Traffic,
}

/// What a rank's exchanges with the others cost: the figures a network's
/// price is read from ([`MpiTransport::traffic`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct Traffic {
    /// Exchanges that wait for other ranks: all-to-alls and takes.
    pub exchanges: u64,
    /// Bytes this rank sent to others (payload, lengths included).
    pub sent: u64,
    /// Time spent in those waits: on the network, and on ranks that were
    /// behind.
    pub waited: std::time::Duration,
}

/// A buffer MPI is sending ([`MpiTransport::post`]), freed when the send
/// is complete.
struct Sending {
    request: Request<'static, [u8]>,
    buffer: *mut [u8],
}

impl MpiTransport {
    /// The transport of this process's rank of `world`.
    pub fn new(world: SimpleCommunicator) -> MpiTransport {
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        MpiTransport {
            world,
            rank,
            size,
            posted: None,
            sending: Vec::new(),
            traffic: Traffic::default(),
        }
    }

    /// What this rank's exchanges have cost so far.
    pub fn traffic(&self) -> Traffic {
        self.traffic
    }

    /// Starts sending `bytes` to rank `to`, a posted message.
    fn send(&mut self, to: usize, bytes: Vec<u8>) {
        let buffer = Box::into_raw(bytes.into_boxed_slice());
        // SAFETY: the buffer is freed only once MPI has sent it
        // ([`finish`](Self::finish)), and nothing writes it until then.
        let shared: &'static [u8] = unsafe { &*buffer };
        let request = (self.world.process_at_rank(to as i32)).immediate_send_with_tag(StaticScope, shared, POSTED);
        self.sending.push(Sending { request, buffer });
    }

    /// Frees the buffers of the sends that are complete, waiting for all
    /// of them when `wait`.
    fn finish(&mut self, wait: bool) {
        for Sending { request, buffer } in std::mem::take(&mut self.sending) {
            let request = if wait {
                request.wait();
                None
            } else {
                request.test().err()
            };
            match request {
                Some(request) => self.sending.push(Sending { request, buffer }),
                // SAFETY: `buffer` came from `Box::into_raw` in `send`, and
                // MPI is done with it.
                None => drop(unsafe { Box::from_raw(buffer) }),
            }
        }
    }

    /// Receives a posted message of `into.len()` bytes from rank `from`.
    fn receive(&self, from: usize, into: &mut [u8]) -> Result<()> {
        let status = (self.world.process_at_rank(from as i32)).receive_into_with_tag(into, POSTED);
        if status.count(u8::equivalent_datatype()) as usize != into.len() {
            return Err(Error::Exchange(format!(
                "rank {from} posted a message of another length"
            )));
        }
        Ok(())
    }
}

impl Drop for MpiTransport {
    fn drop(&mut self) {
        self.finish(true);
    }
}

impl Transport for MpiTransport {
    fn worker(&self) -> usize {
        self.rank
    }

    fn workers(&self) -> usize {
        self.size
    }

    fn all_to_all(&mut self, mut outgoing: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        let began = std::time::Instant::now();
        outgoing.resize(self.size, Vec::new());
        let sending: Vec<u64> = outgoing.iter().map(|s| s.len() as u64).collect();
        let mut receiving = vec![0u64; self.size];
        self.world.all_to_all_into(&sending[..], &mut receiving[..]);
        // Each pair gets an equal part of a round's bytes.
        let per_pair = ROUND_BYTES / self.size as u64;
        let mine = sending
            .iter()
            .chain(&receiving)
            .max()
            .copied()
            .unwrap_or(0)
            .div_ceil(per_pair);
        let mut rounds = 0u64;
        self.world.all_reduce_into(&mine, &mut rounds, SystemOperation::max());
        let mut incoming: Vec<Vec<u8>> = receiving.iter().map(|&n| Vec::with_capacity(n as usize)).collect();
        for round in 0..rounds {
            let piece = |len: u64| {
                let start = (round * per_pair).min(len);
                start as usize..((round + 1) * per_pair).min(len) as usize
            };
            let send_counts: Vec<Count> = sending.iter().map(|&n| piece(n).len() as Count).collect();
            let recv_counts: Vec<Count> = receiving.iter().map(|&n| piece(n).len() as Count).collect();
            // An empty Vec's pointer is 1, which Open MPI reads as
            // MPI_IN_PLACE: a byte past the counts keeps both real.
            let mut send = Vec::with_capacity(send_counts.iter().map(|&c| c as usize).sum::<usize>() + 1);
            for s in &mut outgoing {
                send.extend_from_slice(&s[piece(s.len() as u64)]);
                if round + 1 == rounds {
                    // Sent whole: its memory goes before the replies come.
                    *s = Vec::new();
                }
            }
            send.push(0);
            let mut recv = vec![0u8; recv_counts.iter().map(|&c| c as usize).sum::<usize>() + 1];
            let (send_at, recv_at) = (offsets(&send_counts), offsets(&recv_counts));
            {
                let out = Partition::new(&send[..], &send_counts[..], &send_at[..]);
                let mut into = PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_at[..]);
                self.world.all_to_all_varcount_into(&out, &mut into);
            }
            for ((stream, &at), &count) in incoming.iter_mut().zip(&recv_at).zip(&recv_counts) {
                stream.extend_from_slice(&recv[at as usize..(at + count) as usize]);
            }
        }
        let others: u64 = (sending.iter().enumerate())
            .filter(|&(to, _)| to != self.rank)
            .map(|(_, &n)| n + 8)
            .sum();
        self.traffic.exchanges += 1;
        self.traffic.sent += others;
        self.traffic.waited += began.elapsed();
        Ok(incoming)
    }

    /// Each stream goes as its length in 8 bytes and then in pieces of at
    /// most a GiB, as non-blocking sends, which the receiver takes whether
    /// or not the sender is in MPI at the time (on one machine, Open MPI
    /// copies straight from the sender's memory).
    fn post(&mut self, mut outgoing: Vec<Vec<u8>>) -> Result<()> {
        if self.posted.is_some() {
            return Err(Error::Exchange("a rank posted twice without taking".into()));
        }
        self.finish(false);
        outgoing.resize(self.size, Vec::new());
        self.posted = Some(std::mem::take(&mut outgoing[self.rank]));
        for (to, stream) in outgoing.into_iter().enumerate() {
            if to == self.rank {
                continue;
            }
            self.traffic.sent += 8 + stream.len() as u64;
            self.send(to, (stream.len() as u64).to_le_bytes().to_vec());
            // No message for an empty stream: an empty buffer's pointer is
            // 1, which Open MPI may read as `MPI_IN_PLACE`.
            if stream.len() as u64 > ROUND_BYTES {
                for piece in stream.chunks(ROUND_BYTES as usize) {
                    self.send(to, piece.to_vec());
                }
            } else if !stream.is_empty() {
                self.send(to, stream);
            }
        }
        Ok(())
    }

    fn take(&mut self) -> Result<Vec<Vec<u8>>> {
        let began = std::time::Instant::now();
        let own = (self.posted.take()).ok_or_else(|| Error::Exchange("a rank took what it never posted".into()))?;
        let mut incoming = Vec::with_capacity(self.size);
        for from in 0..self.size {
            if from == self.rank {
                incoming.push(Vec::new());
                continue;
            }
            let mut len = [0u8; 8];
            self.receive(from, &mut len)?;
            let len = usize::try_from(u64::from_le_bytes(len))
                .map_err(|_| Error::Exchange(format!("rank {from} posted a stream too long to hold")))?;
            let mut stream = vec![0u8; len];
            for piece in stream.chunks_mut(ROUND_BYTES as usize) {
                self.receive(from, piece)?;
            }
            incoming.push(stream);
        }
        incoming[self.rank] = own;
        self.finish(false);
        self.traffic.exchanges += 1;
        self.traffic.waited += began.elapsed();
        Ok(incoming)
    }
}

/// Where each part of a buffer cut into parts of `counts` starts.
fn offsets(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let start = *at;
            *at += c;
            Some(start)
        })
        .collect()
}

/// Makes a panic on this rank end the whole job (`MPI_Abort`) after the
/// usual message, instead of leaving the other ranks waiting for it in a
/// collective forever.
pub fn abort_on_panic() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        SimpleCommunicator::world().abort(101);
    }));
}
