//! Where the moves of a class go when its table is cut into segments: the
//! measurement behind keeping a two-bit table on disk (13x10's is 46.9 GiB
//! at two bits a position, twice this machine's memory).
//!
//! ```text
//! cargo run --release --example segments -- 13x10-a1              # 16, 64, 256 and 1024 segments
//! cargo run --release --example segments -- 11x8-a1 64 --samples 200000 --memory 1
//! ```
//!
//! The class's positions, in tight-index order (white set by white set),
//! are cut into equal runs, the segments. Legal positions are drawn
//! uniformly, and every legal move of each is followed: a black move stays
//! in its block, so nearly always in its segment; a white move goes to
//! another block, and this counts how often that is another segment, how
//! far away, and how many segments one segment's white moves reach. A
//! search that keeps only some segments in memory must send each move that
//! leaves them to a segment on disk, so these numbers say how a layer's
//! writes can be batched.
//!
//! Then a layer found by a pull, one segment at a time in order: a
//! segment's unreached positions look at their neighbours, which lie in the
//! segments its white moves reach (moves can be undone), so those must be
//! in memory with it. With `--memory GIB` of segments kept (16 by
//! default), the least recently used pushed out, this counts how many
//! segments a layer reads from disk. Moves the sample did not draw are
//! missed, so the counts are lower bounds.
//!
//! With `--bands`, the same for partitions that are not runs of the order:
//! the white sets grouped by how many white bishops stand in each band of
//! columns (3, 4 or 6 bands) or of rows (2 or 5). A white move leaves its
//! group only when it carries a bishop into another band, and the groups
//! it reaches are few; what such a group costs is its *scope*, itself and
//! every group its moves reach, which must be in memory together.

use std::collections::HashSet;
use std::time::Instant;

use bishops::index::splitmix;
use bishops::{Colour, Variant, Width};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(name) = args.next() else {
        eprintln!("usage: segments VARIANT [SEGMENTS…] [--samples N]");
        std::process::exit(2);
    };
    let mut segments = Vec::new();
    let mut samples = 1_000_000u64;
    let mut memory_gib = 16.0f64;
    let mut by_bands = false;
    while let Some(arg) = args.next() {
        if arg == "--bands" {
            by_bands = true;
            continue;
        }
        if arg == "--samples" {
            samples = args.next().and_then(|n| n.parse().ok()).unwrap_or(samples);
        } else if arg == "--memory" {
            memory_gib = args.next().and_then(|n| n.parse().ok()).unwrap_or(memory_gib);
        } else if let Ok(n) = arg.parse::<u64>() {
            segments.push(n.max(1));
        }
    }
    if segments.is_empty() {
        segments = vec![16, 64, 256, 1024];
    }
    let variant = Variant::named(&name).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    if variant.is_wide() {
        measure::<u128>(&variant, &segments, samples, memory_gib);
        if by_bands {
            bands::<u128>(&variant, samples, memory_gib);
        }
    } else {
        measure::<u64>(&variant, &segments, samples, memory_gib);
        if by_bands {
            bands::<u64>(&variant, samples, memory_gib);
        }
    }
}

/// What the moves of the sampled positions do, for one way of cutting.
#[derive(Default)]
struct Tally {
    black: u64,
    black_out: u64,
    white: u64,
    white_out: u64,
    /// |source segment − target segment| of each white move that leaves.
    distances: Vec<u64>,
    /// The segments each segment's white moves reach, itself excluded.
    reached: Vec<HashSet<u64>>,
}

