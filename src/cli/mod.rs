//! The `bishops` command line: argument parsing and the commands' output.
//!
//! Every command writes its answer to the writer it is given (stdout in the
//! binary), as text or as one JSON document, and its progress and notes to
//! stderr, so that `--json` output is never polluted.

use std::fs;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::position::{Move, Position};
use crate::remoteness::Remoteness;
use crate::solver::Method;
use crate::storage::Database;
use crate::variant::Variant;

mod solve;

/// A variant whose dense index has at most this many entries in all is
/// solved on the spot by `query` and `line` when its database is missing.
pub const QUICK_SOLVE_ENTRIES: u64 = 30_000_000;

/// Strongly solves the Bishops swap puzzle and answers questions about its positions.
#[derive(Parser, Debug)]
#[command(name = "bishops", version, about)]
pub struct Cli {
    /// Where solved databases live.
    #[arg(long, global = true, env = "BISHOPS_DB", default_value = "db")]
    pub db: PathBuf,
    /// Threads for solving (default: one per core).
    #[arg(long, global = true, env = "BISHOPS_THREADS")]
    pub threads: Option<usize>,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Solve variants and write their databases.
    Solve(SolveArgs),
    /// Status, remoteness, board and every legal move of a position.
    Query(PositionArgs),
    /// An optimal move line from a position to the goal.
    Line(PositionArgs),
    /// The solved table of a variant: position,hash,remoteness,class.
    Export(ExportArgs),
    /// The known variants, their sizes and whether they are solved.
    Variants(JsonArgs),
    /// Positions per remoteness and the hardest positions of a variant.
    Stats(StatsArgs),
    /// Solve variants in fresh processes and report time, rate and peak memory.
    Bench(BenchArgs),
}

/// Arguments of `bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Variants to time (default: 7x6 9x6 9x8 11x8).
    pub variants: Vec<String>,
    /// The search to time.
    #[arg(long, value_enum, default_value = "tight")]
    pub method: MethodArg,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// The search methods, as `--method` names them.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodArg {
    /// Parallel search over legal positions only.
    Tight,
    /// One-core search over the dense public hash (a cross-check).
    Dense,
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Method {
        match m {
            MethodArg::Tight => Method::Tight,
            MethodArg::Dense => Method::Dense,
        }
    }
}

/// Arguments of `solve`.
#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Variants to solve: names from `bishops variants`, or standard ones like `9x6-full`.
    pub variants: Vec<String>,
    /// Solve every named variant.
    #[arg(long)]
    pub all: bool,
    /// Solve again even when a valid database exists.
    #[arg(long)]
    pub force: bool,
    /// The search to use.
    #[arg(long, value_enum, default_value = "tight")]
    pub method: MethodArg,
    /// How to store the tables: a row per position (readable with sqlite3),
    /// a blob per white set (compact), or rows up to a million positions per class.
    #[arg(long, value_enum, default_value = "auto")]
    pub layout: LayoutArg,
    /// Refuse a solve that needs more than this many MiB (default: what is available).
    #[arg(long, value_name = "MIB")]
    pub max_memory: Option<u64>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Database layouts, as `--layout` names them.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutArg {
    /// Rows while every class has at most a million legal positions, blocks beyond.
    Auto,
    /// A row per legal position.
    Rows,
    /// A blob per white set, a byte per position.
    Blocks,
}

