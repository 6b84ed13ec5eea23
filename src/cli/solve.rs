//! `solve` and `bench`: the solve pipeline with a progress bar, and timing
//! it in a fresh process.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use super::args::{BenchArgs, SolveArgs};
use super::output::{left, progress_bar, shown, stdout_error, write_json};
use crate::board::Class;
use crate::checkpoint::{self, CheckpointOptions};
use crate::cleanup::Pending;
use crate::error::{Error, Result};
use crate::estimate::Remaining;
use crate::pipeline::{LayerReport, SolveOptions, SolvePlan, Solved, TableOnDisk};
use crate::remoteness::Remoteness;
use crate::solver::{DiskStats, Event, Resumed};
use crate::storage::{Database, WriteLock};
use crate::system::human_bytes;
use crate::system::peak_memory;
use crate::variant::{Variant, Width, by_width};

/// The variants `bench` times unless told otherwise.
pub const BENCH_VARIANTS: [&str; 4] = ["7x6", "9x6", "9x8", "11x8"];

/// Solves of at least this many legal positions write a line per layer to
/// stderr when it is not a terminal (a log of a long run), where the
/// progress bar is not drawn.
pub(super) const LOG_LAYERS_FROM: u64 = 100_000_000;

/// The line a log of a solve with its table on disk gives a layer: what
/// it read and wrote.
fn disk_line(name: &str, class: Class, depth: u16, disk: &DiskStats) -> String {
    let drains = match disk.drains {
        0 => String::new(),
        n => format!(", claimed {n} times at its budget"),
    };
    let marks = match disk.marks {
        0 => String::new(),
        n => format!("; marked {n} times ({:.1} s)", disk.marked_ns as f64 / 1e9),
    };
    format!(
        "bishops: {name} {} layer {depth}: on disk, {} segments read and {} written ({}), \
         {:.1} s reading and writing, {} segments in on the memory of ones that left; \
         {} images spooled ({}{drains}){marks}",
        class.name(),
        disk.reads,
        disk.writes,
        human_bytes(disk.bytes),
        disk.waited_ns as f64 / 1e9,
        disk.moved,
        disk.spooled,
        human_bytes(disk.spool_bytes),
    )
}

/// The line a log of a solve gives as a class's write passes a tenth of
/// its white sets: how far, how long, and from there how long it has left.
fn writing_line(name: &str, class: Class, (from, done, total): (u64, u64, u64), elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64();
    let rest = match done < total {
        true => left(seconds * (total - done) as f64 / done.saturating_sub(from).max(1) as f64),
        false => String::new(),
    };
    format!(
        "bishops: {name} {}: written {done} of {total} white sets ({:.0}%), {seconds:.0} s{rest}",
        class.name(),
        100.0 * done as f64 / total.max(1) as f64,
    )
}

/// What a layer that took `elapsed` in this run would have taken whole:
/// a layer resumed past a mark ([`Resumed`]) worked only the white sets
/// after it here, and its time is scaled up by the share it worked, so
/// that the estimate of the time left is not reckoned from a fraction of
/// a layer (run 13 of 13x10 said 223 min where several sessions were left).
fn whole_layer_seconds(elapsed: Duration, resumed: Option<Resumed>) -> f64 {
    elapsed.as_secs_f64() / resumed.map_or(1.0, |r| r.left())
}

