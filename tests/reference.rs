//! Every position of every named variant, checked against the independent
//! reference solver of `tests/common/reference.rs`: the solver's tables and
//! the stored databases must agree with it hash by hash. The tight and dense
//! searches must also agree with each other, table for table.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

use bishops::solver::{self, Method, Plan, Solution};
use bishops::storage::{self, Database};
use bishops::{Bitboard, Cell, Class, ClassSpec, Part, Square, Symmetries, Variant};
use common::reference::{Placement, Reference, colour_class};
use common::tables::assert_same_table;
use hashbrown::{HashMap, HashSet};

/// What the reference says of one hash: `None` when the placement is
/// illegal, `Some(None)` when it is legal but cannot reach the goal,
/// `Some(Some(d))` when it is `d` moves from the goal.
type Expected = Option<Option<u32>>;

/// How `build` works out the reference's answer for every hash of a class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Coverage {
    /// Every hash is unranked and looked up among the reference's legal
    /// placements.
    Every,
    /// Every legal placement the reference enumerates is ranked to its hash
    /// (and unranked back); every other hash is then illegal. On top, this
    /// many hashes drawn from the whole space (plus both ends, the start and
    /// the goal) are unranked and looked up as under `Every`.
    LegalAndSample(u64),
}

/// A named variant, solved by the crate and by the reference.
struct Checked {
    variant: Variant,
    solution: Solution,
    /// Per class, in class order: the reference's answer for every hash.
    expected: Vec<Vec<Expected>>,
    /// Per class: the reference's largest remoteness.
    reference_max: Vec<u32>,
    /// Per class: how many hashes were unranked and looked up one by one.
    examined: Vec<u64>,
}

/// Squares as plain `(row, col)` pairs.
fn pairs(squares: impl IntoIterator<Item = Square>) -> Vec<(u8, u8)> {
    squares.into_iter().map(|sq| (sq.row(), sq.col())).collect()
}

/// Squares as a bit mask over the board (bit `row * cols + col`), so that a
/// million placements are compared without allocating.
fn mask(cols: u8, squares: impl IntoIterator<Item = (u8, u8)>) -> u64 {
    squares
        .into_iter()
        .fold(0, |m, (r, c)| m | 1 << (u32::from(r) * u32::from(cols) + u32::from(c)))
}

/// The threads to split a long loop over.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// One class as the reference sees it: its squares, its bishop counts and
/// its goal, all taken from the variant's start and the board alone.
struct ReferenceClass {
    parity: u8,
    squares: Vec<(u8, u8)>,
    white: usize,
    black: usize,
    goal: Placement,
}

/// What the reference says of a class: its legal placements and the
/// distance of each reachable one from the goal.
type ReferenceAnswer = (Vec<Placement>, HashMap<Placement, u32>);

/// The key (white mask, black mask) of public hash `hash` of `spec`, after
/// checking that the hash names `w` white and `b` black bishops on distinct
/// squares of the class.
fn key_of(name: &str, spec: &ClassSpec, (rows, cols): (u8, u8), (w, b): (usize, usize), hash: u64) -> (u64, u64) {
    let parity = spec.class.index() as u8;
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
    k
}

