//! Exact remoteness from residues ([`exact`]) against the byte search, and
//! the checks of two-bit tables ([`check::check_residues`],
//! [`check::sample_residues`]) on correct and damaged tables.

use std::time::Instant;

use bishops::check;
use bishops::mod3::Mod3Table;
use bishops::mod3::exact::{self, DescentError};
use bishops::solver::{ClassStats, ClassTable, Method, Plan, Solution, TwoBitSolution};
use bishops::{Cell, ClassSpec, Part, Position, TightIndex, Variant};

/// The variant solved both ways.
fn both(name: &str) -> (Variant, Solution, TwoBitSolution) {
    let variant = Variant::named(name).unwrap_or_else(|e| panic!("variant {name}: {e}"));
    let bytes = Plan::new(&variant, Method::Tight).solve(&mut |_| {}).unwrap();
    let two = Plan::new(&variant, Method::Tight).solve_two_bit(&mut |_| {}).unwrap();
    (variant, bytes, two)
}

/// The searched classes of a two-bit solution: (class number, spec, index,
/// residues, stats).
fn searched<'a>(
    variant: &'a Variant,
    two: &'a TwoBitSolution,
) -> impl Iterator<Item = (usize, &'a ClassSpec, &'a TightIndex, &'a Mod3Table, &'a ClassStats)> {
    variant
        .classes()
        .iter()
        .zip(&two.classes)
        .enumerate()
        .filter_map(|(k, (spec, t))| match &t.table {
            ClassTable::Own(table) => Some((k, spec, &t.index, table, &t.stats)),
            ClassTable::Mirrored { .. } => None,
        })
}

fn resolve_matches(name: &str) {
    let (variant, bytes, two) = both(name);
    let mut classes = 0;
    for (k, spec, index, table, stats) in searched(&variant, &two) {
        let started = Instant::now();
        let cells = exact::resolve(spec, index, table, stats.max_remoteness()).unwrap();
        eprintln!(
            "{name} class {k}: resolved {} positions in {:?}",
            index.len(),
            started.elapsed()
        );
        assert!(cells == *bytes.class_cells(k), "{name} class {k}: resolved table");
        classes += 1;
    }
    assert!(classes > 0, "{name}: no searched class");
}

#[test]
fn resolve_equals_byte_search_small() {
    for name in ["5x4", "7x4", "5x4-full", "7x6"] {
        resolve_matches(name);
    }
}

#[test]
fn resolve_equals_byte_search_9x6() {
    resolve_matches("9x6");
    resolve_matches("9x6-a2");
}

#[test]
fn descent_agrees_with_bytes_on_every_position_of_7x6() {
    let (variant, bytes, two) = both("7x6");
    for (k, spec, index, table, _) in searched(&variant, &two) {
        let cells = bytes.class_cells(k);
        let residue = |p: Part| index.rank(p).and_then(|i| table.get(i));
        for i in 0..index.len() {
            let part = index.unrank(i);
            let exact = Cell(cells[i as usize]).remoteness();
            let descent = exact::descend(&spec.geometry, spec.goal, part, 253, residue).unwrap();
            assert_eq!(descent.map(|d| d.remoteness), exact, "class {k} index {i}");
            if let Some(best) = descent.and_then(|d| d.best) {
                let after = Cell(cells[index.rank(best).unwrap() as usize]).remoteness();
                assert_eq!(after.map(|r| r.0 + 1), exact.map(|r| r.0), "best move of {i}");
            }
        }
    }
}