/// Shows a solve's layers on a progress bar, one bar per class, and when
/// `log` is set also as a line per layer: positions found, in all, and
/// (from a percent of the positions on) an estimate of the time the class
/// has left from what its layers have cost ([`Remaining`]).
pub(super) fn observer<'a>(variant: &Variant, bar: &'a ProgressBar, log: bool) -> impl FnMut(Event) + 'a {
    let name = variant.name().to_owned();
    let mut started = Instant::now();
    let mut last = Instant::now();
    let mut remaining = Remaining::new(0);
    // The tenth of a class's write last told, and the white set this run
    // of it began at (past 0 when it resumed).
    let (mut told, mut from) = (0, 0);
    move |event| {
        match event {
        Event::Counted { class, legal } => {
            bar.reset();
            bar.set_length(legal);
            bar.set_message(format!("{name} {}: counted", class.name()));
            started = Instant::now();
            last = Instant::now();
            remaining = Remaining::new(legal);
            if log {
                crate::text::say!("bishops: {name} {}: {legal} legal positions", class.name());
            }
        }
        Event::Layer {
            class,
            depth,
            found,
            total,
            legal,
            direction,
            resumed,
        } => {
            bar.set_position(total);
            bar.set_message(format!("{name} {} layer {depth}", class.name()));
            remaining.layer(found, total, whole_layer_seconds(last.elapsed(), resumed), direction);
            last = Instant::now();
            if log {
                let elapsed = started.elapsed().as_secs_f64();
                let before = resumed.map_or(String::new(), |r| {
                    format!(", {:.0}% of its white sets worked before this run", 100.0 * (1.0 - r.left()))
                });
                let left = match remaining.seconds() {
                    Some(seconds) if total.saturating_mul(100) >= legal => left(seconds),
                    _ => String::new(),
                };
                crate::text::say!(
                    "bishops: {name} {} layer {depth}: {found} found, {total} of {legal} ({:.2}%), {elapsed:.0} s{before}{left}",
                    class.name(),
                    100.0 * total as f64 / legal as f64,
                );
            }
        }
        Event::Exchanged {
            class,
            depth,
            bytes,
            most,
            busiest,
            mean_busy,
            moved,
        } => {
            if log {
                let moved = if moved > 0 {
                    format!("; {moved} positions changed rank before it")
                } else {
                    String::new()
                };
                crate::text::say!(
                    "bishops: {name} {} layer {depth}: the ranks sent {} (at most {} from one); \
                     the busiest worked {:.2} s, the mean {:.2} s{moved}",
                    class.name(),
                    human_bytes(bytes),
                    human_bytes(most),
                    busiest.as_secs_f64(),
                    mean_busy.as_secs_f64()
                );
            }
        }
        Event::OnDisk { class, depth, disk } => {
            if log {
                crate::text::say!("{}", disk_line(&name, class, depth, &disk));
            }
        }
        Event::Writing { class, done, total } => {
            if done == 0 {
                bar.reset();
                bar.set_length(total);
                bar.set_message(format!("{name} {}: writing", class.name()));
                (started, told, from) = (Instant::now(), 0, 0);
            }
            bar.set_position(done);
            let tenth = (done * 10).checked_div(total).unwrap_or(10);
            if log && tenth > told {
                told = tenth;
                crate::text::say!("{}", writing_line(&name, class, (from, done, total), started.elapsed()));
            }
        }
        Event::WriteResumed { class, from: at, total } => {
            bar.reset();
            bar.set_length(total);
            bar.set_position(at);
            bar.set_message(format!("{name} {}: writing", class.name()));
            (started, from) = (Instant::now(), at);
            told = (at * 10).checked_div(total).unwrap_or(10);
            bar.suspend(|| {
                crate::text::say!(
                    "bishops: {name} {}: the write stopped before goes on from white set {at} of {total}, what it wrote read back and checked against the table",
                    class.name()
                );
            });
        }
        Event::WriteDiscarded { class, at } => bar.suspend(|| {
            crate::text::say!(
                "bishops: {name} {}: what a stopped write left fails its checks from white set {at} on: written again from there",
                class.name()
            );
        }),
        Event::Mirrored { class, from } => {
            bar.set_message(format!("{name} {}: mirroring {}", class.name(), from.name()));
            if log {
                crate::text::say!("bishops: {name} {}: the mirror image of {}", class.name(), from.name());
            }
        }
    }
    }
}

/// The database of `variant` in `db` when it opens and passes every check,
/// its whole tables read; `None` when there is none or it cannot be
/// trusted (and says why on stderr), so that it is rebuilt. A checkpoint
/// left behind by a solve killed after its write is removed: the database
/// supersedes it.
///
/// # Errors
///
/// [`Error::DbPath`] when the database path holds what a write would
/// destroy; [`Error::TooLarge`] when no table numbers the variant's
/// classes ([`Variant::tables_fit`]).
pub(super) fn trusted<W: Width>(db: &Path, variant: &Variant) -> Result<Option<Database<W>>> {
    // A variant no table numbers has no database to trust or rebuild.
    variant.tables_fit()?;
    // Besides its checksums, the rules at the goal, the start, the
    // hardest positions and a sample: what a forger edited with every
    // checksum recomputed is found there or by `check`.
    let seed = crate::index::clock_seed();
    let opened = Database::<W>::open_in(db, variant)
        .and_then(|d| d.verify().map(|()| d))
        .and_then(|d| d.audit(variant, crate::storage::AUDIT_SAMPLES, seed).map(|_| d));
    match opened {
        Ok(database) => {
            checkpoint::remove(db, variant);
            Ok(Some(database))
        }
        Err(Error::NotSolved { .. }) => Ok(None),
        Err(e @ Error::DbPath(_)) => Err(e),
        Err(Error::Corrupt { path, problem, .. }) => {
            crate::text::say!(
                "bishops: database {} {problem}; rebuilding it",
                crate::text::path(&path)
            );
            Ok(None)
        }
        Err(e) => {
            crate::text::say!("bishops: {e}; rebuilding it");
            Ok(None)
        }
    }
}

