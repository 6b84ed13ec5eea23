//! Micro-benchmarks of the pieces the solver leans on, and whole solves of
//! the small variants. Each checks the answer it times. The large boards are
//! timed by `bishops bench`, one fresh process per board.
//!
//! ```sh
//! cargo bench --bench small
//! ```

use std::hint::black_box;

use bishops::solver::{Method, Plan};
use bishops::storage::{Checksum, block_checksum};
use bishops::{Remoteness, TightIndex, Variant};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn index(c: &mut Criterion) {
    let variant = Variant::named("9x6-a1").unwrap();
    let spec = &variant.classes()[0];
    let tight = TightIndex::new(&spec.geometry, 3, 3);
    let n = spec.index.len();
    c.bench_function("dense unrank+rank 9x6-a1, 1000 hashes", |b| {
        b.iter(|| {
            for h in (0..n).step_by((n / 1000) as usize) {
                assert_eq!(spec.index.rank(spec.index.unrank(black_box(h))), h);
            }
        })
    });
    let legal = tight.len();
    c.bench_function("tight unrank+rank 9x6-a1, 1000 indices", |b| {
        b.iter(|| {
            for i in (0..legal).step_by((legal / 1000) as usize) {
                assert_eq!(tight.rank(tight.unrank(black_box(i))), Some(i));
            }
        })
    });
}

fn solves(c: &mut Criterion) {
    let mut group = c.benchmark_group("solve");
    group.sample_size(10);
    for (name, start) in [("7x6", 16), ("5x4-full", 36), ("9x6", 28)] {
        let variant = Variant::named(name).unwrap();
        let hashes = variant.class_hashes(variant.start());
        for method in [Method::Tight, Method::Dense] {
            group.bench_function(format!("{name} {method:?}"), |b| {
                b.iter(|| {
                    let solution = Plan::new(&variant, method).solve(&mut |_| {}).unwrap();
                    let r: u16 = hashes
                        .iter()
                        .enumerate()
                        .map(|(k, &h)| solution.cell(k, h).remoteness().unwrap().0)
                        .sum();
                    assert_eq!(Remoteness(r), Remoteness(start));
                })
            });
        }
    }
    group.finish();
}

/// The block checksum of database format 4 and before: FNV-1a 64, a byte
/// at a time, of the class byte, the white rank (8 bytes, little-endian)
/// and the cells; kept here to compare with the XXH3-64 that replaced it.
fn fnv_block_checksum(class: usize, white: u64, cells: &[u8]) -> u64 {
    fnv1a([class as u8].iter().chain(&white.to_le_bytes()).chain(cells))
}

