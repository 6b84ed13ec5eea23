//! An Ethernet switch in user space whose links have a latency and a rate:
//! the switch of `scripts/cluster --lag`, for kernels without `netem`.
//!
//! ```text
//! switch NAME HOSTS DELAY_US RATE_MBIT
//! ```
//!
//! Makes one TAP device a host, `NAME-tI` for I in 1..=HOSTS, prints
//! `ready` once all exist, and forwards frames between them until killed.
//! `scripts/cluster` moves each device into its host's namespace as
//! `eth0`. A frame from host A to host B is carried as a link would carry
//! it: at RATE_MBIT megabits a second on A's link and again on B's (each
//! one way; frames queue behind the ones before), then DELAY_US
//! microseconds later it arrives. Frames to an unknown or broadcast
//! address go to every other host. A link's queue holds at most 16 MiB;
//! frames past that are dropped, as a switch's are.
//!
//! Linux only (`/dev/net/tun`), and root.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The most bytes queued on one link toward its host.
const QUEUE_BYTES: usize = 16 << 20;

/// A host's port: its device, what waits to go to it, and when its link
/// is next free each way.
struct Port {
    device: File,
    out: Mutex<Out>,
    ready: Condvar,
}

#[derive(Default)]
struct Out {
    /// Frames for the host, each with the instant it arrives.
    queue: VecDeque<(Instant, Vec<u8>)>,
    queued: usize,
    /// When the link toward the host is free again.
    free: Option<Instant>,
}

/// The switch's state: ports, and which port each address was seen on.
struct Switch {
    ports: Vec<Port>,
    seen: Mutex<Vec<([u8; 6], usize)>>,
    delay: Duration,
    /// Nanoseconds a byte takes on a link.
    byte_ns: f64,
}

/// Opens TAP device `name` (`IFF_TAP | IFF_NO_PI`).
fn tap(name: &str) -> std::io::Result<File> {
    const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
    let device = OpenOptions::new().read(true).write(true).open("/dev/net/tun")?;
    // struct ifreq: the name, then the flags (a short) in the union.
    let mut request = [0u8; 40];
    request[..name.len()].copy_from_slice(name.as_bytes());
    let flags = (libc::IFF_TAP | libc::IFF_NO_PI) as i16;
    request[16..18].copy_from_slice(&flags.to_ne_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which `request`
    // is as large as.
    if unsafe { libc::ioctl(device.as_raw_fd(), TUNSETIFF, request.as_mut_ptr()) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(device)
}

impl Switch {
    /// The serialization time of `bytes` on one link.
    fn on_link(&self, bytes: usize) -> Duration {
        Duration::from_nanos((bytes as f64 * self.byte_ns) as u64)
    }

    /// Reads frames from port `from` for ever and queues each for its host.
    fn ingress(&self, from: usize) {
        let mut device = &self.ports[from].device;
        let mut free = Instant::now();
        let mut frame = vec![0u8; 1 << 16];
        loop {
            let Ok(n) = device.read(&mut frame) else { return };
            if n < 14 {
                continue;
            }
            let now = Instant::now();
            // The host's own link first.
            free = free.max(now) + self.on_link(n);
            let to: [u8; 6] = frame[..6].try_into().unwrap();
            let source: [u8; 6] = frame[6..12].try_into().unwrap();
            let port = {
                let mut seen = self.seen.lock().unwrap();
                if !seen.iter().any(|&(mac, _)| mac == source) {
                    seen.push((source, from));
                }
                seen.iter().find(|&&(mac, _)| mac == to).map(|&(_, p)| p)
            };
            let targets: Vec<usize> = match port {
                Some(p) if p != from => vec![p],
                Some(_) => continue,
                None => (0..self.ports.len()).filter(|&p| p != from).collect(),
            };
            for p in targets {
                let port = &self.ports[p];
                let mut out = port.out.lock().unwrap();
                if out.queued + n > QUEUE_BYTES {
                    continue;
                }
                let sent = out.free.map_or(free, |f| f.max(free)) + self.on_link(n);
                out.free = Some(sent);
                out.queue.push_back((sent + self.delay, frame[..n].to_vec()));
                out.queued += n;
                port.ready.notify_one();
            }
        }
    }

    /// Writes the frames for port `to`'s host as each arrives, for ever.
    fn egress(&self, to: usize) {
        let port = &self.ports[to];
        let mut device = &port.device;
        loop {
            let (at, frame) = {
                let mut out = port.out.lock().unwrap();
                while out.queue.is_empty() {
                    out = port.ready.wait(out).unwrap();
                }
                let (at, frame) = out.queue.pop_front().unwrap();
                out.queued -= frame.len();
                (at, frame)
            };
            let now = Instant::now();
            if at > now {
                std::thread::sleep(at - now);
            }
            let _ = device.write(&frame);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = || -> ! {
        eprintln!("usage: switch NAME HOSTS DELAY_US RATE_MBIT");
        std::process::exit(2)
    };
    if args.len() != 5 {
        usage();
    }
    let (name, hosts) = (&args[1], args[2].parse::<usize>().unwrap_or_else(|_| usage()));
    let delay = args[3].parse::<u64>().unwrap_or_else(|_| usage());
    let mbit = args[4]
        .parse::<f64>()
        .ok()
        .filter(|&m| m > 0.0)
        .unwrap_or_else(|| usage());
    if name.len() > 8 || !(1..=32).contains(&hosts) {
        usage();
    }
    // Sleeps end within microseconds of their time, not the 50 µs of the
    // default timer slack.
    // SAFETY: prctl(PR_SET_TIMERSLACK) takes a plain number.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let ports = (1..=hosts)
        .map(|i| {
            let device = tap(&format!("{name}-t{i}")).unwrap_or_else(|e| {
                eprintln!("switch: cannot make the device {name}-t{i}: {e}");
                std::process::exit(1)
            });
            Port {
                device,
                out: Mutex::new(Out::default()),
                ready: Condvar::new(),
            }
        })
        .collect();
    let switch = Arc::new(Switch {
        ports,
        seen: Mutex::new(Vec::new()),
        delay: Duration::from_micros(delay),
        byte_ns: 8000.0 / mbit,
    });
    println!("ready");
    let _ = std::io::stdout().flush();
    let mut threads = Vec::new();
    for p in 0..hosts {
        let (a, b) = (Arc::clone(&switch), Arc::clone(&switch));
        threads.push(std::thread::spawn(move || a.ingress(p)));
        threads.push(std::thread::spawn(move || b.egress(p)));
    }
    for thread in threads {
        let _ = thread.join();
    }
}
