//! Times what a solve's check of its own table costs ([`Database::audit`])
//! on a database already solved: the goal, the start, the hardest positions
//! and `storage::AUDIT_SAMPLES` random positions a class, each confirmed by
//! the rules with its neighbours. Also times the confirmed `probe` of the
//! start, as `query` does it, cold and warm, and the disk a solve announces
//! for the database against the file.
//!
//! [`Database::audit`]: bishops::storage::Database::audit
//!
//! ```sh
//! cargo run --release --example audit -- db 11x10
//! ```

use std::path::PathBuf;
use std::time::Instant;

use bishops::pipeline::{SolveOptions, SolvePlan};
use bishops::solver::Method;
use bishops::storage::{Database, Layout};
use bishops::{Tablebase, Variant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, name] = args.as_slice() else {
        eprintln!("usage: audit DB_DIR VARIANT");
        std::process::exit(2);
    };
    let run = || -> bishops::Result<()> {
        let variant = Variant::named(name)?;
        let dir = PathBuf::from(dir);
        let opened = Instant::now();
        let database = Database::open(&dir, &variant)?;
        let open_seconds = opened.elapsed().as_secs_f64();
        let began = Instant::now();
        let checked = database.audit(&variant, bishops::storage::AUDIT_SAMPLES, 2026)?;
        let audit_seconds = began.elapsed().as_secs_f64();
        println!(
            "{name}: opened in {open_seconds:.3} s; checked {checked} positions by the rules in {audit_seconds:.3} s"
        );
        // The disk a solve announces for the file, against the file.
        let method = match database.layout() {
            Layout::Residues => Method::TwoBit,
            _ => Method::Tight,
        };
        let options = SolveOptions {
            method: Some(method),
            layout: Some(database.layout()),
            ..SolveOptions::default()
        };
        let estimate = SolvePlan::new(&variant, options)?.database_bytes();
        let real = std::fs::metadata(database.path())
            .map_err(|e| bishops::Error::Io(database.path().into(), e))?
            .len();
        println!(
            "{name}: the file takes {real} bytes; a solve announces {estimate} ({:.3} times)",
            estimate as f64 / real as f64
        );
        let start = variant.start().clone();
        let table = Tablebase::new(&dir).table(&start, None)?;
        for round in ["cold", "warm", "warm"] {
            let began = Instant::now();
            let probe = table.probe(&start)?;
            println!(
                "{name}: probe of the start ({round}): remoteness {:?}, {} moves, {:.2} ms",
                probe.remoteness.map(|r| r.0),
                probe.moves.len(),
                began.elapsed().as_secs_f64() * 1e3
            );
        }
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