/// Arguments of `query` and `line`.
#[derive(Args, Debug)]
pub struct PositionArgs {
    /// A position like `5_4_a1-a3_e1-e3`: rows_columns_white_black.
    pub position: String,
    /// The variant, when the position's own board and counts should not decide.
    #[arg(long)]
    pub variant: Option<String>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `variants`.
#[derive(Args, Debug)]
pub struct JsonArgs {
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The variant.
    pub variant: String,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Export formats.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

/// Arguments of `export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The variant.
    pub variant: String,
    /// The output format.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: Format,
    /// Write to this file (atomically) instead of stdout.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// Runs a parsed command line, writing answers to `out`.
///
/// # Errors
///
/// Whatever the command ran into; [`Error::exit_code`] gives the exit status.
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<()> {
    if let Some(threads) = cli.threads {
        if threads == 0 {
            return Err(Error::Usage("--threads must be at least 1".into()));
        }
        // Fails only when the pool was already built, as in tests running
        // commands in one process; the first setting then stands.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global();
    }
    let db = cli.db.as_path();
    match cli.command {
        Command::Solve(args) => solve::solve(db, args, out),
        Command::Bench(args) => solve::bench(args, cli.threads, out),
        Command::Query(args) => query(db, args, out),
        Command::Line(args) => line(db, args, out),
        Command::Export(args) => export(db, args, out),
        Command::Variants(args) => variants(db, args.json, out),
        Command::Stats(args) => stats(db, args, out),
    }
}

/// A numeric metadata value of `database`, `None` when absent or empty.
pub(crate) fn meta_number(database: &Database, key: &str) -> Result<Option<u128>> {
    Ok(database.meta(key)?.and_then(|v| v.parse().ok()))
}

pub(crate) fn stdout_error(e: io::Error) -> Error {
    Error::Io(PathBuf::from("stdout"), e)
}

pub(crate) fn write_json(out: &mut dyn Write, value: &impl Serialize) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(|e| stdout_error(e.into()))?;
    writeln!(out).map_err(stdout_error)
}

/// A progress bar on stderr, drawn only when stderr is a terminal.
pub(crate) fn progress_bar(len: Option<u64>) -> ProgressBar {
    let bar = match len {
        Some(len) => ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr()).with_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        ),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
            .with_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template")),
    };
    if !io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}

/// Opens the database of `variant`, solving it first (and saying so on
/// stderr) when it is missing and quick to solve.
fn open_or_solve(db: &Path, variant: &Variant) -> Result<Database> {
    match Database::open(db, variant) {
        Err(Error::NotSolved { .. }) if variant.hash_sizes().iter().sum::<u64>() <= QUICK_SOLVE_ENTRIES => {
            eprintln!("bishops: variant {} is not solved yet; solving it now", variant.name());
            let done = solve::solve_and_write(db, variant, solve::SolveOptions::default())?;
            eprintln!(
                "bishops: solved {} in {:.3} s, wrote {}",
                variant.name(),
                done.solve_seconds,
                done.path.display()
            );
            Database::open(db, variant)
        }
        other => other,
    }
}

/// A position checked against its variant, with the variant's database.
struct Probe {
    variant: Variant,
    database: Database,
}

impl Probe {
    fn new(db: &Path, position: &str, variant: Option<&str>) -> Result<(Probe, Position)> {
        let position: Position = position.parse()?;
        let variant = Variant::for_position(&position, variant)?;
        let database = open_or_solve(db, &variant)?;
        Ok((Probe { variant, database }, position))
    }

    fn remoteness(&self, position: &Position) -> Result<Option<Remoteness>> {
        self.database.remoteness(&self.variant.class_hashes(position))
    }
}

fn status(remoteness: Option<Remoteness>) -> &'static str {
    match remoteness {
        Some(Remoteness(0)) => "solved",
        Some(_) => "solvable",
        None => "unreachable",
    }
}

/// One legal move in `query`'s answer.
#[derive(Serialize)]
struct MoveReport {
    #[serde(rename = "move")]
    mv: String,
    position: String,
    remoteness: Option<Remoteness>,
    /// Remoteness after minus before; null when either is unreachable.
    delta: Option<i32>,
    /// `better`, `same`, `worse` or `unreachable`.
    value: &'static str,
}

#[derive(Serialize)]
struct QueryReport {
    position: String,
    variant: String,
    /// The public hash, mixed radix over the classes.
    hash: u128,
    class_hashes: Vec<u64>,
    status: &'static str,
    remoteness: Option<Remoteness>,
    board: String,
    moves: Vec<MoveReport>,
}

