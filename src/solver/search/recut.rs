//! Moving the cuts of a partitioned search between layers.
//!
//! A cut that balances one layer's work unbalances another's: the pushes
//! of the middle layers expand the positions of every white set, while
//! the last pulls search the few unseen positions left, and those crowd
//! into the blocks whose white bishops stand low, the first worker's.
//! So before a layer every worker estimates the work of each of its blocks
//! (the positions the layer expands or searches), and when the busiest
//! worker would have more than [`SLACK_PERCENT`] over the mean, and the
//! time that would save (its excess work at the time a unit of work took
//! in the last layer of the kind, [`Units`]) is more than the costliest
//! worker's move costs, the workers agree on new contiguous ranges of
//! equal work ([`balanced_cut`]) and hand each other the codes and summary
//! bytes of the blocks that change hands ([`move_share`]): the table's
//! bits a position, once. Each then recounts the white moves of the blocks
//! it gained and lost and works out its halo from the counts.
//!
//! What the counts miss, each worker's [`Pace`] makes up: a worker that
//! took longer per unit of its estimate than the others in the last layer
//! of the kind (it took more of their images, or its blocks cost more per
//! position) has its estimates weighed up by as much.

use std::ops::Range;
use std::time::Duration;

use super::share::{Partition, Transport, words};
use crate::bitboard::Word;
use crate::error::{Error, Result};
use crate::tight::TightIndex;

/// How far above the mean a worker's estimated work may be before the
/// workers re-cut their ranges, in percent.
pub(super) const SLACK_PERCENT: u64 = 10;

/// What re-cutting before a layer would save and cost, as one worker sees
/// it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Worth {
    /// About how long a unit of estimated work keeps a worker busy, in
    /// seconds ([`Units::of`]): the same on every worker. `None` before any
    /// layer was timed, when nothing is worth a move.
    pub(super) unit: Option<f64>,
    /// What this worker's last move cost it, its new halo included (before
    /// any, what setting up its range and its first halo cost).
    pub(super) cost: Duration,
}

/// How long a unit of estimated work kept the busiest worker busy in the
/// last push and the last pull ([`note`](Self::note)), from which the time
/// a re-cut would save: a layer's time grows with its frontier, so the
/// last layer's time says little of the next one's, while its time per
/// unit does.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Units(ByKind);

impl Units {
    /// Notes that a layer (`pull` or push) planned with a busiest share of
    /// `planned` units of estimated work kept its busiest worker busy for
    /// `busiest`. Every worker notes the same.
    pub(super) fn note(&mut self, pull: bool, planned: u64, busiest: Duration) {
        if planned > 0 {
            self.0.set(pull, busiest.as_secs_f64() / planned as f64);
        }
    }

    /// The time a unit of a layer's (`pull` or push) estimate takes: that
    /// of the last layer of the kind, else of the other kind.
    pub(super) fn of(&self, pull: bool) -> Option<f64> {
        self.0.of(pull).or(self.0.of(!pull))
    }
}

/// What the workers agreed on before a layer ([`balanced_cut`]).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Cut {
    /// The partition to move to, if any.
    pub(super) to: Option<Partition>,
    /// The estimated work of the busiest share the layer runs with.
    pub(super) busiest: u64,
}

/// A layer of this kind whose busiest worker worked less than this is too
/// short to time a worker's pace by.
pub(super) const PACE_FROM: Duration = Duration::from_millis(20);

/// How far a worker's pace may weigh its estimates up or down: by at most
/// this factor.
const PACE_LIMIT: f64 = 2.0;

/// How long one worker took per unit of its estimated work in the last
/// push and in the last pull that was long enough to time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Pace(ByKind);

/// A figure of the last push and of the last pull, once known.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct ByKind {
    push: Option<f64>,
    pull: Option<f64>,
}

impl ByKind {
    /// Sets the figure of the kind (`pull` or push).
    fn set(&mut self, pull: bool, value: f64) {
        *if pull { &mut self.pull } else { &mut self.push } = Some(value);
    }

    /// The figure of the kind (`pull` or push), if known.
    fn of(&self, pull: bool) -> Option<f64> {
        if pull { self.pull } else { self.push }
    }
}

