//! The memory of held blocks ([`Arena`]): large regions on huge-page
//! boundaries, asked of the system in huge pages, into which blocks are
//! copied end to end and kept until the cache that holds them goes.
//!
//! A question on a held table of gigabytes reads cells at random across it.
//! In pages of 4 KiB, each such read also walks the page tables, themselves
//! megabytes that miss the processor's caches; in huge pages of 2 MiB the
//! tables that map even 8 GB take some thousands of entries. Blocks
//! allocated one by one lie wherever the allocator puts them, in pages of
//! 4 KiB; an arena puts them in its regions.

use std::alloc::{Layout, alloc, dealloc};
use std::ptr::NonNull;
use std::sync::Mutex;

/// The size of a region, and of the huge pages it is aligned to.
const REGION: usize = 64 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// Regions of memory into which blocks are copied, each kept until the
/// arena is dropped (see the [module](self)).
#[derive(Default)]
pub(super) struct Arena {
    regions: Mutex<Regions>,
}

/// The regions of an [`Arena`] and how much of the last is used.
#[derive(Default)]
struct Regions {
    all: Vec<Region>,
    used: usize,
}

/// One region: `layout.size()` bytes at `start`.
struct Region {
    start: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a region is plain memory owned by its arena; every byte of it
// is written once, under the arena's lock, before any reference to it is
// given out, and only read after.
unsafe impl Send for Region {}

impl Arena {
    /// A copy of `bytes` in the arena, for as long as the arena lives;
    /// `None` when the system has no memory for a new region.
    pub(super) fn keep(&self, bytes: &[u8]) -> Option<&[u8]> {
        if bytes.is_empty() {
            return Some(&[]);
        }
        let mut regions = self.regions.lock().unwrap_or_else(|e| e.into_inner());
        let room = regions.all.last().map_or(0, |r| r.layout.size() - regions.used);
        if room < bytes.len() {
            let size = bytes.len().max(REGION).next_multiple_of(HUGE_PAGE);
            let layout = Layout::from_size_align(size, HUGE_PAGE).ok()?;
            // SAFETY: the layout's size is not zero.
            let start = NonNull::new(unsafe { alloc(layout) })?;
            // SAFETY: advice on memory just allocated (a hint, which a
            // system without transparent huge pages refuses, and the
            // memory works as it is).
            #[cfg(target_os = "linux")]
            unsafe {
                libc::madvise(start.as_ptr().cast(), size, libc::MADV_HUGEPAGE);
            }
            regions.all.push(Region { start, layout });
            regions.used = 0;
        }
        let used = regions.used;
        let region = regions.all.last()?;
        // SAFETY: `used + bytes.len()` is within the region, and no
        // reference was given out to these bytes, which no one else writes:
        // the lock is held.
        let piece = unsafe {
            let at = region.start.as_ptr().add(used);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len());
            std::slice::from_raw_parts(at, bytes.len())
        };
        regions.used += bytes.len();
        Some(piece)
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let regions = self.regions.get_mut().unwrap_or_else(|e| e.into_inner());
        for region in regions.all.drain(..) {
            // SAFETY: allocated with this layout, and the arena is going,
            // so no piece of it is borrowed.
            unsafe { dealloc(region.start.as_ptr(), region.layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_kept_as_given_across_regions() {
        let arena = Arena::default();
        let mut pieces = Vec::new();
        // Past one region: the pieces of the first stay where they were.
        for n in 0..250usize {
            let mut bytes = vec![n as u8; (n * 7919) % 700_000];
            if let Some(last) = bytes.last_mut() {
                *last = !*last;
            }
            pieces.push((arena.keep(&bytes).unwrap(), bytes));
        }
        let big = vec![7u8; REGION + 1];
        assert_eq!(arena.keep(&big).unwrap(), &big[..]);
        for (piece, bytes) in &pieces {
            assert_eq!(*piece, &bytes[..]);
        }
        assert!(arena.regions.lock().unwrap().all.len() >= 3);
    }
}
