//! Properties of solved tables, moves, position strings and the hash, over
//! random positions.

mod common;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use bishops::solver::{self, Solution};
use bishops::{Position, Table, Tablebase, Variant};
use common::reference::{Placement, Reference};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// A solved variant.
struct Solved {
    variant: Variant,
    solution: Solution,
}

fn build(name: &str) -> Solved {
    let variant = Variant::named(name).unwrap();
    let solution = solver::solve(&variant, &mut |_| {}).unwrap();
    Solved { variant, solution }
}

/// `7x6` or `5x4-full`, solved once per test process.
fn solved(name: &str) -> &'static Solved {
    static SEVEN_SIX: OnceLock<Solved> = OnceLock::new();
    static FULL: OnceLock<Solved> = OnceLock::new();
    let cell = match name {
        "7x6" => &SEVEN_SIX,
        "5x4-full" => &FULL,
        _ => panic!("no such test variant {name}"),
    };
    cell.get_or_init(|| build(name))
}

impl Solved {
    /// A position with one class hash per class: for each class, the first
    /// hash from `seed % R(n,w,b)` on (wrapping around) whose cell is legal,
    /// or reachable when `reachable` is set.
    fn pick(&self, seeds: &[u64], reachable: bool) -> Position {
        assert_eq!(seeds.len(), self.variant.classes().len());
        let parts: Vec<_> = self
            .variant
            .classes()
            .iter()
            .enumerate()
            .zip(seeds)
            .map(|((k, spec), &seed)| {
                let len = spec.index.len();
                let wanted = |h: u64| {
                    let cell = self.solution.cell(k, h);
                    if reachable {
                        cell.remoteness().is_some()
                    } else {
                        cell.is_legal()
                    }
                };
                let hash = (0..len)
                    .map(|i| (seed % len + i) % len)
                    .find(|&h| wanted(h))
                    .expect("a class has a legal, reachable position: its goal");
                spec.index.unrank(hash)
            })
            .collect();
        let position = self.variant.position(&parts);
        assert_eq!(
            self.variant.check(&position),
            Ok(()),
            "{position} is not a position of the variant"
        );
        position
    }

    /// The whole-board remoteness of a legal position: the sum over its
    /// classes, `None` when it cannot reach the goal.
    fn remoteness(&self, position: &Position) -> Option<u32> {
        let mut total = Some(0);
        for (k, hash) in self.variant.class_hashes(position).into_iter().enumerate() {
            let cell = self.solution.cell(k, hash);
            assert!(
                cell.is_legal(),
                "{position}: class {k} hash {hash} is illegal in the table"
            );
            total = total.zip(cell.remoteness()).map(|(t, r)| t + u32::from(r.0));
        }
        total
    }
}

fn placement(position: &Position) -> Placement {
    let pairs = |squares: &[bishops::Square]| squares.iter().map(|sq| (sq.row(), sq.col())).collect();
    Placement::new(pairs(position.white()), pairs(position.black()))
}

/// Every legal move of a legal position keeps it legal, is a move of the
/// reference solver, and changes the remoteness by at most one (an
/// unreachable position stays unreachable); `try_play` agrees with the
/// reference on every pair of squares.
fn check_moves(name: &str, seeds: &[u64]) -> Result<(), TestCaseError> {
    let s = solved(name);
    let position = s.pick(seeds, false);
    let before = s.remoteness(&position);
    let moves = position.moves();
    for (mv, after) in &moves {
        prop_assert_eq!(
            s.variant.check(after),
            Ok(()),
            "{} {} leads to a bad position {}",
            position,
            mv,
            after
        );
        let now = s.remoteness(after);
        match (before, now) {
            (Some(b), Some(a)) => prop_assert!(b.abs_diff(a) <= 1, "{position} ({b}) {mv} -> {after} ({a})"),
            (None, None) => {}
            _ => prop_assert!(false, "{position} ({before:?}) {mv} -> {after} ({now:?})"),
        }
    }
    if let Some(r) = before.filter(|&r| r > 0) {
        prop_assert!(
            moves.iter().any(|(_, after)| s.remoteness(after) == Some(r - 1)),
            "{position} ({r}) has no move one step closer"
        );
    }
    // The same moves as the independent reference solver.
    let board = s.variant.board();
    let pair = |sq: bishops::Square| (sq.row(), sq.col());
    let mut ours: Vec<_> = moves
        .iter()
        .map(|(mv, after)| (pair(mv.from), pair(mv.to), placement(after)))
        .collect();
    let mut theirs = Reference::new(board.rows(), board.cols()).moves(&placement(&position));
    ours.sort();
    theirs.sort();
    prop_assert_eq!(&ours, &theirs, "moves of {}", position);
    // `try_play` of every pair of squares, legal or not, agrees with the
    // reference: the move and its result when the reference lists it, a
    // refusal otherwise.
    let squares: Vec<bishops::Square> = board.squares().collect();
    for &from in &squares {
        for &to in &squares {
            let played = position
                .try_play(bishops::Move { from, to })
                .ok()
                .map(|p| placement(&p));
            let listed = theirs
                .iter()
                .find(|(f, t, _)| (*f, *t) == (pair(from), pair(to)))
                .map(|(_, _, p)| p.clone());
            prop_assert_eq!(played, listed, "{} {}-{}", position, from, to);
        }
    }
    Ok(())
}

