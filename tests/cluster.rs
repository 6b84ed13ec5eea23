//! `mpirun` across network hosts made on this machine by `scripts/cluster`:
//! network namespaces joined by virtual Ethernet links to a switch, with
//! addresses only between them. Ranks on different hosts talk TCP over the
//! links (the tests read each link's byte counts), and the tables they
//! write are, exported, byte for byte those of one process. The cluster is
//! torn down however its command ends.
//!
//! Built only with `--features mpi`. The tests need root, iproute2 and
//! `mpirun`, and are ignored otherwise: `.ci/run` runs them with `cargo
//! test --features mpi --test cluster -- --ignored` where it is root.

#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_bishops");

mod common;
use common::succeeded;

/// The script that makes the clusters.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/cluster")
}

/// A cluster name of this test process's own: `tag` and the process id.
fn name(tag: &str) -> String {
    format!("{tag}{}", std::process::id() % 100_000)
}

/// The namespaces of cluster `name` that are up.
fn namespaces(name: &str) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().expect("ip runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|ns| ns.strip_prefix(name).is_some_and(|rest| rest.starts_with('-')))
        .map(str::to_owned)
        .collect()
}

/// `scripts/cluster run NAME HOSTS -- sh -c SHELL`.
fn on_cluster(name: &str, hosts: usize, shell: &str) -> Output {
    Command::new(script())
        .args(["run", name, &hosts.to_string(), "--", "sh", "-c", shell])
        .output()
        .expect("scripts/cluster runs")
}

/// The bytes each host's link sent, from what `scripts/cluster run` prints
/// as it ends.
fn sent(stderr: &str) -> Vec<u64> {
    stderr
        .lines()
        .filter(|line| line.starts_with("cluster: ") && line.contains(" eth0 "))
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "tx_bytes").expect("tx_bytes");
            words[at + 1].parse().expect("a byte count")
        })
        .collect()
}

/// The length and a 64-bit hash of the export of `variant` from `db`, read
/// as it comes: 11x8's is some 20 GB, more than the tests may hold.
fn export_digest(db: &Path, variant: &str) -> (u64, u64) {
    use std::hash::Hasher;
    use std::io::Read;
    let mut child = Command::new(BIN)
        .args(["--db", db.to_str().unwrap(), "export", variant])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("bishops runs");
    let mut stdout = child.stdout.take().unwrap();
    let (mut len, mut hasher) = (0u64, std::hash::DefaultHasher::new());
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = stdout.read(&mut buffer).expect("the export reads");
        if n == 0 {
            break;
        }
        hasher.write(&buffer[..n]);
        len += n as u64;
    }
    assert!(child.wait().unwrap().success(), "export of {variant} failed");
    (len, hasher.finish())
}

fn export(db: &Path, variant: &str) -> Vec<u8> {
    let out = Command::new(BIN)
        .args(["--db", db.to_str().unwrap(), "export", variant])
        .output()
        .expect("bishops runs");
    succeeded(out, "export").stdout
}

