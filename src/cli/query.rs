//! `query` and `line`: what the table says of one position.

use std::io::Write;

use super::args::PositionArgs;
use super::output::{show, write_json, write_text};
use crate::error::Result;
use crate::position::Position;
use crate::tablebase::{MoveValue, Probe, Tablebase};

/// `bishops query`: status, remoteness, board and every move, valued.
pub fn query(tablebase: &Tablebase, args: PositionArgs, out: &mut dyn Write) -> Result<()> {
    let position: Position = args.position.parse()?;
    let probe = tablebase.probe(&position, args.variant.as_deref())?;
    if args.json {
        return write_json(out, &probe);
    }
    write_text(out, &probe_text(&probe))
}

/// The text of `query`: a header, the board, and the move table.
pub fn probe_text(probe: &Probe) -> String {
    let mut text = format!(
        "position    {}\nvariant     {}\nhash        {}\nstatus      {}\nremoteness  {}\n\n{}\n",
        probe.position,
        probe.variant,
        probe.hash,
        probe.status.name(),
        show(probe.remoteness),
        probe.board
    );
    text += &moves_text(&probe.moves);
    text
}

/// A table of valued moves, one per line, under a header.
pub fn moves_text(moves: &[MoveValue]) -> String {
    let positions: Vec<String> = moves.iter().map(|m| m.position.to_string()).collect();
    let width = positions.iter().map(String::len).max().unwrap_or(8).max(8);
    let mut text = format!("{:<7} {:<width$}  {:>10}  value\n", "move", "position", "remoteness");
    for (m, position) in moves.iter().zip(&positions) {
        text += &format!(
            "{:<7} {:<width$}  {:>10}  {}\n",
            m.mv.to_string(),
            position,
            show(m.remoteness),
            m.value.name()
        );
    }
    if moves.is_empty() {
        text += "(no legal moves)\n";
    }
    text
}

/// `bishops line`: an optimal line to the goal with the positions it passes.
pub fn line(tablebase: &Tablebase, args: PositionArgs, out: &mut dyn Write) -> Result<()> {
    let position: Position = args.position.parse()?;
    let line = tablebase.table(&position, args.variant.as_deref())?.line(&position)?;
    if args.json {
        return write_json(out, &line);
    }
    let mut text = format!("{}  {}  {}\n", line.position, line.status.name(), show(line.remoteness));
    let total = line.moves.len();
    for (i, (mv, pos)) in line.moves.iter().zip(&line.positions).enumerate() {
        text += &format!("{:>3}. {:<7} {}  {}\n", i + 1, mv.to_string(), pos, total - i - 1);
    }
    write_text(out, &text)
}
