//! `solve` as one rank of an MPI job: `mpirun -np N bishops solve VARIANT`
//! (built with the cargo feature `mpi`).
//!
//! Every rank runs the same command. Rank 0 is the one that touches the
//! database directory: it takes the variant's write lock, decides whether
//! the variant needs solving (and tells the others), prints the plan and
//! the progress, and writes and reports the database. Each rank owns a
//! contiguous range of the blocks of each class and searches it
//! ([`SolvePlan::run_on`]), exchanging with the others through
//! [`MpiTransport`]. A panic or an error on any rank ends the whole job
//! (`MPI_Abort`) with the error and the rank's host on stderr, never a
//! hang, and so does a rank gone silent ([`Watch`]); nothing is
//! written unless every rank finished its search. Every rank saves its
//! share of the search at layer boundaries (every 10 minutes, as one
//! process does) into its own `--db`, and the same command run again with
//! the same number of ranks resumes from there.

use std::io::Write;
use std::path::Path;

use indicatif::ProgressBar;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::args::SolveArgs;
use super::solve::{LOG_LAYERS_FROM, SolveReport, chosen, lock, observer, options, print_json, trusted};
use crate::error::{Error, Result};
use crate::pipeline::SolveOptions;
use crate::pipeline::SolvePlan;
use crate::solver::mpi::{MpiTransport, abort_on_panic};
use crate::solver::search::Transport;
use crate::solver::watch::{Watch, silence};
use crate::storage::Database;
use crate::variant::{Variant, Width, by_width};

/// Whether this process was started by an MPI launcher (`mpirun`,
/// `mpiexec`, `srun`): Open MPI, MPICH and PMIx all say so in the
/// environment, before MPI is initialized.
pub fn launched() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// `bishops solve` on every rank of the job: see the module. Returns only
/// when every rank is done, or has stopped as asked ([`Error::Stopped`],
/// on every rank at once); an error on any rank aborts the job from here.
pub fn solve(db: &Path, args: SolveArgs, out: &mut dyn Write) -> Result<()> {
    let silence = silence()?;
    let Some((universe, threading)) = mpi::initialize_with_threading(mpi::Threading::Multiple) else {
        return Err(Error::Usage("MPI was initialized twice".into()));
    };
    abort_on_panic();
    // Open MPI's PMIx client leaves Nagle's algorithm on in its socket to
    // the launcher, which held each job's MPI_Finalize 40 ms here.
    crate::system::tcp_nodelay_all();
    let world = universe.world();
    // The watch needs MPI from two threads; without them, a silent rank
    // can hang the job.
    let watch = (threading == mpi::Threading::Multiple).then(|| Watch::start(&world, silence));
    let mut transport = MpiTransport::new(world);
    if watch.is_none() && transport.worker() == 0 {
        crate::text::say!(
            "bishops: this MPI library does not take calls from two threads, so no rank watches the others: a rank that stops answering hangs the job"
        );
    }
    let result = solve_ranks(db, &args, &mut transport, out);
    // Which rank this is, as every line of its ending names it.
    let (me, ranks) = (transport.worker(), transport.workers());
    let host = watch.as_ref().map_or(String::new(), |w| format!(" ({})", w.host(me)));
    match result {
        Ok(()) => {
            let traffic = transport.traffic();
            if traffic.exchanges > 0 {
                crate::text::say!(
                    "bishops: rank {me} of {ranks}{host}: {} exchanges with the others, {} sent, {:.2} s waiting in them",
                    traffic.exchanges,
                    crate::system::human_bytes(traffic.sent),
                    traffic.waited.as_secs_f64()
                );
            }
            if let Some(watch) = watch {
                watch.stop();
            }
            Ok(())
        }
        // Every rank stops at the same layer's end, once every share is
        // saved (whether to stop is decided together): not a failure, so
        // the job ends as a finished one does, and each rank says where it
        // stopped (exit status 3).
        Err(Error::Stopped(e)) => {
            if let Some(watch) = watch {
                watch.stop();
            }
            Err(Error::Stopped(format!("rank {me} of {ranks}{host}: {e}")))
        }
        Err(e) => {
            crate::text::say!("bishops: error on rank {me} of {ranks}{host}: {e}; ending the job");
            SimpleCommunicator::world().abort(e.exit_code())
        }
    }
}

/// The solves of `args`, this rank's part of each.
fn solve_ranks(db: &Path, args: &SolveArgs, transport: &mut MpiTransport, out: &mut dyn Write) -> Result<()> {
    let variants = chosen(args)?;
    let options = options(args)?;
    let lead = transport.worker() == 0;
    let mut reports = Vec::new();
    for variant in &variants {
        let report = match by_width!(variant, W => solve_share::<W>(db, variant, args, options, transport)) {
            Ok(report) => report,
            // As one process's solve does (`solve`).
            Err(Error::Stopped(stopped)) if lead && args.json => {
                print_json(out, &reports, Some(&stopped))?;
                return Err(Error::Stopped(stopped));
            }
            Err(e) => return Err(e),
        };
        if let Some(report) = report {
            if !args.json {
                report.print(out)?;
            }
            reports.push(report);
        }
    }
    if lead && args.json {
        print_json(out, &reports, None)?;
    }
    Ok(())
}

/// This rank's part of the solve of `variant`: rank 0 gets what it has.
fn solve_share<W: Width>(
    db: &Path,
    variant: &Variant,
    args: &SolveArgs,
    options: SolveOptions,
    transport: &mut MpiTransport,
) -> Result<Option<SolveReport>> {
    let lead = transport.worker() == 0;
    {
        let _lock = if lead { Some(lock(db, variant)?) } else { None };
        let existing = if lead && !args.force {
            trusted::<W>(db, variant)?
        } else {
            None
        };
        // Rank 0 tells the others whether there is anything to do.
        let decision = vec![vec![u8::from(existing.is_none())]; transport.workers()];
        let go = transport.all_to_all(if lead { decision } else { Vec::new() })?[0] == [1];
        let solved = if go {
            let plan = SolvePlan::new(variant, options)?.across_ranks();
            let log = lead && plan.legal().iter().sum::<u64>() >= LOG_LAYERS_FROM;
            if lead {
                crate::text::say!("bishops: {}", plan.summary(db));
                crate::text::say!(
                    "bishops: {} MPI ranks search it, each its share of every class's blocks; rank 0 writes the database",
                    transport.workers()
                );
            }
            // A line per layer on rank 0's stderr for a long solve: no
            // progress bar under a launcher.
            let bar = ProgressBar::hidden();
            // What each rank finds of its own checkpoints, every rank says.
            let (me, ranks) = (transport.worker(), transport.workers());
            let mut note = |text: &str| crate::text::say!("bishops: rank {me} of {ranks}: {text}");
            plan.run_on(db, transport, &mut observer(variant, &bar, log), &mut note)?
        } else {
            None
        };
        if !lead {
            return Ok(None);
        }
        let database = match existing {
            Some(database) => database,
            None => Database::<W>::open_in(db, variant)?,
        };
        Ok(Some(SolveReport::of(variant, &database, solved.as_ref())))
    }
}
