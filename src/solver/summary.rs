//! The block summary: a byte a block (white set) that every worker keeps
//! beside its table, whichever table it is, and saves with it. A push
//! visits the blocks that hold the layer it expands; a pull visits those
//! that may hold an unreached position and tries only moves into blocks
//! that hold the layer.

use std::sync::atomic::AtomicU8;

use rayon::prelude::*;

/// Summary bit: the block holds a position of the layer being expanded.
pub const CURRENT: u8 = 1;

/// Summary bit: a position of the layer being found has been written into
/// the block; between layers it becomes [`CURRENT`]. Never set at a layer
/// boundary.
pub const NEXT: u8 = 2;

/// Summary bit: the block may hold a position no layer has reached.
pub const UNSEEN_LEFT: u8 = 4;

/// Between layers: every block that a position of the new layer was
/// written into holds the current layer now, and no other.
pub(crate) fn next_layer(summary: &mut [AtomicU8]) {
    summary.par_iter_mut().with_min_len(1 << 12).for_each(|s| {
        let s = s.get_mut();
        *s = *s & UNSEEN_LEFT | if *s & NEXT != 0 { CURRENT } else { 0 };
    });
}