#[test]
fn checks_pass_on_correct_tables() {
    for name in ["5x4", "7x4", "5x4-full", "7x6"] {
        let (variant, _, two) = both(name);
        for (k, spec, index, table, stats) in searched(&variant, &two) {
            let mut done = Vec::new();
            let full = check::check_residues(spec, index, table, stats.max_remoteness(), stats, &mut |n| done.push(n))
                .unwrap_or_else(|e| panic!("{name} class {k}: {e}"));
            assert_eq!(full.checked, index.len());
            assert!(done.windows(2).all(|w| w[0] < w[1]), "{name} class {k}: {done:?}");
            assert_eq!(done.last(), Some(&index.len()));
            assert_eq!(full.histogram, stats.histogram);
            let mut counts = Vec::new();
            let sample = check::sample_residues(spec, index, table, stats.max_remoteness(), (k, 5_000, 7), &mut |n| {
                counts.push(n);
            })
            .unwrap_or_else(|e| panic!("{name} class {k}: {e}"));
            assert_eq!(sample.checked, 5_000.min(index.len()));
            // Progress rises to every sample.
            assert!(counts.windows(2).all(|w| w[0] < w[1]), "{name} class {k}: {counts:?}");
            assert_eq!(counts.last(), Some(&sample.checked), "{name} class {k}");
        }
    }
}

/// A class stored as the mirror image of another is sampled through the
/// other's residues: it passes on a correct table, every position drawn
/// once, and a damaged source fails it, naming a position.
#[test]
fn a_mirrored_class_is_sampled_through_its_source() {
    for name in ["5x4-full", "9x6"] {
        let (variant, _, two) = both(name);
        let specs = variant.classes();
        let (k, from, mirror) = two
            .classes
            .iter()
            .enumerate()
            .find_map(|(k, c)| match &c.table {
                ClassTable::Mirrored { from, mirror } => Some((k, *from, mirror.clone())),
                ClassTable::Own(_) => None,
            })
            .unwrap_or_else(|| panic!("{name}: no mirrored class"));
        let ClassTable::Own(table) = &two.classes[from].table else {
            panic!("{name}: the source is searched");
        };
        let (index, source_index) = (&two.classes[k].index, &two.classes[from].index);
        let max = two.classes[k].stats.max_remoteness();
        let sample = |table: &Mod3Table, n: u64| {
            check::sample_mirrored_residues(
                (&specs[k], index),
                &mirror,
                (&specs[from], source_index, table),
                max,
                (k, n, 5),
                &mut |_| {},
            )
        };
        let every = sample(table, u64::MAX).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((every.class, every.checked), (specs[k].class.index(), index.len()));
        // The image of the mirrored class's start is the source's start; a
        // source whose start claims another residue fails the check.
        let start = source_index.rank(mirror.part(specs[k].start)).unwrap();
        let mut bad = table.clone();
        bad.set(start, bad.get(start).map(|r| (r + 1) % 3));
        let names = names(&specs[from], source_index);
        names_a_position(&sample(&bad, u64::MAX).unwrap_err(), &names, name);
    }
}

/// Every position string of a class, to find the one a message names.
fn names(spec: &ClassSpec, index: &TightIndex) -> Vec<String> {
    (0..index.len())
        .map(|i| Position::from_parts(spec.geometry.board(), &[(&spec.geometry, index.unrank(i))]).to_string())
        .collect()
}

/// Asserts that `message` is one line naming a position of the class.
fn names_a_position(message: &str, names: &[String], what: &str) {
    assert!(!message.contains('\n'), "{what}: {message}");
    assert!(
        names.iter().any(|n| message.contains(n.as_str())),
        "{what}: names no position: {message}"
    );
}

/// Every single damage of a table: each reachable residue changed to each
/// other value and to unreachable.
fn damages(table: &Mod3Table) -> Vec<(u64, Option<u8>)> {
    let mut all = Vec::new();
    for i in 0..table.len() {
        if let Some(r) = table.get(i) {
            all.push((i, Some((r + 1) % 3)));
            all.push((i, Some((r + 2) % 3)));
            all.push((i, None));
        }
    }
    all
}

