//! `solve` and `bench`: planning a solve, showing its progress, checking its
//! answer, writing it, and timing it in a fresh process.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use super::{BenchArgs, LayoutArg, SolveArgs, meta_number, progress_bar, shown, stdout_error, write_json};
use crate::error::{Error, Result};
use crate::index::binomial;
use crate::solver::{Event, Method, Plan, Solution};
use crate::storage::{self, Database, Layout};
use crate::variant::Variant;

/// The variants `bench` times unless told otherwise.
pub const BENCH_VARIANTS: [&str; 4] = ["7x6", "9x6", "9x8", "11x8"];

/// What one solve did.
pub(super) struct Solved {
    pub path: PathBuf,
    pub solve_seconds: f64,
    pub write_seconds: f64,
    pub legal: Vec<u64>,
    pub layers: Vec<LayerReport>,
}

/// One search layer as `solve --json` reports it.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub(super) struct LayerReport {
    /// The class number (0: a1's class, 1: a2's).
    class: usize,
    /// The remoteness of the layer.
    depth: u16,
    /// Positions in the layer.
    found: u64,
    /// Seconds the layer took.
    seconds: f64,
}

/// Bytes of memory available to a new allocation, from `/proc/meminfo`.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The peak resident memory of this process so far, from `/proc/self/status`.
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn mib(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{} KiB", bytes.div_ceil(1 << 10))
    } else {
        format!("{:.0} MiB", bytes as f64 / (1 << 20) as f64)
    }
}

/// Refuses a solve that needs more memory than is available, or than
/// `limit` bytes when given.
fn check_memory(variant: &Variant, need: u64, limit: Option<u64>) -> Result<()> {
    let available = match (available_memory(), limit) {
        (Some(a), Some(l)) => Some(a.min(l)),
        (a, l) => a.or(l),
    };
    match available {
        Some(available) if need > available => Err(Error::TooLarge(format!(
            "variant {} needs about {} of memory to solve, only {} is available",
            variant.name(),
            mib(need),
            mib(available)
        ))),
        _ => Ok(()),
    }
}

/// How `solve_and_write` runs.
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct SolveOptions {
    pub method: Method,
    /// `None`: rows or blocks by size.
    pub layout: Option<Layout>,
    /// Bytes a solve may use at most, besides what is available.
    pub max_memory: Option<u64>,
    /// Say on stderr what the solve needs before it starts.
    pub announce: bool,
}

/// Checks a solution against the answers the variant file knows.
fn check_known(variant: &Variant, solution: &Solution) -> Result<()> {
    let Some(known) = variant.known() else {
        return Ok(());
    };
    let legal: Vec<u64> = solution.classes.iter().map(|c| c.stats.legal).collect();
    let max: Option<u16> = solution
        .classes
        .iter()
        .map(|c| c.stats.max_remoteness().map(|r| r.0))
        .sum();
    let starts = variant.class_hashes(variant.start());
    let start: Option<u16> = solution
        .classes
        .iter()
        .zip(starts)
        .map(|(c, h)| c.cell(h).remoteness().map(|r| r.0))
        .sum();
    if legal != known.legal || max != Some(known.max_remoteness) || start != Some(known.start_remoteness) {
        return Err(Error::Mismatch(format!(
            "variant {}: solved {legal:?} legal positions, start {start:?}, largest {max:?}, but {} give {:?}, {}, {}; nothing written",
            variant.name(),
            known.source,
            known.legal,
            known.start_remoteness,
            known.max_remoteness
        )));
    }
    Ok(())
}

/// Shows a solve's layers on a progress bar, one bar per class, and keeps
/// each layer's time in `layers`.
fn observer<'a>(variant: &Variant, bar: &'a ProgressBar, layers: &'a mut Vec<LayerReport>) -> impl FnMut(Event) + 'a {
    let name = variant.name().to_owned();
    let mut last = Instant::now();
    move |event| match event {
        Event::Counted { class, legal } => {
            last = Instant::now();
            bar.reset();
            bar.set_length(legal);
            bar.set_message(format!("{name} {}: counted", class.name()));
        }
        Event::Layer {
            class,
            depth,
            found,
            total,
            ..
        } => {
            bar.set_position(total);
            bar.set_message(format!("{name} {} layer {depth}", class.name()));
            layers.push(LayerReport {
                class: class.index(),
                depth,
                found,
                seconds: last.elapsed().as_secs_f64(),
            });
            last = Instant::now();
        }
        Event::Mirrored { class, from } => {
            bar.set_message(format!("{name} {}: mirroring {}", class.name(), from.name()));
        }
    }
}