impl Pace {
    /// Notes that this worker's share of a layer (`pull` or push), whose
    /// busiest worker worked `busiest`, was estimated at `work` units and
    /// kept it `busy`. Every worker notes the same layers: the busiest
    /// worker's time is the same on all.
    pub(super) fn note(&mut self, pull: bool, work: u64, busy: Duration, busiest: Duration) {
        if busiest >= PACE_FROM && work > 0 {
            self.0.set(pull, busy.as_secs_f64() / work as f64);
        }
    }

    /// This worker's estimates `work` for a layer (`pull` or push) weighed
    /// by its pace over the mean pace of all workers in the last layer of
    /// the kind, at most [`PACE_LIMIT`] up or down: a collective step.
    /// Unweighed while not every worker has timed a layer of the kind.
    ///
    /// # Errors
    ///
    /// [`Error::Exchange`] when the transport fails or a worker's pace does
    /// not decode.
    pub(super) fn weigh<T: Transport + ?Sized>(&self, transport: &mut T, pull: bool, work: &[u64]) -> Result<Vec<u64>> {
        let mine = self.0.of(pull);
        // NaN when unknown: a pace is never negative or NaN.
        let report = mine.unwrap_or(f64::NAN).to_bits().to_le_bytes().to_vec();
        let mut paces = Vec::with_capacity(transport.workers());
        for stream in transport.all_to_all(vec![report; transport.workers()])? {
            match *words(&stream)? {
                [bits] => paces.push(f64::from_bits(bits)),
                _ => return Err(Error::Exchange("a worker's pace is not one word".into())),
            }
        }
        let mean = paces.iter().sum::<f64>() / paces.len() as f64;
        let factor = match mine {
            Some(pace) if mean.is_finite() && mean > 0.0 => (pace / mean).clamp(1.0 / PACE_LIMIT, PACE_LIMIT),
            _ => 1.0,
        };
        Ok(work.iter().map(|&w| (w as f64 * factor).round() as u64).collect())
    }
}

/// Agrees with every other worker, a collective step, whether to re-cut
/// `partition` before a layer whose work this worker estimates at
/// `work[k]` for its block `partition.blocks(me).start + k`, as the module
/// doc says (without `worth`, by the slack alone): to the partition whose
/// contiguous ranges hold equal shares of the estimated work (at whole
/// blocks), the same on every worker.
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails or a worker's answer does
/// not decode or make a partition.
pub(super) fn balanced_cut<T: Transport + ?Sized, W: Word>(
    transport: &mut T,
    index: &TightIndex<W>,
    partition: &Partition,
    work: &[u64],
    worth: Option<Worth>,
) -> Result<Cut> {
    let (me, workers) = (transport.worker(), transport.workers());
    let blocks = partition.blocks(me);
    if work.len() as u64 != blocks.end - blocks.start {
        return Err(Error::Exchange(format!(
            "worker {me} estimated {} blocks of its {}",
            work.len(),
            blocks.end - blocks.start
        )));
    }
    let mine: u64 = work.iter().sum();
    let cost = worth.map_or(0, |w| u64::try_from(w.cost.as_nanos()).unwrap_or(u64::MAX));
    let report: Vec<u8> = [mine, cost].into_iter().flat_map(u64::to_le_bytes).collect();
    let (mut totals, mut costliest) = (Vec::with_capacity(workers), 0u64);
    for stream in transport.all_to_all(vec![report; workers])? {
        match *words(&stream)? {
            [total, cost] => {
                totals.push(u128::from(total));
                costliest = costliest.max(cost);
            }
            _ => return Err(Error::Exchange("a worker's estimate is not two words".into())),
        }
    }
    let total: u128 = totals.iter().sum();
    let busiest = totals.iter().copied().max().unwrap_or(0);
    let stay = Cut {
        to: None,
        busiest: u64::try_from(busiest).unwrap_or(u64::MAX),
    };
    if workers < 2 || busiest * 100 * workers as u128 <= total * u128::from(100 + SLACK_PERCENT) {
        return Ok(stay);
    }
    // The layer would take `busiest` where equal shares take the mean.
    let excess = busiest - total / workers as u128;
    if let Some(worth) = worth
        && worth
            .unit
            .is_none_or(|unit| excess as f64 * unit * 1e9 <= costliest as f64)
    {
        return Ok(stay);
    }
    // Cut `k` falls before the first block whose preceding work reaches
    // `total · k / workers`; the worker whose estimate spans that target
    // finds it in its own blocks and tells the others.
    let before: u128 = totals[..me].iter().sum();
    let mut cuts = Vec::new();
    let mut acc = before;
    let mut at = 0;
    for k in 1..workers {
        let target = total * k as u128 / workers as u128;
        if target < before || target >= before + u128::from(mine) {
            continue;
        }
        while at < work.len() && acc < target {
            acc += u128::from(work[at]);
            at += 1;
        }
        cuts.extend_from_slice(&(k as u64).to_le_bytes());
        cuts.extend_from_slice(&(blocks.start + at as u64).to_le_bytes());
    }
    let mut bounds = vec![None; workers + 1];
    bounds[0] = Some(0);
    bounds[workers] = Some(index.white_sets());
    for stream in transport.all_to_all(vec![cuts; workers])? {
        for pair in words(&stream)?.chunks(2) {
            match *pair {
                [k, cut] if (1..workers as u64).contains(&k) && bounds[k as usize].is_none() => {
                    bounds[k as usize] = Some(cut);
                }
                _ => return Err(Error::Exchange("a worker sent a cut twice or out of range".into())),
            }
        }
    }
    let bounds: Vec<u64> = bounds
        .into_iter()
        .collect::<Option<_>>()
        .ok_or_else(|| Error::Exchange("no worker placed a cut".into()))?;
    if bounds.windows(2).any(|w| w[0] > w[1]) {
        return Err(Error::Exchange("the workers' cuts are out of order".into()));
    }
    let cut = Partition::of_bounds(index, bounds);
    Ok(Cut {
        busiest: u64::try_from(total.div_ceil(workers as u128)).unwrap_or(u64::MAX),
        to: (cut != *partition).then_some(cut),
    })
}