fn query(db: &Path, args: PositionArgs, out: &mut dyn Write) -> Result<()> {
    let (probe, position) = Probe::new(db, &args.position, args.variant.as_deref())?;
    let remoteness = probe.remoteness(&position)?;
    let mut moves = Vec::new();
    for (mv, after) in position.moves() {
        let r = probe.remoteness(&after)?;
        let delta = match (remoteness, r) {
            (Some(a), Some(b)) => Some(i32::from(b.0) - i32::from(a.0)),
            _ => None,
        };
        moves.push(MoveReport {
            mv: mv.to_string(),
            position: after.to_string(),
            remoteness: r,
            delta,
            value: match delta {
                Some(d) if d < 0 => "better",
                Some(0) => "same",
                Some(_) => "worse",
                None => "unreachable",
            },
        });
    }
    let report = QueryReport {
        position: position.to_string(),
        variant: probe.variant.name().to_owned(),
        hash: probe.variant.hash(&position),
        class_hashes: probe.variant.class_hashes(&position),
        status: status(remoteness),
        remoteness,
        board: position.diagram(),
        moves,
    };
    if args.json {
        return write_json(out, &report);
    }
    let mut text = format!(
        "position    {}\nvariant     {}\nhash        {}\nstatus      {}\nremoteness  {}\n\n{}\n",
        report.position,
        report.variant,
        report.hash,
        report.status,
        show(report.remoteness),
        report.board
    );
    let width = report.moves.iter().map(|m| m.position.len()).max().unwrap_or(8).max(8);
    text += &format!("{:<7} {:<width$}  {:>10}  value\n", "move", "position", "remoteness");
    for m in &report.moves {
        text += &format!(
            "{:<7} {:<width$}  {:>10}  {}\n",
            m.mv,
            m.position,
            show(m.remoteness),
            m.value
        );
    }
    if report.moves.is_empty() {
        text += "(no legal moves)\n";
    }
    out.write_all(text.as_bytes()).map_err(stdout_error)
}

pub(crate) fn shown(value: Option<u128>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn show(remoteness: Option<Remoteness>) -> String {
    remoteness.map_or_else(|| "-".to_owned(), |r| r.to_string())
}

#[derive(Serialize)]
struct LineReport {
    position: String,
    variant: String,
    status: &'static str,
    remoteness: Option<Remoteness>,
    /// The moves in order, `from-to`.
    moves: Vec<String>,
    /// The position after each move; the last is the goal.
    positions: Vec<String>,
}

fn line(db: &Path, args: PositionArgs, out: &mut dyn Write) -> Result<()> {
    let (probe, position) = Probe::new(db, &args.position, args.variant.as_deref())?;
    let remoteness = probe.remoteness(&position)?;
    let mut report = LineReport {
        position: position.to_string(),
        variant: probe.variant.name().to_owned(),
        status: status(remoteness),
        remoteness,
        moves: Vec::new(),
        positions: Vec::new(),
    };
    if let Some(mut r) = remoteness {
        let mut here = position;
        while r.0 > 0 {
            let (mv, next) = best_move(&probe, &here, r)?;
            report.moves.push(mv.to_string());
            report.positions.push(next.to_string());
            here = next;
            r = Remoteness(r.0 - 1);
        }
    }
    if args.json {
        return write_json(out, &report);
    }
    let mut text = format!("{}  {}  {}\n", report.position, report.status, show(remoteness));
    let total = report.moves.len();
    for (i, (mv, pos)) in report.moves.iter().zip(&report.positions).enumerate() {
        text += &format!("{:>3}. {:<7} {}  {}\n", i + 1, mv, pos, total - i - 1);
    }
    out.write_all(text.as_bytes()).map_err(stdout_error)
}

/// The first legal move (in move order) that lowers the remoteness by one.
fn best_move(probe: &Probe, here: &Position, r: Remoteness) -> Result<(Move, Position)> {
    for (mv, next) in here.moves() {
        if probe.remoteness(&next)? == Some(Remoteness(r.0 - 1)) {
            return Ok((mv, next));
        }
    }
    Err(Error::Corrupt {
        path: probe.database.path().to_path_buf(),
        problem: format!("gives {here} remoteness {r} but no move lowers it"),
        variant: probe.variant.name().to_owned(),
    })
}

fn export(db: &Path, args: ExportArgs, out: &mut dyn Write) -> Result<()> {
    let variant = Variant::named(&args.variant)?;
    let database = Database::open(db, &variant)?;
    // Checked before the first row goes out: a stream cannot be taken back.
    database.verify()?;
    match &args.output {
        None => {
            let mut w = io::BufWriter::new(out);
            export_rows(&variant, &database, args.format, &mut w)?;
            w.flush().map_err(stdout_error)
        }
        Some(path) => {
            let file_name = path
                .file_name()
                .ok_or_else(|| Error::Usage(format!("{} is not a file name", path.display())))?;
            let tmp = path.with_file_name(format!(".{}.tmp-{}", file_name.to_string_lossy(), std::process::id()));
            let result = fs::File::create(&tmp)
                .map_err(|e| Error::Io(tmp.clone(), e))
                .and_then(|file| {
                    let mut w = io::BufWriter::new(file);
                    export_rows(&variant, &database, args.format, &mut w)?;
                    let file = w.into_inner().map_err(|e| Error::Io(tmp.clone(), e.into_error()))?;
                    file.sync_all().map_err(|e| Error::Io(tmp.clone(), e))
                })
                .and_then(|()| fs::rename(&tmp, path).map_err(|e| Error::Io(path.clone(), e)));
            if result.is_err() {
                let _ = fs::remove_file(&tmp);
            }
            result
        }
    }
}

/// One exported row.
#[derive(Serialize)]
struct Row<'a> {
    position: &'a str,
    hash: u64,
    remoteness: Option<Remoteness>,
    class: usize,
}

