//! Solves one variant in memory by the byte search or the two-bit search and
//! prints what it found, with no database: for timing one search against the
//! other in the same process shape.
//!
//! ```sh
//! cargo run --release --example search -- 9x8 bytes
//! cargo run --release --example search -- 9x8 twobit
//! cargo run --release --example search -- 11x10-full plan
//! ```
//!
//! `plan` builds the tight indices and prints the memory both searches
//! would need, without searching. `wide` after `bytes` or `twobit` runs
//! the search in 128-bit words, as a board past 64 squares a class does,
//! on a board 64-bit words would hold ([`Variant::widened`]): what the
//! wider words cost, with the board and its table the same.
//!
//! ```sh
//! cargo run --release --example search -- 11x8 twobit wide
//! ```

use bishops::checkpoint::CheckpointOptions;
use bishops::pipeline::{SolveOptions, SolvePlan};
use bishops::solver::{Method, Plan};
use bishops::{Variant, Width};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (name, search, wide) = match args.as_slice() {
        [name, search] if ["bytes", "twobit", "plan"].contains(&search.as_str()) => (name, search.as_str(), false),
        [name, search, wide] if ["bytes", "twobit"].contains(&search.as_str()) && wide == "wide" => {
            (name, search.as_str(), true)
        }
        _ => {
            eprintln!("usage: search VARIANT bytes|twobit|plan, or search VARIANT bytes|twobit wide");
            std::process::exit(2);
        }
    };
    let variant = Variant::named(name).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    if search == "plan" {
        if variant.is_wide() {
            plan_in::<u128>(&variant, name);
        } else {
            plan_in::<u64>(&variant, name);
        }
        return;
    }
    if wide {
        search_in::<u128>(&variant.widened(), name, search);
    } else if variant.is_wide() {
        search_in::<u128>(&variant, name, search);
    } else {
        search_in::<u64>(&variant, name, search);
    }
}

/// Solves `variant` by `search` in words `W` and prints what it found.
fn search_in<W: Width>(variant: &Variant, name: &str, search: &str) {
    let plan = Plan::<W>::in_words(variant, Method::Tight);
    let need = if search == "bytes" {
        plan.memory_bytes()
    } else {
        plan.two_bit_memory_bytes()
    };
    eprintln!(
        "{name}: {search} search, planned memory {:.1} MiB",
        need as f64 / f64::from(1 << 20)
    );
    let (stats, start, elapsed) = if search == "bytes" {
        let solution = plan.solve(&mut |_| {}).expect("solve");
        let start: u16 = variant
            .class_hashes(variant.start())
            .iter()
            .enumerate()
            .map(|(k, &h)| solution.cell(k, h).remoteness().expect("the start reaches the goal").0)
            .sum();
        let stats: Vec<_> = solution.classes.into_iter().map(|c| c.stats).collect();
        (stats, start, solution.elapsed)
    } else {
        let solution = plan.solve_two_bit(&mut |_| {}).expect("solve");
        let start: u16 = variant
            .specs::<W>()
            .iter()
            .enumerate()
            .map(|(k, spec)| {
                solution
                    .descend(k, spec, spec.start)
                    .expect("the two-bit table descends")
                    .expect("the start reaches the goal")
                    .remoteness
                    .0
            })
            .sum();
        let stats: Vec<_> = solution.classes.into_iter().map(|c| c.stats).collect();
        (stats, start, solution.elapsed)
    };
    let largest: u16 = stats.iter().filter_map(|s| s.max_remoteness()).map(|r| r.0).sum();
    println!(
        "{name}: {search} solved in {:.3} s, start remoteness {start}, largest {largest}, reachable {:?}, hardest {:?}",
        elapsed.as_secs_f64(),
        stats.iter().map(|s| s.reachable).collect::<Vec<_>>(),
        stats.iter().map(|s| s.hardest.first().copied()).collect::<Vec<_>>(),
    );
}

/// Prints the memory each search of `variant` would need, in words `W`.
fn plan_in<W: Width>(variant: &Variant, name: &str) {
    let plan = Plan::<W>::in_words(variant, Method::Tight);
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    let mirrored: Vec<bool> = (0..plan.legal().len()).map(|k| plan.is_mirrored(k)).collect();
    println!(
        "{name}: legal {:?}, mirrored {mirrored:?}; byte search {:.1} MiB, two-bit search {:.1} MiB",
        plan.legal(),
        mib(plan.memory_bytes()),
        mib(plan.two_bit_memory_bytes()),
    );
    // The two-bit figure in parts: the tables of the searched classes,
    // the summary byte and canonical flag per white set, the index.
    let tables: u64 = (plan.legal().iter().zip(&mirrored))
        .filter(|(_, m)| !**m)
        .map(|(&n, _)| n.div_ceil(32) * 8)
        .sum();
    let summaries = (plan.white_sets().iter().zip(&mirrored))
        .filter(|(_, m)| !**m)
        .map(|(&w, _)| 2 * w)
        .max()
        .unwrap_or(0);
    println!(
        "  two-bit: tables {:.1} MiB, summaries {:.1} MiB, index tables {:.1} MiB",
        mib(tables),
        mib(summaries),
        mib(plan.two_bit_memory_bytes() - tables - summaries)
    );
    let options = SolveOptions {
        method: Some(Method::TwoBit),
        checkpoints: Some(CheckpointOptions::default()),
        max_memory: Some(u64::MAX),
        ..SolveOptions::default()
    };
    match SolvePlan::new(variant, options) {
        Ok(solve) => println!(
            "  two-bit solve with checkpoints: {:.1} MiB of disk (the database and two checkpoints)",
            mib(solve.disk_bytes())
        ),
        Err(e) => println!("  two-bit solve: {e}"),
    }
}
