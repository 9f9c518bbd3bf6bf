//! The first bytes of a proxied connection: an HTTP `CONNECT`, an HTTP request in absolute form
//! (`GET http://host/path`), or a SOCKS5 greeting (its first byte is 5). One port speaks all three.

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// The largest request head read (request line and headers).
const MAX_HEAD: usize = 64 * 1024;

/// How the client asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `CONNECT host:port`: a tunnel, answered `200` before the bytes flow.
    Connect,
    /// A plain HTTP request, forwarded with its head rewritten.
    Forward,
    /// SOCKS5 `CONNECT` (the greeting has been answered already).
    Socks,
}

/// One destination asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub protocol: Protocol,
    /// The host as the client wrote it (without brackets).
    pub host: String,
    pub port: u16,
    /// What to send to the destination first: the rewritten head of a forwarded request, and
    /// whatever the client sent after its head.
    pub first_bytes: Vec<u8>,
}

/// Read the client's request. An `Err` carries the reply to send before closing.
pub async fn read(client: &mut TcpStream) -> Result<Request, Vec<u8>> {
    let mut buf = Vec::with_capacity(1024);
    if read_more(client, &mut buf).await == 0 {
        return Err(Vec::new());
    }
    if buf[0] == 5 {
        return socks(client, buf).await;
    }
    loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            return http(&buf[..end + 4], &buf[end + 4..])
                .map_err(|why| reply(400, "Bad Request", why, None));
        }
        if buf.len() > MAX_HEAD || read_more(client, &mut buf).await == 0 {
            return Err(reply(
                400,
                "Bad Request",
                "incomplete or oversized request head",
                None,
            ));
        }
    }
}

async fn read_more(client: &mut TcpStream, buf: &mut Vec<u8>) -> usize {
    let mut chunk = [0u8; 4096];
    match client.read(&mut chunk).await {
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            n
        }
        Err(_) => 0,
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A forwarded request's response, once `bytes` hold its whole head: the head with its connection
/// headers replaced by `Connection: close`, followed by whatever came after it. A client must
/// not send its next request on this connection: it would go to the host already connected,
/// whatever host the request names.
pub fn closing_response_head(bytes: &[u8]) -> Option<Vec<u8>> {
    let end = find(bytes, b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&bytes[..end]);
    let mut out = String::with_capacity(end + 32);
    for (i, line) in head.split("\r\n").enumerate() {
        let name = line.split(':').next().unwrap_or_default().trim();
        let dropped = ["connection", "keep-alive", "proxy-connection"];
        if i > 0 && dropped.iter().any(|d| name.eq_ignore_ascii_case(d)) {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    let mut rewritten = out.into_bytes();
    rewritten.extend_from_slice(&bytes[end + 4..]);
    Some(rewritten)
}

/// Parse an HTTP head: `CONNECT host:port` or an absolute-form request.
fn http(head: &[u8], rest: &[u8]) -> Result<Request, &'static str> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8")?;
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut words = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err("malformed request line");
    };
    if !version.starts_with("HTTP/1.") {
        return Err("only HTTP/1 requests are proxied");
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(target, None).ok_or("malformed CONNECT authority")?;
        return Ok(Request {
            protocol: Protocol::Connect,
            host,
            port,
            first_bytes: rest.to_vec(),
        });
    }
    let scheme_end = target
        .find("://")
        .ok_or("only absolute-form requests are proxied")?;
    if !target[..scheme_end].eq_ignore_ascii_case("http") {
        return Err("only http:// URLs are forwarded (use CONNECT for TLS)");
    }
    let after = &target[scheme_end + 3..];
    let path_start = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority_text, path) = after.split_at(path_start);
    let (host, port) = authority(authority_text, Some(80)).ok_or("malformed URL authority")?;
    let path = match path {
        "" => "/".to_owned(),
        p if p.starts_with('/') => p.to_owned(),
        p => format!("/{p}"),
    };
    // The destination's Host is the one that was checked, so that a shared front end (a CDN)
    // cannot be steered to another of its sites by the header; an internationalised name in its
    // ASCII form, as servers expect it.
    let host_header = match super::names::normalize(&host) {
        Some(ascii) if !authority_text.is_ascii() => match authority_text.rsplit_once(':') {
            Some((_, written_port)) => format!("{ascii}:{written_port}"),
            None => ascii,
        },
        _ => authority_text.to_owned(),
    };
    let mut out = format!("{method} {path} {version}\r\nHost: {host_header}\r\n");
    for header in lines.filter(|l| !l.is_empty()) {
        let name = header.split(':').next().unwrap_or_default().trim();
        let dropped = [
            "host",
            "proxy-authorization",
            "proxy-connection",
            "connection",
            "keep-alive",
        ];
        if !dropped.iter().any(|d| name.eq_ignore_ascii_case(d)) {
            out.push_str(header);
            out.push_str("\r\n");
        }
    }
    // One request per connection: a next request could name another host.
    out.push_str("Connection: close\r\n\r\n");
    let mut first_bytes = out.into_bytes();
    first_bytes.extend_from_slice(rest);
    Ok(Request {
        protocol: Protocol::Forward,
        host,
        port,
        first_bytes,
    })
}