/// FNV-1a 64 of `bytes`.
fn fnv1a<'a>(bytes: impl Iterator<Item = &'a u8>) -> u64 {
    bytes.fold(0xcbf2_9ce4_8422_2325u64, |h, &byte| {
        (h ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The block checksum, FNV-1a 64 (format 4) against XXH3-64 (format 5),
/// over the blocks of 11x10's residues table as they are (every 256th
/// white set of class a1, packed two bits a position) and over 64 MiB in
/// one piece. Throughput in bytes of cells; `docs/database.md` turns it
/// into the cost of checksumming 11x10's whole table.
fn checksums(c: &mut Criterion) {
    let variant = Variant::named("11x10").unwrap();
    let spec = &variant.classes()[0];
    let index = spec.tight_index();
    let mut sizes: Vec<usize> = (0..index.white_sets())
        .map(|r| index.block(r))
        .filter(|b| !b.is_empty())
        .map(|b| (b.end - b.start).div_ceil(4) as usize)
        .collect();
    let total: usize = sizes.iter().sum();
    let blocks: Vec<(u64, Vec<u8>)> = (0..index.white_sets())
        .step_by(256)
        .filter(|&r| !index.block(r).is_empty())
        .map(|r| {
            let len = (index.block(r).end - index.block(r).start).div_ceil(4) as usize;
            (r, (0..len).map(|i| ((i as u64 * 0x9e37_79b9) >> 7) as u8).collect())
        })
        .collect();
    let sample: usize = blocks.iter().map(|(_, b)| b.len()).sum();
    sizes.sort_unstable();
    eprintln!(
        "11x10 class a1: {} blocks, {total} bytes packed; block bytes min {}, median {}, max {}; \
         timed: {} blocks, {sample} bytes",
        sizes.len(),
        sizes[0],
        sizes[sizes.len() / 2],
        sizes[sizes.len() - 1],
        blocks.len()
    );
    // The answers timed: XXH3 of the pieces is XXH3 of the whole, and
    // FNV-1a 64 of "a" is its published value.
    let (r, cells) = &blocks[blocks.len() / 2];
    let whole: Vec<u8> = [0u8].iter().chain(&r.to_le_bytes()).chain(cells).copied().collect();
    assert_eq!(block_checksum(0, *r, cells), Checksum::of(&whole));
    assert_eq!(fnv1a(b"a".iter()), 0xaf63_dc4c_8601_ec8c);
    let mut group = c.benchmark_group("checksum");
    group.throughput(Throughput::Bytes(sample as u64));
    group.bench_function("11x10 blocks, FNV-1a 64", |b| {
        b.iter(|| {
            blocks
                .iter()
                .fold(0u64, |x, (r, cells)| x ^ fnv_block_checksum(0, *r, black_box(cells)))
        })
    });
    group.bench_function("11x10 blocks, XXH3-64", |b| {
        b.iter(|| {
            blocks.iter().fold(0i64, |x, (r, cells)| {
                x ^ block_checksum(0, *r, black_box(cells)).signed()
            })
        })
    });
    let big: Vec<u8> = (0..64u64 << 20).map(|i| ((i * 0x9e37_79b9) >> 7) as u8).collect();
    group.throughput(Throughput::Bytes(big.len() as u64));
    group.sample_size(10);
    group.bench_function("64 MiB, FNV-1a 64", |b| {
        b.iter(|| fnv_block_checksum(0, 0, black_box(&big)))
    });
    group.bench_function("64 MiB, XXH3-64", |b| b.iter(|| block_checksum(0, 0, black_box(&big))));
    group.finish();
}

/// What 128-bit words cost against 64-bit ones on one class that fits
/// both (9x8's a1 class, 36 cells, 4 + 4 bishops): counting the legal
/// positions (the tight index's safe sets), ranking and unranking them,
/// and generating their moves by the rules. The searches' kernel is timed
/// by whole solves once it runs wide.
fn words(c: &mut Criterion) {
    use bishops::tight::legal_count;
    use bishops::{Board, Class, Geometry, Part, Word};
    fn class<W: Word>() -> (Geometry<W>, TightIndex<W>) {
        let geo = Geometry::in_words(Board::new(9, 8).unwrap(), Class::Even);
        let index = TightIndex::new(&geo, 4, 4);
        (geo, index)
    }
    let (narrow, narrow_index) = class::<u64>();
    let (wide, wide_index) = class::<u128>();
    let legal = narrow_index.len();
    assert_eq!(legal, wide_index.len());
    let step = (legal / 2000) as usize;
    let mut group = c.benchmark_group("words");
    group.sample_size(20);
    fn count<W: Word>(geo: &Geometry<W>, legal: u64) {
        assert_eq!(legal_count(black_box(geo), 4, 4).1, legal);
    }
    group.bench_function("9x8-a1 legal count, u64", |b| b.iter(|| count(&narrow, legal)));
    group.bench_function("9x8-a1 legal count, u128", |b| b.iter(|| count(&wide, legal)));
    fn ranks<W: Word>(index: &TightIndex<W>, step: usize) {
        for i in (0..index.len()).step_by(step) {
            assert_eq!(index.rank(index.unrank(black_box(i))), Some(i));
        }
    }
    group.bench_function("9x8-a1 tight unrank+rank 2000, u64", |b| {
        b.iter(|| ranks(&narrow_index, step))
    });
    group.bench_function("9x8-a1 tight unrank+rank 2000, u128", |b| {
        b.iter(|| ranks(&wide_index, step))
    });
    let narrow_parts: Vec<Part> = (0..legal).step_by(step).map(|i| narrow_index.unrank(i)).collect();
    let wide_parts: Vec<Part<u128>> = (0..legal).step_by(step).map(|i| wide_index.unrank(i)).collect();
    fn moves<W: Word>(geo: &Geometry<W>, parts: &[Part<W>]) -> u64 {
        let mut n = 0;
        for &part in parts {
            black_box(part).for_each_move(geo, |_, _, _, after| {
                black_box(after);
                n += 1;
            });
        }
        n
    }
    let expected = moves(&narrow, &narrow_parts);
    assert_eq!(moves(&wide, &wide_parts), expected);
    group.bench_function("9x8-a1 moves of 2000 positions, u64", |b| {
        b.iter(|| assert_eq!(moves(&narrow, &narrow_parts), expected))
    });
    group.bench_function("9x8-a1 moves of 2000 positions, u128", |b| {
        b.iter(|| assert_eq!(moves(&wide, &wide_parts), expected))
    });
    group.finish();
}

/// The kernel's rank of a black set among the safe cells of its white set:
/// a `pext`, then a colex rank (here the library's, not the kernel's own
/// unrolled one). One `pext` in 64-bit words (16x8's a1 class, 64 cells);
/// two in 128-bit words where the safe cells reach past the 64th (17x8's a1
/// class, 68 cells). The `pext` alone, then with the rank. 2048 pairs of (black set, safe
/// cells) from white sets spread over each class, four black bishops on
/// safe cells chosen by a fixed mix. Only where the processor has BMI2.
fn pext(c: &mut Criterion) {
    use bishops::index::{colex_rank, colex_unrank, compress};
    use bishops::rules::safe_cells;
    use bishops::{Bitboard, Board, Class, Geometry, Word};
    #[cfg(target_arch = "x86_64")]
    if !std::is_x86_feature_detected!("bmi2") {
        eprintln!("pext: this processor has no BMI2, nothing timed");
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    return;
    fn pairs<W: Word>(rows: u32) -> Vec<(W, W)> {
        let geo: Geometry<W> = Geometry::in_words(Board::new(rows, 8).unwrap(), Class::Even);
        let whites = bishops::index::binomial(geo.len() as u32, 4);
        (0..2048u64)
            .map(|i| {
                let white = colex_unrank::<W>((i * 0x9e37_79b9) % whites, 4);
                let safe = safe_cells(&geo, white);
                let cells: Vec<u8> = safe.into_iter().collect();
                let mut black = Bitboard::<W>::EMPTY;
                let mut k = i;
                while black.count() < 4.min(cells.len() as u32) {
                    k = k
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    black = black.with(cells[(k >> 33) as usize % cells.len()]);
                }
                (black.0, safe.0)
            })
            .collect()
    }
    fn ranks<W: Word>(pairs: &[(W, W)]) -> u64 {
        pairs
            .iter()
            // SAFETY: BMI2 was found above.
            .map(|&(set, within)| colex_rank(Bitboard(unsafe { black_box(set).pext(within) })))
            .fold(0, u64::wrapping_add)
    }
    fn packed<W: Word>(pairs: &[(W, W)]) -> u32 {
        pairs
            .iter()
            // SAFETY: BMI2 was found above.
            .map(|&(set, within)| unsafe { black_box(set).pext(within) }.count_ones())
            .sum()
    }
    fn soft<W: Word>(pairs: &[(W, W)]) -> u64 {
        (pairs.iter())
            .map(|&(set, within)| colex_rank(compress(Bitboard(black_box(set)), Bitboard(within))))
            .fold(0, u64::wrapping_add)
    }
    let narrow = pairs::<u64>(16);
    let wide = pairs::<u128>(17);
    let spanning = wide.iter().filter(|&&(_, safe)| safe >> 64 != 0).count();
    eprintln!("pext: {spanning} of 2048 17x8 safe sets reach past the 64th cell");
    let (expect_narrow, expect_wide) = (soft(&narrow), soft(&wide));
    let mut group = c.benchmark_group("pext");
    group.throughput(Throughput::Elements(2048));
    group.bench_function("16x8-a1 pext of 2048 black sets, u64", |b| {
        b.iter(|| assert_eq!(packed(&narrow), 4 * 2048))
    });
    group.bench_function("17x8-a1 pext of 2048 black sets, u128", |b| {
        b.iter(|| assert_eq!(packed(&wide), 4 * 2048))
    });
    group.bench_function("16x8-a1 rank of 2048 black sets, u64 pext", |b| {
        b.iter(|| assert_eq!(ranks(&narrow), expect_narrow))
    });
    group.bench_function("17x8-a1 rank of 2048 black sets, u128 pext", |b| {
        b.iter(|| assert_eq!(ranks(&wide), expect_wide))
    });
    group.bench_function("16x8-a1 rank of 2048 black sets, software", |b| {
        b.iter(|| assert_eq!(soft(&narrow), expect_narrow))
    });
    group.bench_function("17x8-a1 rank of 2048 black sets, software", |b| {
        b.iter(|| assert_eq!(soft(&wide), expect_wide))
    });
    group.finish();
}

criterion_group!(benches, index, solves, checksums, words, pext);
criterion_main!(benches);
