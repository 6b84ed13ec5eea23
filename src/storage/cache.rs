//! The checked blocks of one database kept in memory, shared by every
//! connection to it: a block is read from the file and checked once, then
//! answered from here until it is pushed out. Its memory is bounded by a
//! byte budget, and what is kept is what was used lately (the clock
//! algorithm: a block used since the hand last passed it gets another turn).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A block's place: (class number k, white rank).
type Key = (usize, u64);

/// Blocks are spread over this many independently locked parts, so that
/// threads reading at once seldom wait for each other.
const SHARDS: usize = 16;

/// What a kept block costs beyond its bytes, counted against the budget:
/// its key, its place in the map and the ring, and its allocation's header.
const OVERHEAD: usize = 96;

/// Checked blocks kept in memory, at most a given number of bytes in all.
pub(super) struct BlockCache {
    shards: Vec<Mutex<Shard>>,
    /// The budget of each shard, in bytes.
    shard_bytes: usize,
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
            shard_bytes: budget / SHARDS,
        }
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
        while shard.bytes + cost > self.shard_bytes && !shard.ring.is_empty() {
            shard.evict_one();
        }
        let place = shard.ring.len();
        shard.ring.push(Kept {
            key,
            bytes,
            used: false,
        });
        shard.places.insert(key, place);
        shard.bytes += cost;
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
    fn a_block_larger_than_a_shard_is_still_kept_alone() {
        let cache = BlockCache::new(SHARDS * 10);
        cache.put((0, 1), block(3, 1000));
        assert_eq!(cache.get((0, 1)).unwrap().len(), 1000);
        cache.put((0, 1), block(4, 1000));
        assert_eq!(cache.get((0, 1)).unwrap()[0], 3, "a block already kept is not replaced");
    }
}