/// Plans, solves, checks and writes `variant`. With `announce`, says on
/// stderr what the solve will need before it starts.
pub(super) fn solve_and_write(db: &Path, variant: &Variant, options: SolveOptions) -> Result<Solved> {
    let SolveOptions {
        method,
        layout,
        max_memory,
        announce,
    } = options;
    // The tight index's tables come first: one safe set and offset per white set.
    let index_bytes: u64 = variant
        .classes()
        .iter()
        .map(|s| 16 * binomial(s.geometry.len() as u32, s.counts().0))
        .sum();
    check_memory(variant, index_bytes, max_memory)?;
    let plan = Plan::new(variant, method);
    let need = plan.memory_bytes();
    if announce {
        let legal = plan.legal();
        let mirrored = (0..legal.len()).filter(|&k| plan.is_mirrored(k)).count();
        eprintln!(
            "bishops: solving {} ({} search, {} threads): {} legal positions in {} class{}{}; needs about {}{}",
            variant.name(),
            if method == Method::Tight { "tight" } else { "dense" },
            rayon::current_num_threads(),
            legal.iter().map(u64::to_string).collect::<Vec<_>>().join(" + "),
            legal.len(),
            if legal.len() == 1 { "" } else { "es" },
            if mirrored > 0 { " (one by mirror symmetry)" } else { "" },
            mib(need),
            available_memory().map_or(String::new(), |a| format!(" of {} available", mib(a)))
        );
    }
    check_memory(variant, need, max_memory)?;
    let bar = progress_bar(Some(1));
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut layers = Vec::new();
    let solution = plan.solve(&mut observer(variant, &bar, &mut layers));
    bar.finish_and_clear();
    let solution = solution?;
    check_known(variant, &solution)?;
    let writing = Instant::now();
    let layout = layout.unwrap_or_else(|| Layout::for_solution(&solution));
    let path = storage::write_with(db, variant, &solution, layout)?;
    Ok(Solved {
        path,
        solve_seconds: solution.elapsed.as_secs_f64(),
        write_seconds: writing.elapsed().as_secs_f64(),
        legal: solution.classes.iter().map(|c| c.stats.legal).collect(),
        layers,
    })
}

/// What `solve` did for one variant.
#[derive(Serialize, Deserialize)]
struct SolveReport {
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
    legal_positions: Option<u128>,
    start_remoteness: Option<u128>,
    max_remoteness: Option<u128>,
}

