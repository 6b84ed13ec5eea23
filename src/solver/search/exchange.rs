//! What the workers of a search exchange at the end of a layer: the
//! positions a push reached in other workers' ranges (as halo bits), the
//! images of found positions (as messages or a bitmap of the receiver's
//! cells), and the layer's counts, summed over the workers.

use std::ops::Range;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::halo::{self, Halo, RUN, Reached};
use super::share::{LayerStats, Message, Partition, Transport, words};
use crate::bitboard::Word;
use crate::error::{Error, Result};
use crate::tight::TightIndex;

/// Counts one worker keeps over a layer and sums with the others': found,
/// expanded, neighbours, crossing, messages, bytes, halo bytes, the
/// nanoseconds it worked (the layer's time less its waits for the others),
/// and the positions a two-bit push scanned.
pub(super) const COUNTS: usize = 9;

/// What a worker's own part of a layer left for [`end_layer`].
pub(super) struct Worked<'a> {
    /// Its counts ([`COUNTS`]), those of images it already traded in
    /// rounds of the layer included.
    pub counts: [u64; COUNTS],
    /// On a push layer, the halo whose outbox holds the positions it
    /// reached in other workers' ranges.
    pub push: Option<&'a Halo>,
    /// The images it found in other workers' ranges, by owner.
    pub images: Vec<Vec<Message>>,
    /// How long it worked.
    pub busy: Duration,
}

/// Ends a layer on this worker, a collective step: on a push layer sends
/// each other worker the bits of its positions this worker reached
/// (`worked.push`'s outbox, emptied), then, in a second round, the images
/// of those their owners took and of those found here; takes what
/// the others send with `receive`, a run of positions at a time (given
/// where to put images in the first round; it returns how many positions
/// it took), and sums the layer's counts over the workers, with the time
/// each worked: `worked.busy` before this call, and in `receive`. The depth,
/// direction and time are left for the caller to fill in.
pub(super) fn end_layer<T: Transport + ?Sized, W: Word>(
    transport: &mut T,
    index: &TightIndex<W>,
    partition: &Partition,
    worked: Worked<'_>,
    mut receive: impl FnMut(&[Reached], Option<&mut Vec<Vec<Message>>>) -> Result<u64>,
) -> Result<LayerStats> {
    let (mut counts, mut images, mut busy) = (worked.counts, worked.images, worked.busy);
    let me = transport.worker();
    let mut receive = |run: &[Reached], images: Option<&mut Vec<Vec<Message>>>| {
        let started = Instant::now();
        let taken = receive(run, images);
        busy += started.elapsed();
        taken
    };
    if let Some(halo) = worked.push {
        let (incoming, sent) = halo.send_outbox(me, transport)?;
        counts[6] += sent;
        for (from, stream) in incoming.iter().enumerate() {
            if from != me {
                counts[0] += halo.reached(index, from, stream, |run| receive(run, Some(&mut images)))?;
            }
        }
    }
    let sent = post_images(transport, partition, images)?;
    counts[0] += take_images(transport, index, partition, |run| receive(run, None))?;
    counts[3] += sent.0;
    counts[4] += sent.1;
    counts[5] += sent.2;
    counts[7] = u64::try_from(busy.as_nanos()).unwrap_or(u64::MAX);
    let (sums, max_worker_bytes, busiest) = sum_counts(transport, counts)?;
    // The sums come in the order of `COUNTS`.
    Ok(LayerStats {
        found: sums[0],
        expanded: sums[1],
        scanned: sums[8],
        neighbours: sums[2],
        crossing: sums[3],
        messages: sums[4],
        halo_bytes: sums[6],
        bytes: sums[5] + sums[6],
        max_worker_bytes,
        busiest: Duration::from_nanos(busiest),
        mean_busy: Duration::from_nanos(sums[7] / transport.workers() as u64),
        ..LayerStats::default()
    })
}

/// Posts each worker the images this one found in its range (`images`, by
/// owner), the first half of a collective step ([`take_images`] the
/// second), and returns how many it had and sent (repeats dropped) and in
/// how many bytes.
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails.
pub(super) fn post_images<T: Transport + ?Sized>(
    transport: &mut T,
    partition: &Partition,
    images: Vec<Vec<Message>>,
) -> Result<(u64, u64, u64)> {
    let had = images.iter().map(|list| list.len() as u64).sum::<u64>();
    let mut streams = Vec::with_capacity(images.len());
    let (mut sent, mut bytes) = (0u64, 0u64);
    for (w, out) in images.into_iter().enumerate() {
        let (stream, count) = encode_images(out, partition.cells(w));
        sent += count;
        bytes += stream.len() as u64;
        streams.push(stream);
    }
    transport.post(streams)?;
    Ok((had, sent, bytes))
}