/// Plans, announces on stderr, solves with a progress bar, checks and writes.
fn solve_with_progress(db: &Path, variant: &Variant, options: SolveOptions) -> Result<Solved> {
    let plan = SolvePlan::new(variant, options)?;
    // A refusal is the one line printed: the plan is announced only for a
    // solve that can go ahead.
    plan.check_files(db)?;
    crate::text::say!("bishops: {}", plan.summary(db));
    let bar = progress_bar(Some(1));
    bar.enable_steady_tick(Duration::from_millis(200));
    let log = !std::io::stderr().is_terminal() && plan.legal().iter().sum::<u64>() >= LOG_LAYERS_FROM;
    let solved = plan.run_with_notes(db, &mut observer(variant, &bar, log), &mut |note| {
        bar.suspend(|| crate::text::say!("bishops: {note}"));
    });
    bar.finish_and_clear();
    solved
}

/// What `solve` did for one variant.
#[derive(Serialize, Deserialize)]
pub(super) struct SolveReport {
    variant: String,
    path: PathBuf,
    /// False when a valid database was already there.
    solved: bool,
    /// Time spent searching (building the indices included).
    seconds: Option<f64>,
    /// Time spent writing the database.
    write_seconds: Option<f64>,
    /// Legal positions per class.
    class_legal: Vec<u64>,
    /// Legal positions searched per second of `seconds`.
    positions_per_second: Option<f64>,
    /// Peak resident memory of this process so far.
    peak_memory_bytes: Option<u64>,
    /// Each search layer of a fresh solve (a mirrored class has none).
    #[serde(default)]
    layers: Vec<LayerReport>,
    /// Checkpoints written by a fresh solve.
    #[serde(default)]
    checkpoints_written: u32,
    /// Seconds spent writing them.
    #[serde(default)]
    checkpoint_seconds: f64,
    /// Bytes written in them.
    #[serde(default)]
    checkpoint_bytes: u64,
    /// Positions of the written table a fresh solve checked by the rules
    /// before it took the database's name.
    #[serde(default)]
    checked_positions: Option<u64>,
    /// Seconds that check took (part of `write_seconds`).
    #[serde(default)]
    check_seconds: Option<f64>,
    /// When a fresh solve kept its two-bit table on disk (`--max-memory`):
    /// the memory it gave the table and what it read and wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    table_on_disk: Option<TableOnDisk>,
    legal_positions: Option<u128>,
    start_remoteness: Option<Remoteness>,
    max_remoteness: Option<Remoteness>,
}

impl SolveReport {
    /// What `solve` did for `variant`, whose checked database is `database`:
    /// `solved` when it searched and wrote it now.
    pub(super) fn of<W: Width>(variant: &Variant, database: &Database<W>, solved: Option<&Solved>) -> SolveReport {
        SolveReport {
            variant: variant.name().to_owned(),
            path: database.path().to_path_buf(),
            solved: solved.is_some(),
            seconds: solved.map(|s| s.solve_seconds),
            write_seconds: solved.map(|s| s.write_seconds),
            positions_per_second: solved.map(|s| s.legal.iter().sum::<u64>() as f64 / s.solve_seconds.max(1e-9)),
            class_legal: database.classes().iter().map(|c| c.stats.legal).collect(),
            peak_memory_bytes: peak_memory(),
            layers: solved.map(|s| s.layers.clone()).unwrap_or_default(),
            checkpoints_written: solved.map_or(0, |s| s.checkpoints.0),
            checkpoint_seconds: solved.map_or(0.0, |s| s.checkpoints.1),
            checkpoint_bytes: solved.map_or(0, |s| s.checkpoints.2),
            checked_positions: solved.map(|s| s.audited.0),
            check_seconds: solved.map(|s| s.audited.1),
            table_on_disk: solved.and_then(|s| s.on_disk.clone()),
            legal_positions: database.metadata().legal_positions,
            start_remoteness: database.metadata().start_remoteness,
            max_remoteness: database.metadata().max_remoteness,
        }
    }

