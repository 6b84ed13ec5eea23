//! The known answers of DESIGN.md, kept in `tests/data/known_values.csv`,
//! checked against the solver.
//!
//! The file is `kind,subject,expected`, one answer a line, with `#` comments
//! and a header line; the kinds are listed at the top of the file. A row of
//! an unknown kind, or one that cannot be read, fails the test.

use std::collections::HashMap;

use bishops::solver::{self, Solution};
use bishops::{Position, Variant};

const KNOWN_VALUES: &str = include_str!("data/known_values.csv");
const HEADER: &str = "kind,subject,expected";

/// Solved variants, by name, so that each is solved once.
#[derive(Default)]
struct Solved(HashMap<String, (Variant, Solution)>);

impl Solved {
    fn get(&mut self, variant: Variant) -> Result<&(Variant, Solution), String> {
        let name = variant.name().to_owned();
        if !self.0.contains_key(&name) {
            let solution = solver::solve(&variant, &mut |_| {}).map_err(|e| format!("solving {name}: {e}"))?;
            self.0.insert(name.clone(), (variant, solution));
        }
        Ok(&self.0[&name])
    }

    fn named(&mut self, name: &str) -> Result<&(Variant, Solution), String> {
        let variant = Variant::named(name).map_err(|e| format!("variant `{name}`: {e}"))?;
        self.get(variant)
    }
}

/// The whole-board remoteness of `position` (the sum of its classes'), or
/// `None` when it cannot reach the goal.
fn remoteness(variant: &Variant, solution: &Solution, position: &Position) -> Result<Option<u64>, String> {
    let mut total = Some(0);
    for (k, hash) in variant.class_hashes(position).into_iter().enumerate() {
        let cell = solution.cell(k, hash);
        if !cell.is_legal() {
            return Err(format!("{position}: class {k} hash {hash} is illegal in the table"));
        }
        total = total.zip(cell.remoteness()).map(|(t, r)| t + u64::from(r.0));
    }
    Ok(total)
}

/// The one value that every class has, or an error when classes differ.
fn same_per_class<T: PartialEq + Copy + std::fmt::Debug>(values: Vec<T>, what: &str) -> Result<T, String> {
    match values.as_slice() {
        [first, rest @ ..] if rest.iter().all(|v| v == first) => Ok(*first),
        _ => Err(format!("{what} differs between classes: {values:?}")),
    }
}

fn number(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("expected value `{text}` is not a number"))
}

fn position(text: &str) -> Result<Position, String> {
    text.parse().map_err(|e| format!("{e}"))
}

/// Checks one data row against the solver.
fn check_row(solved: &mut Solved, row: &str) -> Result<(), String> {
    let fields: Vec<&str> = row.split(',').map(str::trim).collect();
    let [kind, subject, expected] = fields[..] else {
        return Err(format!("expected 3 fields, found {}", fields.len()));
    };
    let actual: String = match kind {
        "start_remoteness" => {
            let (variant, solution) = solved.named(subject)?;
            match remoteness(variant, solution, variant.start())? {
                Some(r) => r.to_string(),
                None => "unreachable".into(),
            }
        }
        "legal_positions" => {
            let (_, solution) = solved.named(subject)?;
            solution
                .classes
                .iter()
                .map(|c| c.stats.legal)
                .product::<u64>()
                .to_string()
        }
        "class_legal" => {
            let (_, solution) = solved.named(subject)?;
            same_per_class(solution.classes.iter().map(|c| c.stats.legal).collect(), "legal")?.to_string()
        }
        "all_reachable" => {
            let (_, solution) = solved.named(subject)?;
            solution
                .classes
                .iter()
                .all(|c| c.stats.legal > 0 && c.stats.reachable == c.stats.legal)
                .to_string()
        }
        "index_size" => {
            let variant = Variant::named(subject).map_err(|e| format!("variant `{subject}`: {e}"))?;
            same_per_class(variant.hash_sizes(), "R(n,w,b)")?.to_string()
        }
        "max_remoteness" => {
            let (_, solution) = solved.named(subject)?;
            let per_class: Option<Vec<u16>> = solution
                .classes
                .iter()
                .map(|c| c.stats.max_remoteness().map(|r| r.0))
                .collect();
            match per_class {
                Some(maxima) => maxima.iter().map(|&r| u64::from(r)).sum::<u64>().to_string(),
                None => "unreachable".into(),
            }
        }
        "remoteness" => {
            let position = position(subject)?;
            let variant = Variant::for_position(&position, None).map_err(|e| e.to_string())?;
            let (variant, solution) = solved.get(variant)?;
            match remoteness(variant, solution, &position)? {
                Some(r) => r.to_string(),
                None => "unreachable".into(),
            }
        }
        "move_count" => {
            let position = position(subject)?;
            Variant::for_position(&position, None).map_err(|e| e.to_string())?;
            position.moves().len().to_string()
        }
        _ => return Err(format!("unknown kind `{kind}`")),
    };
    // Numbers are compared as numbers, so `018` would not pass for `18` by accident.
    let matches = match (actual.parse::<u64>(), expected) {
        (Ok(a), _) => number(expected)? == a,
        (Err(_), "true" | "false" | "unreachable") => actual == expected,
        (Err(_), _) => false,
    };
    if matches {
        Ok(())
    } else {
        Err(format!("expected {expected}, the solver says {actual}"))
    }
}

