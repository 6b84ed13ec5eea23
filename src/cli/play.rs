//! `play`: the puzzle in the terminal, with hints.
//!
//! One command per line of input, so a game can be typed or piped in; a
//! line that is not a command (or not UTF-8 text, or longer than 1 KiB)
//! gets one line of explanation and the game goes on.

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
        // `--variant` alone starts from that variant's start.
        None => Variant::named(args.variant.as_deref().unwrap_or("5x4"))?
            .start()
            .clone(),
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
        let reply = match read_line(input).map_err(|e| Error::Io(PathBuf::from("stdin"), e))? {
            Line::End => return Ok(()),
            Line::Text(line) => {
                let command = line.trim();
                if command == "quit" || command == "exit" {
                    return Ok(());
                }
                game.command(command)?
            }
            Line::NotUtf8 => format!("that line is not UTF-8 text: type {COMMANDS}\n"),
            Line::TooLong => format!("that line is longer than {MAX_LINE} bytes: type {COMMANDS}\n"),
        };
        write_text(out, &reply)?;
    }
}

/// The longest line of input `play` reads as a command; far longer than any.
const MAX_LINE: usize = 1024;

/// A line of input, as [`read_line`] reads it.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// The input is over.
    End,
    /// A line of text, without its newline.
    Text(String),
    /// A line that is not UTF-8.
    NotUtf8,
    /// A line of more than [`MAX_LINE`] bytes, read to its end and dropped.
    TooLong,
}

/// Reads one line of `input`, keeping at most [`MAX_LINE`] bytes of it in
/// memory however long it is.
fn read_line(input: &mut dyn BufRead) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buffer = match input.fill_buf() {
            Ok(buffer) => buffer,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buffer.is_empty() {
            if line.is_empty() && !too_long {
                return Ok(Line::End);
            }
            break;
        }
        let (taken, ended) = match buffer.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buffer.len(), false),
        };
        let text = &buffer[..taken - usize::from(ended)];
        if line.len() + text.len() > MAX_LINE {
            too_long = true;
        } else {
            line.extend_from_slice(text);
        }
        input.consume(taken);
        if ended {
            break;
        }
    }
    Ok(if too_long {
        Line::TooLong
    } else {
        String::from_utf8(line).map_or(Line::NotUtf8, Line::Text)
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_whole_bounded_and_checked_for_utf8() {
        let mut bytes = b"hint\r\n\xff\n".to_vec();
        bytes.extend("x".repeat(3 * MAX_LINE).bytes().chain(*b"\n"));
        bytes.extend("y".repeat(MAX_LINE).bytes().chain(*b"\nquit"));
        // A reader that hands out a few bytes at a time.
        let mut input = std::io::BufReader::with_capacity(7, &bytes[..]);
        let mut lines = Vec::new();
        loop {
            let line = read_line(&mut input).unwrap();
            if line == Line::End {
                break;
            }
            lines.push(line);
        }
        assert_eq!(
            lines,
            [
                Line::Text("hint\r".into()),
                Line::NotUtf8,
                Line::TooLong,
                Line::Text("y".repeat(MAX_LINE)),
                Line::Text("quit".into()),
            ]
        );
    }
}
