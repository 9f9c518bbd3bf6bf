//! Denials as data, from two sources: the denial supervisor ([`crate::denial_supervisor`]), which
//! the kernel hands a sandbox's write calls, connects and refused sockets, and — where kernel
//! auditing is on and readable — Landlock's audit records.
//!
//! The supervisor needs neither root nor auditing: it records a denial before it answers the call,
//! so a run's denials are all in once the run has ended. Audit records add what only Landlock sees
//! (signals to processes outside the sandbox, device ioctls).
//!
//! Since Landlock ABI 7 the kernel writes one `AUDIT_LANDLOCK_ACCESS` record per denied access
//! (the helper asks for records after `execve` with `LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON`), and
//! one `AUDIT_LANDLOCK_DOMAIN` record naming the pid that created the domain the first time that
//! domain denies something. A process-wide monitor thread reads them from the audit netlink
//! multicast group (`AUDIT_NLGRP_READLOG`, which needs `CAP_AUDIT_READ`, and kernel auditing must be
//! on); each [`DenialCollector`] sees the records that arrive while it is open and keeps those of
//! domains created by the run's pids. The helper execs in place, so the pid the executor spawned is
//! the domain's creator — for one-shot runs and for a session's shell alike.
//!
//! Nothing here looks at the command's output, and a process outside a sandbox has no Landlock
//! domain, so its ordinary permission errors never appear.
//!
//! Two refusals leave no audit record: writes to protected paths (a read-only mount answers
//! `EROFS`) and sockets the seccomp rules refuse while the network is off. Those come from the
//! denial supervisor ([`crate::denial_supervisor`]), which the kernel hands every such call of a
//! sandbox whose policy names it; its denials reach the same collectors, attributed the same way.

use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::audit_netlink as nl;
use crate::audit_record::{self, AccessRecord, DomainRecord};

/// What kind of access the sandbox denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DenialKind {
    /// Creating, changing, truncating, renaming or removing a file or directory.
    Write,
    /// A TCP bind or connect, or an abstract Unix socket outside the sandbox.
    Network,
    /// Executing a file.
    Exec,
    /// Anything else Landlock refused (signals to processes outside the sandbox, device ioctls).
    Other,
}

/// Denied accesses of one kind on one object, with how often they happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Denial {
    /// What was denied.
    pub kind: DenialKind,
    /// The object the kernel checked: the file for writes to an existing file, the directory for
    /// creating or removing an entry in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `host:port` of a denied connect (`*:port` for a bind).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Why, where the cause is more than the access itself: for the proxy's refusals `domain not
    /// allowed`, `denied domain`, `resolves to a local address`; `direct connection` for a connect
    /// that went around the proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How many denials were merged into this entry.
    pub count: u32,
}

/// Traffic of a sandbox through the engine's proxy to one destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Traffic {
    /// The destination's name as checked (normalised).
    pub host: String,
    /// Its port.
    pub port: u16,
    /// Bytes from the destination to the sandbox.
    pub bytes_in: u64,
    /// Bytes from the sandbox to the destination.
    pub bytes_out: u64,
}

/// Blockers of the proxy's refusals and of connects that went around it (see [`reason_of`]).
pub(crate) const PROXY_NOT_ALLOWED: &str = "net.proxy_not_allowed";
pub(crate) const PROXY_DENIED_DOMAIN: &str = "net.proxy_denied_domain";
pub(crate) const PROXY_LOCAL_ADDRESS: &str = "net.proxy_local_address";
pub(crate) const DIRECT_CONNECTION: &str = "net.connect_direct";

/// The reason a blocker stands for, where it names one.
fn reason_of(blockers: &[String]) -> Option<String> {
    blockers.iter().find_map(|b| {
        let reason = match b.as_str() {
            PROXY_NOT_ALLOWED => "domain not allowed",
            PROXY_DENIED_DOMAIN => "denied domain",
            PROXY_LOCAL_ADDRESS => "resolves to a local address",
            DIRECT_CONNECTION => "direct connection",
            _ => return None,
        };
        Some(reason.to_owned())
    })
}

