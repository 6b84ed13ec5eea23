//! The images of positions a search has found under the class's
//! symmetries: the blocks that may hold a canonical position, and the
//! batches in which the images of found positions are ranked and set.

use std::ops::Range;

use rayon::prelude::*;

use crate::bitboard::Word;
use crate::index::{colex_rank, colex_unrank};
use crate::rules::Part;
use crate::symmetry::{MAX_IMAGES, Symmetries};
use crate::tight::TightIndex;

/// Whether each block of the white-set ranks `blocks` may hold a canonical
/// position of `symmetries` ([`Symmetries::may_hold_canonical`]): the
/// blocks a layer visits at all; from the first of `blocks`.
pub(super) fn canonical_blocks_in<W: Word>(
    symmetries: &Symmetries,
    index: &TightIndex<W>,
    blocks: Range<u64>,
) -> Vec<bool> {
    (blocks.start as usize..blocks.end as usize)
        .into_par_iter()
        .with_min_len(1024)
        .map(|r| {
            symmetries.may_hold_canonical(
                colex_unrank(r as u64, index.white()),
                index.safe(r as u64),
                index.black(),
            )
        })
        .collect()
}

/// How many images a layer gathers before it sets them.
pub(super) const IMAGES: usize = 16;

/// The images of positions a layer has found, waiting to be set in one
/// batch ([`set_images`]).
#[derive(Default)]
pub(super) struct Batch<W: Word> {
    pub(super) images: [Part<W>; IMAGES + MAX_IMAGES],
    pub(super) len: usize,
}

impl<W: Word> Batch<W> {
    /// Adds the images of `part` other than itself, each once; returns
    /// whether the batch is full (it has room for one more position's).
    #[inline]
    pub(super) fn push(&mut self, symmetries: &Symmetries, part: Part<W>) -> bool {
        match symmetries.others() {
            [] => {}
            // One symmetry besides the identity, as on every board but
            // those of odd rows and odd columns.
            [s] => {
                let image = s.part(part);
                if image != part {
                    self.images[self.len] = image;
                    self.len += 1;
                }
            }
            others => {
                let first = self.len;
                for s in others {
                    let image = s.part(part);
                    if image != part && !self.images[first..self.len].contains(&image) {
                        self.images[self.len] = image;
                        self.len += 1;
                    }
                }
            }
        }
        self.len >= IMAGES
    }
}

/// Sets the images in `batch` and empties it: ranks each one in `index`,
/// asks `touch` to prefetch what `set` will use, then calls `set` with each
/// tight index, its block's number and the image; returns the sum of what
/// `set` returned. The images' blocks are scattered over memory, so the batch is
/// worked in stages, each asking for the next stage's memory for all of
/// them before using any: the cache misses overlap instead of following
/// one another. Always inlined, into searches that may be compiled for
/// more instructions than the baseline.
#[inline(always)]
pub(super) fn set_images<W: Word>(
    index: &TightIndex<W>,
    batch: &mut Batch<W>,
    touch: impl Fn(u64),
    mut set: impl FnMut(u64, u64, Part<W>) -> u64,
) -> u64 {
    let images = &batch.images[..batch.len];
    let mut blocks = [0u64; IMAGES + MAX_IMAGES];
    for (r, image) in blocks.iter_mut().zip(images) {
        *r = colex_rank(image.white);
        index.prefetch_block(*r);
    }
    let mut indices = [0u64; IMAGES + MAX_IMAGES];
    for ((i, &r), image) in indices.iter_mut().zip(&blocks).zip(images) {
        *i = index
            .rank_in_block(r, image.black)
            .expect("the image of a legal position is legal");
        touch(*i);
    }
    // A plain loop: an iterator's fold here is left out of line when
    // `set` is large, and its calls cost more than the work.
    let mut found = 0;
    for k in 0..batch.len {
        found += set(indices[k], blocks[k], images[k]);
    }
    batch.len = 0;
    found
}
