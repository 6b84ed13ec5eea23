//! The two-bit search against the byte search: the same residues on every
//! position, the same histogram and hardest positions, and exact remoteness
//! recovered from residues alone by descent. The byte search is checked
//! against the independent reference solver in `tests/reference.rs` on the
//! same boards (7x5-full, a group of 4 symmetries, and 8x4-full, the half
//! turn, among them).

use bishops::mod3::Mod3Table;
use bishops::solver::{ClassTable, Method, Plan, Solution, TwoBitSolution};
use bishops::{Cell, Remoteness, Variant};

/// The variant solved both ways.
fn both(name: &str) -> (Variant, Solution, TwoBitSolution) {
    let variant = Variant::named(name).unwrap_or_else(|e| panic!("variant {name}: {e}"));
    let bytes = Plan::new(&variant, Method::Tight).solve(&mut |_| {}).unwrap();
    let two = Plan::new(&variant, Method::Tight).solve_two_bit(&mut |_| {}).unwrap();
    (variant, bytes, two)
}

/// splitmix64: a fixed, seedable sequence for sampling.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Checks `name` both ways: the stats of every class, the residue of every
/// position, and the exact remoteness by descent on every position (`sample`
/// `None`) or on that many drawn at random.
fn check(name: &str, sample: Option<usize>) {
    let (variant, bytes, two) = both(name);
    assert_eq!(bytes.classes.len(), two.classes.len());
    for (k, (spec, (b, t))) in variant
        .classes()
        .iter()
        .zip(bytes.classes.iter().zip(&two.classes))
        .enumerate()
    {
        let what = format!("{name} class {k}");
        assert_eq!(b.class, t.class, "{what}");
        assert_eq!(b.stats, t.stats, "{what}: stats");
        let cells = bytes.class_cells(k);
        assert_eq!(
            b.is_mirrored(),
            matches!(t.table, ClassTable::Mirrored { .. }),
            "{what}"
        );
        match &t.table {
            // A searched table is the byte table mod 3, bit for bit.
            ClassTable::Own(table) => assert!(*table == Mod3Table::from_cells(&cells), "{what}: table"),
            ClassTable::Mirrored { .. } => {
                for i in 0..b.index.len() {
                    let expected = Cell(cells[i as usize]).remoteness().map(|r| (r.0 % 3) as u8);
                    assert_eq!(two.residue(k, b.index.unrank(i)), expected, "{what}: index {i}");
                }
            }
        }
        let indices: Vec<u64> = match sample {
            None => (0..b.index.len()).collect(),
            Some(n) => {
                let mut state = 0x2b17 + k as u64;
                (0..n).map(|_| splitmix(&mut state) % b.index.len()).collect()
            }
        };
        for i in indices {
            let part = b.index.unrank(i);
            let exact = Cell(cells[i as usize]).remoteness();
            let descent = two.descend(k, spec, part).unwrap();
            assert_eq!(descent.map(|d| d.remoteness), exact, "{what}: index {i}");
            if let Some(best) = descent.and_then(|d| d.best) {
                let after = bytes.cell(k, spec.index.rank(best)).remoteness();
                assert_eq!(after.map(|r| r.0 + 1), exact.map(|r| r.0), "{what}: best move of {i}");
            }
        }
    }
}

#[test]
fn five_by_four() {
    check("5x4", None);
    check("5x4-full", None);
}

#[test]
fn seven_by_four() {
    check("7x4", None);
}

#[test]
fn seven_by_six() {
    check("7x6", None);
}

/// Odd rows and odd columns: a group of 4 symmetries in each class.
#[test]
fn seven_by_five_full() {
    check("7x5-full", None);
}

/// Even rows and even columns: the half turn with the colours exchanged.
#[test]
fn even_by_even() {
    check("8x4-full", None);
    check("6x4-full", None);
    check("8x6-a2", Some(3_000));
}

#[test]
fn nine_by_six_both_classes() {
    // 9x6 derives its a2 class by the mirror; 9x6-a2 searches it.
    check("9x6", Some(3_000));
    check("9x6-a1", Some(1_000));
    check("9x6-a2", Some(3_000));
}

#[test]
fn start_remoteness_by_descent() {
    for (name, start) in [("5x4", 18), ("7x4", 12), ("7x6", 16), ("5x4-full", 36)] {
        let variant = Variant::named(name).unwrap();
        let two = Plan::new(&variant, Method::Tight).solve_two_bit(&mut |_| {}).unwrap();
        let total: u16 = variant
            .classes()
            .iter()
            .enumerate()
            .map(|(k, spec)| {
                two.descend(k, spec, spec.start)
                    .unwrap()
                    .expect("the start reaches the goal")
                    .remoteness
                    .0
            })
            .sum();
        assert_eq!(Remoteness(total), Remoteness(start), "{name}");
    }
}

#[test]
#[ignore = "a minute: run with cargo test --release -- --ignored"]
fn nine_by_eight() {
    check("9x8", Some(2_000));
}