    /// The one line `solve` prints for the variant.
    pub(super) fn print(&self, out: &mut dyn Write) -> Result<()> {
        let how = match (self.seconds, self.write_seconds) {
            (Some(s), Some(w)) => format!("solved in {s:.3} s, written in {w:.3} s"),
            _ => "already solved".to_owned(),
        };
        writeln!(
            out,
            "{}: {how}, {} legal positions of the whole board, start remoteness {}, largest {} -> {}",
            self.variant,
            shown(self.legal_positions),
            shown(self.start_remoteness),
            shown(self.max_remoteness),
            crate::text::path(&self.path)
        )
        .map_err(stdout_error)
    }
}

/// `bishops solve`: solves each variant whose database is missing or not
/// trusted, and says what each has.
pub fn solve(db: &Path, args: SolveArgs, out: &mut dyn Write) -> Result<()> {
    let variants = chosen(&args)?;
    let options = options(&args)?;
    let mut reports = Vec::new();
    for variant in &variants {
        let report = match by_width!(variant, W => solve_one::<W>(db, variant, args.force, options)) {
            Ok(report) => report,
            // A script told by exit status 3 that the solve stopped as
            // asked still reads the variants solved before it, and where.
            Err(Error::Stopped(stopped)) if args.json => {
                print_json(out, &reports, Some(&stopped))?;
                return Err(Error::Stopped(stopped));
            }
            Err(e) => return Err(e),
        };
        if !args.json {
            report.print(out)?;
        }
        reports.push(report);
    }
    if args.json {
        print_json(out, &reports, None)?;
    }
    Ok(())
}

/// Solves `variant` when its database is missing, not trusted, or
/// `force`d, and says what it has.
fn solve_one<W: Width>(db: &Path, variant: &Variant, force: bool, options: SolveOptions) -> Result<SolveReport> {
    // Held until the database is written: a second solve of the variant
    // into this directory waits here, then finds it solved.
    let _lock = lock(db, variant)?;
    let existing = if force { None } else { trusted::<W>(db, variant)? };
    let (database, solved) = match existing {
        Some(database) => (database, None),
        None => {
            let solved = solve_with_progress(db, variant, options)?;
            (Database::<W>::open_in(db, variant)?, Some(solved))
        }
    };
    Ok(SolveReport::of(variant, &database, solved.as_ref()))
}

/// The variants `solve` was asked for: named, or `--all`.
///
/// # Errors
///
/// [`Error::Usage`] for both or neither; an unknown name.
pub(super) fn chosen(args: &SolveArgs) -> Result<Vec<Variant>> {
    match (args.all, args.variants.is_empty()) {
        (true, true) => Ok(Variant::builtin()?.to_vec()),
        (false, false) => args.variants.iter().map(|n| Variant::named(n)).collect(),
        (true, false) => Err(Error::Usage("give variant names or --all, not both".into())),
        (false, true) => Err(Error::Usage(
            "name the variants to solve, or use --all: see `bishops variants`".into(),
        )),
    }
}

/// The solve options of `args`: method, layout, memory and disk limits,
/// checkpoints.
///
/// # Errors
///
/// [`Error::Usage`] for a memory or disk limit beyond counting or a bad
/// checkpoint setting.
pub(super) fn options(args: &SolveArgs) -> Result<SolveOptions> {
    // A cap in MiB, in bytes.
    let bytes = |option: &str, mib: Option<u64>| {
        mib.map(|mib| {
            mib.checked_mul(1 << 20).ok_or_else(|| {
                Error::Usage(format!(
                    "{option} {mib} MiB is more bytes than can be counted: give at most {} MiB",
                    u64::MAX >> 20
                ))
            })
        })
        .transpose()
    };
    Ok(SolveOptions {
        method: args.method.method(),
        layout: args.layout.layout(),
        max_memory: bytes("--max-memory", args.max_memory)?,
        max_disk: bytes("--max-disk", args.max_disk)?,
        checkpoints: Some(checkpoint_options(args.restart)?),
        fold: args.fold.fold(),
    })
}