/// How many positions change owner from `from` to `to`.
pub(super) fn changing_owner(from: &Partition, to: &Partition) -> u64 {
    (0..from.workers())
        .map(|w| {
            let (old, new) = (from.cells(w), to.cells(w));
            let kept = overlap(&old, &new);
            (old.end - old.start) - (kept.end - kept.start)
        })
        .sum()
}

/// What the ranges `a` and `b` have in common: empty, starting where the
/// later of them starts, when nothing.
pub(super) fn overlap(a: &Range<u64>, b: &Range<u64>) -> Range<u64> {
    let start = a.start.max(b.start);
    start..a.end.min(b.end).max(start)
}

/// Hands the blocks that change owner from `from` to `to` to their new
/// owners, a collective step: this worker's `codes` (`bits` a position
/// of `from.cells(me)`, from the low bits of the first word, as
/// [`Table::into_words`](crate::solver::table::Table::into_words) gives
/// them) and `summary` (a byte a block of `from.blocks(me)`) go where `to`
/// puts them, and it returns its codes and summary bytes under `to`.
/// Unused codes past the last position are unseen (all ones).
///
/// # Errors
///
/// [`Error::Exchange`] when the transport fails or a worker sends other
/// than what the two partitions say it holds for this one.
pub(super) fn move_share<T: Transport + ?Sized>(
    transport: &mut T,
    from: &Partition,
    to: &Partition,
    bits: u64,
    codes: Vec<u64>,
    summary: Vec<u8>,
) -> Result<(Vec<u64>, Vec<u8>)> {
    let code_words = |positions: u64| (positions * bits).div_ceil(64);
    let (me, workers) = (transport.worker(), transport.workers());
    let (old_blocks, old_cells) = (from.blocks(me), from.cells(me));
    // The places of `r` in a share of `of`; this worker's codes of `cells` into `dst` from bit `at`.
    let within = |r: &Range<u64>, of: &Range<u64>| (r.start - of.start) as usize..(r.end - of.start) as usize;
    let my_codes = |cells: &Range<u64>, dst: &mut [u64], at: u64| {
        copy_bits(
            &codes,
            bits * (cells.start - old_cells.start),
            dst,
            at,
            bits * (cells.end - cells.start),
        );
    };
    let outgoing = (0..workers)
        .map(|t| {
            let blocks = overlap(&old_blocks, &to.blocks(t));
            if t == me || blocks.is_empty() {
                return Vec::new();
            }
            let cells = overlap(&old_cells, &to.cells(t));
            let mut stream = summary[within(&blocks, &old_blocks)].to_vec();
            let mut words = vec![u64::MAX; code_words(cells.end - cells.start) as usize];
            my_codes(&cells, &mut words, 0);
            stream.extend(words.iter().flat_map(|w| w.to_le_bytes()));
            stream
        })
        .collect();
    let incoming = transport.all_to_all(outgoing)?;
    let (new_blocks, new_cells) = (to.blocks(me), to.cells(me));
    let mut new_summary = vec![0u8; (new_blocks.end - new_blocks.start) as usize];
    let mut new_codes = vec![u64::MAX; code_words(new_cells.end - new_cells.start) as usize];
    for (s, stream) in incoming.iter().enumerate() {
        let blocks = overlap(&from.blocks(s), &new_blocks);
        let cells = overlap(&from.cells(s), &new_cells);
        if blocks.is_empty() {
            if !stream.is_empty() {
                return Err(Error::Exchange(format!("worker {s} handed over blocks it keeps")));
            }
            continue;
        }
        let at = within(&blocks, &new_blocks);
        let (dst_bit, len) = (bits * (cells.start - new_cells.start), bits * (cells.end - cells.start));
        if s == me {
            new_summary[at].copy_from_slice(&summary[within(&blocks, &old_blocks)]);
            my_codes(&cells, &mut new_codes, dst_bit);
            continue;
        }
        let want = (blocks.end - blocks.start) as usize + 8 * code_words(cells.end - cells.start) as usize;
        if stream.len() != want {
            return Err(Error::Exchange(format!(
                "worker {s} handed over {} bytes for blocks {blocks:?}, not {want}",
                stream.len()
            )));
        }
        let (bytes, packed) = stream.split_at(at.len());
        new_summary[at].copy_from_slice(bytes);
        copy_bits(&words(packed)?, 0, &mut new_codes, dst_bit, len);
    }
    Ok((new_codes, new_summary))
}

