//! Micro-benchmarks of the pieces the solver leans on, and whole solves of
//! the small variants. Each checks the answer it times. The large boards are
//! timed by `bishops bench`, one fresh process per board.
//!
//! ```sh
//! cargo bench --bench small
//! ```

use std::hint::black_box;

use bishops::solver::{Method, Plan};
use bishops::{Remoteness, TightIndex, Variant};
use criterion::{Criterion, criterion_group, criterion_main};

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

criterion_group!(benches, index, solves);
criterion_main!(benches);
