//! Every position of every named variant, checked against the independent
//! reference solver of `tests/common/reference.rs`: the solver's tables and
//! the stored databases must agree with it hash by hash.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

use bishops::solver::{self, Solution};
use bishops::storage::{self, Database};
use bishops::{Cell, Variant};
use common::reference::{Placement, Reference, colour_class};
use hashbrown::{HashMap, HashSet};

/// What the reference says of one hash: `None` when the placement is
/// illegal, `Some(None)` when it is legal but cannot reach the goal,
/// `Some(Some(d))` when it is `d` moves from the goal.
type Expected = Option<Option<u32>>;

/// What one worker finds in its run of hashes: the answers, and the keys of
/// the legal placements it met.
type Chunk = (Vec<Expected>, Vec<(u64, u64)>);

/// A named variant, solved by the crate and by the reference.
struct Checked {
    variant: Variant,
    solution: Solution,
    /// Per class, in class order: the reference's answer for every hash.
    expected: Vec<Vec<Expected>>,
    /// Per class: the reference's largest remoteness.
    reference_max: Vec<u32>,
}

/// Squares as plain `(row, col)` pairs.
fn pairs(squares: impl IntoIterator<Item = bishops::Square>) -> Vec<(u8, u8)> {
    squares.into_iter().map(|sq| (sq.row(), sq.col())).collect()
}

/// Squares as a bit mask over the board (bit `row * cols + col`), so that a
/// million placements are compared without allocating.
fn mask(cols: u8, squares: impl IntoIterator<Item = (u8, u8)>) -> u64 {
    squares
        .into_iter()
        .fold(0, |m, (r, c)| m | 1 << (u32::from(r) * u32::from(cols) + u32::from(c)))
}

/// Solves `name` with the crate and with the reference, and works out what
/// the reference says of every hash of every class. Checks on the way that
/// the hash names each reference legal placement exactly once.
fn build(name: &str) -> Checked {
    let variant = Variant::named(name).unwrap_or_else(|e| panic!("variant {name}: {e}"));
    let solution = solver::solve(&variant, &mut |_| {}).unwrap_or_else(|e| panic!("solve {name}: {e}"));
    assert_eq!(
        solution.classes.len(),
        variant.classes().len(),
        "{name}: one table per class"
    );
    let board = variant.board();
    let (rows, cols) = (board.rows(), board.cols());
    assert!(
        u32::from(rows) * u32::from(cols) <= 64,
        "{name}: the board does not fit a mask"
    );
    let reference = Reference::new(rows, cols);
    let mut expected = Vec::new();
    let mut reference_max = Vec::new();
    for spec in variant.classes() {
        let parity = spec.class.index() as u8;
        assert!(parity < 2);
        let squares = colour_class(rows, cols, parity);
        let in_class = |sq: &(u8, u8)| (sq.0 + sq.1) % 2 == parity;
        let start_white: Vec<(u8, u8)> = pairs(variant.start().white().iter().copied())
            .into_iter()
            .filter(in_class)
            .collect();
        let start_black: Vec<(u8, u8)> = pairs(variant.start().black().iter().copied())
            .into_iter()
            .filter(in_class)
            .collect();
        let (w, b) = (start_white.len(), start_black.len());
        assert_eq!(
            spec.counts(),
            (w as u32, b as u32),
            "{name} class {parity}: bishop counts"
        );
        let goal = Placement::new(start_black, start_white);
        // The two reference computations are independent: run them side by side.
        let (legal, dist) = std::thread::scope(|s| {
            let legal = s.spawn(|| reference.legal_placements(&squares, w, b));
            let dist = reference.solve(&goal);
            (legal.join().expect("legal_placements"), dist)
        });
        let key = |p: &Placement| (mask(cols, p.white.iter().copied()), mask(cols, p.black.iter().copied()));
        let answers_by_key: HashMap<(u64, u64), Option<u32>> =
            legal.iter().map(|p| (key(p), dist.get(p).copied())).collect();
        assert_eq!(
            answers_by_key.len(),
            legal.len(),
            "{name} class {parity}: reference placements are distinct"
        );
        assert!(
            dist.keys().all(|p| answers_by_key.contains_key(&key(p))),
            "{name} class {parity}: the reference reached a placement it calls illegal"
        );

        // Every hash, in as many chunks as there are cores.
        let len = spec.index.len();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
        let chunk = len.div_ceil(threads);
        let chunks: Vec<Chunk> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    let answers_by_key = &answers_by_key;
                    s.spawn(move || {
                        let mut answers = Vec::new();
                        let mut legal_keys = Vec::new();
                        for hash in t * chunk..((t + 1) * chunk).min(len) {
                            let part = spec.index.unrank(hash);
                            let square = |c: u8| {
                                let sq = spec.geometry.square(c);
                                (sq.row(), sq.col())
                            };
                            let (white, black) = (part.white.iter().map(square), part.black.iter().map(square));
                            assert_eq!(
                                (white.len(), black.len()),
                                (w, b),
                                "{name} class {parity} hash {hash}: bishop counts"
                            );
                            assert!(
                                white
                                    .clone()
                                    .chain(black.clone())
                                    .all(|(r, c)| r < rows && c < cols && (r + c) % 2 == parity),
                                "{name} class {parity} hash {hash}: a bishop is off the class: {part:?}"
                            );
                            let k = (mask(cols, white), mask(cols, black));
                            assert_eq!(
                                k.0 & k.1,
                                0,
                                "{name} class {parity} hash {hash}: a square is used twice"
                            );
                            match answers_by_key.get(&k) {
                                Some(&answer) => {
                                    legal_keys.push(k);
                                    answers.push(Some(answer));
                                }
                                None => answers.push(None),
                            }
                        }
                        (answers, legal_keys)
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().expect("hash worker")).collect()
        });
        let mut answers = Vec::with_capacity(len as usize);
        let mut seen: HashSet<(u64, u64)> = HashSet::with_capacity(legal.len());
        for (chunk_answers, legal_keys) in chunks {
            answers.extend(chunk_answers);
            for k in legal_keys {
                assert!(seen.insert(k), "{name} class {parity}: placement {k:x?} has two hashes");
            }
        }
        assert_eq!(answers.len() as u64, len);
        assert_eq!(
            seen.len(),
            legal.len(),
            "{name} class {parity}: legal hashes vs reference legal placements"
        );
        reference_max.push(dist.values().copied().max().expect("the goal is reached"));
        expected.push(answers);
    }
    Checked {
        variant,
        solution,
        expected,
        reference_max,
    }
}