/// `host:port` (or `host` with `default` port); IPv6 in brackets; no user information.
fn authority(text: &str, default: Option<u16>) -> Option<(String, u16)> {
    if text.contains('@') || text.is_empty() {
        return None;
    }
    let (host, port) = if let Some(v6) = text.strip_prefix('[') {
        let (host, rest) = v6.split_once(']')?;
        (host, rest.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok().filter(|&p| p != 0)?,
        None => default?,
    };
    (!host.is_empty()).then(|| (host.to_owned(), port))
}

/// SOCKS5: answer the greeting (no authentication, or any user name and password), then read
/// one `CONNECT` request.
async fn socks(client: &mut TcpStream, mut buf: Vec<u8>) -> Result<Request, Vec<u8>> {
    let greeting = fill(client, &mut buf, 2).await?;
    let methods_len = usize::from(greeting[1]);
    let methods = fill(client, &mut buf, 2 + methods_len).await?[2..].to_vec();
    buf.drain(..2 + methods_len);
    if methods.contains(&0) {
        write(client, &[5, 0]).await?;
    } else if methods.contains(&2) {
        write(client, &[5, 2]).await?;
        // RFC 1929: version, user name, password; the values are not used.
        let user_len = usize::from(fill(client, &mut buf, 2).await?[1]);
        let pass_len = usize::from(fill(client, &mut buf, 3 + user_len).await?[2 + user_len]);
        fill(client, &mut buf, 3 + user_len + pass_len).await?;
        buf.drain(..3 + user_len + pass_len);
        write(client, &[1, 0]).await?;
    } else {
        return Err(vec![5, 0xff]);
    }
    let head = fill(client, &mut buf, 5).await?.to_vec();
    if head[0] != 5 || head[1] != 1 {
        // Only CONNECT: BIND and UDP ASSOCIATE would open other ways through.
        return Err(socks_reply(7));
    }
    let (host, used) = match head[3] {
        1 => {
            let b = fill(client, &mut buf, 10).await?;
            (std::net::Ipv4Addr::new(b[4], b[5], b[6], b[7]).to_string(), 8)
        }
        3 => {
            let len = usize::from(head[4]);
            let b = fill(client, &mut buf, 7 + len).await?;
            let name = String::from_utf8(b[5..5 + len].to_vec()).map_err(|_| socks_reply(1))?;
            (name, 5 + len)
        }
        4 => {
            let b = fill(client, &mut buf, 22).await?;
            let octets: [u8; 16] = b[4..20].try_into().map_err(|_| socks_reply(1))?;
            (std::net::Ipv6Addr::from(octets).to_string(), 20)
        }
        _ => return Err(socks_reply(8)),
    };
    let port = u16::from_be_bytes([buf[used], buf[used + 1]]);
    Ok(Request {
        protocol: Protocol::Socks,
        host,
        port,
        first_bytes: buf[used + 2..].to_vec(),
    })
}

/// Read until `buf` holds `n` bytes.
async fn fill<'a>(client: &mut TcpStream, buf: &'a mut Vec<u8>, n: usize) -> Result<&'a [u8], Vec<u8>> {
    while buf.len() < n {
        if buf.len() > MAX_HEAD || read_more(client, buf).await == 0 {
            return Err(Vec::new());
        }
    }
    Ok(&buf[..n])
}