fn refuses_every_damage(name: &str, sample: bool) {
    let (variant, _, two) = both(name);
    for (k, spec, index, table, stats) in searched(&variant, &two) {
        let names = names(spec, index);
        let max = stats.max_remoteness();
        let residue_of = |t: &Mod3Table, p: Part| index.rank(p).and_then(|i| t.get(i));
        for (i, damage) in damages(table) {
            let what = format!("{name} class {k}: index {i} set to {damage:?}");
            let mut bad = table.clone();
            bad.set(i, damage);
            // Descents end, with an answer or an error, but never a panic.
            for j in (0..index.len()).step_by(7) {
                let _ = exact::descend(&spec.geometry, spec.goal, index.unrank(j), 253, |p| residue_of(&bad, p));
            }
            let full = check::check_residues(spec, index, &bad, max, stats, &mut |_| {});
            names_a_position(&full.expect_err(&what), &names, &what);
            if sample {
                let drawn = check::sample_residues(spec, index, &bad, max, (k, index.len(), 11), &mut |_| {});
                names_a_position(&drawn.expect_err(&what), &names, &what);
            }
        }
    }
}

#[test]
fn every_damage_is_refused_5x4() {
    refuses_every_damage("5x4", true);
    refuses_every_damage("5x4-full", true);
}

#[test]
fn every_damage_is_refused_7x4() {
    refuses_every_damage("7x4", false);
}

/// Three mutually adjacent positions, none of them or their neighbours the
/// goal.
fn triangle(spec: &ClassSpec, index: &TightIndex) -> [Part; 3] {
    let geo = &spec.geometry;
    let moves = |p: Part| {
        let mut all = Vec::new();
        p.for_each_move(geo, |_, _, _, after| all.push(after));
        all
    };
    for i in 0..index.len() {
        let a = index.unrank(i);
        for b in moves(a) {
            for c in moves(b) {
                if c != a
                    && moves(c).contains(&a)
                    && [a, b, c]
                        .iter()
                        .all(|&p| p != spec.goal && !moves(p).contains(&spec.goal))
                {
                    return [a, b, c];
                }
            }
        }
    }
    panic!("no triangle");
}

#[test]
fn a_cycle_is_refused_not_looped_on() {
    let (variant, _, two) = both("7x6");
    let (k, spec, index, table, stats) = searched(&variant, &two).next().unwrap();
    let [a, b, c] = triangle(spec, index);
    let mut bad = table.clone();
    // Everything around the triangle unreachable, so each of its positions
    // has exactly one neighbour "closer": the next one round.
    for p in [a, b, c] {
        p.for_each_move(&spec.geometry, |_, _, _, q| bad.set(index.rank(q).unwrap(), None));
    }
    for (p, r) in [(a, 0), (b, 2), (c, 1)] {
        bad.set(index.rank(p).unwrap(), Some(r));
    }
    let residue = |p: Part| index.rank(p).and_then(|i| bad.get(i));
    let err = exact::descend(&spec.geometry, spec.goal, a, 253, residue).unwrap_err();
    assert!(matches!(err, DescentError::TooLong { max_steps: 253, .. }), "{err}");
    let names = names(spec, index);
    names_a_position(&err.to_string(), &names, "descend");
    let resolved = exact::resolve(spec, index, &bad, stats.max_remoteness());
    names_a_position(&resolved.unwrap_err().to_string(), &names, "resolve");
    let full = check::check_residues(spec, index, &bad, stats.max_remoteness(), stats, &mut |_| {});
    names_a_position(&full.unwrap_err(), &names, "full check");
    let drawn = check::sample_residues(
        spec,
        index,
        &bad,
        stats.max_remoteness(),
        (k, index.len(), 3),
        &mut |_| {},
    );
    names_a_position(&drawn.unwrap_err(), &names, "sample check");
}

