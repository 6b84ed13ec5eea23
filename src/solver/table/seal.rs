//! What a checkpoint of a table on disk keeps of each of its segments
//! ([`Seal`]), and the one change a resume accepts in a segment after it:
//! the writes of the layer the search was killed in.
//!
//! A layer only turns unseen positions into its own code. So a segment
//! read back after a kill is either as sealed, or differs from the seal
//! only by unseen positions that hold the next layer's code now. The next
//! code is also the code of the layer three before (a code is the
//! remoteness mod 3), so the new positions cannot be told from the old
//! ones: the seal keeps, besides the segment's exact checksum, one with
//! each code read as unseen, and the count of each code. A segment written
//! by the next layer matches the checksum of the next code read as unseen,
//! and of its counts only unseen fell, by what the next code rose. What
//! this cannot see is damage that only exchanges unseen positions and
//! positions of the next code in a segment the layer wrote: that is taken
//! for the layer's work.

use xxhash_rust::xxh3::Xxh3Default;

use crate::mod3::UNSEEN;

/// A segment's checksums and code counts, as a checkpoint of a table on
/// disk keeps them in place of the segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seal {
    /// XXH3-64 of its bytes.
    pub exact: u64,
    /// `unseen[c]`: XXH3-64 of its bytes with every position of code `c`
    /// read as unseen.
    pub unseen: [u64; 3],
    /// How many of its positions hold each code, padding counted unseen.
    pub counts: [u64; 4],
}

/// Words a seal takes in a checkpoint ([`Seal::to_words`]).
pub const SEAL_WORDS: usize = 8;

/// Words hashed at a time.
const CHUNK: usize = 1 << 10;

