//! Solves of the large named variants, too slow for every `cargo test`: run
//! them with `cargo test --release -- --ignored`.

mod common;

use bishops::solver::{Method, Plan, Solution};
use bishops::{Cell, Class, ClassSpec, Variant};
use common::tables::assert_same_table;

/// splitmix64: a fixed, seedable sequence for sampling.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Solves `variant` by the tight search.
fn solve(variant: &Variant) -> Solution {
    Plan::new(variant, Method::Tight)
        .solve(&mut |_| {})
        .unwrap_or_else(|e| panic!("solve {}: {e}", variant.name()))
}

/// The remoteness a cell holds, which must be reachable.
fn remoteness(cell: Cell, what: &str) -> u16 {
    cell.remoteness()
        .unwrap_or_else(|| panic!("{what}: {cell:?} does not reach the goal"))
        .0
}

/// Checks the table of `spec` as a breadth-first distance locally, on
/// `samples` positions drawn from `seed`: every move changes the remoteness
/// by at most one, and every position but the goal has a move one closer.
/// Every position must reach the goal.
fn locally_consistent(name: &str, spec: &ClassSpec, solution: &Solution, k: usize, samples: usize, seed: u64) {
    let table = &solution.classes[k];
    let cells = solution.class_cells(k);
    let cell = |hash| solution.cell(k, hash);
    let len = table.index.len();
    let goal = spec.index.rank(spec.goal);
    let mut state = seed;
    let mut sampled: Vec<u64> = (0..samples).map(|_| splitmix(&mut state) % len).collect();
    // The goal and the start as well.
    sampled.extend([spec.goal, spec.start].map(|p| table.index.rank(p).expect("the start and goal are legal")));
    for i in sampled {
        let part = table.index.unrank(i);
        let hash = table.index.to_hash(i);
        let what = format!("{name} class {:?} tight index {i} (hash {hash}, {part:?})", table.class);
        assert!(part.is_legal(&spec.geometry), "{what}: unranks to an illegal part");
        assert_eq!(spec.index.rank(part), hash, "{what}: tight and public hash");
        assert_eq!(cell(hash), Cell(cells[i as usize]), "{what}: cell by hash");
        let r = remoteness(cell(hash), &what);
        assert_eq!(r == 0, hash == goal, "{what}: remoteness 0 is the goal's alone");
        let (mut moves, mut closer) = (0, 0);
        part.for_each_move(&spec.geometry, |colour, from, to, after| {
            let after_hash = spec.index.rank(after);
            let j = table
                .index
                .rank(after)
                .unwrap_or_else(|| panic!("{what}: {colour:?} {from}->{to} leaves an illegal part"));
            assert_eq!(table.index.to_hash(j), after_hash, "{what}: {from}->{to}: tight index");
            let s = remoteness(cell(after_hash), &what);
            assert!(
                r.abs_diff(s) <= 1,
                "{what}: {colour:?} {from}->{to} goes from remoteness {r} to {s}"
            );
            moves += 1;
            closer += u32::from(s + 1 == r);
        });
        assert!(moves > 0, "{what}: no move");
        assert!(r == 0 || closer > 0, "{what}: remoteness {r} but no move to {}", r - 1);
    }
}

#[test]
#[ignore = "minutes: run with cargo test --release -- --ignored"]
fn nine_by_eight() {
    const LEGAL: u64 = 16_582_736;
    let variant = Variant::named("9x8").expect("variant 9x8");
    let solution = solve(&variant);
    let classes: Vec<Class> = variant.classes().iter().map(|s| s.class).collect();
    assert_eq!(classes, [Class::Even, Class::Odd]);
    assert_eq!(solution.classes.len(), 2);
    for (k, (spec, table)) in variant.classes().iter().zip(&solution.classes).enumerate() {
        assert_eq!(table.class, spec.class);
        assert_eq!(spec.counts(), (4, 4), "9x8 class {k}: bishops");
        assert_eq!(table.stats.legal, LEGAL, "9x8 class {k}: legal positions");
        let cells = solution.class_cells(k);
        assert_eq!(cells.len() as u64, LEGAL, "9x8 class {k}: cells");
        assert_eq!(table.index.len(), LEGAL, "9x8 class {k}: tight index");
        assert_eq!(table.stats.reachable, LEGAL, "9x8 class {k}: all reachable");
        assert!(
            cells.iter().all(|&c| Cell(c).remoteness().is_some()),
            "9x8 class {k}: a cell that does not reach the goal"
        );
        assert_eq!(table.stats.histogram.iter().sum::<u64>(), LEGAL);
        assert_eq!(table.stats.histogram[0], 1, "9x8 class {k}: one goal");
        assert_eq!(
            solution.cell(k, spec.index.rank(spec.goal)),
            Cell(0),
            "9x8 class {k}: the goal"
        );
    }
    assert!(!solution.classes[0].is_mirrored(), "9x8: the a1 class is searched");
    assert!(solution.classes[1].is_mirrored(), "9x8: the a2 class is mirrored");
    assert!(solution.classes[1].own().is_none(), "9x8: the a2 class keeps no cells");

    let start: u16 = variant
        .class_hashes(variant.start())
        .iter()
        .enumerate()
        .map(|(k, &h)| remoteness(solution.cell(k, h), "9x8 start"))
        .sum();
    assert_eq!(start, 40, "9x8: start remoteness");
    let largest: u16 = solution
        .classes
        .iter()
        .map(|t| t.stats.max_remoteness().expect("a reachable position").0)
        .sum();
    assert_eq!(largest, 40, "9x8: largest remoteness");

    // The a2 class searched on its own, as the single-class variant 9x8-a2,
    // must give the table 9x8 derived by the mirror.
    let odd = Variant::named("9x8-a2").expect("variant 9x8-a2");
    assert_eq!(odd.classes().len(), 1);
    let odd_spec = &odd.classes()[0];
    let full_spec = &variant.classes()[1];
    assert_eq!(odd_spec.class, Class::Odd);
    assert_eq!(
        odd_spec.start, full_spec.start,
        "9x8-a2: the start of the a2 class of 9x8"
    );
    assert_eq!(odd_spec.goal, full_spec.goal, "9x8-a2: the goal of the a2 class of 9x8");
    let odd_solution = solve(&odd);
    assert!(!odd_solution.classes[0].is_mirrored(), "9x8-a2: searched, not mirrored");
    assert_same_table(
        "9x8-a2 against the mirrored a2 class of 9x8",
        (&odd_solution, 0),
        (&solution, 1),
    );

    for (k, spec) in variant.classes().iter().enumerate() {
        locally_consistent("9x8", spec, &solution, k, 2_000, 0x98 + k as u64);
    }
}