/// Takes the images the others posted this worker ([`post_images`]) with
/// `receive`, a run at a time, and returns how many it took.
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails or a stream names a
/// position outside this worker's range, and what `receive` returns.
pub(super) fn take_images<T: Transport + ?Sized, W: Word>(
    transport: &mut T,
    index: &TightIndex<W>,
    partition: &Partition,
    mut receive: impl FnMut(&[Reached]) -> Result<u64>,
) -> Result<u64> {
    let me = transport.worker();
    let incoming = transport.take()?;
    let mut taken = 0;
    let mut run = Vec::with_capacity(RUN);
    for (from, stream) in incoming.iter().enumerate() {
        if from == me {
            continue;
        }
        let mut near = partition.blocks(me).start;
        each_image(stream, partition.cells(me), |i| {
            let reached = own_index(index, partition, me, Message { index: i }, near)?;
            near = reached.block;
            run.push(reached);
            if run.len() == RUN {
                taken += receive(&run)?;
                run.clear();
            }
            Ok(())
        })
        .map_err(|e| match e {
            Error::Exchange(why) => Error::Exchange(format!("worker {from} sent images that {why}")),
            other => other,
        })?;
        taken += receive(&run)?;
        run.clear();
    }
    Ok(taken)
}

/// A layer's counts of every worker, summed, the most bytes one worker
/// sent (message and halo bytes, `counts[5] + counts[6]`) and the longest
/// one worked (`counts[7]`): the same on every worker, a collective step.
fn sum_counts<T: Transport + ?Sized>(transport: &mut T, counts: [u64; COUNTS]) -> Result<([u64; COUNTS], u64, u64)> {
    let mine: Vec<u8> = counts.iter().flat_map(|c| c.to_le_bytes()).collect();
    let all = transport.all_to_all(vec![mine; transport.workers()])?;
    let mut sums = [0u64; COUNTS];
    let (mut max_worker_bytes, mut busiest) = (0, 0);
    for stream in &all {
        if stream.len() != COUNTS * 8 {
            return Err(Error::Exchange(format!(
                "a worker's layer counts came as {} bytes, not {}",
                stream.len(),
                COUNTS * 8
            )));
        }
        let theirs = words(stream)?;
        for (s, t) in sums.iter_mut().zip(&theirs) {
            *s += t;
        }
        max_worker_bytes = max_worker_bytes.max(theirs[5] + theirs[6]);
        busiest = busiest.max(theirs[7]);
    }
    Ok((sums, max_worker_bytes, busiest))
}

/// The first byte of a stream of images: their messages follow, in order.
const IMAGE_LIST: u8 = 0;

/// The first byte of a stream of images: a bitmap of the receiver's cells
/// follows, as [`halo::pack_words`] sends bit words.
const IMAGE_BITS: u8 = 1;

/// The wire form of `images`, all positions of `cells` (the receiver's),
/// and how many distinct ones it holds: nothing for none. When they are
/// many for those positions (one for each 64 or more), a bitmap of them,
/// which is then no larger than their messages and needs no sort: on 2
/// ranks, 9x8 took 0.988 of the time when the bitmap only sorted, then
/// 0.984 of that when it was sent too, and its ranks sent 28 MB where
/// they sent 54 MB. Otherwise, or when an image is not of `cells`, their
/// messages, sorted and without repeats, so the receiver's writes stay
/// near each other.
fn encode_images(mut images: Vec<Message>, cells: Range<u64>) -> (Vec<u8>, u64) {
    if images.is_empty() {
        return (Vec::new(), 0);
    }
    let len = cells.end - cells.start;
    if images.len() as u64 >= len / 64 {
        let mut bits = vec![0u64; len.div_ceil(64) as usize];
        let mut inside = true;
        for m in &images {
            let k = m.index.wrapping_sub(cells.start);
            inside &= k < len;
            if let Some(word) = bits.get_mut((k / 64) as usize) {
                *word |= 1 << (k % 64);
            }
        }
        if inside {
            let count = bits.iter().map(|w| u64::from(w.count_ones())).sum();
            let mut stream = vec![IMAGE_BITS];
            stream.extend_from_slice(&halo::pack_words(&bits));
            return (stream, count);
        }
    }
    sort_messages(&mut images);
    images.dedup();
    let mut stream = Vec::with_capacity(1 + images.len() * Message::BYTES);
    stream.push(IMAGE_LIST);
    Message::encode_all(&images, &mut stream);
    (stream, images.len() as u64)
}

/// Calls `f` with each image of a stream [`encode_images`] made for the
/// positions `cells`, in the stream's order.
///
/// # Errors
///
/// [`Error::Exchange`] when the stream does not decode or names a bit past
/// `cells`; what `f` returns.
fn each_image(stream: &[u8], cells: Range<u64>, mut f: impl FnMut(u64) -> Result<()>) -> Result<()> {
    let Some((&form, rest)) = stream.split_first() else {
        return Ok(());
    };
    match form {
        IMAGE_LIST => Message::decode_each(rest)?.try_for_each(|m| f(m.index)),
        IMAGE_BITS => {
            let bits = halo::unpack_bits(rest, cells.end - cells.start)
                .map_err(|why| Error::Exchange(format!("as bits {why}")))?;
            halo::each_bit(&bits, |k| f(cells.start + k))
        }
        other => Err(Error::Exchange(format!("start with the unknown form {other}"))),
    }
}

