//! `play`: the puzzle in the terminal, with hints.
//!
//! One command per line of input, so a game can be typed or piped in; a
//! line that is not a command gets one line of explanation and the game
//! goes on.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use super::args::PlayArgs;
use super::output::{show, stdout_error, write_text};
use super::query::moves_text;
use crate::error::{Error, Result};
use crate::position::{Move, Position};
use crate::remoteness::Remoteness;
use crate::tablebase::{Probe, Table, Tablebase, Value};
use crate::variant::Variant;

const COMMANDS: &str = "a move like a3-b2, hint, moves, undo, line, new, quit";

/// `bishops play`: reads commands from `input` until `quit` or its end.
pub fn play(tablebase: &Tablebase, args: PlayArgs, input: &mut dyn BufRead, out: &mut dyn Write) -> Result<()> {
    let start = match args.start.as_deref() {
        Some(text) if text.contains('_') => text.parse::<Position>()?,
        Some(name) => Variant::named(name)?.start().clone(),
        None => Variant::named("5x4")?.start().clone(),
    };
    let table = tablebase.table(&start, args.variant.as_deref())?;
    let mut game = Game::new(table, start)?;
    write_text(
        out,
        &format!(
            "bishops play: variant {}, from {}\ncommands: {COMMANDS}\n\n{}",
            game.table.variant().name(),
            game.start,
            game.show()
        ),
    )?;
    let prompt = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    loop {
        if prompt {
            write_text(out, "> ")?;
            out.flush().map_err(stdout_error)?;
        }
        let mut line = String::new();
        if input
            .read_line(&mut line)
            .map_err(|e| Error::Io(PathBuf::from("stdin"), e))?
            == 0
        {
            return Ok(());
        }
        let command = line.trim();
        if command == "quit" || command == "exit" {
            return Ok(());
        }
        let reply = game.command(command)?;
        write_text(out, &reply)?;
    }
}

/// A game in progress: where it started and every position since.
struct Game {
    table: Table,
    start: Position,
    /// The moves played, each with the probe of the position after it.
    played: Vec<(Move, Probe)>,
    /// The probe of the start.
    first: Probe,
}

impl Game {
    fn new(table: Table, start: Position) -> Result<Game> {
        let first = table.probe(&start)?;
        Ok(Game {
            table,
            start,
            played: Vec::new(),
            first,
        })
    }

    fn here(&self) -> &Probe {
        self.played.last().map_or(&self.first, |(_, p)| p)
    }

    /// The board, the remoteness and the move count.
    fn show(&self) -> String {
        let here = self.here();
        format!(
            "{}remoteness {} ({}), moves played {}\n",
            here.board,
            show(here.remoteness),
            here.status.name(),
            self.played.len()
        )
    }

    /// Runs one command and returns what to print.
    fn command(&mut self, command: &str) -> Result<String> {
        Ok(match command {
            "" => String::new(),
            "help" | "?" => format!("commands: {COMMANDS}\n"),
            "hint" => self.hint(),
            "moves" => moves_text(&self.here().moves),
            "undo" => match self.played.pop() {
                Some((mv, _)) => format!("undid {mv}\n{}", self.show()),
                None => "nothing to undo\n".to_owned(),
            },
            "new" => {
                self.played.clear();
                format!("new game from {}\n{}", self.start, self.show())
            }
            "line" => self.rest_of_line()?,
            text => match text.parse::<Move>() {
                Ok(mv) => self.play(mv)?,
                Err(_) => format!("unknown command `{}`: type {COMMANDS}\n", crate::text::clip(text, 24)),
            },
        })
    }

    fn play(&mut self, mv: Move) -> Result<String> {
        let here = self.here();
        let before = here.remoteness;
        let Some(played) = here.moves.iter().find(|m| m.mv == mv) else {
            let reason = match here.position.try_play(mv) {
                Err(e) => e.to_string(),
                Ok(_) => "it is not a move of this position".to_owned(),
            };
            return Ok(format!("{mv} is refused: {reason}\n"));
        };
        let after = self.table.probe(&played.position)?;
        let change = format!(
            "{mv}: remoteness {} -> {} ({})\n",
            show(before),
            show(after.remoteness),
            played.value.name()
        );
        self.played.push((mv, after));
        let mut text = change + &self.show();
        if self.here().remoteness == Some(Remoteness(0)) {
            let n = self.played.len();
            let best = self.first.remoteness.map_or(0, |r| usize::from(r.0));
            text += &if n == best {
                format!("goal reached in {n} moves: optimal\n")
            } else {
                format!(
                    "goal reached in {n} moves; the optimum from the start is {best} ({} wasted)\n",
                    n.saturating_sub(best)
                )
            };
        }
        Ok(text)
    }

    fn hint(&self) -> String {
        let here = self.here();
        match (here.remoteness, here.best_move()) {
            (Some(Remoteness(0)), _) => "hint: this is the goal\n".to_owned(),
            (_, Some(best)) => {
                let same = here.moves.iter().filter(|m| m.value == Value::Better).count();
                format!(
                    "hint: {} lowers the remoteness from {} to {}{}\n",
                    best.mv,
                    show(here.remoteness),
                    show(best.remoteness),
                    if same > 1 {
                        format!(" ({} moves do)", same)
                    } else {
                        " (the only move that does)".to_owned()
                    }
                )
            }
            _ => "hint: the goal cannot be reached from here; undo or start a new game\n".to_owned(),
        }
    }

    fn rest_of_line(&self) -> Result<String> {
        let line = self.table.line(&self.here().position)?;
        if line.moves.is_empty() {
            return Ok(match line.remoteness {
                Some(_) => "line: this is the goal\n".to_owned(),
                None => "line: the goal cannot be reached from here\n".to_owned(),
            });
        }
        let moves: Vec<String> = line.moves.iter().map(Move::to_string).collect();
        Ok(format!("line ({} moves): {}\n", moves.len(), moves.join(" ")))
    }
}
