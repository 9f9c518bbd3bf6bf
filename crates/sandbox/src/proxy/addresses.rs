//! Which resolved addresses count as local: a listed name must not lead the sandbox to this
//! machine, its networks or a cloud's metadata service (unless the policy allows it).

#![allow(unsafe_code)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `ip` is local: loopback, unspecified, link-local (`169.254.169.254` among them),
/// private, shared (`100.64.0.0/10`, where one cloud's metadata service lives), multicast,
/// broadcast or reserved — looking through IPv4 addresses embedded in IPv6 ones — or one of this
/// machine's own addresses.
pub fn is_local(ip: IpAddr) -> bool {
    let special = match ip {
        IpAddr::V4(v4) => is_local_v4(v4),
        IpAddr::V6(v6) => is_local_v6(v6),
    };
    special || own_addresses().contains(&ip)
}

fn is_local_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        || a >= 240
}

fn is_local_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    if let Some(v4) = embedded_v4(ip) {
        return is_local_v4(v4);
    }
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        // Unique local (fc00::/7, `fd00:ec2::254` among them), link-local and the old site-local.
        || (segments[0] & 0xfe00) == 0xfc00
        || (segments[0] & 0xffc0) == 0xfe80
        || (segments[0] & 0xffc0) == 0xfec0
}

/// The IPv4 address inside an IPv4-mapped, IPv4-compatible, NAT64 (`64:ff9b::/96`) or 6to4
/// (`2002::/16`) address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if s[..5] == [0; 5] && (s[5] == 0xffff || (s[5] == 0 && (s[6] != 0 || s[7] > 1))) {
        return Some(low(s[6], s[7]));
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(low(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return Some(low(s[1], s[2]));
    }
    None
}

/// The addresses of this machine's interfaces (`getifaddrs`); empty when they cannot be read.
fn own_addresses() -> Vec<IpAddr> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: `getifaddrs` fills `list` with a list we free below with `freeifaddrs`.
    if unsafe { libc::getifaddrs(&raw mut list) } != 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut entry = list;
    while !entry.is_null() {
        // SAFETY: `entry` is a node of the list `getifaddrs` returned, not yet freed.
        let node = unsafe { &*entry };
        if !node.ifa_addr.is_null() {
            // SAFETY: `ifa_addr` points at a socket address of the family it names.
            let family = i32::from(unsafe { (*node.ifa_addr).sa_family });
            if family == libc::AF_INET {
                // SAFETY: an AF_INET address is a `sockaddr_in` (read unaligned: the list only
                // promises a `sockaddr`'s alignment).
                let v4 = unsafe { node.ifa_addr.cast::<libc::sockaddr_in>().read_unaligned() };
                out.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr))));
            } else if family == libc::AF_INET6 {
                // SAFETY: an AF_INET6 address is a `sockaddr_in6`.
                let v6 = unsafe { node.ifa_addr.cast::<libc::sockaddr_in6>().read_unaligned() };
                out.push(IpAddr::V6(Ipv6Addr::from(v6.sin6_addr.s6_addr)));
            }
        }
        entry = node.ifa_next;
    }
    // SAFETY: `list` came from `getifaddrs` and is freed once.
    unsafe { libc::freeifaddrs(list) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(text: &str) -> bool {
        is_local(text.parse().unwrap())
    }

    #[test]
    fn local_addresses_in_every_spelling_are_local() {
        for ip in [
            "127.0.0.1",
            "127.9.9.9",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "::1",
            "::",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            assert!(local(ip), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "151.101.0.223",
            "2606:4700::6810:84e5",
            "1.1.1.1",
        ] {
            assert!(!local(ip), "{ip}");
        }
    }

    #[test]
    fn this_machines_addresses_are_local() {
        for ip in own_addresses() {
            assert!(is_local(ip), "{ip}");
        }
        assert!(own_addresses().iter().any(IpAddr::is_loopback));
    }

    /// A public address becomes local once it is one of this machine's: in a network namespace of
    /// this test's own thread (a child it starts runs there too), `203.0.113.7` — a documentation
    /// address, outside every special range — is local only after it is put on an interface.
    #[test]
    fn an_address_of_this_machine_is_local_whatever_its_range() {
        let require = std::env::var_os("SHELLGATE_REQUIRE_ALL").is_some();
        let checked = std::thread::spawn(move || {
            if let Err(e) = nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET) {
                assert!(!require, "cannot make a network namespace: {e}");
                eprintln!("skipped: cannot make a network namespace ({e})");
                return;
            }
            let ip: IpAddr = "203.0.113.7".parse().unwrap();
            assert!(!is_local(ip), "local before it was put on an interface");
            let ip_cmd = |args: &[&str]| {
                std::process::Command::new("ip")
                    .args(args)
                    .status()
                    .is_ok_and(|s| s.success())
            };
            // On this namespace's own loopback interface: no kernel module needed.
            let added = ip_cmd(&["link", "set", "lo", "up"])
                && ip_cmd(&["addr", "add", "203.0.113.7/32", "dev", "lo"]);
            if !added {
                assert!(!require, "`ip` could not add an address");
                eprintln!("skipped: `ip` could not add an address");
                return;
            }
            assert!(own_addresses().contains(&ip), "{:?}", own_addresses());
            assert!(is_local(ip), "this machine's own address is not local");
        });
        checked.join().unwrap();
    }
}