/// Solves `name` with the crate and with the reference, and works out what
/// the reference says of every hash of every class, as `coverage` says.
/// Checks on the way that the hash names each reference legal placement
/// exactly once.
fn build(name: &str, coverage: Coverage) -> Checked {
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
    let classes: Vec<ReferenceClass> = variant
        .classes()
        .iter()
        .map(|spec| {
            let parity = spec.class.index() as u8;
            assert!(parity < 2);
            let in_class = |sq: &(u8, u8)| (sq.0 + sq.1) % 2 == parity;
            let start_white: Vec<(u8, u8)> = pairs(variant.start().white().iter().copied())
                .into_iter()
                .filter(in_class)
                .collect();
            let start_black: Vec<(u8, u8)> = pairs(variant.start().black().iter().copied())
                .into_iter()
                .filter(in_class)
                .collect();
            let (white, black) = (start_white.len(), start_black.len());
            assert_eq!(
                spec.counts(),
                (white as u32, black as u32),
                "{name} class {parity}: bishop counts"
            );
            ReferenceClass {
                parity,
                squares: colour_class(rows, cols, parity),
                white,
                black,
                goal: Placement::new(start_black, start_white),
            }
        })
        .collect();
    // The reference computations are independent, within a class and across
    // classes (each class is solved from its own squares and its own goal,
    // even where the crate derives one class from the other's mirror image):
    // run them all side by side.
    let answers: Vec<ReferenceAnswer> = std::thread::scope(|s| {
        let jobs: Vec<_> = classes
            .iter()
            .map(|rc| {
                let reference = &reference;
                let legal = s.spawn(move || reference.legal_placements(&rc.squares, rc.white, rc.black));
                let dist = s.spawn(move || reference.solve(&rc.goal));
                (legal, dist)
            })
            .collect();
        jobs.into_iter()
            .map(|(legal, dist)| {
                (
                    legal.join().expect("legal_placements"),
                    dist.join().expect("reference solve"),
                )
            })
            .collect()
    });

    let mut expected = Vec::new();
    let mut reference_max = Vec::new();
    let mut examined = Vec::new();
    for ((spec, rc), (legal, dist)) in variant.classes().iter().zip(&classes).zip(answers) {
        let (parity, w, b) = (rc.parity, rc.white, rc.black);
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

        let len = spec.index.len();
        let mut answers: Vec<Expected> = vec![None; len as usize];
        let mut seen: HashSet<(u64, u64)> = HashSet::with_capacity(legal.len());
        let hashes: Vec<u64> = match coverage {
            Coverage::Every => (0..len).collect(),
            Coverage::LegalAndSample(n) => {
                // Each legal placement to its hash, and back.
                for p in &legal {
                    let cells = |squares: &[(u8, u8)]| -> Bitboard {
                        squares
                            .iter()
                            .map(|&(r, c)| {
                                spec.geometry
                                    .cell(Square::new(r, c))
                                    .unwrap_or_else(|| panic!("{name} class {parity}: {p:?} is off the class"))
                            })
                            .collect()
                    };
                    let hash = spec.index.rank(Part {
                        white: cells(&p.white),
                        black: cells(&p.black),
                    });
                    assert!(hash < len, "{name} class {parity}: {p:?} has hash {hash} of {len}");
                    assert_eq!(
                        key_of(name, spec, (rows, cols), (w, b), hash),
                        key(p),
                        "{name} class {parity}: hash {hash} of {p:?} unranks to another placement"
                    );
                    assert!(seen.insert(key(p)));
                    assert_eq!(
                        answers[hash as usize], None,
                        "{name} class {parity}: two placements have hash {hash}"
                    );
                    answers[hash as usize] = Some(answers_by_key[&key(p)]);
                }
                let mut state = len ^ u64::from(parity);
                let mut sample: Vec<u64> = (0..n).map(|_| splitmix(&mut state) % len).collect();
                sample.extend([0, len - 1, spec.index.rank(spec.start), spec.index.rank(spec.goal)]);
                sample.sort_unstable();
                sample.dedup();
                sample
            }
        };

        // The chosen hashes, unranked and looked up, in as many chunks as
        // there are cores.
        let chunk = hashes.len().div_ceil(threads()).max(1);
        let found: Vec<Vec<Option<(u64, u64)>>> = std::thread::scope(|s| {
            let workers: Vec<_> = hashes
                .chunks(chunk)
                .map(|run| {
                    let answers_by_key = &answers_by_key;
                    s.spawn(move || {
                        run.iter()
                            .map(|&hash| {
                                let k = key_of(name, spec, (rows, cols), (w, b), hash);
                                answers_by_key.contains_key(&k).then_some(k)
                            })
                            .collect()
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().expect("hash worker")).collect()
        });
        for (&hash, k) in hashes.iter().zip(found.into_iter().flatten()) {
            let answer = k.map(|k| answers_by_key[&k]);
            match coverage {
                Coverage::Every => {
                    if let Some(k) = k {
                        assert!(seen.insert(k), "{name} class {parity}: placement {k:x?} has two hashes");
                    }
                    answers[hash as usize] = answer;
                }
                Coverage::LegalAndSample(_) => assert_eq!(
                    answers[hash as usize], answer,
                    "{name} class {parity} hash {hash}: unranking and ranking the legal placements disagree"
                ),
            }
        }
        assert_eq!(
            seen.len(),
            legal.len(),
            "{name} class {parity}: legal hashes vs reference legal placements"
        );
        assert_eq!(
            answers.iter().filter(|a| a.is_some()).count(),
            legal.len(),
            "{name} class {parity}: legal hashes vs reference legal placements"
        );
        reference_max.push(dist.values().copied().max().expect("the goal is reached"));
        expected.push(answers);
        examined.push(hashes.len() as u64);
    }
    Checked {
        variant,
        solution,
        expected,
        reference_max,
        examined,
    }
}

/// The variant `name`, built once per test process.
fn checked(name: &str) -> &'static Checked {
    static FIVE_FOUR: OnceLock<Checked> = OnceLock::new();
    static SEVEN_FOUR: OnceLock<Checked> = OnceLock::new();
    static SEVEN_SIX: OnceLock<Checked> = OnceLock::new();
    static FIVE_FOUR_FULL: OnceLock<Checked> = OnceLock::new();
    static NINE_SIX: OnceLock<Checked> = OnceLock::new();
    static SEVEN_FIVE_FULL: OnceLock<Checked> = OnceLock::new();
    static EIGHT_FOUR_FULL: OnceLock<Checked> = OnceLock::new();
    let (cell, coverage) = match name {
        "5x4" => (&FIVE_FOUR, Coverage::Every),
        "7x4" => (&SEVEN_FOUR, Coverage::Every),
        "7x6" => (&SEVEN_SIX, Coverage::Every),
        "5x4-full" => (&FIVE_FOUR_FULL, Coverage::Every),
        "7x5-full" => (&SEVEN_FIVE_FULL, Coverage::Every),
        "8x4-full" => (&EIGHT_FOUR_FULL, Coverage::Every),
        // 5.9 million hashes per class, of which 276,674 are legal. Unranking
        // and looking up each one doubled a debug-build run (well over
        // 90 s on two cores, most of it the reference itself), so 9x6 ranks
        // every legal placement the reference enumerates (which settles
        // every other hash as illegal) and looks up a deterministic sample
        // of 500,000 hashes, most of them illegal, on top. The solver is
        // still compared with the reference on every hash.
        "9x6" => (&NINE_SIX, Coverage::LegalAndSample(500_000)),
        _ => panic!("no such test variant {name}"),
    };
    cell.get_or_init(|| build(name, coverage))
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

/// Compares the solver's table of class `k` with the reference on every
/// hash, in as many chunks as there are cores, and reports the first few
/// mismatches. Returns how many hashes the solver calls legal.
fn solver_compare_every(c: &Checked, k: usize) -> u64 {
    let spec = &c.variant.classes()[k];
    let solution = &c.solution;
    let len = spec.index.len();
    let chunk = len.div_ceil(threads() as u64).max(1);
    let runs: Vec<(u64, u64, Vec<String>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..len.div_ceil(chunk))
            .map(|t| {
                s.spawn(move || {
                    let (mut legal, mut wrong, mut first) = (0, 0, Vec::new());
                    for hash in t * chunk..((t + 1) * chunk).min(len) {
                        let want = c.expected[k][hash as usize];
                        let got = answer(solution.cell(k, hash));
                        legal += u64::from(got.is_some());
                        if got != want {
                            wrong += 1;
                            if first.len() < 10 {
                                first.push(format!(
                                    "hash {hash} ({:?}): the solver says {got:?}, reference {want:?}",
                                    spec.index.unrank(hash)
                                ));
                            }
                        }
                    }
                    (legal, wrong, first)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("compare worker")).collect()
    });
    let wrong: u64 = runs.iter().map(|r| r.1).sum();
    let first: Vec<&String> = runs.iter().flat_map(|r| &r.2).take(10).collect();
    assert!(
        wrong == 0,
        "{} class {k}: {wrong} mismatches between the solver and the reference, first: {first:#?}",
        c.variant.name()
    );
    runs.iter().map(|r| r.0).sum()
}

/// Every hash of every class of `name` against the reference, and the
/// counts of legal and reachable positions.
fn solver_agrees(name: &str) {
    let c = checked(name);
    for (k, (spec, table)) in c.variant.classes().iter().zip(&c.solution.classes).enumerate() {
        assert_eq!(table.class, spec.class);
        assert_eq!(c.expected[k].len() as u64, spec.index.len());
        let legal_hashes = solver_compare_every(c, k);
        let reference_legal = c.expected[k].iter().filter(|e| e.is_some()).count() as u64;
        let reference_reachable = c.expected[k].iter().filter(|e| matches!(e, Some(Some(_)))).count() as u64;
        assert_eq!(legal_hashes, reference_legal, "{name} class {k}: legal positions");
        assert_eq!(table.stats.legal, reference_legal, "{name} class {k}: stats.legal");
        assert_eq!(
            c.solution.class_cells(k).len() as u64,
            reference_legal,
            "{name} class {k}: cells"
        );
        assert_eq!(
            table.stats.reachable, reference_reachable,
            "{name} class {k}: stats.reachable"
        );
        assert_eq!(
            table.stats.max_remoteness().map(|r| u32::from(r.0)),
            Some(c.reference_max[k]),
            "{name} class {k}: largest remoteness"
        );
        let goal = spec.index.rank(spec.goal);
        assert_eq!(
            c.solution.cell(k, goal),
            Cell(0),
            "{name} class {k}: the goal has remoteness 0"
        );
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
        .map(|(k, &h)| u32::from(c.solution.cell(k, h).remoteness().expect("start reachable").0))
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

/// The symmetries of each class of `name`, by name.
fn symmetries(name: &str) -> Vec<Vec<String>> {
    let variant = Variant::named(name).unwrap();
    variant
        .classes()
        .iter()
        .map(|s| Symmetries::of(&s.geometry, s.goal).names())
        .collect()
}

/// Odd rows and odd columns: each class has a group of 4 symmetries, and
/// the classes are not mirror images of each other (both are searched).
#[test]
fn seven_by_five_full_matches_reference() {
    let group = [
        "left-right",
        "top-bottom, colours exchanged",
        "half turn, colours exchanged",
    ];
    assert_eq!(symmetries("7x5-full"), [group, group]);
    solver_agrees("7x5-full");
    let c = checked("7x5-full");
    assert!(c.solution.classes.iter().all(|t| !t.is_mirrored()));
}

/// Even rows and even columns: the half turn with the colours exchanged.
#[test]
fn eight_by_four_full_matches_reference() {
    assert_eq!(
        symmetries("8x4-full"),
        [["half turn, colours exchanged"], ["half turn, colours exchanged"]]
    );
    solver_agrees("8x4-full");
}

#[test]
fn nine_by_six_matches_reference() {
    solver_agrees("9x6");
    let c = checked("9x6");
    assert_eq!(Method::default(), Method::Tight, "the default solver is the tight one");
    let classes: Vec<Class> = c.variant.classes().iter().map(|s| s.class).collect();
    assert_eq!(classes, [Class::Even, Class::Odd]);
    for (k, spec) in c.variant.classes().iter().enumerate() {
        assert_eq!(spec.counts(), (3, 3), "9x6 class {k}: bishops");
        assert_eq!(spec.index.len(), 5_920_200, "9x6 class {k}: R(27, 3, 3)");
        assert_eq!(
            c.solution.classes[k].stats.legal, 276_674,
            "9x6 class {k}: legal positions"
        );
        assert!(c.examined[k] > 400_000, "9x6 class {k}: hashes looked up one by one");
    }
    // The solver searches the a1 class and mirrors it onto the a2 class; the
    // reference solved the a2 class on its own, from its own goal, so the
    // comparison above also checked the mirror.
    assert!(!c.solution.classes[0].is_mirrored(), "9x6: the a1 class is searched");
    assert!(
        c.solution.classes[1].is_mirrored(),
        "9x6: the a2 class is derived by the mirror"
    );
    let starts = c.variant.class_hashes(c.variant.start());
    let solver_start: Vec<Expected> = starts
        .iter()
        .enumerate()
        .map(|(k, &h)| answer(c.solution.cell(k, h)))
        .collect();
    let reference_start: Vec<Expected> = starts
        .iter()
        .enumerate()
        .map(|(k, &h)| c.expected[k][h as usize])
        .collect();
    assert_eq!(solver_start, reference_start, "9x6: start remoteness per class");
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
    database_in_agrees(name, test, None, hashes);
}

/// [`database_agrees`], the database written in `layout` (or the one that
/// suits the variant).
fn database_in_agrees(
    name: &str,
    test: &str,
    layout: Option<storage::Layout>,
    hashes: impl Fn(&Checked, usize) -> Vec<u64>,
) {
    let c = checked(name);
    let dir = scratch(test);
    let path = match layout {
        Some(layout) => storage::write_with(&dir, &c.variant, &c.solution, layout),
        None => storage::write(&dir, &c.variant, &c.solution),
    }
    .unwrap_or_else(|e| panic!("write {name}: {e}"));
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
        .map(|(k, &h)| c.solution.cell(k, h).remoteness())
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

/// The compressed layout answers every hash as the reference does.
#[test]
fn compressed_databases_match_reference() {
    for name in ["5x4", "7x4", "5x4-full"] {
        database_in_agrees(
            name,
            &format!("frames-{name}"),
            Some(storage::Layout::Frames),
            every_hash,
        );
    }
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
    for layout in [None, Some(storage::Layout::Frames)] {
        database_in_agrees(
            "7x6",
            &format!("seven_by_six_database-{layout:?}"),
            layout,
            seven_by_six_sample,
        );
    }
}

/// Most hashes of 7x6 are illegal, so half the sample is drawn from all
/// hashes and half from the legal ones, plus both ends, the start and the
/// goal.
fn seven_by_six_sample(c: &Checked, k: usize) -> Vec<u64> {
    {
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
    }
}

/// Solves `name` by the tight and the dense search: each class must get
/// identical cells and statistics (and be mirrored, or not, alike).
fn tight_and_dense_agree(name: &str) {
    let variant = Variant::named(name).unwrap_or_else(|e| panic!("variant {name}: {e}"));
    let solve = |method| {
        Plan::new(&variant, method)
            .solve(&mut |_| {})
            .unwrap_or_else(|e| panic!("{name} by {method:?}: {e}"))
    };
    let (tight, dense) = std::thread::scope(|s| {
        let dense = s.spawn(|| solve(Method::Dense));
        let tight = solve(Method::Tight);
        (tight, dense.join().expect("dense solve"))
    });
    assert_eq!(tight.classes.len(), variant.classes().len(), "{name}: tight classes");
    assert_eq!(dense.classes.len(), variant.classes().len(), "{name}: dense classes");
    for (k, (t, d)) in tight.classes.iter().zip(&dense.classes).enumerate() {
        assert_eq!(t.class, d.class, "{name} class {k}");
        assert_eq!(t.is_mirrored(), d.is_mirrored(), "{name} class {k}: mirrored");
        assert_same_table(
            &format!("{name} class {k}, tight against dense"),
            (&tight, k),
            (&dense, k),
        );
        assert!(
            t.stats.legal > 0 && t.stats.reachable > 0,
            "{name} class {k}: an empty table"
        );
    }
}

#[test]
fn tight_and_dense_agree_on_small_variants() {
    for name in ["5x4", "7x4", "7x6", "5x4-full", "7x5-full", "8x4-full"] {
        tight_and_dense_agree(name);
    }
}

#[test]
fn tight_and_dense_agree_on_nine_by_six() {
    tight_and_dense_agree("9x6");
}
