//! `check` proves correct tables and names the first bad position of wrong
//! ones, even when the wrong table was written with valid checksums.

mod common;

use bishops::check::{self, CheckOptions};
use bishops::solver::{ClassStats, ClassTable, Solution};
use bishops::storage::{self, Layout};
use bishops::{Cell, Error, Variant};
use common::{scratch, solved};

/// Writes `solution` (tampered or not) as a database with valid checksums
/// and checks it in full.
fn check_written(
    test: &str,
    variant: &Variant,
    solution: &Solution,
    layout: Layout,
) -> Result<check::CheckReport, Error> {
    let dir = scratch("check", test);
    storage::write_with(&dir, variant, solution, layout).unwrap();
    let result = check::check(&dir, variant, CheckOptions::default(), &mut |_, _| {});
    std::fs::remove_dir_all(&dir).unwrap();
    result
}

#[test]
fn correct_tables_are_proven_in_both_layouts() {
    for name in ["5x4", "7x4", "7x6", "5x4-full", "9x6"] {
        let (variant, solution) = solved(name);
        for layout in [Layout::Rows, Layout::Blocks, Layout::Frames] {
            let report = check_written(&format!("ok-{name}"), &variant, &solution, layout)
                .unwrap_or_else(|e| panic!("{name} {layout:?}: {e}"));
            assert!(report.proof);
            let legal: u64 = solution.classes.iter().map(|c| c.stats.legal).sum();
            assert_eq!((report.checked, report.legal), (legal, legal), "{name}");
            for (c, s) in report.classes.iter().zip(&solution.classes) {
                assert_eq!(c.histogram, s.stats.histogram, "{name}");
            }
        }
    }
}

/// Tampers with the cell at tight index `i` of class 0 of 7x6, keeping the
/// stored statistics consistent with the new table, and returns the message.
fn tampered(test: &str, i: usize, byte: u8) -> String {
    let (variant, mut solution) = solved("7x6");
    let class = &mut solution.classes[0];
    let ClassTable::Own(cells) = &mut class.table else {
        panic!("7x6 class 0 is searched")
    };
    cells[i] = byte;
    class.stats = ClassStats::of(cells, &class.index);
    match check_written(test, &variant, &solution, Layout::Blocks) {
        Err(e @ Error::Corrupt { .. }) => e.to_string(),
        other => panic!("{test}: expected a failed check, got {other:?}"),
    }
}

#[test]
fn a_wrong_value_is_named_at_its_position() {
    let (variant, solution) = solved("7x6");
    let class = &solution.classes[0];
    // A position of remoteness 5 raised to 7: its best neighbour has 4.
    let i = class.own().unwrap().iter().position(|&c| c == 5).unwrap();
    let position = variant.position(&[class.index.unrank(i as u64)]).to_string();
    let msg = tampered("raised", i, 7);
    assert!(msg.contains(&position), "{msg}");
    // The first position in order that breaks a rule is named: here the
    // raised one itself comes before any neighbour it strands.
    assert!(msg.contains("fails the check at"), "{msg}");
    assert!(!msg.contains('\n'));
}

#[test]
fn a_wrong_goal_or_unreachable_mark_is_found() {
    let (_, solution) = solved("7x6");
    let class = &solution.classes[0];
    let goal = class.own().unwrap().iter().position(|&c| c == 0).unwrap();
    let msg = tampered("goal", goal, 1);
    assert!(msg.contains("goal"), "{msg}");
    let msg = tampered("unreachable", goal + 1, Cell::UNREACHABLE.0);
    assert!(msg.contains("fails the check at"), "{msg}");
}

#[test]
fn a_histogram_that_differs_from_the_table_is_found() {
    let (variant, mut solution) = solved("7x6");
    // Consistent on its own (the same total), so opening accepts it: only
    // counting the table shows it wrong.
    solution.classes[0].stats.histogram[3] += 1;
    solution.classes[0].stats.histogram[4] -= 1;
    let msg = check_written("histogram", &variant, &solution, Layout::Rows)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("stores counts for class a1 that differ from its table"),
        "{msg}"
    );
}

#[test]
fn a_sample_is_seeded_and_reported() {
    let (variant, solution) = solved("5x4-full");
    let dir = scratch("check", "sample");
    storage::write(&dir, &variant, &solution).unwrap();
    let options = CheckOptions {
        sample: Some(50),
        seed: 42,
    };
    let mut progress = Vec::new();
    let report = check::check(&dir, &variant, options, &mut |done, total| progress.push((done, total))).unwrap();
    assert!(!report.proof);
    assert_eq!((report.mode, report.seed, report.checked), ("sample", Some(42), 100));
    // Progress is told while the samples are drawn, not only per class, and
    // rises to every sample.
    assert!(progress.len() > 2, "{progress:?}");
    assert!(progress.iter().all(|&(_, total)| total == 100), "{progress:?}");
    assert!(progress.windows(2).all(|w| w[0].0 <= w[1].0), "{progress:?}");
    assert_eq!(progress.last(), Some(&(100, 100)));
    std::fs::remove_dir_all(&dir).unwrap();
}