async fn write(client: &mut TcpStream, bytes: &[u8]) -> Result<(), Vec<u8>> {
    client.write_all(bytes).await.map_err(|_| Vec::new())
}

/// A SOCKS5 reply with status `code` (0 succeeded, 2 not allowed by the rules, 4 host
/// unreachable, 7 command not supported).
pub fn socks_reply(code: u8) -> Vec<u8> {
    vec![5, code, 0, 1, 0, 0, 0, 0, 0, 0]
}

/// An HTTP reply closing the connection; `denied` adds the reason a header says.
pub fn reply(status: u16, text: &str, body: &str, denied: Option<&str>) -> Vec<u8> {
    let body = format!("shellgate sandbox proxy: {body}\n");
    let header = denied.map_or_else(String::new, |why| format!("X-Shellgate-Denied: {why}\r\n"));
    format!(
        "HTTP/1.1 {status} {text}\r\nContent-Type: text/plain\r\n{header}Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_requests_parse() {
        let connect = http(
            b"CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n",
            b"x",
        )
        .unwrap();
        assert_eq!(
            (connect.protocol, connect.host.as_str(), connect.port),
            (Protocol::Connect, "pypi.org", 443)
        );
        assert_eq!(connect.first_bytes, b"x");
        let v6 = http(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", b"").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 8443));
        let get = http(
            b"GET http://Example.com:8080/a?b HTTP/1.1\r\nHost: evil.example\r\nProxy-Authorization: Basic x\r\nAccept: */*\r\n\r\n",
            b"",
        )
        .unwrap();
        assert_eq!(
            (get.protocol, get.host.as_str(), get.port),
            (Protocol::Forward, "Example.com", 8080)
        );
        let head = String::from_utf8(get.first_bytes).unwrap();
        assert!(
            head.starts_with("GET /a?b HTTP/1.1\r\nHost: Example.com:8080\r\n"),
            "{head}"
        );
        assert!(
            !head.contains("evil") && !head.contains("Proxy-Authorization"),
            "{head}"
        );
        let unicode = http("GET http://Bücher.example:81/ HTTP/1.1\r\n\r\n".as_bytes(), b"").unwrap();
        let ascii_head = String::from_utf8(unicode.first_bytes).unwrap();
        assert!(
            ascii_head.starts_with("GET / HTTP/1.1\r\nHost: xn--bcher-kva.example:81\r\n"),
            "{ascii_head}"
        );
        assert!(
            head.contains("Accept: */*\r\n") && head.ends_with("Connection: close\r\n\r\n"),
            "{head}"
        );
    }

    #[test]
    fn forwarded_responses_close_their_connection() {
        assert_eq!(closing_response_head(b"HTTP/1.1 200 OK\r\nContent-Le"), None);
        let rewritten = closing_response_head(
            b"HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\nconnection: keep-alive\r\n\r\nok",
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(rewritten).unwrap(),
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        );
    }

    #[test]
    fn other_requests_are_refused() {
        for head in [
            &b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"[..],
            b"GET https://example.com/ HTTP/1.1\r\n\r\n",
            b"GET http://user@example.com/ HTTP/1.1\r\n\r\n",
            b"CONNECT example.com HTTP/1.1\r\n\r\n",
            b"CONNECT example.com:0 HTTP/1.1\r\n\r\n",
            b"GET http://example.com/ HTTP/2\r\n\r\n",
            b"GET http://:80/ HTTP/1.1\r\n\r\n",
        ] {
            assert!(http(head, b"").is_err(), "{}", String::from_utf8_lossy(head));
        }
    }
}
