//! The checked blocks of one database kept in memory, shared by every
//! connection to it: a block is read from the file and checked once, then
//! answered from here. Its memory is bounded by a byte budget. Blocks are
//! kept in two ways:
//!
//! - *by use*, as questions read them: what is kept is what was used
//!   lately (the clock algorithm: a block used since the hand last passed
//!   it gets another turn), behind a few locks;
//! - *held*, when a whole table is read in on purpose
//!   ([`Database::hold`](super::Database::hold)): a slot for each white set,
//!   filled once and never emptied, so that a lookup takes no lock, no
//!   hash and no count of its users, only its block's place. A question
//!   that ranges over a whole table reads some hundreds of blocks, and on
//!   a table of millions of blocks each of those steps is a trip to
//!   memory.
//!
//! What is held counts against the budget first; the blocks kept by use
//! have what is left. Held blocks are copied into an [`Arena`], in huge
//! pages.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use hashbrown::HashMap;

use super::arena::Arena;
use super::packed;

/// A block's place: (class number k, white rank).
type Key = (usize, u64);

/// Blocks are spread over this many independently locked parts, so that
/// threads reading at once seldom wait for each other.
const SHARDS: usize = 16;

/// What a kept block costs beyond its bytes, counted against the budget:
/// its key, its place in the map and the ring, and its allocation's header.
const OVERHEAD: usize = 96;

/// What a held block costs beyond its bytes: nothing, as held blocks lie
/// end to end in the arena (whose last region's unused tail is not
/// counted).
const HELD_OVERHEAD: usize = 0;

/// The classes a variant has at most: a board's two colours.
const CLASSES: usize = 2;

/// A held class: a slot per white rank.
type Slots = Box<[OnceLock<Piece>]>;

/// A held block: where its bytes are in the cache's [`Arena`], how many,
/// and a copy of its first bytes ([`HeldBlock::head`]).
#[derive(Clone, Copy)]
struct Piece {
    start: *const u8,
    len: u32,
    head: [u8; HEAD],
}

/// How many of a held block's first bytes its slot repeats: a packed
/// block's header ([`packed::HEADER`]).
pub(super) const HEAD: usize = packed::HEADER;

/// A held block as a lookup finds it.
#[derive(Clone, Copy)]
pub(super) struct HeldBlock<'a> {
    /// Its bytes.
    pub(super) bytes: &'a [u8],
    /// Its first [`HEAD`] bytes (zero past its end), kept in its slot:
    /// a packed block's header, so that a lookup reads from the block only
    /// its cell's byte, one trip to memory instead of two.
    pub(super) head: [u8; HEAD],
}

// SAFETY: a piece names bytes of its cache's arena, written before the
// piece was made and only read after, for as long as the cache lives.
unsafe impl Send for Piece {}
// SAFETY: as above.
unsafe impl Sync for Piece {}

/// Checked blocks kept in memory, at most a given number of bytes in all.
pub(super) struct BlockCache {
    shards: Vec<Mutex<Shard>>,
    /// The budget of the whole cache, in bytes.
    budget: usize,
    /// Per class number, once a block of it is held: its slots.
    held: [OnceLock<Slots>; CLASSES],
    /// The bytes held blocks and their slots cost.
    held_bytes: AtomicUsize,
    /// The memory of held blocks.
    arena: Arena,
}

/// One part of a [`BlockCache`]: its blocks, in a ring the clock hand
/// walks round, and where each is in the ring.
#[derive(Default)]
struct Shard {
    places: HashMap<Key, usize>,
    ring: Vec<Kept>,
    hand: usize,
    /// The bytes the ring's blocks cost, overhead included.
    bytes: usize,
}

/// A kept block.
struct Kept {
    key: Key,
    bytes: Arc<[u8]>,
    /// Whether it was used since the hand last passed it.
    used: bool,
}

impl BlockCache {
    /// An empty cache that keeps at most `budget` bytes of blocks (and
    /// always at least the last block put in each of its parts).
    pub(super) fn new(budget: usize) -> BlockCache {
        BlockCache {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            budget,
            held: Default::default(),
            held_bytes: AtomicUsize::new(0),
            arena: Arena::default(),
        }
    }

