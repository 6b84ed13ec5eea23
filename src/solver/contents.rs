//! Whether a share's codes agree with what its checkpoint says of them:
//! the summary, the hardest candidates and the watched positions, checked
//! against the table wherever it is. A checkpoint of a table in memory is
//! checked as it is read (`checkpoint::check`); one of a table on disk as
//! its file is read back, segment by segment, when the search resumes.

use std::collections::BTreeMap;
use std::ops::Range;

use rayon::prelude::*;

use crate::mod3::{PER_WORD, UNSEEN, count_codes};

use super::boundary::{LayerHardest, Wanted};
use super::stats::HARDEST;
use super::summary::{CURRENT, UNSEEN_LEFT};

/// How a check reads a share's codes, from its first position.
pub trait ShareCodes: Sync {
    /// Whether block `k` of the share (from its first) holds an unseen
    /// position, and how many positions of code `newest` it holds.
    fn block(&self, k: usize, cells: Range<u64>, newest: u8) -> (bool, u64);

    /// The code of its `k`-th position.
    fn code(&self, k: u64) -> u8;

    /// Whether its `k`-th position was unseen at the boundary: it is, or
    /// the layer after it, stopped, may have written it.
    fn was_unseen(&self, k: u64) -> bool;
}

/// What a checkpoint says of a share besides its codes.
pub struct Said<'a> {
    /// As [`Snapshot::found`](super::Snapshot::found).
    pub found: &'a [u64],
    /// As [`Snapshot::own`](super::Snapshot::own).
    pub own: &'a [u64],
    /// As [`Snapshot::summary`](super::Snapshot::summary).
    pub summary: &'a [u8],
    /// As [`Snapshot::hardest`](super::Snapshot::hardest).
    pub hardest: &'a LayerHardest,
    /// As [`Snapshot::watched`](super::Snapshot::watched).
    pub watched: &'a [Option<u64>],
}

/// Checks `said` against the share's codes `codes` as `wanted` describes
/// the share, `code_of(d)` being the code of layer `d`: summary bytes with only the [`CURRENT`] and
/// [`UNSEEN_LEFT`] bits, the latter on every block that holds an unseen
/// position, the former on blocks that hold at least its own count of the
/// newest layer with the newest code; the hardest candidates (and the
/// mirrored ones, when asked for) as many as that count allows
/// ([`HARDEST`] at most), strictly increasing, its own ones in its range
/// with the newest code in [`CURRENT`] blocks; and for each watched
/// position it owns, a remoteness of its code within the layers, none when
/// unseen (and none for another's).
///
/// # Errors
///
/// What is wrong, to follow the name of the file.
pub fn check(
    said: &Said<'_>,
    wanted: &Wanted<'_>,
    code_of: impl Fn(u64) -> u8,
    codes: &impl ShareCodes,
) -> Result<(), String> {
    let newest = code_of(said.found.len() as u64 - 1);
    check_summary(said, wanted, newest, codes)?;
    check_hardest(said, wanted, newest, codes)?;
    check_watched(said, wanted, code_of, codes)
}