/// Streams every stored position of every class, in class then hash order.
/// For a variant with both classes each row is one class's part, named by
/// its class hash; a whole position's remoteness is the sum of its parts'.
fn export_rows(variant: &Variant, database: &Database, format: Format, w: &mut dyn Write) -> Result<()> {
    let total = database.classes().iter().map(|c| c.stats.legal).sum();
    let bar = progress_bar(Some(total));
    bar.set_message(format!("export {}", variant.name()));
    let io_err = |e: io::Error| Error::Io(PathBuf::from("output"), e);
    if format == Format::Csv {
        writeln!(w, "position,hash,remoteness,class").map_err(io_err)?;
    }
    for (k, spec) in variant.classes().iter().enumerate() {
        let class = spec.class.index();
        database.for_each_row(k, |hash, part, cell| {
            let position = Position::from_parts(variant.board(), &[(&spec.geometry, part)]).to_string();
            let remoteness = cell.remoteness();
            match format {
                Format::Csv => writeln!(
                    w,
                    "{position},{hash},{},{class}",
                    remoteness.map_or(String::new(), |r| r.to_string())
                ),
                Format::Jsonl => {
                    let row = Row {
                        position: &position,
                        hash,
                        remoteness,
                        class,
                    };
                    serde_json::to_writer(&mut *w, &row)
                        .map_err(io::Error::from)
                        .and_then(|()| writeln!(w))
                }
            }
            .map_err(io_err)?;
            bar.inc(1);
            Ok(())
        })?;
    }
    bar.finish_and_clear();
    Ok(())
}

#[derive(Serialize)]
struct ClassSize {
    class: usize,
    squares: usize,
    white: u32,
    black: u32,
    hash_size: u64,
}

#[derive(Serialize)]
struct VariantReport {
    name: String,
    description: String,
    board: String,
    start: String,
    goal: String,
    classes: Vec<ClassSize>,
    solved: bool,
    /// Why a database is there but not trusted.
    problem: Option<String>,
    legal_positions: Option<u128>,
    start_remoteness: Option<u128>,
}

fn variants(db: &Path, json: bool, out: &mut dyn Write) -> Result<()> {
    let mut reports = Vec::new();
    for variant in Variant::builtin()? {
        let opened = Database::open(db, &variant);
        let (solved, problem) = match &opened {
            Ok(_) => (true, None),
            Err(Error::NotSolved { .. }) => (false, None),
            Err(e) => (false, Some(e.to_string())),
        };
        let meta = |key| opened.as_ref().ok().and_then(|d| meta_number(d, key).ok().flatten());
        reports.push(VariantReport {
            name: variant.name().to_owned(),
            description: variant.description().to_owned(),
            board: variant.board().to_string(),
            start: variant.start().to_string(),
            goal: variant.goal().to_string(),
            classes: variant
                .classes()
                .iter()
                .map(|s| ClassSize {
                    class: s.class.index(),
                    squares: s.geometry.len(),
                    white: s.counts().0,
                    black: s.counts().1,
                    hash_size: s.index.len(),
                })
                .collect(),
            solved,
            problem,
            legal_positions: meta("legal_positions"),
            start_remoteness: meta("start_remoteness"),
        });
    }
    if json {
        return write_json(out, &serde_json::json!({ "variants": reports }));
    }
    let mut text = format!(
        "{:<10} {:<28} {:>16} {:>8} {:<7} {}\n",
        "variant", "hash sizes", "legal", "start r", "solved", "start"
    );
    for r in &reports {
        let sizes: Vec<String> = r.classes.iter().map(|c| c.hash_size.to_string()).collect();
        text += &format!(
            "{:<10} {:<28} {:>16} {:>8} {:<7} {}\n",
            r.name,
            sizes.join(" x "),
            shown(r.legal_positions),
            shown(r.start_remoteness),
            match (&r.problem, r.solved) {
                (Some(_), _) => "damaged",
                (None, true) => "yes",
                (None, false) => "no",
            },
            r.start
        );
    }
    if reports.iter().any(|r| r.problem.is_some()) {
        text += "damaged: the database is there but cannot be trusted; run `bishops solve NAME --force`\n";
    }
    out.write_all(text.as_bytes()).map_err(stdout_error)
}