/// Copies bits `from..from + len` of `src` to bits `to..to + len` of
/// `dst`, leaving `dst`'s other bits as they were.
fn copy_bits(src: &[u64], from: u64, dst: &mut [u64], to: u64, len: u64) {
    let mut done = 0;
    while done < len {
        let n = (len - done).min(64) as u32;
        write_bits(dst, to + done, n, read_bits(src, from + done, n));
        done += u64::from(n);
    }
}

/// Bits `at..at + n` of `src` (`n` from 1 to 64), from bit 0 up.
pub(super) fn read_bits(src: &[u64], at: u64, n: u32) -> u64 {
    let (w, shift) = ((at / 64) as usize, (at % 64) as u32);
    let mut bits = src[w] >> shift;
    if shift > 0 && shift + n > 64 {
        bits |= src[w + 1] << (64 - shift);
    }
    bits & mask(n)
}

/// Writes the low `n` bits of `bits` (`n` from 1 to 64) to bits
/// `at..at + n` of `dst`.
fn write_bits(dst: &mut [u64], at: u64, n: u32, bits: u64) {
    let (w, shift) = ((at / 64) as usize, (at % 64) as u32);
    let low = mask(n) << shift;
    dst[w] = dst[w] & !low | (bits << shift) & low;
    if shift > 0 && shift + n > 64 {
        let high = mask(n) >> (64 - shift);
        dst[w + 1] = dst[w + 1] & !high | (bits >> (64 - shift)) & high;
    }
}

