//! Whole-board statistics (`stats`, `/api/stats`) against a direct count
//! by the reference solver, which shares no code with the crate:
//!
//! - 5x4-full, the 7th Guest board: one breadth-first search over whole
//!   positions (both colour classes at once), counted by remoteness;
//! - 7x5-full: a search per class, then every pair of a legal part of each
//!   class, that is every whole-board position, counted by the sum.

#[path = "common/mod.rs"]
mod common;

use bishops::report;
use common::reference::{Placement, Reference, colour_class};

/// The report of `name`, solved into a scratch directory.
fn board_report(name: &str) -> report::BoardReport {
    let dir = common::scratch("board", name);
    bishops::Tablebase::new(&dir)
        .variant_table(bishops::Variant::named(name).unwrap())
        .unwrap();
    let stats = report::stats(&dir, name).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    stats.board
}

/// `(row, column)` squares of a position string's field, 0-based.
fn squares(field: &str) -> Vec<(u8, u8)> {
    field
        .split('-')
        .map(|sq| (sq.as_bytes()[0] - b'a', sq[1..].parse::<u8>().unwrap() - 1))
        .collect()
}

/// The goal of a variant as a reference placement: its start, swapped.
fn goal(name: &str) -> Placement {
    let variant = bishops::Variant::named(name).unwrap();
    let start = variant.start().to_string();
    let fields: Vec<&str> = start.split('_').collect();
    Placement::new(squares(fields[2]), squares(fields[3])).swapped()
}

/// `histogram[r]` of a list of remoteness values.
fn histogram(values: impl IntoIterator<Item = u32>) -> Vec<u128> {
    let mut counts = Vec::new();
    for d in values {
        let d = d as usize;
        if counts.len() <= d {
            counts.resize(d + 1, 0);
        }
        counts[d] += 1;
    }
    counts
}

#[test]
fn the_7th_guest_board_counted_whole() {
    let reference = Reference::new(5, 4);
    let distances = reference.solve(&goal("5x4-full"));
    let all: Vec<(u8, u8)> = (0..5).flat_map(|r| (0..4).map(move |c| (r, c))).collect();
    // Four of each colour on each class: 2 + 2 per class.
    let legal: Vec<Placement> = reference
        .legal_placements(&all, 4, 4)
        .into_iter()
        .filter(|p| {
            let on = |set: &[(u8, u8)], parity| set.iter().filter(|(r, c)| (r + c) % 2 == parity).count();
            on(&p.white, 0) == 2 && on(&p.black, 0) == 2
        })
        .collect();
    let board = board_report("5x4-full");
    assert_eq!(board.legal, legal.len() as u128);
    assert_eq!(board.reachable, distances.len() as u128);
    assert_eq!(board.histogram, histogram(distances.values().copied()));
    // The question the page answers: 17 positions need exactly 36 moves.
    assert_eq!(board.histogram[36], 17);
    assert_eq!(board.hardest_count, *board.histogram.last().unwrap());
    let hardest = board.hardest.unwrap();
    let fields: Vec<&str> = hardest.split('_').collect();
    let placement = Placement::new(squares(fields[2]), squares(fields[3]));
    assert_eq!(distances[&placement] as usize, board.histogram.len() - 1);
}

#[test]
fn a_board_of_two_unequal_classes_counted_by_pairs() {
    let reference = Reference::new(7, 5);
    let goal = goal("7x5-full");
    let mut per_class = Vec::new();
    for parity in [0, 1] {
        let class = colour_class(7, 5, parity);
        let part = |set: &[(u8, u8)]| set.iter().copied().filter(|s| class.contains(s)).collect::<Vec<_>>();
        let goal = Placement::new(part(&goal.white), part(&goal.black));
        let distances = reference.solve(&goal);
        let legal = reference.legal_placements(&class, goal.white.len(), goal.black.len());
        // Every legal part with its remoteness, None when unreachable.
        per_class.push(legal.iter().map(|p| distances.get(p).copied()).collect::<Vec<_>>());
    }
    // Every whole-board position: one part of each class.
    let mut counts = Vec::new();
    let mut legal = 0u128;
    for &a in &per_class[0] {
        for &b in &per_class[1] {
            legal += 1;
            if let (Some(a), Some(b)) = (a, b) {
                counts.push(a + b);
            }
        }
    }
    let board = board_report("7x5-full");
    assert_eq!(board.legal, legal);
    assert_eq!(board.reachable, counts.len() as u128);
    assert_eq!(board.unreachable, legal - counts.len() as u128);
    assert_eq!(board.histogram, histogram(counts));
    assert_eq!(
        board.max_remoteness.map(|r| r.0 as usize),
        Some(board.histogram.len() - 1)
    );
}
