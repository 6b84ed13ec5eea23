//! What to remove when the process is interrupted.
//!
//! A database or export is written into a temporary file that is renamed
//! into place when complete. While it is being written its path is
//! registered here ([`Pending::register`]); the binary's signal handler
//! ([`install_signal_handlers`]) removes every registered path on SIGINT,
//! SIGTERM or SIGHUP before the process dies, so an interrupted run leaves
//! nothing behind. What a process killed outright (SIGKILL, power loss)
//! leaves is removed later by the next writer of the directory: see
//! [`storage::WriteLock`](crate::storage::WriteLock).

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

/// Starts a thread that, on SIGINT, SIGTERM or SIGHUP, removes every
/// registered path ([`remove_pending`]) and then dies of the signal as it
/// would have without a handler (so the exit status still tells the shell
/// which signal it was).
///
/// # Errors
///
/// When the handlers cannot be installed.
pub fn install_signal_handlers() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        if let Some(signal) = signals.forever().next() {
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
}