/// The checkpoint options `solve` uses: the default interval unless
/// `BISHOPS_CHECKPOINT_SECONDS` gives one, and the test hook
/// `BISHOPS_STOP_AFTER_LAYER` (`N`, or `CLASS:N` such as `a2:5`), and
/// `BISHOPS_STOP_AFTER_FOLD_STEP` (`N`: stop a fold after its `N`th step)
/// with `BISHOPS_FOLD_STEP_WORDS` (the words of a step).
///
/// # Errors
///
/// [`Error::Usage`] when either variable is not as described.
fn checkpoint_options(restart: bool) -> Result<CheckpointOptions> {
    let bad = |name: &str, v: &str| Error::Usage(format!("{name}={v} is not a whole number"));
    let seconds = match std::env::var("BISHOPS_CHECKPOINT_SECONDS") {
        Ok(v) => Duration::from_secs(v.trim().parse().map_err(|_| bad("BISHOPS_CHECKPOINT_SECONDS", &v))?),
        Err(_) => checkpoint::DEFAULT_INTERVAL,
    };
    let stop_after = match std::env::var("BISHOPS_STOP_AFTER_LAYER") {
        Ok(v) => {
            let (class, layer) = match v.trim().split_once(':') {
                Some((class, layer)) => {
                    let class = (0..2)
                        .filter_map(Class::from_index)
                        .find(|c| c.name() == class)
                        .ok_or_else(|| bad("BISHOPS_STOP_AFTER_LAYER", &v))?;
                    (Some(class), layer)
                }
                None => (None, v.trim()),
            };
            Some((class, layer.parse().map_err(|_| bad("BISHOPS_STOP_AFTER_LAYER", &v))?))
        }
        Err(_) => None,
    };
    let stop_fold_after = match std::env::var("BISHOPS_STOP_AFTER_FOLD_STEP") {
        Ok(v) => Some(v.trim().parse().map_err(|_| bad("BISHOPS_STOP_AFTER_FOLD_STEP", &v))?),
        Err(_) => None,
    };
    let fold_step_words = match std::env::var("BISHOPS_FOLD_STEP_WORDS") {
        Ok(v) => Some(
            v.trim()
                .parse()
                .ok()
                .filter(|&w: &u64| w > 0)
                .ok_or_else(|| bad("BISHOPS_FOLD_STEP_WORDS", &v))?,
        ),
        Err(_) => None,
    };
    let write = crate::storage::Resumable {
        interval: match std::env::var("BISHOPS_WRITE_COMMIT_SECONDS") {
            Ok(v) => Duration::from_secs_f64(
                v.trim()
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 0.0 && *s < 1e9)
                    .ok_or_else(|| bad("BISHOPS_WRITE_COMMIT_SECONDS", &v))?,
            ),
            Err(_) => crate::storage::Resumable::DEFAULT.interval,
        },
        stop_after: match std::env::var("BISHOPS_STOP_AFTER_WRITE_COMMIT") {
            Ok(v) => Some(
                v.trim()
                    .parse()
                    .map_err(|_| bad("BISHOPS_STOP_AFTER_WRITE_COMMIT", &v))?,
            ),
            Err(_) => None,
        },
        kill_at: match std::env::var("BISHOPS_KILL_AT_WRITE_COMMIT") {
            Ok(v) => Some(v.trim().parse().map_err(|_| bad("BISHOPS_KILL_AT_WRITE_COMMIT", &v))?),
            Err(_) => None,
        },
    };
    Ok(CheckpointOptions {
        interval: seconds,
        stop_after,
        stop_fold_after,
        fold_step_words,
        write,
        restart,
    })
}

/// The write lock of `variant` in `db`, waiting (and saying so) while
/// another process holds it.
pub(super) fn lock(db: &Path, variant: &Variant) -> Result<WriteLock> {
    WriteLock::acquire(db, variant.name(), &mut || {
        crate::text::say!(
            "bishops: another process is solving {} into {}; waiting for it to finish",
            variant.name(),
            crate::text::path(db)
        );
    })
}

/// The `--json` document of `solve`: one report per variant solved, and,
/// when the solve was stopped as asked, what its line on stderr says.
pub(super) fn print_json(out: &mut dyn Write, reports: &[SolveReport], stopped: Option<&str>) -> Result<()> {
    // Not through `serde_json::Value`, which cannot hold counts beyond
    // 64 bits (11x10 has 3.5 × 10^20 legal positions).
    #[derive(Serialize)]
    struct Reports<'a> {
        variants: &'a [SolveReport],
        #[serde(skip_serializing_if = "Option::is_none")]
        stopped: Option<&'a str>,
    }
    write_json(
        out,
        &Reports {
            variants: reports,
            stopped,
        },
    )
}