pub(super) fn solve(db: &Path, args: SolveArgs, out: &mut dyn Write) -> Result<()> {
    let variants: Vec<Variant> = match (args.all, args.variants.is_empty()) {
        (true, true) => Variant::builtin()?,
        (false, false) => args.variants.iter().map(|n| Variant::named(n)).collect::<Result<_>>()?,
        (true, false) => return Err(Error::Usage("give variant names or --all, not both".into())),
        (false, true) => {
            return Err(Error::Usage(
                "name the variants to solve, or use --all: see `bishops variants`".into(),
            ));
        }
    };
    let mut reports = Vec::new();
    for variant in &variants {
        // A database is kept only when it opens and its tables match their checksums.
        let existing = if args.force {
            None
        } else {
            Database::open(db, variant).and_then(|d| d.verify().map(|()| d)).ok()
        };
        let (database, solved) = match existing {
            Some(database) => (database, None),
            None => {
                let options = SolveOptions {
                    method: args.method.into(),
                    layout: match args.layout {
                        LayoutArg::Auto => None,
                        LayoutArg::Rows => Some(Layout::Rows),
                        LayoutArg::Blocks => Some(Layout::Blocks),
                    },
                    max_memory: args.max_memory.map(|m| m << 20),
                    announce: true,
                };
                let solved = solve_and_write(db, variant, options)?;
                (Database::open(db, variant)?, Some(solved))
            }
        };
        let seconds = solved.as_ref().map(|s| s.solve_seconds);
        let class_legal = database.classes().iter().map(|c| c.stats.legal).collect::<Vec<_>>();
        let report = SolveReport {
            variant: variant.name().to_owned(),
            path: database.path().to_path_buf(),
            solved: solved.is_some(),
            seconds,
            write_seconds: solved.as_ref().map(|s| s.write_seconds),
            positions_per_second: solved
                .as_ref()
                .map(|s| s.legal.iter().sum::<u64>() as f64 / s.solve_seconds.max(1e-9)),
            class_legal,
            peak_memory_bytes: peak_memory(),
            layers: solved.as_ref().map(|s| s.layers.clone()).unwrap_or_default(),
            legal_positions: meta_number(&database, "legal_positions")?,
            start_remoteness: meta_number(&database, "start_remoteness")?,
            max_remoteness: meta_number(&database, "max_remoteness")?,
        };
        if !args.json {
            let how = match (report.seconds, report.write_seconds) {
                (Some(s), Some(w)) => format!("solved in {s:.3} s, written in {w:.3} s"),
                _ => "already solved".to_owned(),
            };
            writeln!(
                out,
                "{}: {how}, {} legal positions, start remoteness {}, largest {} -> {}",
                report.variant,
                shown(report.legal_positions),
                shown(report.start_remoteness),
                shown(report.max_remoteness),
                report.path.display()
            )
            .map_err(stdout_error)?;
        }
        reports.push(report);
    }
    if args.json {
        write_json(out, &serde_json::json!({ "variants": reports }))?;
    }
    Ok(())
}

/// One variant timed by `bench`.
#[derive(Serialize)]
struct BenchRow {
    variant: String,
    /// Legal positions, all classes.
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
    start_remoteness: u128,
    max_remoteness: u128,
    /// What the answer was checked against.
    checked_against: String,
    /// The search's layers, with their times.
    layers: Vec<LayerReport>,
}

/// Times `bishops solve V --force --json` in a fresh process per variant, so
/// each peak memory is its own, and checks each answer: the solve itself
/// refuses to write an answer that contradicts the variant's known values,
/// and a variant without them is refused here.
pub(super) fn bench(args: BenchArgs, threads: Option<usize>, out: &mut dyn Write) -> Result<()> {
    let names: Vec<String> = if args.variants.is_empty() {
        BENCH_VARIANTS.iter().map(|s| s.to_string()).collect()
    } else {
        args.variants.clone()
    };
    let exe = std::env::current_exe().map_err(|e| Error::Io(PathBuf::from("bishops"), e))?;
    let dir = std::env::temp_dir().join(format!("bishops-bench-{}", std::process::id()));
    let mut rows = Vec::new();
    for name in &names {
        let variant = Variant::named(name)?;
        let known = variant.known().ok_or_else(|| {
            Error::Usage(format!(
                "variant {name} has no known answers in its variant file, so a bench could not check it"
            ))
        })?;
        let mut command = Command::new(&exe);
        command.arg("--db").arg(&dir);
        if let Some(t) = threads {
            command.arg("--threads").arg(t.to_string());
        }
        let method = match args.method {
            super::MethodArg::Tight => "tight",
            super::MethodArg::Dense => "dense",
        };
        command.args(["solve", name, "--force", "--json", "--method", method]);
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
            if rows.len() == 1 {
                writeln!(
                    out,
                    "{:<8} {:>12} {:>9} {:>9} {:>9} {:>12} {:>9} {:>6} {:>6}",
                    "variant", "positions", "wall s", "solve s", "write s", "positions/s", "peak MiB", "start", "max"
                )
                .map_err(stdout_error)?;
            }
            writeln!(
                out,
                "{:<8} {:>12} {:>9.3} {:>9.3} {:>9.3} {:>12.0} {:>9.0} {:>6} {:>6}",
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
        write_json(out, &serde_json::json!({ "threads": threads, "bench": rows }))?;
    }
    Ok(())
}
