//! Confirming a value before it is shown: a remoteness read from a
//! database is given out only where the rules hold around it.
//!
//! Checksums find damage, not forgery: a block edited with its checksums
//! recomputed reads back as written. What cannot be forged past is the
//! rules. A position of remoteness `r` other than the goal has a neighbour
//! at `r - 1`, none closer and none unreachable; the goal has 0; an
//! unreachable position has no reachable neighbour. [`Database::confirm`]
//! checks those rules at one class part from its neighbours' stored
//! values, so a forged value there contradicts its neighbours and is
//! refused. One confirmed position proves nothing of the table; a full
//! `check` does.
//!
//! A question confirms its position and every move's value so, in every
//! layout. In the layouts of exact values (rows, blocks, frames) a
//! neighbour's value is one lookup. In the residues layout a value is the
//! length of a descent to the goal through neighbours one less mod 3: a
//! neighbour is descended only as far as it takes to show it is not too
//! close, and the descents of one question share what they learn
//! ([`Walks`]): the positions of a descent have the values along it, and a
//! descent cut short leaves lower bounds. That costs a question on 11x10
//! in residues about half a second; the same table resolved into frames
//! answers in milliseconds.

use std::collections::HashMap;

use super::read::{Database, Scratch};
use super::schema::Layout;
use crate::error::{Error, Result};
use crate::index::{sample_state, splitmix};
use crate::mod3::exact::Toward;
use crate::position::Position;
use crate::remoteness::{Cell, Remoteness};
use crate::rules::Part;
use crate::variant::Variant;
use crate::variant::Width;

/// Positions of each class that a solve's check of its own table draws at
/// random ([`Database::audit`]), besides the goal, the start and the
/// hardest positions.
pub const AUDIT_SAMPLES: u64 = 256;

/// How many confirmed values (class number, part, value) a connection
/// remembers ([`Database::confirm`]): at most about 17 MiB of them on
/// boards of up to 64 squares a class (33 MiB past that), a map of 2^19
/// places of 32 or 64 bytes. When full, it forgets them all and starts
/// again.
pub const CONFIRMED_KEPT: usize = 1 << 18;

/// What one question has learnt of descent values in the residues layout,
/// shared by its confirmations: by class number and public hash.
#[derive(Debug, Default)]
pub struct Walks {
    known: HashMap<(usize, u64), Known>,
    path: Vec<(usize, u64)>,
}

/// What a walk knows of a position's descent value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Known {
    /// The value.
    Exact(u16),
    /// A lower bound of it.
    AtLeast(u16),
}

/// A position's value as far as a bounded look settles it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Within {
    /// It cannot reach the goal.
    Unreachable,
    /// Its value, at most the bound.
    Exact(u16),
    /// Its value is above the bound.
    Above,
}

impl<W: Width> Database<W> {
    /// What a solve checks of its own table, written whole but not yet
    /// renamed into place ([`write_vetted`](super::write_vetted)), before it
    /// becomes the variant's database (and `solve` again before it says a
    /// database is already solved): whatever made the table (a search, a
    /// resumed checkpoint, a write), the rules hold where it looks.
    ///
    /// The database was opened with every check of [`Database::open`]: its
    /// header checksum, its counts and histograms against each other and
    /// the variant's classes, the start, the goal at 0 and the hardest
    /// positions at the largest remoteness. Then, in each class, it
    /// [confirms](Database::confirm) the value of the goal, the start,
    /// every stored hardest position and `samples` positions drawn at
    /// random with `seed`. The hardest positions are the newest layer's: a
    /// search ended too early, or a checkpoint that says a search was over
    /// when it was not, leaves them beside positions it marks unreachable,
    /// and that fails here every time. Anything else the draws may miss;
    /// only a full `check` proves a table. Returns the positions checked.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`](crate::Error::Corrupt) naming the position that
    /// breaks a rule and how; what reading the file ran into.
    pub fn audit(&self, variant: &Variant, samples: u64, seed: u64) -> Result<u64> {
        let mut checked = 0;
        let mut walks = Walks::default();
        for (k, spec) in variant.specs::<W>().iter().enumerate() {
            let stats = &self.classes[k].stats;
            let space = spec.index.len();
            // Each hardest hash was found legal when the file was opened;
            // each is at the class's largest remoteness.
            let hardest: Vec<Part<W>> = (stats.hardest.iter().filter(|&&h| h < space))
                .map(|&h| spec.index.unrank(h))
                .collect();
            for &part in &hardest {
                let value = self.value(k, part, &mut walks)?;
                if value != stats.max_remoteness() {
                    return Err(self.corrupt(format!(
                        "lists hash {} among the hardest of class {}, but its remoteness is {}",
                        spec.index.rank(part),
                        spec.class.name(),
                        value.map_or("none".into(), |r| r.to_string())
                    )));
                }
            }
            let mut parts = vec![spec.goal, spec.start];
            parts.extend(hardest);
            let mut state = sample_state(seed, k);
            // Drawn by the public hash, keeping the legal ones: a few
            // hundred tries a position on the largest boards, each an unrank.
            let want = parts.len() + samples as usize;
            let mut tries = samples.saturating_mul(1 << 16);
            while parts.len() < want && tries > 0 && stats.legal > 0 {
                tries -= 1;
                let part = spec.index.unrank(splitmix(&mut state) % space);
                if part.is_legal(&spec.geometry) {
                    parts.push(part);
                }
            }
            for part in parts {
                let value = self.value(k, part, &mut walks)?;
                self.confirm(k, part, value, &mut walks)?;
                checked += 1;
            }
        }
        Ok(checked)
    }