fn check_summary(said: &Said<'_>, wanted: &Wanted<'_>, newest: u8, codes: &impl ShareCodes) -> Result<(), String> {
    let summary = said.summary;
    if summary.iter().any(|&s| s & !(CURRENT | UNSEEN_LEFT) != 0) {
        return Err("has a summary byte with unknown bits".into());
    }
    let (index, start) = (wanted.index, wanted.range.start);
    let (unflagged, in_current) = (0..summary.len())
        .into_par_iter()
        .with_min_len(1 << 10)
        .map(|k| {
            let block = index.block(wanted.blocks.start + k as u64);
            let (unseen, current) = codes.block(k, block.start - start..block.end - start, newest);
            let flags = summary[k];
            let unflagged = flags & UNSEEN_LEFT == 0 && unseen;
            (u64::from(unflagged), if flags & CURRENT != 0 { current } else { 0 })
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    if unflagged > 0 {
        return Err(format!("has {unflagged} blocks with unseen positions not flagged so"));
    }
    let layer = *said.own.last().expect("at least the goal's layer");
    if in_current < layer {
        return Err(format!(
            "flags blocks that hold {in_current} positions of the newest code, fewer than its {layer} of the newest layer"
        ));
    }
    Ok(())
}

/// Whether a share's hardest candidates are as many as the `layer`
/// positions of its newest layer allow ([`HARDEST`] at most), each list
/// strictly increasing, the mirrored ones there exactly when `mirrored`:
/// what a search's own state must hold before it is saved, as well as
/// what a checkpoint read back must.
///
/// # Errors
///
/// What is wrong, to follow the name of the file.
pub fn hardest_in_order(hardest: &LayerHardest, layer: u64, mirrored: bool) -> Result<(), String> {
    let expected = usize::try_from(layer).unwrap_or(usize::MAX).min(HARDEST);
    let increasing = |v: &[u64]| v.windows(2).all(|w| w[0] < w[1]);
    if hardest.own.len() != expected || !increasing(&hardest.own) {
        return Err(format!(
            "keeps {} hardest positions, not {expected} in order",
            hardest.own.len()
        ));
    }
    match &hardest.mirrored {
        Some(images) if !mirrored || images.len() != expected || !increasing(images) => Err(format!(
            "keeps {} hardest mirror images, not {} in order",
            images.len(),
            if mirrored { expected } else { 0 }
        )),
        None if mirrored => Err("lacks the hardest positions of a mirrored class".into()),
        _ => Ok(()),
    }
}

fn check_hardest(said: &Said<'_>, wanted: &Wanted<'_>, newest: u8, codes: &impl ShareCodes) -> Result<(), String> {
    let (hardest, range) = (said.hardest, &wanted.range);
    let layer = *said.own.last().expect("at least the goal's layer");
    hardest_in_order(hardest, layer, wanted.mirrored)?;
    for &i in &hardest.own {
        if !range.contains(&i)
            || codes.code(i - range.start) != newest
            || said.summary[(wanted.index.block_of(i) - wanted.blocks.start) as usize] & CURRENT == 0
        {
            return Err(format!(
                "keeps position {i} as one of the hardest, not of the newest layer"
            ));
        }
    }
    Ok(())
}

fn check_watched(
    said: &Said<'_>,
    wanted: &Wanted<'_>,
    code_of: impl Fn(u64) -> u8,
    codes: &impl ShareCodes,
) -> Result<(), String> {
    let (found, watched, range) = (said.found, said.watched, &wanted.range);
    if watched.len() != wanted.watch.len() {
        return Err(format!(
            "knows {} watched positions, not {}",
            watched.len(),
            wanted.watch.len()
        ));
    }
    for (w, &i) in watched.iter().zip(wanted.watch) {
        let fits = match (range.contains(&i), w) {
            (true, Some(d)) => *d < found.len() as u64 && codes.code(i - range.start) == code_of(*d),
            (true, None) => codes.was_unseen(i - range.start),
            (false, w) => w.is_none(),
        };
        if !fits {
            let held = range.contains(&i).then(|| codes.code(i - range.start));
            return Err(format!(
                "says watched position {i} is at remoteness {w:?}, where its table holds code {held:?}"
            ));
        }
    }
    Ok(())
}

/// A share's codes as its file on disk is read back, segment by segment
/// in order ([`segment`](Self::segment)): what [`check`] asks of them,
/// gathered on the way, and the codes of any other positions asked for.
pub(super) struct Gathered<'a> {
    wanted: &'a Wanted<'a>,
    /// The share's positions.
    len: u64,
    newest: u8,
    /// The code of the layer after the newest, which a search stopped
    /// inside it may have written.
    next: u8,
    /// Per block: whether it holds an unseen position, and how many of
    /// the newest code.
    blocks: Vec<(bool, u64)>,
    /// The first block a segment may still reach.
    cursor: usize,
    /// The positions (from the share's first) whose codes are asked for,
    /// with the code read and whether the segment read had changed.
    asked: BTreeMap<u64, Option<(u8, bool)>>,
    /// Whether a position past the share's end was reached.
    reached_beyond: bool,
}

impl<'a> Gathered<'a> {
    /// Ready to read the share `wanted` describes, whose checkpoint says
    /// `said`, with the codes of the newest layer and the one after, and
    /// the codes of positions `also` (tight indices) asked for besides the
    /// hardest and watched ones.
    pub(super) fn new(wanted: &'a Wanted<'a>, said: &Said<'_>, newest: u8, next: u8, also: &[u64]) -> Gathered<'a> {
        let range = &wanted.range;
        let asked = (said.hardest.own.iter().chain(wanted.watch).chain(also))
            .filter(|i| range.contains(i))
            .map(|i| (i - range.start, None))
            .collect();
        Gathered {
            wanted,
            len: range.end - range.start,
            newest,
            next,
            blocks: vec![(false, 0); said.summary.len()],
            cursor: 0,
            asked,
            reached_beyond: false,
        }
    }

    /// Takes in the segment whose codes are `words` from position `first`
    /// of the share, `changed` when the layer after the checkpoint wrote
    /// into it.
    pub(super) fn segment(&mut self, first: u64, words: &[u64], changed: bool) {
        let end = first + PER_WORD * words.len() as u64;
        let load = |w: &u64| *w;
        let start = self.wanted.range.start;
        while self.cursor < self.blocks.len() {
            let block = self.wanted.index.block(self.wanted.blocks.start + self.cursor as u64);
            let (from, to) = (block.start - start, block.end - start);
            if from >= end {
                break;
            }
            let (a, b) = (from.max(first) - first, to.min(end) - first);
            if a < b {
                let held = &mut self.blocks[self.cursor];
                held.0 |= count_codes(words, load, a..b, UNSEEN) > 0;
                held.1 += count_codes(words, load, a..b, self.newest);
            }
            if to > end {
                break;
            }
            self.cursor += 1;
        }
        for (&k, code) in self.asked.range_mut(first..end) {
            let (w, shift) = (((k - first) / PER_WORD) as usize, 2 * ((k - first) % PER_WORD));
            *code = Some(((words[w] >> shift) as u8 & 3, changed));
        }
        if end > self.len {
            let padding = self.len.max(first) - first..end - first;
            self.reached_beyond |= count_codes(words, load, padding.clone(), UNSEEN) != padding.end - padding.start;
        }
    }

    /// Whether a position past the share's end holds a code: no share's
    /// file does.
    pub(super) fn reached_beyond(&self) -> bool {
        self.reached_beyond
    }

    /// The code read of position `k` (from the share's first), if asked
    /// for, and whether its segment had changed.
    pub(super) fn asked(&self, k: u64) -> Option<(u8, bool)> {
        self.asked.get(&k).copied().flatten()
    }
}

impl ShareCodes for Gathered<'_> {
    fn block(&self, k: usize, _: Range<u64>, _: u8) -> (bool, u64) {
        self.blocks[k]
    }

    fn code(&self, k: u64) -> u8 {
        // Every position a check reads was asked for; one never read (past
        // a short file) holds no code.
        self.asked(k).map_or(u8::MAX, |(code, _)| code)
    }

    fn was_unseen(&self, k: u64) -> bool {
        self.asked(k)
            .is_some_and(|(code, changed)| code == UNSEEN || (changed && code == self.next))
    }
}