/// One variant timed by `bench`.
#[derive(Serialize)]
struct BenchRow {
    variant: String,
    /// Legal positions per class, added up over the classes (class
    /// positions: not the whole board's).
    positions: u64,
    /// The whole `solve` process, start to exit.
    wall_seconds: f64,
    /// The search alone.
    solve_seconds: f64,
    /// Writing the database.
    write_seconds: f64,
    /// Positions per second of the search.
    positions_per_second: f64,
    /// Peak resident memory of the solving process.
    peak_memory_bytes: u64,
    start_remoteness: Remoteness,
    max_remoteness: Remoteness,
    /// What the answer was checked against.
    checked_against: String,
    /// The search's layers, with their times.
    layers: Vec<LayerReport>,
}

/// Times `bishops solve V --force --json` in a fresh process per variant, so
/// each peak memory is its own, and checks each answer: the solve itself
/// refuses to write an answer that contradicts the variant's known values,
/// and a variant without them is refused here. `variant_args` are the
/// `--variant-file` and `--variants` options this process was given, passed
/// on so that each fresh process knows the same variants.
pub fn bench(
    args: BenchArgs,
    threads: Option<usize>,
    variant_args: &[std::ffi::OsString],
    out: &mut dyn Write,
) -> Result<()> {
    let names: Vec<String> = if args.variants.is_empty() {
        BENCH_VARIANTS.iter().map(|s| s.to_string()).collect()
    } else {
        args.variants.clone()
    };
    let exe = std::env::current_exe().map_err(|e| Error::Io(PathBuf::from("bishops"), e))?;
    let dir = std::env::temp_dir().join(format!("bishops-bench-{}", std::process::id()));
    let _pending = Pending::register_dir(&dir);
    let mut rows = Vec::new();
    for name in &names {
        let variant = Variant::named(name)?;
        let known = variant.known().ok_or_else(|| {
            Error::Usage(format!(
                "variant {name} has no known answers in its variant file, so a bench could not check it"
            ))
        })?;
        let mut command = Command::new(&exe);
        command.arg("--db").arg(&dir).args(variant_args);
        if let Some(t) = threads {
            command.arg("--threads").arg(t.to_string());
        }
        command.args(["solve", name, "--force", "--json", "--method", args.method.name()]);
        die_with_parent(&mut command);
        let started = Instant::now();
        let output = command.output().map_err(|e| Error::Io(exe.clone(), e))?;
        let wall_seconds = started.elapsed().as_secs_f64();
        let _ = std::fs::remove_dir_all(&dir);
        if !output.status.success() {
            return Err(Error::Mismatch(format!(
                "bench of {name} failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        #[derive(Deserialize)]
        struct Reports {
            variants: Vec<SolveReport>,
        }
        let report = serde_json::from_slice::<Reports>(&output.stdout)
            .ok()
            .and_then(|r| r.variants.into_iter().next())
            .ok_or_else(|| Error::Mismatch(format!("bench of {name}: unreadable output from solve")))?;
        rows.push(BenchRow {
            variant: name.clone(),
            positions: report.class_legal.iter().sum(),
            wall_seconds,
            solve_seconds: report.seconds.unwrap_or_default(),
            write_seconds: report.write_seconds.unwrap_or_default(),
            positions_per_second: report.positions_per_second.unwrap_or_default(),
            peak_memory_bytes: report.peak_memory_bytes.unwrap_or_default(),
            start_remoteness: report.start_remoteness.unwrap_or_default(),
            max_remoteness: report.max_remoteness.unwrap_or_default(),
            checked_against: known.source.clone(),
            layers: report.layers,
        });
        if !args.json {
            let r = rows.last().expect("just pushed");
            // Rows are printed as each solve ends: the name column is as
            // wide as the longest name asked for, and the numbers' columns
            // hold 13x10's class positions and any rate this machine reaches.
            let width = names.iter().map(String::len).max().unwrap_or(0).max("variant".len());
            if rows.len() == 1 {
                writeln!(
                    out,
                    "{:<width$} {:>12} {:>9} {:>9} {:>9} {:>12} {:>9} {:>6} {:>6}",
                    "variant", "class pos", "wall s", "solve s", "write s", "positions/s", "peak MiB", "start", "max"
                )
                .map_err(stdout_error)?;
            }
            writeln!(
                out,
                "{:<width$} {:>12} {:>9.3} {:>9.3} {:>9.3} {:>12.0} {:>9.0} {:>6} {:>6}",
                r.variant,
                r.positions,
                r.wall_seconds,
                r.solve_seconds,
                r.write_seconds,
                r.positions_per_second,
                r.peak_memory_bytes as f64 / (1 << 20) as f64,
                r.start_remoteness,
                r.max_remoteness
            )
            .map_err(stdout_error)?;
        }
    }
    if args.json {
        #[derive(Serialize)]
        struct Bench<'a> {
            threads: Option<usize>,
            bench: &'a [BenchRow],
        }
        write_json(out, &Bench { threads, bench: &rows })?;
    }
    Ok(())
}

/// Makes the child of `command` receive SIGTERM when this process dies, even
/// by SIGKILL, so that a killed `bench` leaves no solve running (the child's
/// own handler then removes its temporary file).
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    // SAFETY: between fork and exec the closure calls only prctl and
    // getppid, which are async-signal-safe, and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before the request was made.
            if libc::getppid() as u32 != parent {
                return Err(std::io::Error::other("bench died before its solve started"));
            }
            Ok(())
        });
    }
}