#[test]
fn a_bad_goal_is_refused() {
    let (variant, _, two) = both("7x4");
    let (_, spec, index, table, stats) = searched(&variant, &two).next().unwrap();
    let g = index.rank(spec.goal).unwrap();
    for damage in [Some(1), Some(2), None] {
        let mut bad = table.clone();
        bad.set(g, damage);
        let err = exact::resolve(spec, index, &bad, stats.max_remoteness()).unwrap_err();
        assert!(err.to_string().contains("the goal"), "{err}");
        let residue = |p: Part| index.rank(p).and_then(|i| bad.get(i));
        let err = exact::descend(&spec.geometry, spec.goal, spec.goal, 253, residue).unwrap_err();
        assert!(matches!(err, DescentError::Goal { .. }), "{err}");
        // From elsewhere: refused too, whichever error it meets first.
        assert!(exact::descend(&spec.geometry, spec.goal, spec.start, 253, residue).is_err());
    }
    // A table of the wrong length is refused too.
    let short = Mod3Table::new(index.len() - 1);
    assert!(exact::resolve(spec, index, &short, None).is_err());
}

#[test]
fn a_value_above_the_stored_largest_is_refused() {
    let (variant, _, two) = both("7x4");
    let (_, spec, index, table, stats) = searched(&variant, &two).next().unwrap();
    let top = stats.max_remoteness().unwrap();
    let err = exact::resolve(spec, index, table, Some(bishops::Remoteness(top.0 - 1))).unwrap_err();
    assert!(err.to_string().contains("above the largest"), "{err}");
}

/// The figures of the report: resolve and sample check on a bigger board.
/// `BISHOPS_MEASURE=11x8 BISHOPS_SAMPLES=100000 cargo test --release --test exact -- --ignored --nocapture`
/// The searched table is kept in the target's temporary directory, so a
/// second run skips the solve.
#[test]
#[ignore = "a measurement: minutes"]
fn measure() {
    let name = std::env::var("BISHOPS_MEASURE").unwrap_or_else(|_| "9x8".into());
    let samples: u64 = std::env::var("BISHOPS_SAMPLES").map_or(100_000, |s| s.parse().unwrap());
    let variant = Variant::named(&name).unwrap();
    let spec = &variant.classes()[0];
    let index = spec.tight_index();
    let cache = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("measure-{name}.m3"));
    let (table, stats) = match std::fs::read(&cache) {
        Ok(bytes) => {
            let stats = ClassStats {
                legal: index.len(),
                reachable: 0,
                histogram: Vec::new(),
                hardest: Vec::new(),
            };
            let max = u16::from_le_bytes([bytes[0], bytes[1]]);
            let table = Mod3Table::from_bytes(&bytes[2..], index.len()).unwrap();
            (table, (stats, Some(bishops::Remoteness(max))))
        }
        Err(_) => {
            let started = Instant::now();
            let two = Plan::new(&variant, Method::Tight).solve_two_bit(&mut |_| {}).unwrap();
            eprintln!("{name}: two-bit solve {:?}", started.elapsed());
            let (_, _, _, table, stats) = searched(&variant, &two).next().unwrap();
            let max = stats.max_remoteness().unwrap().0;
            let mut bytes = max.to_le_bytes().to_vec();
            bytes.extend(table.bytes());
            std::fs::write(&cache, bytes).unwrap();
            (table.clone(), (stats.clone(), stats.max_remoteness()))
        }
    };
    let (stats, max) = stats;
    let started = Instant::now();
    let drawn = check::sample_residues(spec, &index, &table, max, (0, samples, 1), &mut |_| {}).unwrap();
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "{name} class 0: sample check of {} positions in {seconds:.2} s: {:.0} samples/s",
        drawn.checked,
        drawn.checked as f64 / seconds
    );
    let started = Instant::now();
    let cells = exact::resolve(spec, &index, &table, max).unwrap();
    eprintln!(
        "{name} class 0: resolve of {} positions in {:?}",
        index.len(),
        started.elapsed()
    );
    if !stats.histogram.is_empty() && std::env::var("BISHOPS_FULL").is_ok() {
        let started = Instant::now();
        let full = check::check_cells(spec, &index, &cells, &stats, &mut |_| {}).unwrap();
        eprintln!(
            "{name} class 0: byte check of the resolved table ({} positions) in {:?}",
            full.checked,
            started.elapsed()
        );
    }
}