/// The byte counters of one proxied connection, updated while it runs.
#[derive(Debug, Default)]
pub(crate) struct Flow {
    pub bytes_in: AtomicU64,
    pub bytes_out: AtomicU64,
}

/// One proxied connection as collectors hold it.
#[derive(Debug, Clone)]
struct FlowRecord {
    domain: u64,
    host: String,
    port: u16,
    flow: Arc<Flow>,
}

/// The proxy connected a sandbox to `host:port`: the returned counters are read when a collector
/// finishes.
pub(crate) fn proxied_connection(domain: u64, host: &str, port: u16) -> Arc<Flow> {
    let flow = Arc::new(Flow::default());
    let record = FlowRecord {
        domain,
        host: host.to_owned(),
        port,
        flow: Arc::clone(&flow),
    };
    let hub = Hub::global();
    let mut state = hub.state.lock().expect("denial hub lock");
    for flows in state.flows.values_mut() {
        if flows.len() < MAX_RECORDS {
            flows.push(record.clone());
        }
    }
    flow
}

/// Traffic of `flows`, one entry per destination in order of first connection.
fn summarize<'a>(flows: impl Iterator<Item = &'a FlowRecord>) -> Vec<Traffic> {
    let mut out: Vec<Traffic> = Vec::new();
    for record in flows {
        let (bytes_in, bytes_out) = (
            record.flow.bytes_in.load(Ordering::Relaxed),
            record.flow.bytes_out.load(Ordering::Relaxed),
        );
        if let Some(existing) = out
            .iter_mut()
            .find(|t| t.host == record.host && t.port == record.port)
        {
            existing.bytes_in += bytes_in;
            existing.bytes_out += bytes_out;
        } else {
            out.push(Traffic {
                host: record.host.clone(),
                port: record.port,
                bytes_in,
                bytes_out,
            });
        }
    }
    out
}

/// What a collector saw for one run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct DenialReport {
    /// The denials, merged by (kind, path, address), in order of first occurrence.
    pub denials: Vec<Denial>,
    /// Destinations reached through the engine's proxy, with their bytes.
    pub network: Vec<Traffic>,
    /// `false` when the kernel or the socket dropped records, or the barrier did not arrive in
    /// time: the list may then be short.
    pub complete: bool,
}

/// Why denial reporting is off (the caller adds a notice `denial reporting is off: <reason>`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("denial reporting is off: {reason}")]
pub struct DenialReportingOff {
    /// Why the kernel source is unavailable.
    pub reason: String,
}

impl DenialReportingOff {
    pub(crate) fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }
}

/// Turn kernel auditing on (`auditctl -e 1`) so that Landlock writes its records. System-wide and
/// left on: an explicit choice of whoever runs the engine (it needs `CAP_AUDIT_CONTROL`). With
/// no audit daemon the kernel also copies records to the kernel log (rate-limited).
pub fn enable_kernel_audit() -> std::io::Result<()> {
    if nl::status()?.enabled != 0 {
        return Ok(());
    }
    nl::set_enabled(true)
}

/// Whether denials can be read from the kernel here, without starting anything.
pub fn denial_reporting_status() -> Result<(), DenialReportingOff> {
    reporting_status().map(drop)
}

fn reporting_status() -> Result<nl::AuditStatus, DenialReportingOff> {
    let abi = crate::landlock_abi();
    if abi < crate::landlock_rules::AUDIT_LOG_ABI {
        return Err(DenialReportingOff::new(format!(
            "Landlock ABI {abi} has no audit logging after exec (needs ABI {})",
            crate::landlock_rules::AUDIT_LOG_ABI
        )));
    }
    let status =
        nl::status().map_err(|e| DenialReportingOff::new(format!("cannot read the audit status: {e}")))?;
    if status.enabled == 0 {
        return Err(DenialReportingOff::new(
            "kernel auditing is disabled (enable it with `auditctl -e 1` or enable_kernel_audit)",
        ));
    }
    Ok(status)
}