#[derive(Serialize)]
struct Hardest {
    position: String,
    hash: u64,
}

#[derive(Serialize)]
struct ClassReport {
    class: usize,
    squares: usize,
    white: u32,
    black: u32,
    hash_size: u64,
    legal: u64,
    reachable: u64,
    unreachable: u64,
    max_remoteness: Option<Remoteness>,
    /// `histogram[r]`: positions of remoteness `r`.
    histogram: Vec<u64>,
    hardest: Vec<Hardest>,
}

#[derive(Serialize)]
struct StatsReport {
    variant: String,
    path: PathBuf,
    start: String,
    start_remoteness: Option<u128>,
    max_remoteness: Option<u128>,
    legal_positions: Option<u128>,
    solve_seconds: Option<f64>,
    classes: Vec<ClassReport>,
}

fn stats(db: &Path, args: StatsArgs, out: &mut dyn Write) -> Result<()> {
    let variant = Variant::named(&args.variant)?;
    let database = Database::open(db, &variant)?;
    let classes = variant
        .classes()
        .iter()
        .zip(database.classes())
        .map(|(spec, record)| {
            let stats = &record.stats;
            ClassReport {
                class: record.class,
                squares: spec.geometry.len(),
                white: spec.counts().0,
                black: spec.counts().1,
                hash_size: record.hash_size,
                legal: stats.legal,
                reachable: stats.reachable,
                unreachable: stats.legal - stats.reachable,
                max_remoteness: stats.max_remoteness(),
                histogram: stats.histogram.clone(),
                hardest: stats
                    .hardest
                    .iter()
                    .map(|&hash| Hardest {
                        position: Position::from_parts(variant.board(), &[(&spec.geometry, spec.index.unrank(hash))])
                            .to_string(),
                        hash,
                    })
                    .collect(),
            }
        })
        .collect();
    let report = StatsReport {
        variant: variant.name().to_owned(),
        path: database.path().to_path_buf(),
        start: variant.start().to_string(),
        start_remoteness: meta_number(&database, "start_remoteness")?,
        max_remoteness: meta_number(&database, "max_remoteness")?,
        legal_positions: meta_number(&database, "legal_positions")?,
        solve_seconds: database.meta("solve_seconds")?.and_then(|v| v.parse().ok()),
        classes,
    };
    if args.json {
        return write_json(out, &report);
    }
    let mut text = format!(
        "variant {} ({})\nstart {}: remoteness {}; largest remoteness {}; {} legal positions\n",
        report.variant,
        report.path.display(),
        report.start,
        shown(report.start_remoteness),
        shown(report.max_remoteness),
        shown(report.legal_positions),
    );
    for c in &report.classes {
        text += &format!(
            "\nclass {} ({} squares, {} white + {} black, R = {}): {} legal, {} reachable, {} unreachable\n",
            crate::board::Class::from_index(c.class).map_or("?", |k| k.name()),
            c.squares,
            c.white,
            c.black,
            c.hash_size,
            c.legal,
            c.reachable,
            c.unreachable
        );
        text += "  remoteness  positions\n";
        for (r, n) in c.histogram.iter().enumerate() {
            text += &format!("  {r:>10}  {n:>9}\n");
        }
        if let Some(max) = c.max_remoteness {
            text += &format!("  hardest (remoteness {max}):\n");
            for h in &c.hardest {
                text += &format!("    {}  hash {}\n", h.position, h.hash);
            }
        }
    }
    out.write_all(text.as_bytes()).map_err(stdout_error)
}
