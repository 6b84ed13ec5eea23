//! The `bishops` command line: one small module per command over the
//! library's [`Tablebase`] and [pipeline](crate::pipeline).
//!
//! | module | commands |
//! |---|---|
//! | `args` | the grammar: options, subcommands and their arguments |
//! | `output` | JSON documents, `-` for missing numbers, progress bars |
//! | `query` | `query`, `line` |
//! | `verify` | `verify` |
//! | `play` | `play` |
//! | `solve` | `solve`, `bench` |
//! | `export` | `export` |
//! | `reports` | `variants`, `stats` |
//! | `check` | `check` |
//!
//! Every command writes its answer to the writer it is given (stdout in the
//! binary), as text or as one JSON document, and its progress and notes to
//! stderr, so that `--json` output is never polluted.

use std::io::{BufRead, Write};

mod args;
mod check;
mod export;
mod output;
mod play;
mod query;
mod reports;
mod solve;
mod verify;

pub use args::*;
pub use solve::BENCH_VARIANTS;

use crate::error::{Error, Result};
use crate::tablebase::Tablebase;

/// Runs a parsed command line, reading commands or moves from `input` (for
/// `play` and `verify -`) and writing answers to `out`.
///
/// # Errors
///
/// Whatever the command ran into; [`Error::exit_code`] gives the exit status.
pub fn run(cli: Cli, input: &mut dyn BufRead, out: &mut dyn Write) -> Result<()> {
    let db = cli.db.as_path();
    check_threads(cli.threads)?;
    crate::storage::check_dir(db)?;
    let tablebase = || Tablebase::new(db).with_notes(|note| eprintln!("bishops: {note}"));
    match cli.command {
        Command::Solve(args) => {
            thread_pool(cli.threads)?;
            solve::solve(db, args, out)
        }
        Command::Bench(args) => solve::bench(args, cli.threads, out),
        Command::Query(args) => query::query(&tablebase(), args, out),
        Command::Line(args) => query::line(&tablebase(), args, out),
        Command::Verify(args) => verify::verify(&tablebase(), args, input, out),
        Command::Play(args) => play::play(&tablebase(), args, input, out),
        Command::Export(args) => export::export(db, args, out),
        Command::Variants(args) => reports::variants(db, args.json, out),
        Command::Stats(args) => reports::stats(db, args, out),
        Command::Check(args) => {
            thread_pool(cli.threads)?;
            check::check(db, args, out)
        }
        Command::Serve(args) => {
            let mut options = crate::server::ServeOptions::default();
            options.on_demand.max_entries = args.on_demand_entries;
            options.on_demand.standard = Some(args.on_demand_standard);
            crate::server::run(db, (args.bind, args.port).into(), args.open, options)
        }
    }
}

/// The most threads `--threads` accepts: four per core, at most 1024. More
/// would only pile up threads that wait for a core.
pub fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.saturating_mul(4).min(1024)
}

/// Refuses a thread count of 0 or above [`max_threads`].
fn check_threads(threads: Option<usize>) -> Result<()> {
    match threads {
        Some(0) => Err(Error::Usage("--threads must be at least 1".into())),
        Some(n) if n > max_threads() => Err(Error::Usage(format!(
            "--threads {n} is more than this machine can use: at most {} (4 per core)",
            max_threads()
        ))),
        _ => Ok(()),
    }
}

/// Refuses the environment variables the command line reads when they are
/// set but empty, or not what they should be, naming the variable (clap
/// would blame the option instead).
///
/// # Errors
///
/// [`Error::Usage`] naming the variable.
pub fn check_environment() -> Result<()> {
    for (name, what) in [
        ("BISHOPS_DB", "a directory"),
        ("BISHOPS_THREADS", "a number of threads"),
    ] {
        let Some(value) = std::env::var_os(name) else {
            continue;
        };
        let value = value.to_string_lossy();
        if value.trim().is_empty() {
            return Err(Error::Usage(format!(
                "environment variable {name} is set but empty: unset it, or set it to {what}"
            )));
        }
        if name == "BISHOPS_THREADS" && value.trim().parse::<usize>().is_err() {
            return Err(Error::Usage(format!(
                "environment variable {name} is `{}`, not {what}",
                crate::text::clip(&value, 20)
            )));
        }
    }
    Ok(())
}

/// Sizes the global thread pool for a command that searches.
fn thread_pool(threads: Option<usize>) -> Result<()> {
    if let Some(threads) = threads {
        // Fails only when the pool was already built, as in tests running
        // commands in one process; the first setting then stands.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global();
    }
    Ok(())
}