/// The low `n` bits set, `n` up to 64.
fn mask(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1 << n) - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mod3::code_words;
    use crate::solver::search::{ChannelTransport, board, on_threads};

    /// A copy of any length between any two offsets moves exactly those
    /// bits and leaves every other bit of the destination alone.
    #[test]
    fn copies_any_run_of_bits() {
        // Bit `k` of `words`, the slow way.
        let bit = |words: &[u64], k: u64| words[(k / 64) as usize] >> (k % 64) & 1 == 1;
        let src: Vec<u64> = (0..6u64)
            .map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5555)
            .collect();
        for from in [0, 1, 31, 63, 64, 65, 100] {
            for to in [0, 2, 33, 64, 127] {
                for len in [0, 1, 2, 63, 64, 65, 128, 130, 190] {
                    let mut dst = vec![0xa5a5_a5a5_a5a5_a5a5u64; 6];
                    let before = dst.clone();
                    copy_bits(&src, from, &mut dst, to, len);
                    for k in 0..6 * 64 {
                        let want = if (to..to + len).contains(&k) {
                            bit(&src, from + k - to)
                        } else {
                            bit(&before, k)
                        };
                        assert_eq!(bit(&dst, k), want, "from {from} to {to} len {len}: bit {k}");
                    }
                }
            }
        }
    }

    /// Runs `f` as every worker of `workers`, on threads, with their
    /// transports; returns what each returned, in worker order.
    fn on_workers<R: Send>(workers: usize, f: impl Fn(&mut ChannelTransport) -> R + Sync) -> Vec<R> {
        on_threads(workers, &mut |_| {}, |transport, _| Ok(f(transport)))
            .unwrap()
            .0
    }

    /// Worker `w`'s share under `partition` of a made-up table of 2 bits a
    /// position: its codes, each depending on the position so that a
    /// misplaced one shows, and a summary byte per block that names the block.
    fn share_of(partition: &Partition, w: usize) -> (Vec<u64>, Vec<u8>) {
        let cells = partition.cells(w);
        let mut codes = vec![u64::MAX; code_words(cells.end - cells.start) as usize];
        for i in cells.clone() {
            let k = i - cells.start;
            let word = &mut codes[(k / 32) as usize];
            *word = *word & !(3 << (2 * (k % 32))) | ((i * 7 + i / 5) % 4) << (2 * (k % 32));
        }
        let summary = partition.blocks(w).map(|r| r as u8).collect();
        (codes, summary)
    }

    /// Codes and summary bytes handed over to any other cut are, worker by
    /// worker, the share that cut gives it, and handing them back restores
    /// the first share exactly.
    #[test]
    fn a_moved_share_is_the_share_of_the_new_cut() {
        let (_, index, ..) = board("7x6");
        let blocks = index.white_sets();
        for workers in [2, 3, 4] {
            let from = Partition::balanced(&index, workers).unwrap();
            let mut bounds: Vec<u64> = (0..=workers as u64)
                .map(|w| blocks * w * w / (workers * workers) as u64)
                .collect();
            bounds[1] = 0; // an empty range too
            let to = Partition::of_bounds(&index, bounds);
            let moved = on_workers(workers, |transport| {
                let me = transport.worker();
                let (codes, summary) = share_of(&from, me);
                let there = move_share(transport, &from, &to, 2, codes, summary).unwrap();
                assert_eq!(there, share_of(&to, me), "worker {me} of {workers}");
                move_share(transport, &to, &from, 2, there.0, there.1).unwrap()
            });
            for (w, back) in moved.into_iter().enumerate() {
                assert_eq!(back, share_of(&from, w));
            }
        }
    }

    /// Workers agree on one cut that gives each about the same estimated
    /// work, and on none when they are already within the slack.
    #[test]
    fn workers_agree_on_a_balanced_cut() {
        let (_, index, ..) = board("7x6");
        let blocks = index.white_sets();
        // Work piled on the first blocks: the balanced cut moves left.
        let work = |r: u64| if r < blocks / 4 { 100 } else { 1 };
        for workers in [2, 3, 5] {
            let partition = Partition::balanced(&index, workers).unwrap();
            // What every worker agrees on before a layer cut as `partition`.
            let cuts_of = |partition: &Partition, worth: Option<Worth>| {
                on_workers(workers, |transport| {
                    let mine: Vec<u64> = partition.blocks(transport.worker()).map(work).collect();
                    balanced_cut(transport, &index, partition, &mine, worth).unwrap()
                })
            };
            let cuts = cuts_of(&partition, None);
            let cut = cuts[0].to.clone().expect("an unbalanced cut moves");
            assert!(cuts.iter().all(|c| *c == cuts[0]));
            let shares: Vec<u64> = (0..workers).map(|w| cut.blocks(w).map(work).sum()).collect();
            let total: u64 = shares.iter().sum();
            // Within a block's work of equal, as planned.
            assert!(
                shares.iter().all(|&s| s.abs_diff(total / workers as u64) <= 100),
                "{shares:?}"
            );
            assert_eq!(cuts[0].busiest, total.div_ceil(workers as u64));
            let busiest = *shares.iter().max().unwrap();
            assert!(cuts_of(&cut, None).iter().all(|c| *c == Cut { to: None, busiest }));
            // A move that costs more than the busiest worker's excess work
            // takes is not made, one that costs less is; with no time for a
            // unit of work known, none is.
            let before: Vec<u64> = (0..workers).map(|w| partition.blocks(w).map(work).sum()).collect();
            let excess = before.iter().max().unwrap() - before.iter().sum::<u64>() / workers as u64;
            // The excess takes 100 ms.
            let unit = Some(0.1 / excess as f64);
            for (unit, cost, moves) in [
                (unit, Duration::from_millis(110), false),
                (unit, Duration::from_millis(90), true),
                (None, Duration::ZERO, false),
            ] {
                let cuts = cuts_of(&partition, Some(Worth { unit, cost }));
                assert!(
                    cuts.iter().all(|c| c.to.is_some() == moves),
                    "{workers} workers, {cost:?}"
                );
            }
        }
    }

    /// The time of a unit of work is the kind's, else the other kind's,
    /// and none before any layer.
    #[test]
    fn units_time_the_kind_else_the_other() {
        let mut units = Units::default();
        assert_eq!((units.of(false), units.of(true)), (None, None));
        units.note(false, 0, Duration::from_secs(1));
        assert_eq!(units.of(false), None, "nothing planned, nothing learned");
        units.note(false, 1_000, Duration::from_secs(2));
        assert_eq!((units.of(false), units.of(true)), (Some(0.002), Some(0.002)));
        units.note(true, 1_000, Duration::from_secs(1));
        assert_eq!((units.of(false), units.of(true)), (Some(0.002), Some(0.001)));
    }

    /// A worker's estimates are weighed by its pace over the mean, within
    /// the limit, once every worker has timed a layer of the kind; a layer
    /// too short to time changes nothing.
    #[test]
    fn paces_weigh_the_estimates() {
        let work = [10u64, 1, 40];
        let weighed = |paces: Vec<Option<f64>>, pull: bool| {
            on_workers(paces.len(), |transport| {
                let mut pace = Pace::default();
                if let Some(p) = paces[transport.worker()] {
                    // A unit of work that took `p` seconds.
                    pace.note(pull, 1_000, Duration::from_secs_f64(p * 1_000.0), PACE_FROM);
                }
                pace.weigh(transport, pull, &work).unwrap()
            })
        };
        assert_eq!(
            weighed(vec![Some(1.0), Some(2.0), Some(3.0)], false),
            [vec![5, 1, 20], vec![10, 1, 40], vec![15, 2, 60]]
        );
        // At most twice, or half, what the counts say.
        assert_eq!(
            weighed(vec![Some(1.0), Some(99.0)], true),
            [vec![5, 1, 20], vec![20, 2, 79]]
        );
        // Until every worker has a pace, none weighs.
        assert_eq!(weighed(vec![Some(1.0), None], true), [work.to_vec(), work.to_vec()]);
        // A push's pace says nothing of a pull.
        let kinds = on_workers(2, |transport| {
            let mut pace = Pace::default();
            let p = 1.0 + transport.worker() as f64;
            pace.note(false, 1_000, Duration::from_secs_f64(p), PACE_FROM);
            // Too short to time.
            pace.note(true, 1_000, Duration::from_secs_f64(p), PACE_FROM / 2);
            pace.weigh(transport, true, &work).unwrap()
        });
        assert_eq!(kinds, [work.to_vec(), work.to_vec()]);
    }
}