/// Collects the denials of one run. Start it before the run, finish it after the run ended with
/// the pid(s) the executor spawned.
///
/// ```no_run
/// use shellgate_sandbox::DenialCollector;
/// let collector = DenialCollector::start();
/// // … run the sandboxed command, learn its pid …
/// # let pid = 0;
/// match collector {
///     Ok(collector) => {
///         let report = collector.finish(&[pid]);
///         for denial in &report.denials {
///             println!("{:?} {:?} {:?} ×{}", denial.kind, denial.path, denial.address, denial.count);
///         }
///     }
///     Err(off) => eprintln!("notice: {off}"),
/// }
/// ```
#[derive(Debug)]
pub struct DenialCollector {
    id: u64,
    hub: Arc<Hub>,
    /// The audit log's lost-record count when the collector started (`None`: audit records are not
    /// read here).
    lost_at_start: Option<u32>,
}

impl DenialCollector {
    /// Start collecting. The supervisor's denials are always collected; Landlock's audit records
    /// too where they can be read. Only fails when the process cannot start a thread.
    pub fn start() -> Result<Self, DenialReportingOff> {
        let hub = Hub::global();
        let lost_at_start = hub.audit.as_ref().and(reporting_status().ok()).map(|s| s.lost);
        let id = {
            let mut state = hub.state.lock().expect("denial hub lock");
            state.next_id += 1;
            let id = state.next_id;
            state.collectors.insert(id, Vec::new());
            state.flows.insert(id, Vec::new());
            id
        };
        Ok(Self {
            id,
            hub,
            lost_at_start,
        })
    }

    /// Start the process-wide denial hub now (at engine start-up) so that the creator of a
    /// long-lived sandbox — a session's shell — is known even when its first denial happens
    /// before any collector is open: the kernel names a domain's creator only once. Says why
    /// Landlock's audit records are not read, when they are not (the supervisor's denials are
    /// collected either way).
    pub fn prepare() -> Result<(), DenialReportingOff> {
        let hub = Hub::global();
        match &hub.audit {
            Some(_) => Ok(()),
            None => denial_reporting_status(),
        }
    }

    /// Stop collecting and return the denials of the sandboxes started for `pids`: the pid the
    /// executor spawned, whether that is the helper itself or a guard or session leader directly
    /// above it (the helper records its parent and session with its domain). With audit records,
    /// waits (up to two seconds) for a barrier record so that every record the run produced has
    /// been read.
    pub fn finish(self, pids: &[u32]) -> DenialReport {
        let (arrived, lost_now) = match (&self.hub.audit, self.lost_at_start) {
            (Some(audit), Some(_)) => {
                let marker = format!("shellgate-denial-barrier {} {}", std::process::id(), self.id);
                let arrived = self.hub.barrier(audit, &marker);
                (arrived, nl::status().map_or(u32::MAX, |s| s.lost))
            }
            _ => (true, 0),
        };
        let mut state = self.hub.state.lock().expect("denial hub lock");
        let records = state.collectors.remove(&self.id).unwrap_or_default();
        let flows = state.flows.remove(&self.id).unwrap_or_default();
        let ours: HashSet<u64> = state
            .domains
            .iter()
            .filter(|(_, creator)| {
                pids.contains(&creator.pid)
                    || creator
                        .parent_and_session
                        .is_some_and(|(parent, session)| pids.contains(&parent) || pids.contains(&session))
            })
            .map(|(domain, _)| *domain)
            .collect();
        // Only now: the run's sandbox may have ended already, and pruning forgets its creator.
        state.prune();
        let overflowed = state.overflows > 0;
        drop(state);
        let lost = self.lost_at_start.is_some_and(|at_start| lost_now != at_start);
        DenialReport {
            denials: merge(records.iter().filter(|r| ours.contains(&r.domain))),
            network: summarize(flows.iter().filter(|f| ours.contains(&f.domain))),
            complete: arrived && !overflowed && !lost && records.len() < MAX_RECORDS,
        }
    }
}