fn measure<W: Width>(variant: &Variant, segments: &[u64], samples: u64, memory_gib: f64) {
    let spec = &variant.specs::<W>()[0];
    let began = Instant::now();
    let index = spec.tight_index();
    let len = index.len();
    println!(
        "{}, class {}: {} legal positions, {} white sets (index built in {:.1} s)",
        variant.name(),
        spec.class.name(),
        len,
        index.white_sets(),
        began.elapsed().as_secs_f64()
    );
    let mut tallies: Vec<Tally> = (segments.iter())
        .map(|&s| Tally {
            reached: vec![HashSet::new(); s as usize],
            ..Tally::default()
        })
        .collect();
    let segment = |i: u64, s: u64| (u128::from(i) * u128::from(s) / u128::from(len)) as u64;
    let mut state = 0x5e9_3e47 ^ len;
    let began = Instant::now();
    for _ in 0..samples {
        let i = splitmix(&mut state) % len;
        let part = index.unrank(i);
        part.for_each_move(&spec.geometry, |colour, _, _, after| {
            let j = index.rank(after).expect("a legal move leads to a legal position");
            for (tally, &s) in tallies.iter_mut().zip(segments) {
                let (a, b) = (segment(i, s), segment(j, s));
                match colour {
                    Colour::Black => {
                        tally.black += 1;
                        tally.black_out += u64::from(a != b);
                    }
                    Colour::White => {
                        tally.white += 1;
                        if a != b {
                            tally.white_out += 1;
                            tally.distances.push(a.abs_diff(b));
                            tally.reached[a as usize].insert(b);
                        }
                    }
                }
            }
        });
    }
    println!(
        "{samples} positions drawn uniformly, their moves followed in {:.1} s",
        began.elapsed().as_secs_f64()
    );
    for (tally, &s) in tallies.iter_mut().zip(segments) {
        let percent = |n: u64, of: u64| 100.0 * n as f64 / of.max(1) as f64;
        tally.distances.sort_unstable();
        let quantile = |q: f64| {
            let d = &tally.distances;
            if d.is_empty() {
                0
            } else {
                d[((d.len() - 1) as f64 * q) as usize]
            }
        };
        let reached: Vec<usize> = tally.reached.iter().map(HashSet::len).collect();
        let mean_reached = reached.iter().sum::<usize>() as f64 / s as f64;
        let max_reached = reached.iter().max().copied().unwrap_or(0);
        println!(
            "{s} segments of {:.2e} positions ({:.0} MiB at two bits): black moves leaving their segment {:.3}%, white moves {:.1}% (of {} white, {} black); a white move that leaves goes {} segments away at the median, {} at the 90th percentile; one segment's white moves reach {:.1} others on average, {} at most",
            len as f64 / s as f64,
            len as f64 / s as f64 / 4.0 / f64::from(1u32 << 20),
            percent(tally.black_out, tally.black),
            percent(tally.white_out, tally.white),
            tally.white,
            tally.black,
            quantile(0.5),
            quantile(0.9),
            mean_reached,
            max_reached
        );
        let segment_bytes = len as f64 / s as f64 / 4.0;
        let kept = ((memory_gib * f64::from(1u32 << 30) / segment_bytes) as usize).max(1);
        if kept as u64 >= s {
            println!("  a pull layer: the whole table fits in {memory_gib} GiB");
            continue;
        }
        let loads = pull_loads(&tally.reached, kept);
        println!(
            "  a pull layer, {kept} segments kept ({memory_gib} GiB): {loads} segments read, {:.1} times the table ({:.0} GiB)",
            loads as f64 / s as f64,
            loads as f64 * segment_bytes / f64::from(1u32 << 30)
        );
    }
}

/// How many segments a pull layer reads, one target segment after the
/// other in order, each with the segments its moves reach, when `kept`
/// segments are held and the least recently used goes first.
fn pull_loads(reached: &[HashSet<u64>], kept: usize) -> u64 {
    let mut held: Vec<u64> = Vec::with_capacity(kept);
    let mut loads = 0;
    for (t, others) in reached.iter().enumerate() {
        let mut wanted: Vec<u64> = others.iter().copied().collect();
        wanted.sort_unstable();
        wanted.push(t as u64);
        for w in wanted {
            if let Some(at) = held.iter().position(|&h| h == w) {
                held.remove(at);
            } else {
                loads += 1;
                if held.len() == kept {
                    held.remove(0);
                }
            }
            held.push(w);
        }
    }
    loads
}