/// The variant `name`, built once per test process.
fn checked(name: &str) -> &'static Checked {
    static FIVE_FOUR: OnceLock<Checked> = OnceLock::new();
    static SEVEN_FOUR: OnceLock<Checked> = OnceLock::new();
    static SEVEN_SIX: OnceLock<Checked> = OnceLock::new();
    static FIVE_FOUR_FULL: OnceLock<Checked> = OnceLock::new();
    let cell = match name {
        "5x4" => &FIVE_FOUR,
        "7x4" => &SEVEN_FOUR,
        "7x6" => &SEVEN_SIX,
        "5x4-full" => &FIVE_FOUR_FULL,
        _ => panic!("no such test variant {name}"),
    };
    cell.get_or_init(|| build(name))
}

/// What a cell says, in the reference's terms.
fn answer(cell: Cell) -> Expected {
    cell.is_legal().then(|| cell.remoteness().map(|r| u32::from(r.0)))
}

/// Compares `actual(hash)` with the reference for `hashes` of class `k`,
/// and reports the first few mismatches.
fn compare(
    what: &str,
    checked: &Checked,
    k: usize,
    hashes: impl IntoIterator<Item = u64>,
    actual: impl Fn(u64) -> Cell,
) -> usize {
    let spec = &checked.variant.classes()[k];
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for hash in hashes {
        compared += 1;
        let want = checked.expected[k][hash as usize];
        let got = answer(actual(hash));
        if got != want {
            mismatches.push(format!(
                "hash {hash} ({:?}): {what} says {got:?}, reference {want:?}",
                spec.index.unrank(hash)
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} class {k}: {} mismatches between {what} and the reference, first: {:#?}",
        checked.variant.name(),
        mismatches.len(),
        &mismatches[..mismatches.len().min(10)]
    );
    compared
}

/// Every hash of every class of `name` against the reference, and the
/// counts of legal and reachable positions.
fn solver_agrees(name: &str) {
    let c = checked(name);
    for (k, (spec, table)) in c.variant.classes().iter().zip(&c.solution.classes).enumerate() {
        assert_eq!(table.class, spec.class);
        let compared = compare("the solver", c, k, 0..spec.index.len(), |h| table.cell(h));
        assert_eq!(compared as u64, spec.index.len());
        let legal_hashes = (0..spec.index.len()).filter(|&h| table.cell(h).is_legal()).count();
        let reference_legal = c.expected[k].iter().filter(|e| e.is_some()).count();
        let reference_reachable = c.expected[k].iter().filter(|e| matches!(e, Some(Some(_)))).count();
        assert_eq!(legal_hashes, reference_legal, "{name} class {k}: legal positions");
        assert_eq!(
            table.stats.legal, reference_legal as u64,
            "{name} class {k}: stats.legal"
        );
        assert_eq!(
            table.stats.reachable, reference_reachable as u64,
            "{name} class {k}: stats.reachable"
        );
        assert_eq!(
            table.stats.max_remoteness().map(|r| u32::from(r.0)),
            Some(c.reference_max[k]),
            "{name} class {k}: largest remoteness"
        );
        let goal = spec.index.rank(spec.goal);
        assert_eq!(table.cell(goal), Cell(0), "{name} class {k}: the goal has remoteness 0");
    }
}

#[test]
fn five_by_four_matches_reference() {
    solver_agrees("5x4");
}

#[test]
fn seven_by_four_matches_reference() {
    solver_agrees("7x4");
}

#[test]
fn seven_by_six_matches_reference() {
    solver_agrees("7x6");
}

#[test]
fn five_by_four_full_matches_reference() {
    solver_agrees("5x4-full");
    let c = checked("5x4-full");
    assert_eq!(c.variant.classes().len(), 2);
    let starts = c.variant.class_hashes(c.variant.start());
    let start: u32 = starts
        .iter()
        .enumerate()
        .map(|(k, &h)| u32::from(c.solution.classes[k].cell(h).remoteness().expect("start reachable").0))
        .sum();
    assert_eq!(start, 36, "5x4-full: start remoteness");
    let reference_start: u32 = starts
        .iter()
        .enumerate()
        .map(|(k, &h)| {
            c.expected[k][h as usize]
                .flatten()
                .expect("reference reaches the start")
        })
        .sum();
    assert_eq!(reference_start, 36, "5x4-full: reference start remoteness");
    let largest: u32 = c
        .solution
        .classes
        .iter()
        .map(|t| u32::from(t.stats.max_remoteness().expect("a reachable position").0))
        .sum();
    assert_eq!(largest, 38, "5x4-full: largest remoteness");
    assert_eq!(
        c.reference_max.iter().sum::<u32>(),
        38,
        "5x4-full: reference largest remoteness"
    );
}

/// A fresh directory for one test's database.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("reference-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes the database of `name`, opens it, and compares `hashes(k)` of
/// every class with the reference.
fn database_agrees(name: &str, test: &str, hashes: impl Fn(&Checked, usize) -> Vec<u64>) {
    let c = checked(name);
    let dir = scratch(test);
    let path = storage::write(&dir, &c.variant, &c.solution).unwrap_or_else(|e| panic!("write {name}: {e}"));
    assert!(path.starts_with(&dir));
    let database = Database::open(&dir, &c.variant).unwrap_or_else(|e| panic!("open {name}: {e}"));
    for k in 0..c.variant.classes().len() {
        let chosen = hashes(c, k);
        assert!(!chosen.is_empty());
        let compared = compare("the database", c, k, chosen, |h| {
            database
                .cell(k, h)
                .unwrap_or_else(|e| panic!("{name} class {k} hash {h}: {e}"))
        });
        assert!(compared > 0);
    }
    let starts = c.variant.class_hashes(c.variant.start());
    let solver_start = starts
        .iter()
        .enumerate()
        .map(|(k, &h)| c.solution.classes[k].cell(h).remoteness())
        .try_fold(bishops::Remoteness(0), |acc, r| Some(acc + r?));
    assert_eq!(
        database.remoteness(&starts).unwrap(),
        solver_start,
        "{name}: start remoteness"
    );
    drop(database);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn every_hash(c: &Checked, k: usize) -> Vec<u64> {
    (0..c.variant.classes()[k].index.len()).collect()
}

#[test]
fn five_by_four_database_matches_reference() {
    database_agrees("5x4", "five_by_four_database", every_hash);
}

#[test]
fn seven_by_four_database_matches_reference() {
    database_agrees("7x4", "seven_by_four_database", every_hash);
}

#[test]
fn five_by_four_full_database_matches_reference() {
    database_agrees("5x4-full", "five_by_four_full_database", every_hash);
}

/// splitmix64: a fixed, seedable sequence for sampling.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
fn seven_by_six_database_matches_reference_on_a_sample() {
    database_agrees("7x6", "seven_by_six_database", |c, k| {
        // Most hashes of 7x6 are illegal, so half the sample is drawn from
        // all hashes and half from the legal ones, plus both ends, the
        // start and the goal.
        let len = c.variant.classes()[k].index.len();
        let legal: Vec<u64> = (0..len).filter(|&h| c.expected[k][h as usize].is_some()).collect();
        let mut state = 0x7_6 + k as u64;
        let mut sample = vec![0, len - 1];
        sample.extend(c.variant.class_hashes(c.variant.start()).get(k));
        sample.extend(c.variant.class_hashes(&c.variant.goal()).get(k));
        for _ in 0..2_500 {
            sample.push(splitmix(&mut state) % len);
            sample.push(legal[(splitmix(&mut state) % legal.len() as u64) as usize]);
        }
        sample
    });
}
