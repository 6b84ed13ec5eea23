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
        Command::Serve(args) => crate::server::run(db, (args.bind, args.port).into(), args.open),
    }
}

/// Sizes the global thread pool for a command that searches.
fn thread_pool(threads: Option<usize>) -> Result<()> {
    if let Some(threads) = threads {
        if threads == 0 {
            return Err(Error::Usage("--threads must be at least 1".into()));
        }
        // Fails only when the pool was already built, as in tests running
        // commands in one process; the first setting then stands.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global();
    }
    Ok(())
}