impl Drop for DenialCollector {
    fn drop(&mut self) {
        if let Ok(mut state) = self.hub.state.lock() {
            state.collectors.remove(&self.id);
            state.flows.remove(&self.id);
            state.prune();
        }
    }
}

/// A supervised sandbox started ([`crate::supervise`]): its denials belong to `pid`'s runs.
pub(crate) fn supervised_sandbox_started(domain: u64, pid: u32, parent: u32, session: u32) {
    let hub = Hub::global();
    let mut state = hub.state.lock().expect("denial hub lock");
    state.domains.insert(
        domain,
        DomainRecord {
            domain,
            pid,
            parent_and_session: Some((parent, session)),
        },
    );
}

/// The supervisor refused a call of a supervised sandbox.
pub(crate) fn supervised_denial(domain: u64, blocker: &str, path: Option<String>, address: Option<String>) {
    let record = AccessRecord {
        domain,
        blockers: vec![blocker.to_owned()],
        path,
        address,
    };
    Hub::global()
        .state
        .lock()
        .expect("denial hub lock")
        .offer(&record);
}

/// Every process of a supervised sandbox has ended.
pub(crate) fn supervised_sandbox_ended(domain: u64) {
    let hub = Hub::global();
    let mut state = hub.state.lock().expect("denial hub lock");
    state.ended.push(domain);
    state.prune();
}

/// The kind of a record's denial, from its blockers.
fn kind_of(blockers: &[String]) -> DenialKind {
    let any = |f: &dyn Fn(&str) -> bool| blockers.iter().any(|b| f(b));
    if any(&|b| b.starts_with("net.") || b == "scope.abstract_unix_socket") {
        DenialKind::Network
    } else if any(&|b| b == "fs.execute") {
        DenialKind::Exec
    } else if any(&|b| b.starts_with("fs.") && b != "fs.ioctl_dev" && !b.starts_with("fs.read")) {
        DenialKind::Write
    } else {
        DenialKind::Other
    }
}

fn merge<'a>(records: impl Iterator<Item = &'a AccessRecord>) -> Vec<Denial> {
    let mut out: Vec<Denial> = Vec::new();
    for record in records {
        let kind = kind_of(&record.blockers);
        let reason = reason_of(&record.blockers);
        if let Some(existing) = out.iter_mut().find(|d| {
            d.kind == kind && d.path == record.path && d.address == record.address && d.reason == reason
        }) {
            existing.count = existing.count.saturating_add(1);
        } else {
            out.push(Denial {
                kind,
                path: record.path.clone(),
                address: record.address.clone(),
                reason,
                count: 1,
            });
        }
    }
    out
}

/// Records one collector keeps at most (of every sandbox: its own are picked at `finish`).
const MAX_RECORDS: usize = 10_000;

/// Where denials meet collectors: the supervisor and the audit reader offer records, collectors
/// take those of their runs' sandboxes.
#[derive(Debug)]
struct Hub {
    state: Mutex<MonitorState>,
    wakeup: Condvar,
    /// The audit control socket, when Landlock's audit records are read here.
    audit: Option<OwnedFd>,
}

#[derive(Debug, Default)]
struct MonitorState {
    /// Domain id → creator, for every domain that denied something since the monitor started.
    domains: HashMap<u64, DomainRecord>,
    /// Open collectors and the access records they have seen.
    collectors: HashMap<u64, Vec<AccessRecord>>,
    /// Open collectors and the proxied connections they have seen.
    flows: HashMap<u64, Vec<FlowRecord>>,
    /// Barrier texts that arrived and are not yet claimed.
    markers: HashSet<String>,
    /// Domains that ended while collectors were open; forgotten once none is.
    ended: Vec<u64>,
    next_id: u64,
    /// Times the socket buffer overflowed (records lost).
    overflows: u64,
}

