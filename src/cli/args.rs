//! The command line's grammar: the top-level options, the subcommands and
//! their arguments, as clap derives them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::solver::Method;
use crate::storage::Layout;

/// What `bishops --help` and the manual page say last: the exit statuses.
const EXIT_STATUS: &str = "Exit status: 0 on success, 2 for bad input, 3 for a solve stopped on purpose \
(kill -USR1 PID) with its work saved, which the same command goes on from, 1 for anything else.";

/// What `bishops solve --help` says last: how to stop a long solve.
const SOLVE_STOP: &str = "kill -USR1 PID asks a running solve to stop where it loses nothing: it saves \
its search at its next save point, says where, and exits 3; the same command goes on from there. \
SIGTERM and Ctrl-C stop it at once, losing what it did since its last checkpoint or mark.";

/// Strongly solves the Bishops swap puzzle and answers questions about its positions.
#[derive(Parser, Debug)]
#[command(name = "bishops", version, about, after_help = EXIT_STATUS)]
pub struct Cli {
    /// Where solved databases live.
    #[arg(long, global = true, env = "BISHOPS_DB", default_value = "db")]
    pub db: PathBuf,
    /// Threads for solving (default: one per core).
    #[arg(long, global = true, env = "BISHOPS_THREADS")]
    pub threads: Option<usize>,
    /// A variant of your own: a JSON file like those of `variants/`, which
    /// may cut squares out of the board (`holes`). May be given again.
    #[arg(long = "variant-file", global = true, value_name = "FILE")]
    pub variant_files: Vec<PathBuf>,
    /// A directory of variant files: every `*.json` in it, as --variant-file.
    #[arg(long = "variants", global = true, value_name = "DIR")]
    pub variant_dirs: Vec<PathBuf>,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Solve variants and write their databases.
    #[command(after_help = SOLVE_STOP)]
    Solve(SolveArgs),
    /// Status, remoteness, board and every legal move of a position.
    Query(PositionArgs),
    /// An optimal move line from a position to the goal.
    Line(PositionArgs),
    /// Check a move sequence: each move's value, and whether it reached the goal optimally.
    Verify(VerifyArgs),
    /// Play in the terminal, with hints: one command per line on standard input.
    Play(PlayArgs),
    /// The solved table of a variant: position,hash,remoteness,class.
    Export(ExportArgs),
    /// The known variants, their sizes and whether they are solved.
    Variants(JsonArgs),
    /// Positions per remoteness and the hardest positions of a variant.
    Stats(StatsArgs),
    /// Prove a solved database correct from the rules alone (or check a random sample).
    Check(CheckArgs),
    /// Rewrite databases of residues (an MPI two-bit solve's) as frames of exact values.
    Compact(CompactArgs),
    /// Solve variants in fresh processes and report time, rate and peak memory.
    Bench(BenchArgs),
    /// Play and study the puzzle in a browser: a local web server and its JSON API.
    Serve(ServeArgs),
    /// A shell completion script on stdout: `bishops completions bash > …`.
    Completions(CompletionsArgs),
    /// The manual page (roff) on stdout: of `bishops`, or of one command.
    Man(ManArgs),
}

/// Arguments of `completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// A command whose page to print instead of the main page.
    pub command: Option<String>,
}

/// Arguments of `serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The address to listen on (`0.0.0.0` for every interface).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// The port to listen on (0: any free one, named on stderr).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Open the page in the desktop's browser.
    #[arg(long)]
    pub open: bool,
    /// The largest unsolved variant solved when a client asks about it, in
    /// hash entries (0: none).
    #[arg(long, value_name = "ENTRIES", default_value_t = crate::server::SERVE_QUICK_SOLVE_ENTRIES)]
    pub on_demand_entries: u64,
    /// How many variants that have no file in `variants/` (standard ones,
    /// like 6x4-full) clients may have solved on demand.
    #[arg(long, value_name = "COUNT", default_value_t = 0)]
    pub on_demand_standard: usize,
    /// Also answer requests whose Host header is NAME (repeatable;
    /// NAME:PORT when clients reach the server on another port, through a
    /// tunnel or a proxy). Otherwise only loopback names (localhost,
    /// 127.0.0.1, `[::1]`) and the --bind address are answered, against DNS
    /// rebinding; `*` answers any Host.
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<crate::server::AllowedHost>,
    /// MiB of checked blocks kept in memory for each open database,
    /// taken as blocks are read. A question about a large table confirms
    /// its values from some hundreds of blocks: a server whose questions
    /// range widely over 11x10 or larger answers many times faster when
    /// the blocks they touch stay here. At most the machine's memory.
    #[arg(long, value_name = "MIB", default_value_t = (crate::storage::BLOCK_CACHE_BYTES >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    pub cache_mib: u64,
    /// Read the table of VARIANT into that memory as the server starts, in
    /// the background while it answers (repeatable), as far as --cache-mib
    /// allows: questions drawn from the whole of a large table then read
    /// nothing from the file. A table in frames is held in the bits its
    /// values need, a few a position (docs/server.md gives what each table
    /// took).
    #[arg(long, value_name = "VARIANT")]
    pub hold: Vec<String>,
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

/// Whether to fold a table on disk onto its orbits (`solve --fold`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FoldArg {
    /// When the disk needs it, or a fold was begun.
    Auto,
    /// Whenever the table is on disk.
    Always,
    /// Never.
    Never,
}