impl Seal {
    /// The seal of the segment whose codes are `bytes`, little-endian
    /// words of 32 codes.
    ///
    /// A table on disk seals every segment it writes, which was a fifth of
    /// 13x10's search in a profile of its tenth layer. Where the processor
    /// has AVX2 and POPCNT, the words are mapped and counted by a copy of
    /// this loop compiled for them: on 16 MiB, 6.3 ms a seal against 9.0
    /// (each of its four checksums alone takes 1.3). The baseline x86-64
    /// build counts bits in a dozen instructions and maps a word at a time.
    pub fn of(bytes: &[u8]) -> Seal {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt") {
            // SAFETY: this processor has both.
            return unsafe { Seal::of_avx2(bytes) };
        }
        Seal::of_any(bytes)
    }

    /// [`of`](Self::of) compiled for AVX2 and POPCNT.
    ///
    /// # Safety
    ///
    /// The processor must have both.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt")]
    unsafe fn of_avx2(bytes: &[u8]) -> Seal {
        Seal::of_any(bytes)
    }

    /// [`of`](Self::of) for any processor, inlined into the copies
    /// compiled for more.
    #[inline(always)]
    fn of_any(bytes: &[u8]) -> Seal {
        // Positions per code of a word: residues 0 to 2 (unseen is the
        // rest).
        const M: u64 = 0x5555_5555_5555_5555;
        debug_assert!(bytes.len().is_multiple_of(8));
        let mut counts = [0u64; 4];
        let mut unseen: [Xxh3Default; 3] = std::array::from_fn(|_| Xxh3Default::new());
        let mut mapped = [[0u8; 8 * CHUNK]; 3];
        for chunk in bytes.chunks(8 * CHUNK) {
            for (k, word) in chunk.chunks_exact(8).enumerate() {
                let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                let (lo, hi) = (w & M, w >> 1 & M);
                let at = [!hi & !lo & M, !hi & lo, hi & !lo & M];
                for (code, at) in at.into_iter().enumerate() {
                    counts[code] += u64::from(at.count_ones());
                    mapped[code][8 * k..8 * k + 8].copy_from_slice(&(w | at | at << 1).to_le_bytes());
                }
            }
            for (hash, read) in unseen.iter_mut().zip(&mapped) {
                hash.update(&read[..chunk.len()]);
            }
        }
        counts[usize::from(UNSEEN)] = bytes.len() as u64 / 8 * 32 - counts[..3].iter().sum::<u64>();
        Seal {
            exact: xxhash_rust::xxh3::xxh3_64(bytes),
            unseen: unseen.map(|h| h.digest()),
            counts,
        }
    }

    /// A seal that only checks what is read back against what was
    /// written: its exact checksum alone, for a table no checkpoint keeps.
    pub(in crate::solver) fn exact_of(bytes: &[u8]) -> Seal {
        Seal {
            exact: xxhash_rust::xxh3::xxh3_64(bytes),
            ..Seal::default()
        }
    }

    /// As a checkpoint keeps it: the exact checksum, the three others,
    /// then the four counts.
    pub fn to_words(&self) -> [u64; SEAL_WORDS] {
        let [u0, u1, u2] = self.unseen;
        let [c0, c1, c2, c3] = self.counts;
        [self.exact, u0, u1, u2, c0, c1, c2, c3]
    }

    /// The seal [`to_words`](Self::to_words) kept as `words`.
    pub fn from_words(words: [u64; SEAL_WORDS]) -> Seal {
        let [exact, u0, u1, u2, c0, c1, c2, c3] = words;
        Seal {
            exact,
            unseen: [u0, u1, u2],
            counts: [c0, c1, c2, c3],
        }
    }

    /// Whether `now`, the seal of the segment read back, is this one after
    /// the layer coded `next` wrote into it: how many positions it wrote,
    /// or `None` for any other change.
    pub fn written_by(&self, now: &Seal, next: u8) -> Option<u64> {
        if now == self {
            return Some(0);
        }
        let n = usize::from(next);
        let others_kept = (0..3).filter(|&c| c != n).all(|c| now.counts[c] == self.counts[c]);
        let wrote = now.counts[n].checked_sub(self.counts[n])?;
        (n < 3 && others_kept && now.unseen[n] == self.unseen[n] && now.counts[3] + wrote == self.counts[3])
            .then_some(wrote)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes `codes` packed 32 a word, padding unseen.
    fn packed(codes: &[u8]) -> Vec<u64> {
        codes
            .chunks(32)
            .map(|chunk| {
                (chunk.iter().enumerate()).fold(u64::MAX, |w, (k, &c)| (w & !(3 << (2 * k))) | u64::from(c) << (2 * k))
            })
            .collect()
    }

    fn seal(codes: &[u8]) -> Seal {
        let bytes: Vec<u8> = packed(codes).iter().flat_map(|w| w.to_le_bytes()).collect();
        Seal::of(&bytes)
    }

    /// The copy compiled for AVX2 seals as the loop for any processor
    /// does (where this processor has AVX2; elsewhere `of` is that loop).
    #[test]
    fn a_seal_is_the_same_on_every_instruction_set() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        // Over one chunk of words and a part, every code in every place.
        for words in [0, 1, 7, CHUNK, CHUNK + 13, 3 * CHUNK] {
            let bytes: Vec<u8> = (0..words)
                .flat_map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x.to_le_bytes()
                })
                .collect();
            let any = Seal::of_any(&bytes);
            assert_eq!(Seal::of(&bytes), any, "{words} words");
            assert_eq!(any.counts.iter().sum::<u64>(), 32 * words as u64);
            assert_eq!(any.exact, xxhash_rust::xxh3::xxh3_64(&bytes));
        }
    }

    #[test]
    fn a_seal_counts_every_code_and_sees_every_change_but_the_next_layers() {
        // A segment of 5,000 positions (padding to a whole word) over
        // several chunks of words.
        let len = 40_000;
        let codes: Vec<u8> = (0..len).map(|i| ((i * 7919 + i / 13) % 5).min(3) as u8).collect();
        let sealed = seal(&codes);
        let mut want = [0u64; 4];
        codes.iter().for_each(|&c| want[usize::from(c)] += 1);
        want[3] += (len as u64).next_multiple_of(32) - len as u64;
        assert_eq!(sealed.counts, want);
        assert_eq!(sealed.written_by(&seal(&codes), 1), Some(0), "unchanged");
        for next in 0..3u8 {
            // The next layer takes some unseen positions: kept.
            let mut layer = codes.clone();
            let taken: Vec<usize> = (0..len).filter(|&i| codes[i] == UNSEEN && i % 11 == 3).collect();
            taken.iter().for_each(|&i| layer[i] = next);
            assert_eq!(
                sealed.written_by(&seal(&layer), next),
                Some(taken.len() as u64),
                "next {next}"
            );
            // The same writes are not another layer's.
            for other in (0..3).filter(|&o| o != next) {
                assert_eq!(
                    sealed.written_by(&seal(&layer), other),
                    None,
                    "next {next}, other {other}"
                );
            }
            // Any other change is refused, with the layer's writes or
            // without: a code changed between two seen ones, a seen
            // position made unseen, an unseen one given another code; and
            // without them, a position of the next code made unseen.
            let seen = (0..len).find(|&i| codes[i] != UNSEEN && codes[i] != next).unwrap();
            let unseen = (0..len).find(|&i| codes[i] == UNSEEN && !taken.contains(&i)).unwrap();
            let nexts = (0..len).find(|&i| codes[i] == next).unwrap();
            let changes: [(&[u8], usize, u8); 7] = [
                (&layer, seen, (codes[seen] + 1) % 3),
                (&layer, seen, UNSEEN),
                (&layer, unseen, (next + 1) % 3),
                (&codes, seen, (codes[seen] + 1) % 3),
                (&codes, seen, UNSEEN),
                (&codes, unseen, (next + 1) % 3),
                (&codes, nexts, UNSEEN),
            ];
            for (from, i, code) in changes {
                let mut damaged = from.to_vec();
                damaged[i] = code;
                assert_eq!(
                    sealed.written_by(&seal(&damaged), next),
                    None,
                    "next {next}: position {i} from {} to {code}",
                    codes[i]
                );
            }
            // What it cannot see: beside the layer's writes, a position of
            // the next code made unseen passes for one write fewer.
            let mut blind = layer.clone();
            blind[nexts] = UNSEEN;
            assert_eq!(sealed.written_by(&seal(&blind), next), Some(taken.len() as u64 - 1));
        }
    }
}