impl MonitorState {
    /// Give `record` to every open collector; one that holds [`MAX_RECORDS`] already takes no more
    /// (a long job's collector would otherwise grow with every sandbox's denials).
    fn offer(&mut self, record: &AccessRecord) {
        for records in self.collectors.values_mut() {
            if records.len() < MAX_RECORDS {
                records.push(record.clone());
            }
        }
    }

    fn prune(&mut self) {
        if self.collectors.is_empty() {
            for domain in self.ended.drain(..) {
                self.domains.remove(&domain);
            }
        }
    }
}

impl Hub {
    fn global() -> Arc<Self> {
        static HUB: OnceLock<Arc<Hub>> = OnceLock::new();
        Arc::clone(HUB.get_or_init(Self::start))
    }

    /// The hub, reading audit records too where they are readable.
    fn start() -> Arc<Self> {
        let reader = reporting_status().ok().and_then(|_| {
            let reader = nl::open_log_reader().ok()?;
            let control = nl::open_control().ok()?;
            Some((reader, control))
        });
        let (reader, audit) = match reader {
            Some((reader, control)) => (Some(reader), Some(control)),
            None => (None, None),
        };
        let hub = Arc::new(Self {
            state: Mutex::new(MonitorState::default()),
            wakeup: Condvar::new(),
            audit,
        });
        if let Some(reader) = reader {
            let shared = Arc::clone(&hub);
            // Without the thread, audit records are simply not read: the supervisor still reports.
            let _ = std::thread::Builder::new()
                .name("shellgate-denials".to_owned())
                .spawn(move || shared.read_forever(&reader));
        }
        hub
    }

    /// Send a barrier through the audit log and wait (up to two seconds) until it comes back, so
    /// that every record queued before it has been read.
    fn barrier(&self, control: &OwnedFd, marker: &str) -> bool {
        if nl::send_user_message(control, marker).is_err() {
            return false;
        }
        let deadline = Instant::now() + nl::BARRIER_TIMEOUT;
        let mut state = self.state.lock().expect("denial hub lock");
        loop {
            if state.markers.remove(marker) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self
                .wakeup
                .wait_timeout(state, deadline - now)
                .expect("denial hub lock")
                .0;
        }
    }