impl FoldArg {
    /// The option: `None` for the solve to choose.
    pub fn fold(self) -> Option<bool> {
        match self {
            FoldArg::Auto => None,
            FoldArg::Always => Some(true),
            FoldArg::Never => Some(false),
        }
    }
}

/// The search methods, as `--method` names them.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodArg {
    /// Tight while a byte per position fits in memory, two-bit beyond.
    Auto,
    /// Parallel search over legal positions only, a byte each.
    Tight,
    /// One-core search over the dense public hash (a cross-check).
    Dense,
    /// Parallel search keeping two bits per position (remoteness mod 3),
    /// for boards too large for a byte.
    TwoBit,
}

impl MethodArg {
    /// The name `--method` takes.
    pub fn name(self) -> &'static str {
        self.method().map_or("auto", Method::name)
    }

    /// The search asked for; `None` lets the memory decide.
    pub fn method(self) -> Option<Method> {
        match self {
            MethodArg::Auto => None,
            MethodArg::Tight => Some(Method::Tight),
            MethodArg::Dense => Some(Method::Dense),
            MethodArg::TwoBit => Some(Method::TwoBit),
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
    /// Discard the checkpoint of an unfinished solve and search from the start.
    #[arg(long)]
    pub restart: bool,
    /// The search to use.
    #[arg(long, value_enum, default_value = "auto")]
    pub method: MethodArg,
    /// How to store the tables: a row per position (readable with sqlite3),
    /// a blob per white set, compressed frames of blocks, the two-bit
    /// search's residues, or by size: rows up to a million positions per
    /// class, frames beyond.
    #[arg(long, value_enum, default_value = "auto")]
    pub layout: LayoutArg,
    /// Use at most this many MiB searching (default: what is available). A
    /// two-bit table that does not fit is kept on disk in the database
    /// directory, only part of it in memory; a solve that cannot fit even so is refused.
    #[arg(long, value_name = "MIB")]
    pub max_memory: Option<u64>,
    /// Use at most this many MiB of disk in the database directory
    /// (default: what is free): a two-bit table on disk is folded onto its
    /// orbits when that makes the solve fit (unless --fold never), and a
    /// solve that cannot fit even so is refused before it starts.
    #[arg(long, value_name = "MIB")]
    pub max_disk: Option<u64>,
    /// Fold a two-bit table on disk onto its orbits before the database is
    /// written (`always`), never, or when the table and the database would
    /// not fit the disk together (`auto`): half the table's disk, on a
    /// board whose one symmetry exchanges the colours (11x10, 12x10, 13x10).
    #[arg(long, value_enum, default_value = "auto")]
    pub fold: FoldArg,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Database layouts, as `--layout` names them.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutArg {
    /// Rows while every class has at most a million legal positions, frames
    /// beyond; for the two-bit search, frames (residues across MPI ranks).
    Auto,
    /// A row per legal position.
    Rows,
    /// A blob per white set, a byte per position.
    Blocks,
    /// The exact remoteness compressed, in frames of blocks (a two-bit
    /// search's table is resolved to exact values as it is written).
    Frames,
    /// The two-bit search's codes as they are: two bits a position, written
    /// fastest, but a value read back is a descent to the goal.
    Residues,
}

impl LayoutArg {
    /// The layout asked for; `None` lets the size decide.
    pub fn layout(self) -> Option<Layout> {
        match self {
            LayoutArg::Auto => None,
            LayoutArg::Rows => Some(Layout::Rows),
            LayoutArg::Blocks => Some(Layout::Blocks),
            LayoutArg::Frames => Some(Layout::Frames),
            LayoutArg::Residues => Some(Layout::Residues),
        }
    }
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

/// Arguments of `verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The position the moves start from, like `5_4_a1-a3_e1-e3`.
    pub position: String,
    /// The moves, like `a3-b2 e1-d2`; `-` reads them from standard input
    /// (separated by whitespace or newlines, `#` starts a comment).
    pub moves: Vec<String>,
    /// The variant, when the position's own board and counts should not decide.
    #[arg(long)]
    pub variant: Option<String>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `play`.
#[derive(Args, Debug)]
pub struct PlayArgs {
    /// A position like `5_4_a1-a3_e1-e3`, or a variant name to start from
    /// its start (default: the start of `--variant`, or of 5x4).
    pub start: Option<String>,
    /// The variant, when the position's own board and counts should not decide.
    #[arg(long)]
    pub variant: Option<String>,
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

/// Arguments of `compact`.
#[derive(Args, Debug)]
pub struct CompactArgs {
    /// The variants whose databases to rewrite; one in another layout than
    /// residues is left as it is.
    #[arg(required = true)]
    pub variants: Vec<String>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The variant.
    pub variant: String,
    /// Check this many random positions per class instead of every one.
    #[arg(long, value_name = "N")]
    pub sample: Option<u64>,
    /// The seed of the sample (default: from the clock, and reported).
    #[arg(long)]
    pub seed: Option<u64>,
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
    /// Apache Parquet, typed columns (needs -o FILE).
    Parquet,
}

/// Arguments of `export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The variant.
    pub variant: String,
    /// The output format.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: Format,
    /// Write to this file instead of stdout: a new file atomically, an
    /// existing one only with --force; a FIFO or a device is written through.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Replace the file given to -o when it exists (never a database, a
    /// checkpoint or a file of the database directory that is not an export).
    #[arg(long)]
    pub force: bool,
    /// With --format parquet: a `position` column too (the position
    /// string), besides the squares.
    #[arg(long)]
    pub with_position: bool,
}