    /// The budget of each shard of blocks kept by use: what held blocks
    /// leave, shared equally.
    fn shard_bytes(&self) -> usize {
        self.budget.saturating_sub(self.held_bytes.load(Ordering::Relaxed)) / SHARDS
    }

    /// The held block of white rank `white` in class `k`, if it is held.
    pub(super) fn held(&self, k: usize, white: u64) -> Option<HeldBlock<'_>> {
        let slots = self.held.get(k)?.get()?;
        let piece = slots.get(usize::try_from(white).ok()?)?.get()?;
        // SAFETY: a piece names bytes of this cache's arena, which lives
        // as long as the cache and never changes them ([`Arena::keep`]).
        let bytes = unsafe { std::slice::from_raw_parts(piece.start, piece.len as usize) };
        Some(HeldBlock {
            bytes,
            head: piece.head,
        })
    }

    /// Holds `bytes`, the checked block of white rank `white` in class `k`
    /// of `whites` white sets, when the budget has room for it (and, for
    /// the first block held of the class, for a slot per white set);
    /// whether it is held.
    pub(super) fn hold(&self, k: usize, whites: u64, white: u64, bytes: &[u8]) -> bool {
        let Some(class) = self.held.get(k) else { return false };
        let slots = class.get_or_init(|| {
            let slots: Slots = (0..whites).map(|_| OnceLock::new()).collect();
            self.held_bytes
                .fetch_add(std::mem::size_of_val(&*slots), Ordering::Relaxed);
            slots
        });
        let Some(slot) = usize::try_from(white).ok().and_then(|w| slots.get(w)) else {
            return false;
        };
        if slot.get().is_some() {
            return true;
        }
        let Ok(len) = u32::try_from(bytes.len()) else {
            return false;
        };
        let cost = bytes.len() + HELD_OVERHEAD;
        if self.held_bytes.fetch_add(cost, Ordering::Relaxed) + cost > self.budget {
            self.held_bytes.fetch_sub(cost, Ordering::Relaxed);
            return false;
        }
        let Some(kept) = self.arena.keep(bytes) else {
            self.held_bytes.fetch_sub(cost, Ordering::Relaxed);
            return false;
        };
        let mut head = [0; HEAD];
        let first = bytes.len().min(HEAD);
        head[..first].copy_from_slice(&bytes[..first]);
        let piece = Piece {
            start: kept.as_ptr(),
            len,
            head,
        };
        if slot.set(piece).is_err() {
            // Another connection held it first (its copy stays unused in
            // the arena).
            self.held_bytes.fetch_sub(cost, Ordering::Relaxed);
        }
        true
    }

    fn shard(&self, key: Key) -> std::sync::MutexGuard<'_, Shard> {
        // A cheap mix of the white rank: neighbouring ranks land apart.
        let h = (key.1 ^ (key.0 as u64) << 60).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let shard = &self.shards[(h >> 60) as usize % SHARDS];
        shard.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The block at `key`, if it is kept.
    pub(super) fn get(&self, key: Key) -> Option<Arc<[u8]>> {
        let mut shard = self.shard(key);
        let &place = shard.places.get(&key)?;
        let kept = &mut shard.ring[place];
        kept.used = true;
        Some(Arc::clone(&kept.bytes))
    }

    /// Keeps `bytes`, the checked block at `key`, pushing out blocks not
    /// used lately until the shard is within its budget.
    pub(super) fn put(&self, key: Key, bytes: Arc<[u8]>) {
        let cost = bytes.len() + OVERHEAD;
        let mut shard = self.shard(key);
        if shard.places.contains_key(&key) {
            return;
        }
        let limit = self.shard_bytes();
        while shard.bytes + cost > limit && !shard.ring.is_empty() {
            shard.evict_one();
        }
        shard.insert(key, bytes, cost);
    }

    /// The bytes the kept blocks cost, overhead included.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).bytes)
            .sum()
    }
}

impl Shard {
    /// Keeps `bytes` at `key`, not kept yet, at a cost of `cost` bytes.
    fn insert(&mut self, key: Key, bytes: Arc<[u8]>, cost: usize) {
        let place = self.ring.len();
        self.ring.push(Kept {
            key,
            bytes,
            used: false,
        });
        self.places.insert(key, place);
        self.bytes += cost;
    }

