//! The host scripts find a leftover whose main thread has exited while another thread (and that
//! thread's child) runs on: such a process shows no `/proc/<pid>/environ` of its own, so its marker
//! is read through its threads. Run here with `sh`, as on a host.

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

#[test]
fn the_end_of_a_run_reaps_a_leftover_whose_main_thread_has_exited() {
    let Some(program) = zombie_leader::program() else {
        return;
    };
    let args = vec![
        "-c".to_owned(),
        zombie_leader::start_in_background(program, "987.511", true),
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
    assert!(
        zombie_leader::wait_dead(pid, Duration::from_secs(2)),
        "process {pid} outlived its run"
    );
    assert_eq!(with_command_line("sleep 987.511"), Vec::<u32>::new());
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
            &zombie_leader::start_in_background(program, "987.512", true),
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
    assert!(
        zombie_leader::wait_dead(pid, Duration::from_secs(2)),
        "process {pid} outlived the stop"
    );
    assert_eq!(with_command_line("sleep 987.512"), Vec::<u32>::new());
}
