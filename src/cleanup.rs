//! What to remove when the process is interrupted, and what a sweep may
//! remove of what others left.
//!
//! A database or export is written into a temporary file that is renamed
//! into place when complete. While it is being written its path is
//! registered here ([`Pending::register`]); the binary's signal handler
//! ([`install_signal_handlers`]) removes every registered path on SIGINT,
//! SIGTERM or SIGHUP before the process dies, so an interrupted run leaves
//! nothing behind. What a process killed outright (SIGKILL, power loss)
//! leaves is removed later by the next writer of the directory (see
//! [`storage::WriteLock`](crate::storage::WriteLock) and
//! [`checkpoint::remove`](crate::checkpoint::remove)), under one rule:
//! [`is_abandoned`].

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Paths to remove if the process is interrupted, with whether each is a
/// directory.
static PENDING: Mutex<Vec<(PathBuf, bool)>> = Mutex::new(Vec::new());

/// A registered path: removed from the registry (not from the disk) when
/// dropped, since by then its owner has renamed or removed it.
#[derive(Debug)]
pub struct Pending {
    path: PathBuf,
}

impl Pending {
    /// Registers the file `path` for removal on interruption.
    pub fn register(path: &Path) -> Pending {
        Pending::add(path, false)
    }

    /// Registers the directory `path` (and all in it) for removal on
    /// interruption.
    pub fn register_dir(path: &Path) -> Pending {
        Pending::add(path, true)
    }

    fn add(path: &Path, dir: bool) -> Pending {
        lock().push((path.to_path_buf(), dir));
        Pending {
            path: path.to_path_buf(),
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let mut pending = lock();
        if let Some(i) = pending.iter().rposition(|(p, _)| *p == self.path) {
            pending.remove(i);
        }
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<(PathBuf, bool)>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes every registered path now: what an interrupted process does
/// before it dies.
pub fn remove_pending() {
    remove_matching(|_| true);
}

/// Removes the registered paths that `which` accepts.
fn remove_matching(which: impl Fn(&Path) -> bool) {
    lock().retain(|(path, dir)| {
        if !which(path) {
            return true;
        }
        let _ = if *dir {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        };
        false
    });
}

/// Whether a sweep may remove the temporary file named `name`: every
/// temporary file of this program is named `….tmp-PID` after the process
/// that writes it, and it is abandoned when that process is this one or is
/// gone (killed while it wrote). A file whose process is alive is left
/// alone, whoever made it; so is a name whose end is not a process id as
/// this program writes one (decimal digits, no sign, no leading zero, a
/// `pid_t` above 0), which this program did not make.
///
/// The PID alone cannot tell a writer in another PID namespace sharing the
/// directory, so the sweeps also hold the write lock of the variant whose
/// files they remove, which every writer holds while it writes.
///
/// ```
/// use bishops::cleanup::is_abandoned;
///
/// let mine = format!(".5x4.sqlite.tmp-{}", std::process::id());
/// assert!(is_abandoned(&mine));
/// // PID 1 is alive in every PID namespace.
/// assert!(!is_abandoned(".5x4.sqlite.tmp-1"));
/// for odd in [".5x4.sqlite.tmp-", ".5x4.sqlite.tmp-x1", ".5x4.sqlite.tmp-01", ".5x4.sqlite.tmp-0", "5x4.sqlite"] {
///     assert!(!is_abandoned(odd), "{odd}");
/// }
/// ```
pub fn is_abandoned(name: &str) -> bool {
    let Some((_, text)) = name.rsplit_once(".tmp-") else {
        return false;
    };
    let Some(pid) = text
        .parse::<u32>()
        .ok()
        .filter(|pid| *pid > 0 && pid.to_string() == text)
    else {
        return false;
    };
    match libc::pid_t::try_from(pid) {
        Ok(_) if pid == std::process::id() => true,
        Ok(pid) => !is_alive(pid),
        Err(_) => false,
    }
}

/// Whether the process `pid` exists (a zombie too): `kill(pid, 0)`
/// reaches it, or is refused it (EPERM: it is another user's). Only
/// ESRCH says it is gone.
fn is_alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 sends nothing; it only checks that `pid`, a single
    // process (above 0), could be sent one.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Starts a thread that, on SIGINT, SIGTERM or SIGHUP, removes every
/// registered path ([`remove_pending`]) and then dies of the signal as it
/// would have without a handler (so the exit status still tells the shell
/// which signal it was). On SIGUSR1 it asks the search under way to stop
/// at its next save point ([`stop`](crate::stop)) and says so; with no
/// search to ask, SIGUSR1 ends the process as the others do.
///
/// # Errors
///
/// When the handlers cannot be installed.
pub fn install_signal_handlers() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR1};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGUSR1])?;
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        for signal in signals.forever() {
            if signal == SIGUSR1 && crate::stop::ask() {
                crate::text::say_line(
                    "bishops: asked to stop (SIGUSR1): the search saves its work at its next mark or \
                     checkpoint and stops there, and the same command goes on from it; SIGTERM stops it at once",
                );
                continue;
            }
            remove_pending();
            // Back to the default action, then the same signal again.
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            std::process::exit(128 + signal);
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_paths_are_removed_and_dropped_ones_are_not() {
        let dir = std::env::temp_dir().join(format!("bishops-cleanup-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let (kept, removed) = (dir.join("kept"), dir.join("removed"));
        std::fs::write(&kept, b"x").unwrap();
        std::fs::write(&removed, b"x").unwrap();
        let dropped = Pending::register(&kept);
        drop(dropped);
        let _file = Pending::register(&removed);
        let _sub = Pending::register_dir(&dir.join("sub"));
        // Only this test's paths: other tests may have files registered.
        remove_matching(|p| p.starts_with(&dir));
        assert!(kept.exists());
        assert!(!removed.exists() && !dir.join("sub").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_the_files_of_gone_processes_are_abandoned() {
        let mut child = std::process::Command::new("sleep").arg("60").spawn().unwrap();
        let live = format!(".7x6.a1.checkpoint.tmp-{}", child.id());
        assert!(!is_abandoned(&live));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(is_abandoned(&live), "its process is gone");
        assert!(
            !is_abandoned(&format!(".7x6.sqlite.tmp-{}", u32::MAX)),
            "no process has it"
        );
        assert!(!is_abandoned(".7x6.sqlite.tmp-+5"));
    }
}
