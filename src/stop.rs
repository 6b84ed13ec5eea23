//! A stop asked for while a search runs: the search goes on to the next
//! point where stopping loses nothing, saves its work there, and ends with
//! [`Error::Stopped`](crate::Error::Stopped); the same command goes on
//! from it.
//!
//! The `bishops` binary asks for one on `SIGUSR1`
//! ([`cleanup::install_signal_handlers`](crate::cleanup::install_signal_handlers)).
//! A search that saves checkpoints stops at the end of the layer it is in,
//! once its checkpoint is saved; a search working alone with its table on
//! disk stops sooner, at the end of the part of a window it is in, once it
//! has marked how far its layer has gone (`docs/scaling.md`, "Marks inside
//! a layer"). Where no such search runs (before it, after it, in another
//! command), nothing could keep the work, and the signal ends the process
//! as it would without a handler. `SIGTERM` always stops at once, losing
//! what the search did since its last checkpoint or mark.
//!
//! The request is one flag for the whole process; a search holds a
//! [`Searching`] while it can honour it, so that [`ask`] can tell whether
//! anything will:
//!
//! ```
//! use bishops::stop;
//!
//! assert!(!stop::ask(), "no search runs: nothing could keep its work");
//! assert!(!stop::asked());
//! let searching = stop::Searching::new();
//! assert!(stop::ask(), "a search runs, and will stop at its next save point");
//! assert!(stop::asked());
//! drop(searching);
//! ```

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A stop was asked for while a search could honour it.
static ASKED: AtomicBool = AtomicBool::new(false);

/// How many [`Searching`] are held.
static SEARCHES: AtomicUsize = AtomicUsize::new(0);

/// Asks every search that can to stop at its next save point: `true` when
/// one is running ([`Searching`] held) and will, `false` when none is, and
/// nothing was asked.
pub fn ask() -> bool {
    let searching = SEARCHES.load(Ordering::SeqCst) > 0;
    if searching {
        ASKED.store(true, Ordering::SeqCst);
    }
    searching
}

/// Whether a stop has been asked for: a search that can stop here without
/// losing its work saves it and stops.
#[inline]
pub fn asked() -> bool {
    ASKED.load(Ordering::Relaxed)
}

/// Held by a search while it can stop at a save point when asked:
/// [`ask`] asks only while one is held.
#[derive(Debug)]
pub struct Searching(());

impl Searching {
    /// Says that a search that stops when asked is running, until dropped.
    pub fn new() -> Searching {
        SEARCHES.fetch_add(1, Ordering::SeqCst);
        Searching(())
    }
}

impl Default for Searching {
    fn default() -> Searching {
        Searching::new()
    }
}

impl Drop for Searching {
    fn drop(&mut self) {
        SEARCHES.fetch_sub(1, Ordering::SeqCst);
    }
}