    fn read_forever(&self, reader: &OwnedFd) {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match nl::receive(reader, &mut buf) {
                Ok(Some(n)) => self.handle(&buf[..n]),
                Ok(None) => {
                    self.state.lock().expect("denial hub lock").overflows += 1;
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
    }

    fn handle(&self, datagram: &[u8]) {
        let mut state = self.state.lock().expect("denial hub lock");
        let mut wake = false;
        for (kind, payload) in nl::split_messages(datagram) {
            let text = String::from_utf8_lossy(payload);
            let text = text.trim_end_matches('\0');
            match kind {
                nl::AUDIT_LANDLOCK_ACCESS => {
                    if let Some(record) = audit_record::parse_access(text) {
                        state.offer(&record);
                    }
                }
                nl::AUDIT_LANDLOCK_DOMAIN => {
                    if let Some(domain) = audit_record::parse_domain(text) {
                        state.domains.insert(domain.domain, domain);
                    } else if let Some(ended) = deallocated_domain(text) {
                        // An open collector may still need the creator of a domain that just
                        // ended (its run is over, `finish` is on its way).
                        state.ended.push(ended);
                        state.prune();
                    }
                }
                nl::AUDIT_TRUSTED_APP => {
                    if let Some(start) = text.find("shellgate-denial-barrier ") {
                        let marker = text[start..].trim_end_matches(['\'', '"']).to_owned();
                        state.markers.insert(marker);
                        wake = true;
                    }
                }
                _ => {}
            }
        }
        drop(state);
        if wake {
            self.wakeup.notify_all();
        }
    }
}

/// The id of a domain in a `status=deallocated` record.
fn deallocated_domain(text: &str) -> Option<u64> {
    let fields = audit_record::fields(text);
    let status = fields.iter().find(|(k, _)| *k == "status")?;
    if status.1 != "deallocated" {
        return None;
    }
    let domain = fields.iter().find(|(k, _)| *k == "domain")?;
    u64::from_str_radix(&domain.1, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(domain: u64, blockers: &[&str], path: Option<&str>, address: Option<&str>) -> AccessRecord {
        AccessRecord {
            domain,
            blockers: blockers.iter().map(|b| (*b).to_owned()).collect(),
            path: path.map(str::to_owned),
            address: address.map(str::to_owned),
        }
    }

    #[test]
    fn kinds_follow_blockers() {
        let k = |b: &[&str]| kind_of(&b.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(k(&["fs.make_reg"]), DenialKind::Write);
        assert_eq!(k(&["fs.write_file", "fs.truncate"]), DenialKind::Write);
        assert_eq!(k(&["net.connect_tcp"]), DenialKind::Network);
        assert_eq!(k(&["fs.execute"]), DenialKind::Exec);
        assert_eq!(k(&["scope.signal"]), DenialKind::Other);
        assert_eq!(k(&["fs.ioctl_dev"]), DenialKind::Other);
    }

    #[test]
    fn merges_by_kind_path_and_address() {
        let records = [
            record(1, &["fs.make_reg"], Some("/etc"), None),
            record(1, &["fs.make_reg"], Some("/etc"), None),
            record(1, &["net.connect_tcp"], None, Some("127.0.0.1:80")),
            record(1, &["fs.write_file"], Some("/etc/x"), None),
        ];
        let merged = merge(records.iter());
        assert_eq!(merged.len(), 3);
        assert_eq!(merged[0].count, 2);
        assert_eq!(merged[1].kind, DenialKind::Network);
        assert_eq!(merged[2].path.as_deref(), Some("/etc/x"));
    }

    #[test]
    fn denials_serialize_without_absent_fields() {
        let denial = Denial {
            kind: DenialKind::Network,
            path: None,
            address: Some("127.0.0.1:80".to_owned()),
            reason: None,
            count: 1,
        };
        assert_eq!(
            serde_json::to_string(&denial).unwrap(),
            r#"{"kind":"network","address":"127.0.0.1:80","count":1}"#
        );
    }

    #[test]
    fn proxy_refusals_carry_their_reason_and_merge_by_it() {
        let records = [
            record(1, &[PROXY_NOT_ALLOWED], None, Some("a.example:443")),
            record(1, &[PROXY_NOT_ALLOWED], None, Some("a.example:443")),
            record(1, &[PROXY_DENIED_DOMAIN], None, Some("a.example:443")),
            record(1, &[DIRECT_CONNECTION], None, Some("10.0.0.1:80")),
        ];
        let merged = merge(records.iter());
        let shown: Vec<(DenialKind, Option<&str>, u32)> = merged
            .iter()
            .map(|d| (d.kind, d.reason.as_deref(), d.count))
            .collect();
        assert_eq!(
            shown,
            [
                (DenialKind::Network, Some("domain not allowed"), 2),
                (DenialKind::Network, Some("denied domain"), 1),
                (DenialKind::Network, Some("direct connection"), 1),
            ]
        );
    }

    #[test]
    fn deallocation_records_name_their_domain() {
        assert_eq!(
            deallocated_domain("audit(1.2:3): domain=ff status=deallocated denials=2"),
            Some(0xff)
        );
        assert_eq!(
            deallocated_domain("audit(1.2:3): domain=ff status=allocated pid=1"),
            None
        );
    }
}