/// The data rows of the file, with their line numbers.
fn rows(text: &str) -> Vec<(usize, &str)> {
    let mut rows: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'))
        .collect();
    assert_eq!(
        rows.first().map(|r| r.1),
        Some(HEADER),
        "the file starts with its header"
    );
    rows.remove(0);
    rows
}

#[test]
fn every_known_value_holds() {
    let rows = rows(KNOWN_VALUES);
    let mut solved = Solved::default();
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|&(line, row)| {
            check_row(&mut solved, row)
                .err()
                .map(|e| format!("line {line} `{row}`: {e}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} known values fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The file holds every kind, for every named variant.
    let kinds: Vec<&str> = rows
        .iter()
        .map(|(_, row)| row.split(',').next().unwrap_or(""))
        .collect();
    for kind in [
        "start_remoteness",
        "legal_positions",
        "class_legal",
        "all_reachable",
        "index_size",
        "max_remoteness",
        "remoteness",
        "move_count",
    ] {
        assert!(kinds.contains(&kind), "no `{kind}` row");
    }
    for name in ["5x4", "7x4", "7x6", "5x4-full"] {
        let prefix = format!("start_remoteness,{name},");
        assert!(
            rows.iter().any(|(_, row)| row.starts_with(&prefix)),
            "no start remoteness for {name}"
        );
    }
    assert!(rows.len() >= 25, "only {} rows", rows.len());
}

#[test]
fn bad_rows_fail() {
    let mut solved = Solved::default();
    for row in [
        "start_remotenes,5x4,18",
        "bogus,5x4,1",
        ",5x4,18",
        "start_remoteness,5x4",
        "start_remoteness,5x4,18,1",
        "start_remoteness,5x4,eighteen",
        "start_remoteness,5x4,17",
        "start_remoteness,nope,18",
        "remoteness,5_4_a1-b2_e1-e3,18",
        "remoteness,5_4_a1-c3_e1-e3,17",
        "move_count,5_4_a1-a3_e1-e3,5",
        "all_reachable,5x4,false",
        "all_reachable,5x4,yes",
        "index_size,5x4,1261",
    ] {
        assert!(check_row(&mut solved, row).is_err(), "`{row}` was accepted");
    }
    // The same rows with the right values pass, so the failures above are
    // about what was changed.
    for row in [
        "start_remoteness,5x4,18",
        "remoteness,5_4_a1-b2_e1-e3,17",
        "move_count,5_4_a1-a3_e1-e3,4",
        "all_reachable,5x4,true",
        "index_size,5x4,1260",
    ] {
        assert_eq!(check_row(&mut solved, row), Ok(()), "`{row}`");
    }
}

#[test]
fn a_file_without_its_header_is_refused() {
    let result = std::panic::catch_unwind(|| rows("start_remoteness,5x4,18\n"));
    assert!(result.is_err());
    assert_eq!(
        rows("# comment\n\nkind,subject,expected\nbogus,x,1\n"),
        vec![(4, "bogus,x,1")]
    );
}
