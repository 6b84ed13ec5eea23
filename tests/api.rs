//! The query API against the independent reference solver: every position
//! of the small variants probed through a real database, optimal lines,
//! verification of lines and of detours, and every kind of illegal move.

mod common;

use std::sync::OnceLock;

use bishops::{Error, Move, Position, Remoteness, Square, Table, Tablebase, Value, Variant};
use common::reference::{Placement, Reference};
use common::scratch;
use hashbrown::HashMap;

/// A variant's table (solved on demand into a scratch directory) and the
/// reference solver's distances for every reachable placement.
struct Case {
    table: Table,
    reference: Reference,
    distances: HashMap<Placement, u32>,
}

fn placement(position: &Position) -> Placement {
    let pairs = |squares: &[Square]| squares.iter().map(|sq| (sq.row(), sq.col())).collect();
    Placement::new(pairs(position.white()), pairs(position.black()))
}

fn position(board: &Position, p: &Placement) -> Position {
    let squares = |v: &[(u8, u8)]| v.iter().map(|&(r, c)| Square::new(r, c)).collect();
    Position::new(board.board(), squares(&p.white), squares(&p.black)).expect("a placement is well formed")
}

fn case(name: &'static str) -> &'static Case {
    static CASES: OnceLock<std::sync::Mutex<HashMap<&'static str, &'static Case>>> = OnceLock::new();
    let cases = CASES.get_or_init(Default::default);
    let mut cases = cases.lock().unwrap();
    cases.entry(name).or_insert_with(|| {
        let variant = Variant::named(name).unwrap();
        // Every test of the process shares the case, which lives as long
        // as the process: its directory stays.
        let dir = scratch("api", name);
        let tablebase = Tablebase::new(dir.to_path_buf());
        std::mem::forget(dir);
        let table = tablebase.table(variant.start(), Some(name)).unwrap();
        let board = variant.board();
        let reference = Reference::new(board.rows(), board.cols());
        let distances = reference.solve(&placement(&variant.goal()));
        Box::leak(Box::new(Case {
            table,
            reference,
            distances,
        }))
    })
}

/// Every reachable position of `name` is probed: the remoteness is the
/// reference's distance, every move's value follows from the reference's
/// distances, and the best move lowers the remoteness by exactly one.
fn every_position_agrees(name: &'static str) {
    let c = case(name);
    let start = c.table.variant().start().clone();
    let mut probed = 0;
    for (p, &distance) in &c.distances {
        let pos = position(&start, p);
        let probe = c.table.probe(&pos).unwrap_or_else(|e| panic!("{name} {pos}: {e}"));
        assert_eq!(probe.remoteness, Some(Remoteness(distance as u16)), "{name} {pos}");
        let theirs = c.reference.moves(p);
        assert_eq!(probe.moves.len(), theirs.len(), "{name} {pos}: moves");
        for m in &probe.moves {
            let after = c.distances[&placement(&m.position)];
            assert_eq!(m.remoteness, Some(Remoteness(after as u16)), "{name} {pos} {}", m.mv);
            assert_eq!(m.delta, Some(after as i32 - distance as i32), "{name} {pos} {}", m.mv);
        }
        match probe.best_move() {
            Some(best) => {
                assert_eq!(best.value, Value::Better);
                assert_eq!(best.remoteness, Some(Remoteness(distance as u16 - 1)), "{name} {pos}");
            }
            None => assert_eq!(distance, 0, "{name} {pos} has no best move"),
        }
        probed += 1;
    }
    assert_eq!(probed, c.distances.len());
    assert!(probed >= 100);
}

#[test]
fn every_position_of_5x4_agrees_with_the_reference() {
    every_position_agrees("5x4");
}

#[test]
fn every_position_of_7x4_agrees_with_the_reference() {
    every_position_agrees("7x4");
}

#[test]
fn every_position_of_7x6_agrees_with_the_reference() {
    every_position_agrees("7x6");
}

#[test]
fn every_position_of_5x4_full_agrees_with_the_reference() {
    every_position_agrees("5x4-full");
}

/// Up to `count` reachable positions of `name`, spread over the table.
fn sample(name: &'static str, count: usize) -> Vec<Position> {
    let c = case(name);
    let start = c.table.variant().start().clone();
    let mut all: Vec<&Placement> = c.distances.keys().collect();
    all.sort();
    let step = (all.len() / count).max(1);
    all.into_iter().step_by(step).map(|p| position(&start, p)).collect()
}

#[test]
fn lines_are_optimal_by_the_reference_and_verify_as_optimal() {
    for name in ["5x4", "7x4", "7x6", "5x4-full"] {
        let c = case(name);
        for pos in sample(name, 60) {
            let line = c.table.line(&pos).unwrap();
            let distance = c.distances[&placement(&pos)];
            assert_eq!(line.moves.len() as u32, distance, "{name} {pos}: line length");
            // Each step is a move of the reference rules, and the line ends at the goal.
            let mut here = placement(&pos);
            for (mv, after) in line.moves.iter().zip(&line.positions) {
                let step = ((mv.from.row(), mv.from.col()), (mv.to.row(), mv.to.col()));
                let next = placement(after);
                assert!(
                    c.reference
                        .moves(&here)
                        .iter()
                        .any(|(f, t, p)| (*f, *t) == step && *p == next),
                    "{name} {pos}: {mv} is not a reference move"
                );
                here = next;
            }
            assert_eq!(c.distances[&here], 0, "{name} {pos}: the line ends elsewhere");
            let verdict = c.table.verify(&pos, &line.moves).unwrap();
            assert!(verdict.reached_goal, "{name} {pos}");
            assert!(verdict.optimal, "{name} {pos}");
            assert_eq!(verdict.first_mistake, None);
            assert_eq!(verdict.wasted, Some(0));
            assert!(
                verdict
                    .moves
                    .iter()
                    .all(|m| m.value == Value::Better && m.delta == Some(-1))
            );
        }
    }
}

#[test]
fn a_detour_of_two_moves_is_found_at_its_move_with_two_wasted() {
    let c = case("7x6");
    let start = c.table.variant().start().clone();
    let line = c.table.line(&start).unwrap();
    // Three optimal moves, then a move that loses ground and its reverse.
    let at = 3;
    let here = &line.positions[at - 1];
    let probe = c.table.probe(here).unwrap();
    let worse = probe
        .moves
        .iter()
        .find(|m| m.value == Value::Worse)
        .expect("a worse move");
    let back = Move {
        from: worse.mv.to,
        to: worse.mv.from,
    };
    let mut moves: Vec<Move> = line.moves[..at].to_vec();
    moves.extend([worse.mv, back]);
    moves.extend(&line.moves[at..]);
    let verdict = c.table.verify(&start, &moves).unwrap();
    assert!(verdict.reached_goal);
    assert!(!verdict.optimal);
    assert_eq!(verdict.first_mistake, Some(at + 1));
    assert_eq!(verdict.wasted, Some(2));
    assert_eq!(verdict.moves[at].value, Value::Worse);
    assert_eq!(verdict.moves[at].delta, Some(1));
    assert_eq!(verdict.moves[at + 1].value, Value::Better);
    assert_eq!(verdict.remoteness, Some(Remoteness(16)));

    // Stopping early: not reached, nothing wasted counted, no mistake.
    let partial = c.table.verify(&start, &line.moves[..5]).unwrap();
    assert!(!partial.reached_goal && !partial.optimal);
    assert_eq!((partial.first_mistake, partial.wasted), (None, None));
}

/// The refusal of `moves` from `from` (in 5x4), as (number, reason).
fn refusal(from: &str, moves: &[&str]) -> (usize, String, String) {
    let c = case("5x4");
    let pos: Position = from.parse().unwrap();
    match c.table.verify_written(&pos, moves) {
        Err(Error::IllegalMove { number, mv, reason }) => (number, mv, reason),
        other => panic!("{moves:?} from {from}: expected an illegal move, got {other:?}"),
    }
}

#[test]
fn each_kind_of_illegal_move_is_named_with_its_number() {
    let start = "5_4_a1-a3_e1-e3";
    let cases: [(&[&str], usize, &str); 7] = [
        (&["a3-b2", "a1-a5"], 2, "a5 is off the 5x4 board"),
        (&["b2-c3"], 1, "there is no bishop on b2"),
        (&["a1-a2"], 1, "a1 and a2 are not on one diagonal"),
        (&["a3-b2", "e1-d2", "a1-b2"], 3, "b2 is occupied"),
        (&["a3-b2", "a1-c3"], 2, "the bishop on b2 blocks the way from a1 to c3"),
        (
            &["a1-c3"],
            1,
            "it leaves the white bishop on c3 attacked by the black bishop on e1",
        ),
        (&["a3-b2", "b2"], 2, "it is not a move: write it like `a1-b2`"),
    ];
    for (moves, number, reason) in cases {
        let (n, mv, why) = refusal(start, moves);
        assert_eq!((n, why.as_str()), (number, reason), "{moves:?}");
        assert_eq!(mv, moves[number - 1]);
    }
    // Nothing after the first refused move is judged: a later malformed move
    // does not hide an earlier illegal one.
    assert_eq!(refusal(start, &["a1-c3", "zz"]).0, 1);
    // A very long move is quoted clipped, with its length.
    let long = "a".repeat(5000);
    let (_, mv, _) = refusal(start, &[&long]);
    assert!(mv.len() < 60 && mv.contains("5000 characters"), "{mv}");
}

#[test]
fn illegal_moves_in_the_other_colour_class_are_found_too() {
    let c = case("5x4-full");
    let start = c.table.variant().start().clone();
    let err = c.table.verify_written(&start, &["a2-b3", "a4-b3"]).unwrap_err();
    assert!(
        matches!(err, Error::IllegalMove { number: 2, ref reason, .. } if reason == "b3 is occupied"),
        "{err}"
    );
    let ok = c.table.verify_written(&start, &["a2-b3", "a3-b2"]).unwrap();
    assert_eq!(ok.moves.len(), 2);
    assert_eq!(ok.moves[1].remoteness, Some(Remoteness(34)));
    assert_eq!(ok.remoteness, Some(Remoteness(36)));
}

#[test]
fn the_goal_is_solved_with_nothing_left_to_play() {
    let c = case("5x4");
    let goal = c.table.variant().goal();
    let probe = c.table.probe(&goal).unwrap();
    assert_eq!(probe.remoteness, Some(Remoteness(0)));
    assert!(probe.best_move().is_none());
    let verdict = c.table.verify(&goal, &[]).unwrap();
    assert!(verdict.reached_goal && verdict.optimal);
    assert_eq!(verdict.wasted, Some(0));
    assert_eq!(c.table.line(&goal).unwrap().moves.len(), 0);
}