    /// Checks that the stored value `value` of the legal part `part` of
    /// class `k` (`None`: unreachable) keeps the rules with its
    /// neighbours' stored values: the goal has 0; another position of
    /// remoteness `r` has a neighbour at `r - 1`, none closer and none
    /// unreachable; an unreachable one has no reachable neighbour. In the
    /// residues layout a value is its descent, and a neighbour is descended
    /// only as far as it takes to show it is not too close. A forged value
    /// that checksums cannot catch contradicts its neighbours here; one
    /// confirmed position proves nothing of the rest of the table, which a
    /// full `check` does. `walks` carries what earlier confirmations of the
    /// same question learnt.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`](crate::Error::Corrupt) naming what breaks a rule,
    /// or what reading the table ran into.
    ///
    /// A connection remembers the last [`CONFIRMED_KEPT`] values it
    /// confirmed (the file is never changed under it, and they were
    /// confirmed from blocks it checked), so asking again for one of them
    /// with the same value costs a lookup: a player's questions, a line's
    /// steps and a server's load meet the same positions again and again.
    pub fn confirm(&self, k: usize, part: Part<W>, value: Option<Remoteness>, walks: &mut Walks) -> Result<()> {
        if self.confirmed.borrow().get(&(k, part)) == Some(&value) {
            return Ok(());
        }
        self.confirm_afresh(k, part, value, walks)?;
        let mut confirmed = self.confirmed.borrow_mut();
        if confirmed.len() >= CONFIRMED_KEPT {
            confirmed.clear();
        }
        confirmed.insert((k, part), value);
        Ok(())
    }

    /// [`Database::confirm`] from the neighbours' values, without what the
    /// connection remembers.
    fn confirm_afresh(&self, k: usize, part: Part<W>, value: Option<Remoteness>, walks: &mut Walks) -> Result<()> {
        // The connection's buffers, given back after, whatever the outcome.
        let mut scratch = self.scratch.take();
        let confirmed = self.confirm_in(k, part, value, walks, &mut scratch);
        self.scratch.replace(scratch);
        confirmed
    }