/// The band partitions of `--bands`: for each, the groups, the share of
/// white moves that leave their group, the groups one group's moves reach,
/// and the scopes (a group and the groups it reaches), in two-bit bytes.
fn bands<W: Width>(variant: &Variant, samples: u64, memory_gib: f64) {
    let spec = &variant.specs::<W>()[0];
    let index = spec.tight_index();
    let len = index.len();
    let gib = |positions: u64| positions as f64 / 4.0 / f64::from(1u32 << 30);
    let board = variant.board();
    for (by_col, count) in [(true, 3u32), (true, 4), (true, 6), (false, 2), (false, 5)] {
        let lines = if by_col { board.cols() } else { board.rows() };
        let key = |white: bishops::Bitboard<W>| -> u64 {
            let mut key = 0u64;
            for cell in white {
                let square = spec.geometry.square(cell);
                let line = if by_col { square.col() } else { square.row() };
                key += 1 << (6 * (u32::from(line) * count / u32::from(lines)));
            }
            key
        };
        let began = Instant::now();
        let mut groups: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
        let mut sizes: Vec<u64> = Vec::new();
        for r in 0..index.white_sets() {
            let block = index.block(r);
            if block.is_empty() {
                continue;
            }
            let k = key(index.unrank_in_block(r, block.start).white);
            let next = groups.len();
            let g = *groups.entry(k).or_insert(next);
            if g == sizes.len() {
                sizes.push(0);
            }
            sizes[g] += block.end - block.start;
        }
        let mut reached: Vec<HashSet<usize>> = vec![HashSet::new(); sizes.len()];
        let (mut white, mut out) = (0u64, 0u64);
        let mut state = 0xba4d_5eed ^ len;
        for _ in 0..samples {
            let part = index.unrank(splitmix(&mut state) % len);
            let a = groups[&key(part.white)];
            part.for_each_move(&spec.geometry, |colour, _, _, after| {
                if colour == Colour::White {
                    white += 1;
                    let b = groups[&key(after.white)];
                    if a != b {
                        out += 1;
                        reached[a].insert(b);
                    }
                }
            });
        }
        let scopes: Vec<u64> = (0..sizes.len())
            .map(|a| sizes[a] + reached[a].iter().map(|&b| sizes[b]).sum::<u64>())
            .collect();
        let weighted = |of: &[u64]| of.iter().zip(&sizes).map(|(&x, &n)| x as f64 * n as f64).sum::<f64>() / len as f64;
        let reach: Vec<u64> = reached.iter().map(|r| r.len() as u64).collect();
        // A layer group by group, in the order of their keys, each with its
        // scope in memory, the least recently used groups pushed out.
        let mut order: Vec<(u64, usize)> = groups.iter().map(|(&k, &g)| (k, g)).collect();
        order.sort_unstable();
        let budget = (memory_gib * 4.0 * f64::from(1u32 << 30)) as u64;
        let read = scope_loads(order.iter().map(|&(_, g)| g), &reached, &sizes, budget);
        let fits: u64 = (scopes.iter().zip(&sizes))
            .filter(|&(&scope, _)| gib(scope) <= memory_gib)
            .map(|(_, &n)| n)
            .sum();
        println!(
            "{count} bands of {}: {} groups, the largest {:.2} GiB at two bits; white moves leaving their group {:.1}%; a group reaches {:.1} others (weighted by positions), {} at most; its scope {:.2} GiB (weighted), {:.2} GiB at most; positions whose scope fits {memory_gib} GiB {:.1}%; a layer in key order reads {:.1} tables ({:.1} s)",
            if by_col { "columns" } else { "rows" },
            sizes.len(),
            gib(sizes.iter().copied().max().unwrap_or(0)),
            100.0 * out as f64 / white.max(1) as f64,
            weighted(&reach),
            reach.iter().max().copied().unwrap_or(0),
            gib(weighted(&scopes) as u64),
            gib(scopes.iter().copied().max().unwrap_or(0)),
            100.0 * fits as f64 / len as f64,
            read as f64 / len as f64,
            began.elapsed().as_secs_f64()
        );
    }
}

/// The positions a layer reads from disk, group after group in `order`,
/// each with the groups it reaches (`reached`), `sizes` positions each,
/// when `budget` positions are held and the least recently used go first.
/// A scope larger than the budget is read whole each time.
fn scope_loads(order: impl Iterator<Item = usize>, reached: &[HashSet<usize>], sizes: &[u64], budget: u64) -> u64 {
    let mut held: Vec<usize> = Vec::new();
    let mut held_size = 0u64;
    let mut read = 0u64;
    for g in order {
        let mut wanted: Vec<usize> = reached[g].iter().copied().collect();
        wanted.sort_unstable();
        wanted.push(g);
        for w in wanted {
            if let Some(at) = held.iter().position(|&h| h == w) {
                held.remove(at);
            } else {
                read += sizes[w];
                held_size += sizes[w];
            }
            held.push(w);
            while held_size > budget && held.len() > 1 {
                held_size -= sizes[held.remove(0)];
            }
        }
    }
    read
}