#[test]
#[ignore = "needs root, iproute2 and mpirun: cargo test --features mpi --test cluster -- --ignored"]
fn ranks_on_separate_hosts_write_the_table_one_process_writes() {
    for (variant, method) in [
        ("7x6", "tight"),
        ("7x6", "two-bit"),
        ("9x6", "tight"),
        ("9x6", "two-bit"),
        ("9x8", "tight"),
        ("9x8", "two-bit"),
    ] {
        let single = common::scratch("cluster", &format!("single-{variant}-{method}"));
        let out = Command::new(BIN)
            .args(["--db", single.to_str().unwrap(), "solve", variant, "--method", method])
            .output()
            .expect("bishops runs");
        succeeded(out, variant);
        let expected = export(&single, variant);
        for hosts in [2, 3, 4] {
            let db = common::scratch("cluster", &format!("{variant}-{method}-{hosts}"));
            let cluster = name("bt");
            let shell = format!(
                "mpirun --hostfile \"$CLUSTER_HOSTFILE\" -np {hosts} {BIN} --db {} solve {variant} --method {method} --threads 1",
                db.display()
            );
            let out = succeeded(
                on_cluster(&cluster, hosts, &shell),
                &format!("{variant} {method} on {hosts} hosts"),
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            // Every host sent its share over its link: TCP, not shared memory.
            let sent = sent(&stderr);
            assert_eq!(sent.len(), hosts, "{stderr}");
            assert!(
                sent.iter().all(|&b| b > 10_000),
                "{variant} {method} on {hosts} hosts sent {sent:?}"
            );
            assert!(
                export(&db, variant) == expected,
                "{variant} {method}: {hosts} hosts exported another table"
            );
            assert!(namespaces(&cluster).is_empty(), "cluster {cluster} left up");
            let _ = std::fs::remove_dir_all(&db);
        }
        let _ = std::fs::remove_dir_all(&single);
    }
}

/// The user-space switch of `scripts/cluster --lag`, built beside the
/// binary under test (`cargo test` builds the examples; `.ci/run` builds
/// it before the cluster tests, which `--test cluster` alone does not).
fn switch() -> PathBuf {
    let switch = Path::new(BIN).parent().unwrap().join("examples/switch");
    assert!(
        switch.exists(),
        "no {}: cargo build --features mpi --example switch, in this test's profile",
        switch.display()
    );
    switch
}

/// Through the switch of `--lag`, links with a latency and a rate, the
/// ranks still write the one-process table, and the latency shows: a
/// connection to a closed port of host 2 takes a round trip, at least
/// twice the lag, to be refused (some 30 µs without the switch; the
/// fastest of five, timed by bash itself, without a fork).
#[test]
#[ignore = "needs root, iproute2 and mpirun: cargo test --features mpi --test cluster -- --ignored"]
fn links_with_a_latency_carry_the_same_table() {
    let single = common::scratch("cluster", "lag-single");
    succeeded(
        Command::new(BIN)
            .args(["--db", single.to_str().unwrap(), "solve", "7x6", "--method", "two-bit"])
            .output()
            .unwrap(),
        "one process",
    );
    let db = common::scratch("cluster", "lag");
    let cluster = name("bg");
    let shell = format!(
        "best=999999999; for i in 1 2 3 4 5; do s=$EPOCHREALTIME; {{ : 3<>/dev/tcp/10.77.0.2/9; }} 2>/dev/null; \
         d=$(( ${{EPOCHREALTIME/./}} - ${{s/./}} )); (( d < best )) && best=$d; done; echo \"refused after $best us\"; \
         mpirun --hostfile \"$CLUSTER_HOSTFILE\" -np 3 {BIN} --db {} solve 7x6 --method two-bit --threads 1",
        db.display()
    );
    let out = Command::new(script())
        .args([
            "run", &cluster, "3", "--lag", "2000", "--link", "1gbit", "--", "bash", "-c", &shell,
        ])
        .env("CLUSTER_SWITCH", switch())
        .output()
        .unwrap();
    let out = succeeded(out, "7x6 on 3 lagging hosts");
    let sent = sent(&String::from_utf8_lossy(&out.stderr));
    assert!(sent.len() == 3 && sent.iter().all(|&b| b > 10_000), "sent {sent:?}");
    assert!(
        export(&db, "7x6") == export(&single, "7x6"),
        "3 lagging hosts exported another table"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let refused: u64 = (stdout.lines())
        .find_map(|l| l.strip_prefix("refused after ")?.strip_suffix(" us")?.parse().ok())
        .unwrap_or_else(|| panic!("no round trip timed: {stdout}"));
    assert!(refused >= 4000, "a round trip over 2 ms links took {refused} µs");
    assert!(namespaces(&cluster).is_empty(), "cluster {cluster} left up");
    let _ = std::fs::remove_dir_all(&db);
    let _ = std::fs::remove_dir_all(&single);
}

/// 11x8 by two bits on two hosts: a 35 s job in a release build, some
/// 200 to 360 MB over each link; the exports are compared by length and
/// hash as they stream. `.ci/run`, whose tests are debug builds,
/// skips it: `cargo test --release --features mpi --test cluster --
/// --ignored eleven_by_eight`.
#[test]
#[ignore = "a release test: cargo test --release --features mpi --test cluster -- --ignored eleven_by_eight"]
fn eleven_by_eight_by_two_bits_on_two_hosts_writes_the_table_one_process_writes() {
    let single = common::scratch("cluster", "single-11x8");
    let out = Command::new(BIN)
        .args(["--db", single.to_str().unwrap(), "solve", "11x8", "--method", "two-bit"])
        .output()
        .expect("bishops runs");
    succeeded(out, "11x8");
    let db = common::scratch("cluster", "11x8-2");
    let shell = format!(
        "mpirun --hostfile \"$CLUSTER_HOSTFILE\" -np 2 {BIN} --db {} solve 11x8 --method two-bit --threads 1",
        db.display()
    );
    let out = succeeded(on_cluster(&name("b8"), 2, &shell), "11x8 on 2 hosts");
    let sent = sent(&String::from_utf8_lossy(&out.stderr));
    assert!(sent.len() == 2 && sent.iter().all(|&b| b > 10_000_000), "sent {sent:?}");
    assert_eq!(
        export_digest(&db, "11x8"),
        export_digest(&single, "11x8"),
        "2 hosts exported another table"
    );
    let _ = std::fs::remove_dir_all(&db);
    let _ = std::fs::remove_dir_all(&single);
}

/// The processes running in namespace `ns`, with their command lines.
fn processes(ns: &str) -> Vec<(i32, String)> {
    let out = Command::new("ip").args(["netns", "pids", ns]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .map(|pid: i32| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            (pid, String::from_utf8_lossy(&cmdline).replace('\0', " "))
        })
        .collect()
}

/// Sends `signal` to the processes of namespace `ns` whose command line
/// contains `word`; how many there were.
fn signal(ns: &str, word: &str, signal: i32) -> usize {
    let chosen: Vec<i32> = (processes(ns).into_iter())
        .filter(|(_, cmdline)| cmdline.contains(word))
        .map(|(pid, _)| pid)
        .collect();
    for &pid in &chosen {
        // SAFETY: a plain kill(2) of a process of this test's cluster.
        unsafe { libc::kill(pid, signal) };
    }
    chosen.len()
}

/// What a fault test changes of the job and does to it.
struct Fault<'a> {
    /// The test's tag, a cluster name's start.
    tag: &'a str,
    /// Hosts, and the options of `scripts/cluster run` before `--`.
    hosts: usize,
    options: Vec<String>,
    /// Where the checkpoint of the second host's rank appears.
    second: PathBuf,
    /// The fault, done to the cluster of the name given once every rank
    /// has saved a share.
    strike: Box<dyn FnOnce(&str) + 'a>,
    /// What must be mended before the same command runs again.
    mend: Box<dyn FnOnce() + 'a>,
}

/// A 9x8 two-bit job on a cluster, which `fault` strikes once every rank
/// has saved its share at least once: the job must end within 60 s,
/// unsuccessfully, with a message naming the second host (by name or
/// address) or its rank; write no database; and leave checkpoints from
/// which the same command, on a cluster made anew, resumes on every rank
/// and writes the table one process writes.
fn fault_ends_the_job_and_the_same_command_resumes(db: &Path, fault: Fault<'_>) {
    let Fault {
        tag,
        hosts,
        options,
        second,
        strike,
        mend,
    } = fault;
    let cluster = name(tag);
    // A checkpoint after every layer, so that the rerun has one to resume.
    let shell = format!(
        "BISHOPS_CHECKPOINT_SECONDS=0 mpirun --hostfile \"$CLUSTER_HOSTFILE\" -np {hosts} {BIN} --db {} solve 9x8 --method two-bit --threads 1",
        db.display()
    );
    let run = |cluster: &str| {
        let mut args = vec!["run".to_owned(), cluster.to_owned(), hosts.to_string()];
        args.extend(options.iter().cloned());
        args.extend(["--", "sh", "-c", &shell].map(str::to_owned));
        args
    };
    let mut job = Command::new(script())
        .args(run(&cluster))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let began = std::time::Instant::now();
    let saved = |rank: usize| {
        let file = format!(".9x8.a1.rank-{rank}-of-{hosts}.checkpoint");
        if rank == 1 { second.join(file) } else { db.join(file) }
    };
    while !(0..hosts).all(|rank| saved(rank).exists()) {
        assert!(began.elapsed().as_secs() < 60, "the ranks saved no checkpoint");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    strike(&cluster);
    let struck = std::time::Instant::now();
    let status = loop {
        if let Some(status) = job.try_wait().unwrap() {
            break status;
        }
        if struck.elapsed().as_secs() >= 60 {
            let _ = job.kill();
            panic!("{tag}: the job did not end within 60 s of the fault");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let ended = struck.elapsed().as_secs_f64();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut job.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    eprintln!("{tag}: the job ended {ended:.1} s after the fault");
    let named = [format!("{cluster}-2"), "10.77.0.2".to_owned(), "rank 1 ".to_owned()];
    assert!(
        named.iter().any(|n| stderr.contains(n.as_str())),
        "{tag}: no message names the failed host or rank:\n{stderr}"
    );
    assert!(!db.join("9x8.sqlite").exists(), "a database after a failed job");
    assert!(namespaces(&cluster).is_empty(), "cluster {cluster} left up");
    mend();
    // The same command on a cluster made anew resumes on every rank and
    // writes the table one process writes.
    let rerun = succeeded(Command::new(script()).args(run(&cluster)).output().unwrap(), "rerun");
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    for rank in 0..hosts {
        assert!(
            stderr.contains(&format!("rank {rank} of {hosts}: resuming 9x8 class a1")),
            "{tag}: rank {rank} did not resume:\n{stderr}"
        );
    }
    assert!(!stderr.contains("not resuming"), "{stderr}");
    assert!(
        export(db, "9x8") == single_9x8(),
        "{tag}: the resumed job wrote another table"
    );
}

/// The export of 9x8 as one process solves it by two bits.
fn single_9x8() -> Vec<u8> {
    static TABLE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            let single = common::scratch("cluster", "single-9x8");
            let out = Command::new(BIN)
                .args(["--db", single.to_str().unwrap(), "solve", "9x8", "--method", "two-bit"])
                .output()
                .unwrap();
            succeeded(out, "one process");
            let table = export(&single, "9x8");
            let _ = std::fs::remove_dir_all(&single);
            table
        })
        .clone()
}

#[test]
#[ignore = "needs root, iproute2 and mpirun: cargo test --features mpi --test cluster -- --ignored"]
fn a_host_lost_mid_search_ends_the_job_and_the_same_command_resumes() {
    let db = common::scratch("cluster", "lost");
    std::fs::create_dir_all(&db).unwrap();
    fault_ends_the_job_and_the_same_command_resumes(
        &db,
        Fault {
            tag: "bl",
            hosts: 3,
            options: Vec::new(),
            second: db.clone(),
            // Every process of the second host dies at once, as when a
            // node is lost.
            strike: Box::new(|cluster| {
                assert!(
                    signal(&format!("{cluster}-2"), "", libc::SIGKILL) > 0,
                    "no process on the second host"
                );
            }),
            mend: Box::new(|| {}),
        },
    );
    let _ = std::fs::remove_dir_all(&db);
}

/// The second host's link goes down: no process dies and TCP hears
/// nothing, so only timeouts end the job, Open MPI's on its daemons'
/// connections (which `scripts/cluster` sets to some 15 s) or the ranks'
/// own watch (20 s), whichever is first.
#[test]
#[ignore = "needs root, iproute2 and mpirun: cargo test --features mpi --test cluster -- --ignored"]
fn a_link_cut_mid_search_ends_the_job_and_the_same_command_resumes() {
    let db = common::scratch("cluster", "cut");
    std::fs::create_dir_all(&db).unwrap();
    fault_ends_the_job_and_the_same_command_resumes(
        &db,
        Fault {
            tag: "bc",
            hosts: 3,
            options: Vec::new(),
            second: db.clone(),
            strike: Box::new(|cluster| {
                let ns = format!("{cluster}-2");
                let down = Command::new("ip")
                    .args(["-n", &ns, "link", "set", "eth0", "down"])
                    .status();
                assert!(down.unwrap().success(), "the link stays up");
            }),
            mend: Box::new(|| {}),
        },
    );
    let _ = std::fs::remove_dir_all(&db);
}

/// The second host's rank stops (SIGSTOP) and is never continued: its
/// daemon and its connections live on, so only the ranks' watch sees it.
#[test]
#[ignore = "needs root, iproute2 and mpirun: cargo test --features mpi --test cluster -- --ignored"]
fn a_rank_that_stops_answering_ends_the_job_and_the_same_command_resumes() {
    let db = common::scratch("cluster", "stop");
    std::fs::create_dir_all(&db).unwrap();
    fault_ends_the_job_and_the_same_command_resumes(
        &db,
        Fault {
            tag: "bs",
            hosts: 3,
            options: Vec::new(),
            second: db.clone(),
            strike: Box::new(|cluster| {
                assert_eq!(signal(&format!("{cluster}-2"), BIN, libc::SIGSTOP), 1, "one rank stops");
            }),
            mend: Box::new(|| {}),
        },
    );
    let _ = std::fs::remove_dir_all(&db);
}

/// A small disk of its own (a tmpfs, unmounted when dropped).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn new(at: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "tmpfs",
                at.to_str().unwrap(),
            ])
            .status();
        assert!(ok.unwrap().success(), "mount a tmpfs at {}", at.display());
        Tmpfs(at.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// The second host keeps its checkpoints on a disk of its own, which fills
/// up after its first checkpoint: its rank's next save fails, no rank's
/// checkpoint moves on, and once the disk has room the same command
/// resumes every rank from the layer all saved.
#[test]
#[ignore = "needs root, iproute2 and mpirun: cargo test --features mpi --test cluster -- --ignored"]
fn a_full_disk_on_one_host_ends_the_job_and_the_same_command_resumes() {
    let db = common::scratch("cluster", "full");
    std::fs::create_dir_all(&db).unwrap();
    let mount = common::scratch("cluster", "full-disk");
    let disk = Tmpfs::new(&mount, "64m");
    let filler = disk.0.join("filler");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let filling = std::sync::Mutex::new(None);
    fault_ends_the_job_and_the_same_command_resumes(
        &db,
        Fault {
            tag: "bd",
            hosts: 2,
            options: ["--bind", "2", disk.0.to_str().unwrap(), db.to_str().unwrap()]
                .map(str::to_owned)
                .to_vec(),
            second: disk.0.clone(),
            // Every byte left, and every byte freed later: a checkpoint
            // renamed over the one before frees as much as the next needs,
            // so the disk is kept full until the job ends.
            strike: Box::new(|_| {
                let (filler, stop) = (filler.clone(), std::sync::Arc::clone(&stop));
                *filling.lock().unwrap() = Some(std::thread::spawn(move || {
                    use std::io::Write;
                    let mut file = std::fs::File::create(&filler).unwrap();
                    let block = vec![0u8; 1 << 12];
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        while file.write_all(&block).is_ok() {}
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                }));
            }),
            mend: Box::new(|| {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                if let Some(thread) = filling.lock().unwrap().take() {
                    thread.join().unwrap();
                }
                std::fs::remove_file(&filler).unwrap();
            }),
        },
    );
    drop(disk);
    let _ = std::fs::remove_dir_all(&db);
}

#[test]
#[ignore = "needs root, iproute2 and mpirun: cargo test --features mpi --test cluster -- --ignored"]
fn a_cluster_is_torn_down_however_its_command_ends() {
    let cluster = name("bf");
    // While it runs, the hosts and the switch are up, and no host has a
    // route past the cluster's own addresses.
    let shell = "ip netns list; echo routes:; ip route; exit 3";
    let out = on_cluster(&cluster, 3, shell);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for ns in ["-1", "-2", "-3", "-sw"] {
        assert!(stdout.contains(&format!("{cluster}{ns}")), "{stdout}");
    }
    let routes: Vec<&str> = stdout.lines().skip_while(|l| *l != "routes:").skip(1).collect();
    assert_eq!(
        routes,
        ["10.77.0.0/24 dev eth0 proto kernel scope link src 10.77.0.1 "],
        "{stdout}"
    );
    assert!(namespaces(&cluster).is_empty(), "cluster {cluster} left up");
    // A name in use is refused, and the cluster that has it is not touched.
    let dir = common::scratch("cluster", "up");
    let up = |dir: &Path| {
        Command::new(script())
            .args(["up", &cluster, "2", dir.to_str().unwrap()])
            .output()
            .expect("scripts/cluster runs")
    };
    succeeded(up(&dir), "up");
    let again = up(&dir);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("is up already"));
    assert_eq!(namespaces(&cluster).len(), 3);
    let run = on_cluster(&cluster, 2, "true");
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("is up already"));
    assert_eq!(
        namespaces(&cluster).len(),
        3,
        "a refused run tore down the cluster it found"
    );
    succeeded(
        Command::new(script()).args(["down", &cluster]).output().unwrap(),
        "down",
    );
    assert!(namespaces(&cluster).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