    /// [`confirm_afresh`](Self::confirm_afresh) with the buffers `scratch`.
    fn confirm_in(
        &self,
        k: usize,
        part: Part<W>,
        value: Option<Remoteness>,
        walks: &mut Walks,
        scratch: &mut Scratch<W>,
    ) -> Result<()> {
        let spec = &self.specs[k];
        let broken = |problem: String| {
            let position = Position::from_parts(spec.geometry.board(), &[(&spec.geometry, part)]);
            self.corrupt(format!(
                "breaks the rules at {position} (class {}), which {problem}",
                spec.class.name()
            ))
        };
        scratch.neighbours.clear();
        part.for_each_move(&spec.geometry, |_, _, _, after| scratch.neighbours.push(after));
        let Some(r) = value.map(|r| r.0) else {
            if part == spec.goal {
                return Err(broken("is the goal but is marked unreachable".into()));
            }
            let mut reachable = false;
            self.within_all(k, 0, walks, scratch, |within| {
                reachable |= within != Within::Unreachable;
                Ok(())
            })?;
            if reachable {
                return Err(broken("is marked unreachable but a neighbour is not".into()));
            }
            return Ok(());
        };
        if self.metadata.layout == Layout::Residues && self.within(k, part, r, walks)? != Within::Exact(r) {
            return Err(broken(format!("is shown at {r}, which its descent does not bear out")));
        }
        match (part == spec.goal, r) {
            (true, 0) => return Ok(()),
            (true, _) => return Err(broken(format!("is the goal but has remoteness {r}"))),
            (false, 0) => return Err(broken("has remoteness 0 but is not the goal".into())),
            _ => {}
        }
        let mut one_closer = false;
        self.within_all(k, r - 1, walks, scratch, |within| {
            match within {
                Within::Unreachable => {
                    return Err(broken(format!(
                        "has remoteness {r} but a neighbour is marked unreachable"
                    )));
                }
                Within::Exact(w) if w + 1 < r => {
                    return Err(broken(format!("has remoteness {r} but a neighbour has {w}")));
                }
                Within::Exact(w) => one_closer |= w + 1 == r,
                Within::Above => {}
            }
            Ok(())
        })?;
        if !one_closer {
            return Err(broken(format!("has remoteness {r} but no neighbour has {}", r - 1)));
        }
        Ok(())
    }

    /// The stored value of the legal part `part` of class `k`: one lookup
    /// in the byte layouts, a descent in the residues layout (sharing what
    /// `walks` knows). `None`: it cannot reach the goal.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`](crate::Error::Corrupt) when the table has no
    /// entry for it, or its descent fails; what reading the table ran into.
    pub fn value(&self, k: usize, part: Part<W>, walks: &mut Walks) -> Result<Option<Remoteness>> {
        let max = self.classes[k].stats.max_remoteness().map_or(0, |r| r.0);
        match self.within(k, part, max, walks)? {
            Within::Unreachable => Ok(None),
            Within::Exact(v) => Ok(Some(Remoteness(v))),
            Within::Above => Err(self.corrupt(format!(
                "gives hash {} of class {} a descent longer than the class's largest remoteness, {max}",
                self.specs[k].index.rank(part),
                crate::board::Class::name_of(self.classes[k].class)
            ))),
        }
    }

    /// The value of the legal part `part` of class `k`, settled as far as
    /// `bound`: one lookup in the byte layouts, a descent of at most
    /// `bound` steps in the residues layout.
    fn within(&self, k: usize, part: Part<W>, bound: u16, walks: &mut Walks) -> Result<Within> {
        if self.metadata.layout != Layout::Residues {
            // Read straight from the part: no hash to rank and unrank.
            return self.settled(k, Cell(self.stored(k, part)?), bound);
        }
        self.walk(k, part, bound, walks)
    }

    /// [`within`](Self::within) of each of `scratch`'s neighbours, in
    /// order, given to `each` until it fails; in the byte layouts their
    /// cells are read together ([`Database::stored_all`]).
    fn within_all(
        &self,
        k: usize,
        bound: u16,
        walks: &mut Walks,
        scratch: &mut Scratch<W>,
        mut each: impl FnMut(Within) -> Result<()>,
    ) -> Result<()> {
        if self.metadata.layout == Layout::Residues {
            for &part in &scratch.neighbours {
                each(self.walk(k, part, bound, walks)?)?;
            }
            return Ok(());
        }
        self.stored_all(k, &scratch.neighbours, &mut scratch.cells, &mut scratch.misses)?;
        for &cell in &scratch.cells {
            each(self.settled(k, Cell(cell), bound)?)?;
        }
        Ok(())
    }

    /// A stored `cell` of class `k`, settled as far as `bound`. Inlined:
    /// a question settles some thousands of cells.
    #[inline]
    fn settled(&self, k: usize, cell: Cell, bound: u16) -> Result<Within> {
        if !cell.is_legal() {
            return Err(self.no_entry(k));
        }
        Ok(match cell.remoteness() {
            None => Within::Unreachable,
            Some(r) if r.0 <= bound => Within::Exact(r.0),
            Some(_) => Within::Above,
        })
    }

