//! How well candidate codings compress a solved class's exact remoteness:
//! the measurements behind the `frames` layout's choice.
//!
//! ```text
//! cargo run --release --example coding -- DB VARIANT [CLASS] [POSITIONS]
//! ```
//!
//! Reads class `CLASS` (default 0) of the database of `VARIANT` in `DB` in
//! the tight index's order (a byte per position: the remoteness, or 254
//! when unreachable; a two-bit database is resolved as it is read), at most
//! `POSITIONS` of it from its middle (default: all), and prints for each
//! candidate the bits a position and the time to decode one frame:
//!
//! - zstd at several levels over frames of several sizes, each frame alone;
//! - zstd with a dictionary trained on the class's own frames;
//! - the empirical entropy of each value given the one before it, and
//!   given the fewest and most moves of its neighbours by a black move
//!   earlier in its block: the floor an adaptive coder with that context
//!   would approach.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use bishops::storage::Database;
use bishops::{Colour, Variant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: coding DB VARIANT [CLASS] [POSITIONS]");
        std::process::exit(2);
    }
    let variant = Variant::named(&args[1]).expect("a named variant");
    let k: usize = args.get(2).map_or(0, |s| s.parse().expect("a class number"));
    let limit: u64 = args.get(3).map_or(u64::MAX, |s| s.parse().expect("a count"));
    let db: Database = Database::open(Path::new(&args[0]), &variant).expect("an open database");
    let legal = db.classes()[k].stats.legal;
    let skip = legal.saturating_sub(limit) / 2;
    let mut cells = Vec::new();
    let mut hashes = Vec::new();
    let mut blocks = Vec::new(); // (first position, white set) of each block read
    let mut i = 0u64;
    let mut last_white = None;
    let spec = &variant.specs::<u64>()[k];
    let spec_hash = |part| spec.index.rank(part);
    let mut parts = Vec::new();
    db.for_each_row(k, |_, part, cell| {
        if i >= skip && i < skip.saturating_add(limit) {
            parts.push(part);
        }
        if i >= skip && i < skip.saturating_add(limit) {
            if last_white != Some(part.white) {
                blocks.push(cells.len());
                last_white = Some(part.white);
            }
            cells.push(cell.0);
            hashes.push(spec_hash(part));
        }
        i += 1;
        Ok(())
    })
    .expect("a readable class");
    let n = cells.len() as f64;
    println!(
        "{} class {k}: {} positions of {legal}, {} blocks",
        args[1],
        cells.len(),
        blocks.len()
    );
    for frame in [1usize << 12, 1 << 13, 1 << 14, 1 << 15] {
        let frames: Vec<&[u8]> = cells.chunks(frame).collect();
        for level in [1, 3, 5, 7, 9, 19] {
            let t = Instant::now();
            let packed: Vec<Vec<u8>> = frames.iter().map(|f| zstd::bulk::compress(f, level).unwrap()).collect();
            let write = t.elapsed().as_secs_f64();
            let bytes: usize = packed.iter().map(Vec::len).sum();
            let t = Instant::now();
            for (p, f) in packed.iter().zip(&frames) {
                assert_eq!(&zstd::bulk::decompress(p, f.len()).unwrap()[..], *f);
            }
            let read = t.elapsed().as_secs_f64() / frames.len() as f64;
            println!(
                "zstd {level:2}, frames of {frame:7}: {:.3} bits a position, write {write:.2} s, decode {:.0} us a frame",
                bytes as f64 * 8.0 / n,
                read * 1e6
            );
        }
        // Each value as its difference from the one before it in its frame
        // (the first as it is), wrapping: a cheap transform a decoder undoes
        // in one pass.
        for level in [3, 19] {
            let t = Instant::now();
            let packed: Vec<Vec<u8>> = frames
                .iter()
                .map(|f| {
                    let deltas: Vec<u8> = std::iter::once(f[0])
                        .chain(f.windows(2).map(|w| w[1].wrapping_sub(w[0])))
                        .collect();
                    zstd::bulk::compress(&deltas, level).unwrap()
                })
                .collect();
            let write = t.elapsed().as_secs_f64();
            let bytes: usize = packed.iter().map(Vec::len).sum();
            println!(
                "zstd {level:2} over differences, frames of {frame:7}: {:.3} bits a position, write {write:.1} s",
                bytes as f64 * 8.0 / n
            );
        }
        // A dictionary trained on every 16th frame.
        let samples: Vec<&[u8]> = frames.iter().step_by(16).copied().collect();
        let Ok(dictionary) = zstd::dict::from_samples(&samples, 110 << 10) else {
            println!("zstd 19 + dictionary, frames of {frame:7}: no dictionary could be trained");
            continue;
        };
        for level in [3, 19] {
            let mut compressor = zstd::bulk::Compressor::with_dictionary(level, &dictionary).unwrap();
            let packed: Vec<Vec<u8>> = frames.iter().map(|f| compressor.compress(f).unwrap()).collect();
            let bytes: usize = packed.iter().map(Vec::len).sum::<usize>() + dictionary.len();
            println!(
                "zstd {level:2} + a {} byte dictionary, frames of {frame:7}: {:.3} bits a position",
                dictionary.len(),
                bytes as f64 * 8.0 / n
            );
        }
    }
    println!(
        "entropy of a value alone: {:.3} bits",
        entropy(cells.iter().map(|&c| (0u32, c)))
    );
    println!(
        "entropy of a value given the one before: {:.3} bits",
        entropy(cells.windows(2).map(|w| (u32::from(w[0]), w[1])))
    );
    if cells.len() <= 50_000_000 {
        // Each value against its neighbours by a black move earlier in its
        // block: the fewest moves among them, and their spread.
        let at: HashMap<u64, usize> = hashes.iter().enumerate().map(|(i, &h)| (h, i)).collect();
        let mut first = 0;
        let mut starts = blocks.iter().skip(1).copied().chain([cells.len()]);
        let mut end = starts.next().unwrap_or(cells.len());
        let pairs = (0..cells.len()).map(|i| {
            if i >= end {
                first = end;
                end = starts.next().unwrap_or(cells.len());
            }
            let (mut low, mut high) = (u8::MAX, 0u8);
            parts[i].for_each_move(&spec.geometry, |colour, _, _, after| {
                if colour == Colour::Black
                    && let Some(&j) = at.get(&spec.index.rank(after))
                    && j >= first
                    && j < i
                {
                    low = low.min(cells[j]);
                    high = high.max(cells[j]);
                }
            });
            let context = if low == u8::MAX {
                0xffff
            } else {
                u32::from(low) << 8 | u32::from(high - low).min(3)
            };
            (context, cells[i])
        });
        println!(
            "entropy of a value given its neighbours earlier in the block (fewest, spread): {:.3} bits",
            entropy(pairs)
        );
    }
    println!(
        "entropy of a value given the two before: {:.3} bits",
        entropy(cells.windows(3).map(|w| (u32::from(w[0]) << 8 | u32::from(w[1]), w[2])))
    );
}

/// The empirical conditional entropy, in bits, of the second of each pair
/// given the first.
fn entropy(pairs: impl Iterator<Item = (u32, u8)>) -> f64 {
    let mut counts: HashMap<(u32, u8), u64> = HashMap::new();
    let mut contexts: HashMap<u32, u64> = HashMap::new();
    let mut n = 0u64;
    for (c, v) in pairs {
        *counts.entry((c, v)).or_default() += 1;
        *contexts.entry(c).or_default() += 1;
        n += 1;
    }
    let bits: f64 = counts
        .iter()
        .map(|(&(c, _), &k)| k as f64 * (contexts[&c] as f64 / k as f64).log2())
        .sum();
    bits / n as f64
}