/// Elsewhere a killed `bench` may leave its child running to the end.
#[cfg(not(target_os = "linux"))]
fn die_with_parent(_: &mut Command) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layer on disk says what it read and wrote, and the spool's claims
    /// at its budget only when there were some.
    #[test]
    fn a_layer_on_disk_has_a_line_of_its_reads_and_writes() {
        let mut disk = DiskStats {
            reads: 1200,
            writes: 300,
            bytes: 3 << 30,
            waited_ns: 12_345_000_000,
            spooled: 4_000_000,
            spool_bytes: 6 << 20,
            moved: 900,
            ..DiskStats::default()
        };
        assert_eq!(
            disk_line("13x10", Class::Even, 6, &disk),
            "bishops: 13x10 a1 layer 6: on disk, 1200 segments read and 300 written (3072 MiB), \
             12.3 s reading and writing, 900 segments in on the memory of ones that left; \
             4000000 images spooled (6 MiB)"
        );
        disk.drains = 2;
        assert!(disk_line("13x10", Class::Even, 6, &disk).ends_with(", claimed 2 times at its budget)"));
    }

    /// A layer resumed past a mark is timed as if this run had worked it
    /// whole; any other layer as it was timed.
    #[test]
    fn a_resumed_layer_is_reckoned_whole() {
        let elapsed = Duration::from_secs(3_900);
        assert_eq!(whole_layer_seconds(elapsed, None), 3_900.0);
        let resumed = Resumed {
            through: 5_630_630,
            blocks: 8_259_888,
        };
        let whole = whole_layer_seconds(elapsed, Some(resumed));
        assert!((whole - 12_253.0).abs() < 10.0, "{whole}");
        // Resumed at its last block, the layer's time stays finite.
        let last = Resumed {
            through: 8_259_888,
            blocks: 8_259_888,
        };
        assert_eq!(whole_layer_seconds(elapsed, Some(last)), 390_000.0);
    }

    /// A write says how far it is, and how long it has left until it ends.
    #[test]
    fn a_write_has_lines_of_how_far_it_is() {
        let line =
            |done, seconds| writing_line("13x10", Class::Even, (0, done, 8_259_888), Duration::from_secs(seconds));
        assert_eq!(
            line(2_064_972, 600),
            "bishops: 13x10 a1: written 2064972 of 8259888 white sets (25%), 600 s, about 30 min left"
        );
        assert_eq!(
            line(8_259_888, 2400),
            "bishops: 13x10 a1: written 8259888 of 8259888 white sets (100%), 2400 s"
        );
        // Resumed at a quarter, it has written a quarter more in 600 s.
        let resumed = writing_line(
            "13x10",
            Class::Even,
            (2_064_972, 4_129_944, 8_259_888),
            Duration::from_secs(600),
        );
        assert!(resumed.ends_with("(50%), 600 s, about 20 min left"), "{resumed}");
    }
}
