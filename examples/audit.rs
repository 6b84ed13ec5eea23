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
//! cargo run --release --example audit -- db 11x10 100   # no audit; 100 warm probes
//! ```

use std::path::PathBuf;
use std::time::Instant;

use bishops::pipeline::{SolveOptions, SolvePlan};
use bishops::solver::Method;
use bishops::storage::{Database, Layout};
use bishops::{Tablebase, Variant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, name, probes) = match args.as_slice() {
        [dir, name] => (dir, name, 2),
        [dir, name, probes] if probes.parse::<usize>().is_ok() => (dir, name, probes.parse().unwrap_or(2)),
        _ => {
            eprintln!("usage: audit DB_DIR VARIANT [WARM_PROBES]");
            std::process::exit(2);
        }
    };
    let run = || -> bishops::Result<()> {
        let variant = Variant::named(name)?;
        let dir = PathBuf::from(dir);
        let opened = Instant::now();
        let database = Database::open(&dir, &variant)?;
        let open_seconds = opened.elapsed().as_secs_f64();
        if probes == 2 {
            let began = Instant::now();
            let checked = database.audit(&variant, bishops::storage::AUDIT_SAMPLES, 2026)?;
            let audit_seconds = began.elapsed().as_secs_f64();
            println!(
                "{name}: opened in {open_seconds:.3} s; checked {checked} positions by the rules in {audit_seconds:.3} s"
            );
        }
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
        for round in std::iter::once("cold").chain(std::iter::repeat_n("warm", probes)) {
            let (began, cpu) = (Instant::now(), cpu_seconds());
            let probe = table.probe(&start)?;
            println!(
                "{name}: probe of the start ({round}): remoteness {:?}, {} moves, {:.2} ms ({:.2} ms of CPU)",
                probe.remoteness.map(|r| r.0),
                probe.moves.len(),
                began.elapsed().as_secs_f64() * 1e3,
                (cpu_seconds() - cpu) * 1e3
            );
        }
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

/// The CPU time this process has used, in seconds: what a probe costs
/// whatever else the machine is doing.
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}
