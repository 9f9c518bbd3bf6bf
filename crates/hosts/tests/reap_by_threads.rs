//! The host scripts find marked processes through their threads' environments: a leftover whose main
//! thread has exited while another thread (and that thread's child) runs on shows no
//! `/proc/<pid>/environ` of its own, and a host with more threads than fit on one command line still
//! has them all read. Run here with `sh`, as on a host.

#[path = "../../executor/tests/common/zombie_leader.rs"]
mod zombie_leader;

use std::process::Command;
use std::time::Duration;

use shellgate_hosts::script::{EnvDelivery, MARKER_VAR, RemoteCommand, new_marker, run_script, stop_script};

/// Processes whose command line holds `needle`.
fn with_command_line(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").contains(needle))
        })
        .collect()
}

/// The leftover `pid` and its child (found by `child_command`) are both gone within 2 s.
fn assert_gone(pid: u32, child_command: &str) {
    assert!(
        zombie_leader::wait_dead(pid, Duration::from_secs(2)),
        "process {pid} outlived the reaping"
    );
    let gone = zombie_leader::wait_until(Duration::from_secs(2), || {
        with_command_line(child_command).is_empty()
    });
    assert!(gone, "{:?}", with_command_line(child_command));
}

#[test]
fn the_end_of_a_run_reaps_a_leftover_whose_main_thread_has_exited() {
    let Some(program) = zombie_leader::program() else {
        return;
    };
    let args = vec![
        "-c".to_owned(),
        zombie_leader::start_in_background(program, "987.531", true),
    ];
    let command = RemoteCommand {
        program: "bash",
        args: &args,
        cwd: None,
        env: &[],
        stdin: false,
    };
    let out = Command::new("sh")
        .args(["-c", &run_script(&command, &new_marker(), EnvDelivery::InScript)])
        .output()
        .unwrap();
    let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_gone(pid, "sleep 987.531");
}

#[test]
fn the_stop_script_reaps_a_leftover_whose_main_thread_has_exited() {
    let Some(program) = zombie_leader::program() else {
        return;
    };
    let marker = new_marker();
    let out = Command::new("bash")
        .args([
            "-c",
            &zombie_leader::start_in_background(program, "987.532", true),
        ])
        .env(MARKER_VAR, &marker)
        .output()
        .unwrap();
    let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!(zombie_leader::alive(pid), "the leftover runs before the stop");
    let stop = Command::new("sh")
        .args(["-c", &stop_script(&marker, 0, &[])])
        .output()
        .unwrap();
    assert!(stop.status.success());
    assert_gone(pid, "sleep 987.532");
}

#[test]
fn the_stop_script_reads_every_thread_of_a_host_with_thousands() {
    // Past 2,000 threads the file names go to grep through xargs.
    let marker = new_marker();
    let mut crowd = Command::new("python3")
        .args([
            "-c",
            "import threading, time\n\
             for _ in range(2100):\n    threading.Thread(target=time.sleep, args=(300,), daemon=True).start()\n\
             print('ready', flush=True)\ntime.sleep(300)\n",
        ])
        .env(MARKER_VAR, &marker)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(crowd.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    let threads = std::fs::read_dir(format!("/proc/{}/task", crowd.id()))
        .unwrap()
        .count();
    assert!(threads > 2000, "{threads} threads");
    let stop = Command::new("sh")
        .args(["-c", &stop_script(&marker, 0, &[])])
        .output()
        .unwrap();
    assert!(stop.status.success());
    let mut status = None;
    zombie_leader::wait_until(Duration::from_secs(5), || {
        status = crowd.try_wait().unwrap();
        status.is_some()
    });
    if status.is_none() {
        let _ = crowd.kill();
        let _ = crowd.wait();
    }
    assert!(
        status.is_some_and(|s| !s.success()),
        "the marked process outlived the stop: {status:?}"
    );
}