    /// Moves the hand on to the first block not used since it last passed,
    /// giving the used ones another turn, and pushes that block out.
    fn evict_one(&mut self) {
        loop {
            if self.hand >= self.ring.len() {
                self.hand = 0;
            }
            let kept = &mut self.ring[self.hand];
            if kept.used {
                kept.used = false;
                self.hand += 1;
                continue;
            }
            let gone = self.ring.swap_remove(self.hand);
            self.places.remove(&gone.key);
            self.bytes -= gone.bytes.len() + OVERHEAD;
            // The last block took the evicted one's place in the ring.
            if let Some(moved) = self.ring.get(self.hand) {
                self.places.insert(moved.key, self.hand);
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(byte: u8, len: usize) -> Arc<[u8]> {
        vec![byte; len].into()
    }

    #[test]
    fn a_kept_block_is_given_back_as_it_was_put() {
        let cache = BlockCache::new(1 << 20);
        cache.put((0, 7), block(1, 10));
        cache.put((1, 7), block(2, 20));
        assert_eq!(&*cache.get((0, 7)).unwrap(), &[1; 10]);
        assert_eq!(&*cache.get((1, 7)).unwrap(), &[2; 20]);
        assert!(cache.get((0, 8)).is_none());
    }

    #[test]
    fn the_cache_stays_within_its_budget_and_keeps_what_is_used() {
        let budget = SHARDS * 10 * (100 + OVERHEAD);
        let cache = BlockCache::new(budget);
        for white in 0..10_000u64 {
            cache.put((0, white), block(white as u8, 100));
            // Block 0 is used all the time: it is never pushed out.
            assert_eq!(cache.get((0, 0)).unwrap()[0], 0, "after {white}");
            assert!(cache.bytes() <= budget);
        }
        // The kept blocks are the ones put last, and each is its own.
        let kept: Vec<u64> = (0..10_000).filter(|&w| cache.get((0, w)).is_some()).collect();
        assert!(kept.len() > SHARDS * 5, "{} kept", kept.len());
        for w in kept {
            assert_eq!(cache.get((0, w)).unwrap()[0], w as u8);
        }
    }

    #[test]
    fn held_blocks_stay_within_the_budget_and_leave_the_rest_to_blocks_kept_by_use() {
        let slots = 1000 * std::mem::size_of::<OnceLock<Piece>>();
        let budget = slots + 10 * (100 + HELD_OVERHEAD) + SHARDS * 5 * (100 + OVERHEAD);
        let cache = BlockCache::new(budget);
        assert!(cache.held(0, 3).is_none());
        let held = (0..1000u64)
            .take_while(|&w| cache.hold(0, 1000, w, &[w as u8; 100]))
            .count();
        assert_eq!(held, (budget - slots) / (100 + HELD_OVERHEAD));
        for w in 0..held as u64 {
            let block = cache.held(0, w).unwrap();
            assert_eq!(block.bytes, &[w as u8; 100][..], "block {w} is still held");
            assert_eq!(block.head, [w as u8; HEAD]);
        }
        assert!(cache.held(0, held as u64).is_none() && cache.held(1, 0).is_none());
        assert!(cache.hold(0, 1000, 0, &[9; 100]), "held already");
        assert_eq!(cache.held(0, 0).unwrap().bytes[0], 0, "a held block is not replaced");
        assert!(!cache.hold(0, 1000, 1000, &[9; 1]), "no such white set");
        assert!(!cache.hold(CLASSES, 1, 0, &[9; 1]), "no such class");
        // Nothing is left for blocks kept by use: each shard keeps only
        // the last block put in it.
        for w in 0..100 {
            cache.put((1, w), block(1, 100));
        }
        assert!(cache.bytes() <= SHARDS * (100 + OVERHEAD));
    }

    #[test]
    fn a_block_larger_than_a_shard_is_still_kept_alone() {
        let cache = BlockCache::new(SHARDS * 10);
        cache.put((0, 1), block(3, 1000));
        assert_eq!(cache.get((0, 1)).unwrap().len(), 1000);
        cache.put((0, 1), block(4, 1000));
        assert_eq!(cache.get((0, 1)).unwrap()[0], 3, "a block already kept is not replaced");
    }
}