/// From a reachable position, the query API's optimal line is made of
/// moves of the reference rules, is as long as the table's remoteness (the
/// tables themselves are checked against the reference elsewhere), and ends
/// at the goal.
fn check_line(name: &str, seeds: &[u64]) -> Result<(), TestCaseError> {
    let s = solved(name);
    let start = s.pick(seeds, true);
    let remoteness = s.remoteness(&start).expect("picked among the reachable hashes");
    let line = table(name)
        .line(&start)
        .map_err(|e| TestCaseError::fail(format!("{start}: {e}")))?;
    prop_assert_eq!(line.moves.len() as u32, remoteness, "{} line {:?}", start, line.moves);
    let board = s.variant.board();
    let reference = Reference::new(board.rows(), board.cols());
    let pair = |sq: bishops::Square| (sq.row(), sq.col());
    let mut here = placement(&start);
    for (mv, after) in line.moves.iter().zip(&line.positions) {
        let next = placement(after);
        prop_assert!(
            reference
                .moves(&here)
                .iter()
                .any(|(f, t, p)| (*f, *t) == (pair(mv.from), pair(mv.to)) && *p == next),
            "{} is not a legal move before {}",
            mv,
            after
        );
        here = next;
    }
    prop_assert_eq!(here, placement(&s.variant.goal()), "{} line ends elsewhere", start);
    Ok(())
}

/// The query API's table of `name`, solved on demand into a scratch
/// directory once per test process.
fn table(name: &str) -> &'static Table {
    static TABLES: OnceLock<Mutex<HashMap<String, &'static Table>>> = OnceLock::new();
    let mut tables = TABLES.get_or_init(Default::default).lock().unwrap();
    tables.entry(name.to_owned()).or_insert_with(|| {
        let dir =
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("props-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let variant = Variant::named(name).unwrap();
        Box::leak(Box::new(Tablebase::new(dir).variant_table(variant).unwrap()))
    })
}

fn config() -> Config {
    Config {
        cases: 128,
        // Never write regression files into the source tree.
        failure_persistence: None,
        ..Config::default()
    }
}

/// R(27, 3, 3): the hash size of the standard `9x6-a1` class.
const NINE_SIX_LEN: u64 = 5_920_200;

fn nine_six() -> &'static Variant {
    static NINE_SIX: OnceLock<Variant> = OnceLock::new();
    NINE_SIX.get_or_init(|| Variant::named("9x6-a1").unwrap())
}

#[test]
fn nine_by_six_has_the_documented_hash_size() {
    let variant = nine_six();
    assert_eq!(variant.classes().len(), 1);
    assert_eq!(variant.classes()[0].counts(), (3, 3));
    assert_eq!(variant.classes()[0].index.len(), NINE_SIX_LEN);
    assert_eq!(variant.start().to_string(), "9_6_a1-a3-a5_i1-i3-i5");
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn seven_by_six_moves_change_remoteness_by_at_most_one(seed in any::<u64>()) {
        check_moves("7x6", &[seed])?;
    }

    #[test]
    fn five_by_four_full_moves_change_remoteness_by_at_most_one(even in any::<u64>(), odd in any::<u64>()) {
        check_moves("5x4-full", &[even, odd])?;
    }

    #[test]
    fn seven_by_six_line_reaches_the_goal(seed in any::<u64>()) {
        check_line("7x6", &[seed])?;
    }

    #[test]
    fn five_by_four_full_line_reaches_the_goal(even in any::<u64>(), odd in any::<u64>()) {
        check_line("5x4-full", &[even, odd])?;
    }

    #[test]
    fn nine_by_six_hash_round_trips(hash in 0..NINE_SIX_LEN) {
        let spec = &nine_six().classes()[0];
        let part = spec.index.unrank(hash);
        prop_assert_eq!((part.white.count(), part.black.count()), (3, 3));
        prop_assert!((part.white & part.black).is_empty(), "{:?}", part);
        prop_assert!(part.occupied().is_subset(spec.geometry.all()), "{:?}", part);
        prop_assert_eq!(spec.index.rank(part), hash);
    }

    #[test]
    fn nine_by_six_position_strings_round_trip(hash in 0..NINE_SIX_LEN, reverse in any::<bool>()) {
        let variant = nine_six();
        let spec = &variant.classes()[0];
        let position = variant.position(&[spec.index.unrank(hash)]);
        let text = position.to_string();
        let parsed: Position = text.parse().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(&parsed, &position);
        prop_assert_eq!(parsed.to_string(), text.clone());
        prop_assert_eq!(variant.class_hashes(&parsed), vec![hash]);
        prop_assert!(parsed.white().iter().chain(parsed.black()).all(|sq| sq.parity() == 0), "{}", text);
        // Squares may be given in any order.
        let fields: Vec<&str> = text.split('_').collect();
        prop_assert_eq!(fields.len(), 4);
        let shuffle = |field: &str| {
            let mut squares: Vec<&str> = field.split('-').collect();
            if reverse { squares.reverse() } else { squares.rotate_left(1) }
            squares.join("-")
        };
        let scrambled = format!("{}_{}_{}_{}", fields[0], fields[1], shuffle(fields[2]), shuffle(fields[3]));
        prop_assert_eq!(scrambled.parse::<Position>().ok(), Some(position), "{}", scrambled);
    }
}
