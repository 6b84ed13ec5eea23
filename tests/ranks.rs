//! How the search ranks black sets, by `pext` or by per-block tables, is
//! the processor's choice (`pext` is microcoded on AMD's processors before
//! Zen 3) or `BISHOPS_RANKS`'s: either way a solve writes the same
//! database, in 64-bit and in 128-bit words, by either search. Anything
//! but `pext` or `tables` is refused before a file is made.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{scratch, succeeded};

const BIN: &str = env!("CARGO_BIN_EXE_bishops");

/// Two bishops a side on the a1 squares of 13x10: 65 squares a class, so
/// 128-bit words, and a search of a second.
const WIDE: &str =
    r#"{"name": "13x10-two", "description": "two a side on the a1 squares of 13x10", "start": "13_10_a1-a3_m1-m3"}"#;

/// `bishops --db DIR`, with `--variant-file` for [`WIDE`], written into
/// `DIR` (a scratch directory, removed with it).
fn bishops(dir: &Path, name: &str) -> Command {
    let mut command = Command::new(BIN);
    command.arg("--db").arg(dir);
    if name == "13x10-two" {
        let file = dir.join("13x10-two.json");
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(&file, WIDE).unwrap();
        command.arg("--variant-file").arg(file);
    }
    command
}

/// `bishops --db DIR [--variant-file V] solve NAME --method METHOD
/// [EXTRA]`, with `BISHOPS_RANKS` set to `ranks`.
fn solve(dir: &Path, name: &str, method: &str, ranks: &str, extra: &[&str]) -> Output {
    bishops(dir, name)
        .args(["solve", name, "--method", method])
        .args(extra)
        .env("BISHOPS_RANKS", ranks)
        .output()
        .unwrap()
}

/// The bytes of `name`'s export from `dir`.
fn export(dir: &Path, name: &str) -> Vec<u8> {
    succeeded(bishops(dir, name).args(["export", name]).output().unwrap(), "export").stdout
}

#[test]
fn pext_and_tables_rank_to_the_same_database() {
    let has_pext = has_pext();
    for (name, method) in [("9x6", "tight"), ("9x6", "two-bit"), ("13x10-two", "two-bit")] {
        let by_tables = scratch("ranks", &format!("{name}-{method}-tables"));
        let said =
            String::from_utf8(succeeded(solve(&by_tables, name, method, "tables", &[]), "by tables").stderr).unwrap();
        let by_pext = scratch("ranks", &format!("{name}-{method}-pext"));
        let out = solve(&by_pext, name, method, "pext", &[]);
        if !has_pext {
            // Refused in one line, before any file is made.
            assert_eq!(out.status.code(), Some(2));
            let err = String::from_utf8(out.stderr).unwrap();
            assert!(
                err.ends_with("bishops: error: BISHOPS_RANKS=pext, but this processor has no BMI2 and POPCNT\n"),
                "{err}"
            );
            assert!(!by_pext.join(format!("{name}.sqlite")).exists());
            continue;
        }
        assert!(
            !said.contains("ranks black sets"),
            "a short search's lines are the same everywhere: {said}"
        );
        succeeded(out, "by pext");
        assert!(
            export(&by_tables, name) == export(&by_pext, name),
            "{name} by {method}: the same export"
        );
    }
}

/// A search on disk says how it ranks when it does not use the
/// processor's `pext`.
#[test]
fn a_search_on_disk_says_it_ranks_by_tables() {
    let dir = scratch("ranks", "on-disk");
    let out = solve(&dir, "9x8", "two-bit", "tables", &["--max-memory", "3"]);
    let said = String::from_utf8(succeeded(out, "on disk, by tables").stderr).unwrap();
    let says = "bishops: its search ranks black sets by tables, not pext, as BISHOPS_RANKS asks\n";
    let has_pext = has_pext();
    assert_eq!(said.contains(says), has_pext, "{said}");
}

#[cfg(target_arch = "x86_64")]
fn has_pext() -> bool {
    std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("popcnt")
}

#[cfg(not(target_arch = "x86_64"))]
fn has_pext() -> bool {
    false
}

#[test]
fn a_ranking_not_known_is_refused_before_any_file_is_made() {
    let dir = scratch("ranks", "unknown");
    let out = solve(&dir, "7x6", "tight", "fast", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.ends_with("bishops: error: BISHOPS_RANKS=fast is not pext or tables\n"),
        "{err}"
    );
    assert!(!dir.join("7x6.sqlite").exists());
}