/// Sorts `messages` by index, in parallel when the rank has more than one
/// thread: rayon's parallel sort in a one-thread pool took 1.6 times as
/// long as the standard library's on a layer's 14 M images.
fn sort_messages(messages: &mut [Message]) {
    if rayon::current_num_threads() > 1 {
        messages.par_sort_unstable();
    } else {
        messages.sort_unstable();
    }
}

/// The images a layer of one worker found in other workers' ranges, by
/// owner. (The neighbours it reached there go by the halo's outbox.)
pub(super) struct Outgoing {
    pub images: Vec<Vec<Message>>,
}

impl Outgoing {
    pub(super) fn new(workers: usize) -> Outgoing {
        Outgoing {
            images: vec![Vec::new(); workers],
        }
    }

    /// The lists of `other` added to these.
    pub(super) fn join(mut self, other: Outgoing) -> Outgoing {
        for (out, mut more) in self.images.iter_mut().zip(other.images) {
            if out.len() < more.len() {
                std::mem::swap(out, &mut more);
            }
            out.append(&mut more);
        }
        self
    }
}

/// The position `m` names, which worker `me` of `partition` was sent, with
/// its block: `near` when that block holds it (messages come in order, so
/// mostly a block at a time), else found.
///
/// # Errors
///
/// [`Error::Exchange`] when `m` names a position outside the worker's range.
fn own_index<W: Word>(
    index: &TightIndex<W>,
    partition: &Partition,
    me: usize,
    m: Message,
    near: u64,
) -> Result<Reached> {
    if !partition.cells(me).contains(&m.index) {
        return Err(Error::Exchange(format!(
            "worker {me} was sent position {}, which it does not own",
            m.index
        )));
    }
    let block = if index.block(near).contains(&m.index) {
        near
    } else {
        index.block_of(m.index)
    };
    Ok(Reached { index: m.index, block })
}

/// Tight index `i` of block `r` as a message, and the worker it goes to.
#[inline]
pub(super) fn message_at(partition: &Partition, i: u64, r: u64) -> (usize, Message) {
    (partition.owner(r), Message { index: i })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Images come back sorted and distinct whether sent as a bitmap
    /// (many for their cells) or as messages (few, or one outside the
    /// cells); a bitmap with a bit past the cells, or an unknown form, is
    /// refused.
    #[test]
    fn images_round_trip_sorted_and_distinct_either_way() {
        let cells = 1_000..1_630u64;
        let of = |list: &[u64]| list.iter().map(|&index| Message { index }).collect::<Vec<_>>();
        let many: Vec<u64> = (0..40)
            .map(|k| 1_000 + (k * 37) % 630)
            .chain([1_629, 1_000, 1_629])
            .collect();
        let few = [1_500, 1_200, 1_500];
        let stray: Vec<u64> = many.iter().copied().chain([7]).collect();
        for (list, form) in [
            (&many[..], Some(IMAGE_BITS)),
            (&few[..], Some(IMAGE_LIST)),
            (&stray[..], Some(IMAGE_LIST)),
            (&[], None),
        ] {
            let (stream, count) = encode_images(of(list), cells.clone());
            assert_eq!(stream.first().copied(), form, "{list:?}");
            let mut want = list.to_vec();
            want.sort_unstable();
            want.dedup();
            assert_eq!(count, want.len() as u64);
            let mut got = Vec::new();
            each_image(&stream, cells.clone(), |i| {
                got.push(i);
                Ok(())
            })
            .unwrap();
            assert_eq!(got, want, "{list:?}");
        }
        let (mut past, _) = encode_images(of(&many), cells.clone());
        let last = past.len() - 1;
        past[last] |= 0x80;
        let refused = |stream: &[u8]| matches!(each_image(stream, cells.clone(), |_| Ok(())), Err(Error::Exchange(_)));
        assert!(refused(&past));
        assert!(refused(&[9, 0, 0]));
        assert!(refused(&[IMAGE_LIST, 1, 2, 3]));
    }

    #[test]
    fn a_position_outside_the_range_is_refused() {
        let index = crate::solver::search::board("5x4").1;
        let partition = Partition::balanced(&index, 2).unwrap();
        let first = partition.blocks(0).start;
        // Worker 1's first position, and the one past worker 0's last.
        for bad in [partition.cells(1).start, partition.cells(0).end] {
            let e = own_index(&index, &partition, 0, Message { index: bad }, first).unwrap_err();
            assert!(matches!(e, Error::Exchange(_)), "{e}");
        }
        let last = partition.cells(0).end - 1;
        let fine = own_index(&index, &partition, 0, Message { index: last }, first).unwrap();
        assert_eq!(fine.block, index.block_of(last));
    }
}
