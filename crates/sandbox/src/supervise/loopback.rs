//! Whether anything in a sandbox's network namespace answers at a loopback address: a proxied
//! sandbox may reach its own loopback servers, while a connect or datagram to a loopback port
//! where nothing is bound is an attempt to get out some other way (a local resolver, a service of
//! the host that the namespace does not hold) and is reported as a direct connection.
//!
//! The kernel lists a namespace's sockets in `/proc/<pid>/net/{tcp,tcp6,udp,udp6}`, read through a
//! process of that namespace. A server that binds between the check and the call is only
//! misreported: the namespace holds nothing but the sandbox's own sockets either way.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// `st` of a listening TCP socket in `/proc/net/tcp`.
const TCP_LISTEN: &str = "0A";

/// Whether a socket of process `pid`'s network namespace would take a `stream` connection (or,
/// for datagrams, a datagram) to `target`.
pub fn bound_at(pid: u32, target: SocketAddr, stream: bool) -> bool {
    let protocol = if stream { "tcp" } else { "udp" };
    ["", "6"].iter().any(|v6| {
        std::fs::read_to_string(format!("/proc/{pid}/net/{protocol}{v6}"))
            .is_ok_and(|table| takes(&table, target, stream))
    })
}

/// Whether a socket listed in `table` (the text of one `/proc/net` socket table) takes `target`.
fn takes(table: &str, target: SocketAddr, stream: bool) -> bool {
    table.lines().skip(1).any(|line| {
        let mut fields = line.split_whitespace().skip(1);
        let (Some(local), Some(_remote), Some(state)) = (fields.next(), fields.next(), fields.next()) else {
            return false;
        };
        if stream && state != TCP_LISTEN {
            return false;
        }
        local_address(local).is_some_and(|bound| {
            bound.port() == target.port()
                && (bound.ip().is_unspecified() || bound.ip().to_canonical() == target.ip().to_canonical())
        })
    })
}

/// A `/proc/net` address: hexadecimal words as the kernel holds them (network order bytes read
/// as native integers), a colon, the port in hexadecimal.
fn local_address(text: &str) -> Option<SocketAddr> {
    let (address, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| {
        address
            .get(8 * i..8 * i + 8)
            .and_then(|hex| u32::from_str_radix(hex, 16).ok())
            .map(u32::to_ne_bytes)
    };
    let ip = match address.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut octets = [0u8; 16];
            for i in 0..4 {
                octets[4 * i..4 * i + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(octets))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex_v4(ip: Ipv4Addr) -> String {
        format!("{:08X}", u32::from_ne_bytes(ip.octets()))
    }

    #[test]
    fn listening_and_bound_sockets_take_their_addresses_only() {
        let header = "  sl  local_address rem_address   st tx_queue rx_queue\n";
        let loopback = hex_v4(Ipv4Addr::LOCALHOST);
        let table = format!(
            "{header}   0: {loopback}:1F90 00000000:0000 0A 0\n   1: 00000000:0035 00000000:0000 0A 0\n   \
             2: {loopback}:0050 {loopback}:9999 01 0\n"
        );
        let at = |text: &str| text.parse::<SocketAddr>().unwrap();
        assert!(takes(&table, at("127.0.0.1:8080"), true));
        assert!(
            !takes(&table, at("127.0.0.2:8080"), true),
            "bound to 127.0.0.1 only"
        );
        assert!(takes(&table, at("127.0.0.9:53"), true), "bound to every address");
        assert!(takes(&table, at("[::ffff:127.0.0.1]:8080"), true));
        assert!(
            !takes(&table, at("127.0.0.1:80"), true),
            "connected, not listening"
        );
        assert!(
            takes(&table, at("127.0.0.1:80"), false),
            "a datagram socket's state does not matter"
        );
        let v6 = format!(
            "{header}   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 0\n"
        );
        assert!(takes(&v6, at("[::1]:8080"), true));
        assert!(!takes(&v6, at("127.0.0.1:8080"), true));
    }

    #[test]
    fn this_namespaces_listener_is_found() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        assert!(bound_at(std::process::id(), address, true));
        drop(listener);
        assert!(!bound_at(std::process::id(), address, true));
    }
}