    /// The error for a table with no entry for a legal position of class `k`.
    #[cold]
    fn no_entry(&self, k: usize) -> Error {
        self.corrupt(format!(
            "has no entry for a legal position of class {}",
            crate::board::Class::name_of(self.classes[k].class)
        ))
    }

    /// The descent of `part` in class `k` of a residues table, at most
    /// `bound` steps, ended early by what `walks` knows; records what it
    /// learns there.
    fn walk(&self, k: usize, part: Part<W>, bound: u16, walks: &mut Walks) -> Result<Within> {
        let spec = &self.specs[k];
        if let Some(&Known::Exact(v)) = walks.known.get(&(k, spec.index.rank(part))) {
            return Ok(if v <= bound { Within::Exact(v) } else { Within::Above });
        }
        let Some(mut here) = self.residue(k, part)? else {
            return Ok(Within::Unreachable);
        };
        walks.path.clear();
        let toward = Toward::new(&spec.geometry, spec.goal);
        let mut at = part;
        let mut steps = 0u16;
        let found = loop {
            let key = (k, spec.index.rank(at));
            walks.path.push(key);
            if at == spec.goal {
                if here != 0 {
                    return Err(self.corrupt(format!(
                        "gives the goal of class {} a remoteness of {here} mod 3",
                        crate::board::Class::name_of(self.classes[k].class)
                    )));
                }
                break Some(steps);
            }
            match walks.known.get(&key) {
                Some(&Known::Exact(v)) => break Some(steps + v),
                Some(&Known::AtLeast(low)) if steps + low > bound => break None,
                _ => {}
            }
            if steps >= bound {
                break None;
            }
            let closer = (here + 2) % 3;
            let Some(next) = toward.closer(&spec.geometry, at, closer, |after| self.residue(k, after))? else {
                return Err(self.corrupt(format!(
                    "gives hash {} of class {} no neighbour one move closer",
                    key.1,
                    crate::board::Class::name_of(self.classes[k].class)
                )));
            };
            (at, here) = (next, closer);
            steps += 1;
        };
        for (t, &key) in walks.path.iter().enumerate() {
            let t = t as u16;
            match found {
                Some(v) => {
                    walks.known.insert(key, Known::Exact(v - t));
                }
                // Past the bound: the t-th position is past bound − t.
                None if bound + 1 > t => {
                    let low = bound + 1 - t;
                    let entry = walks.known.entry(key).or_insert(Known::AtLeast(low));
                    if let Known::AtLeast(old) = entry {
                        *old = (*old).max(low);
                    }
                }
                None => {}
            }
        }
        Ok(match found {
            Some(v) if v <= bound => Within::Exact(v),
            _ => Within::Above,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{SolveOptions, SolvePlan};

    /// A value confirmed once is remembered with that value only: asking
    /// again with another value is still refused, and a refusal leaves
    /// nothing remembered.
    #[test]
    fn a_remembered_confirmation_holds_only_for_its_own_value() {
        let dir = std::env::temp_dir().join(format!("bishops-confirm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let variant = Variant::named("5x4").unwrap();
        SolvePlan::new(&variant, SolveOptions::default())
            .unwrap()
            .run(&dir, &mut |_| {})
            .unwrap();
        let db = Database::<u64>::open(&dir, &variant).unwrap();
        let spec = &variant.specs::<u64>()[0];
        let mut walks = Walks::default();
        // The start and the positions one and two moves from it.
        let mut parts = vec![spec.start];
        spec.start
            .for_each_move(&spec.geometry, |_, _, _, after| parts.push(after));
        let first = parts.clone();
        for part in first {
            part.for_each_move(&spec.geometry, |_, _, _, after| parts.push(after));
        }
        let mut checked = 0;
        for &part in &parts {
            let Some(value) = db.value(0, part, &mut walks).unwrap() else {
                continue;
            };
            let wrong = Some(Remoteness(value.0 + 1));
            db.confirm(0, part, Some(value), &mut walks).unwrap();
            assert_eq!(db.confirmed.borrow().get(&(0, part)), Some(&Some(value)));
            for _ in 0..2 {
                assert!(db.confirm(0, part, wrong, &mut walks).is_err(), "{part:?} at {wrong:?}");
            }
            db.confirm(0, part, Some(value), &mut walks).unwrap();
            assert_eq!(db.confirmed.borrow().get(&(0, part)), Some(&Some(value)));
            checked += 1;
        }
        assert!(checked > 10, "{checked}");
        assert!(db.confirmed.borrow().len() <= CONFIRMED_KEPT);
        // What CONFIRMED_KEPT's memory bound counts a place at.
        assert_eq!(size_of::<((usize, Part<u64>), Option<Remoteness>)>(), 32);
        assert_eq!(size_of::<((usize, Part<u128>), Option<Remoteness>)>(), 64);
        // A refusal is not remembered.
        db.confirmed.borrow_mut().clear();
        let value = db.value(0, spec.start, &mut walks).unwrap().unwrap();
        assert!(
            db.confirm(0, spec.start, Some(Remoteness(value.0 + 3)), &mut walks)
                .is_err()
        );
        assert!(db.confirmed.borrow().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A question asked alone reads ahead all it then reads. The first on
    /// a connection keeps the cells of the position's neighbours and of
    /// theirs, and its values and their confirmations, in both classes
    /// (the second stored as the mirror image of the first), then take no
    /// block from the file or the shared cache; a question after keeps
    /// their blocks in the shared cache, and reads no frame more. Both
    /// agree with a connection that reads nothing ahead.
    #[test]
    fn a_question_read_ahead_reads_nothing_more() {
        let dir = std::env::temp_dir().join(format!("bishops-ahead-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let variant = Variant::named("9x6").unwrap();
        let options = SolveOptions {
            layout: Some(Layout::Frames),
            ..SolveOptions::default()
        };
        SolvePlan::new(&variant, options)
            .unwrap()
            .run(&dir, &mut |_| {})
            .unwrap();
        let db = Database::<u64>::open(&dir, &variant).unwrap();
        let plain = Database::<u64>::open(&dir, &variant).unwrap();
        assert_eq!(db.layout(), Layout::Frames);
        assert!(db.mirrors[1].is_some(), "class 1 is stored as class 0's mirror image");
        let specs = variant.specs::<u64>();
        let (mut walks, mut plain_walks) = (Walks::default(), Walks::default());
        // A question about `here`, as `Table::probe_known` asks it.
        let mut ask = |here: &[Part<u64>]| {
            let mut asked = 0;
            for (k, &part) in here.iter().enumerate() {
                let mut parts = vec![part];
                part.for_each_move(&specs[k].geometry, |_, _, _, after| parts.push(after));
                for part in parts {
                    let value = db.value(k, part, &mut walks).unwrap();
                    assert_eq!(value, plain.value(k, part, &mut plain_walks).unwrap());
                    db.confirm(k, part, value, &mut walks).unwrap();
                    asked += 1;
                }
            }
            assert!(asked > 10, "{asked}");
        };
        // A position some moves from the start, so that its classes differ.
        let mut here: Vec<Part<u64>> = specs.iter().map(|spec| spec.start).collect();
        for _ in 0..3 {
            let mut next = None;
            here[0].for_each_move(&specs[0].geometry, |_, _, _, after| {
                next.get_or_insert(after);
            });
            here[0] = next.unwrap();
        }
        // What opening it read is forgotten.
        db.recent.borrow_mut().clear();
        *db.memo.borrow_mut() = Default::default();
        *db.frames.borrow_mut() = Default::default();
        db.read_ahead(&here);
        assert!(
            db.ahead.borrow().len() > 100,
            "{} cells read ahead",
            db.ahead.borrow().len()
        );
        ask(&here);
        assert!(
            db.recent.borrow().iter().all(Option::is_none),
            "a block was read besides the cells read ahead"
        );
        // The next question, a white move later.
        let mut next = None;
        here[1].for_each_move(&specs[1].geometry, |_, _, _, after| {
            if after.white != here[1].white {
                next.get_or_insert(after);
            }
        });
        here[1] = next.unwrap();
        let cells = db.ahead.borrow().len();
        db.read_ahead(&here);
        assert_eq!(db.ahead.borrow().len(), cells, "the cells of the first question only");
        ask(&here);
        assert!(
            db.frames.borrow().is_empty(),
            "a frame was read besides those read ahead"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
