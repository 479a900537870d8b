//! What Forge's egress proxy allows, and what it reads from a client, as pure functions: the
//! patterns of `sandbox.network.<profile>.allow`, an HTTP request head (CONNECT or an
//! absolute-URI request), a SOCKS5 request. The proxy (`proxy.rs`) only moves bytes and asks
//! here; nothing here touches a socket, so every rule is tested without a network.

/// One entry of `sandbox.network.<profile>.allow`: `api.example.com`, `*.example.com` (any name
/// below it, not itself), an IP address (`127.0.0.1`, `[::1]`), each optionally with `:port`
/// (without one, any port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// Lower case, without the `*.` and the brackets of an IPv6 address.
    host: String,
    wildcard: bool,
    port: Option<u16>,
}

impl Pattern {
    pub fn parse(s: &str) -> Result<Pattern, String> {
        let bad = || {
            format!(
                "{s:?} is not a host: write `api.example.com`, `*.example.com` or an IP address, each optionally with `:port` (no scheme, path or user)"
            )
        };
        let s_low = s.trim().to_ascii_lowercase();
        let (host, port) = split_port(&s_low).ok_or_else(bad)?;
        let (host, wildcard) = match host.strip_prefix("*.") {
            Some(rest) => (rest, true),
            None => (host, false),
        };
        let host = host.strip_suffix('.').unwrap_or(host);
        if !valid_host(host) {
            return Err(bad());
        }
        Ok(Pattern {
            host: host.to_string(),
            wildcard,
            port,
        })
    }

    /// Whether a connection to `host:port` (as [`normalize`] leaves it) is this entry's.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        let name = if self.wildcard {
            host.strip_suffix(self.host.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
        } else {
            host == self.host
        };
        name && self.port.is_none_or(|p| p == port)
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let star = if self.wildcard { "*." } else { "" };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.port {
            Some(p) => write!(f, "{star}{host}:{p}"),
            None => write!(f, "{star}{host}"),
        }
    }
}

/// `host[:port]`, `[v6][:port]`: the host (brackets removed) and the port if one is given.
/// `None` when the port is not a number or an IPv6 address is not bracketed.
fn split_port(s: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after {
            "" => Some((host, None)),
            p => Some((host, Some(p.strip_prefix(':')?.parse().ok()?))),
        };
    }
    match s.rsplit_once(':') {
        None => Some((s, None)),
        Some((h, _)) if h.contains(':') => None,
        Some((h, p)) => Some((h, Some(p.parse().ok()?))),
    }
}

/// A DNS name or an IP address: letters, digits, `-`, `.` (and `:` in an IPv6 address), no
/// empty label.
fn valid_host(h: &str) -> bool {
    if h.contains(':') {
        return h.parse::<std::net::Ipv6Addr>().is_ok();
    }
    !h.is_empty()
        && h.len() <= 253
        && h.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

/// A host as a client names it, in the form patterns are compared with: lower case, no
/// trailing dot, no brackets. `None`: not a host ([`valid_host`]), so it is refused unread.
pub fn normalize(host: &str) -> Option<String> {
    let h = host.trim().to_ascii_lowercase();
    let h = h
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(&h);
    let h = h.strip_suffix('.').unwrap_or(h);
    valid_host(h).then(|| h.to_string())
}

/// The entry that allows `host:port`, if any.
pub fn allowed<'a>(list: &'a [Pattern], host: &str, port: u16) -> Option<&'a Pattern> {
    list.iter().find(|p| p.matches(host, port))
}

/// How a client asked for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `CONNECT host:port` (HTTPS, or any TCP through an HTTP proxy).
    Connect,
    /// A plain-HTTP request with an absolute URI, forwarded.
    Http,
    Socks5,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Connect => "connect",
            Via::Http => "http",
            Via::Socks5 => "socks5",
        }
    }
}

/// What a client asked for: where, and for a forwarded request, the head to send there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    pub via: Via,
    pub host: String,
    pub port: u16,
    /// For [`Via::Http`]: the request head rewritten to origin form (`GET /path HTTP/1.1`),
    /// without the proxy's own headers.
    pub head: Vec<u8>,
}

/// Reads an HTTP request head (up to and including the blank line) sent to the proxy.
pub fn http_ask(head: &[u8]) -> Result<Ask, String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not text".to_string())?;
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or("");
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("not an HTTP request line: {first:?}"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(format!("not HTTP/1.x: {first:?}"));
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) =
            split_port(target).ok_or_else(|| format!("bad CONNECT target {target:?}"))?;
        let port = port.ok_or_else(|| format!("CONNECT {target:?} names no port"))?;
        let host = normalize(host).ok_or_else(|| format!("bad host in {target:?}"))?;
        return Ok(Ask {
            via: Via::Connect,
            host,
            port,
            head: Vec::new(),
        });
    }
    let rest = target
        .strip_prefix("http://")
        .or_else(|| {
            target
                .get(..7)
                .filter(|s| s.eq_ignore_ascii_case("http://"))
                .map(|_| &target[7..])
        })
        .ok_or_else(|| {
            format!("{method} {target:?}: a proxy is asked with `CONNECT host:port` or an absolute `http://` URI")
        })?;
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    if authority.contains('@') {
        return Err(format!("{target:?}: a user in the URI is not forwarded"));
    }
    let (host, port) = split_port(authority).ok_or_else(|| format!("bad host in {target:?}"))?;
    let host = normalize(host).ok_or_else(|| format!("bad host in {target:?}"))?;
    let mut out = format!("{method} {path} {version}\r\n");
    for line in lines {
        let name = line.split(':').next().unwrap_or("").trim();
        if name.eq_ignore_ascii_case("proxy-connection")
            || name.eq_ignore_ascii_case("proxy-authorization")
        {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    // `lines` ends with the two empty strings of the final blank line: one CRLF too many.
    out.truncate(out.len() - 2);
    Ok(Ask {
        via: Via::Http,
        host,
        port: port.unwrap_or(80),
        head: out.into_bytes(),
    })
}

/// How a request's body is framed (RFC 9112, section 6.3): the proxy forwards requests one by
/// one, so it must know where each ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    None,
    Length(u64),
    Chunked,
}

/// The framing of the body that follows a request `head`: chunked when `Transfer-Encoding` says
/// so (it overrides `Content-Length`), else `Content-Length`, else none.
pub fn body(head: &[u8]) -> Body {
    let text = String::from_utf8_lossy(head);
    let mut length = None;
    for line in text.split("\r\n").skip(1) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("transfer-encoding")
            && value
                .rsplit(',')
                .next()
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("chunked"))
        {
            return Body::Chunked;
        }
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse().ok();
        }
    }
    length.filter(|n| *n > 0).map_or(Body::None, Body::Length)
}

/// The SOCKS5 reply codes Forge sends (RFC 1928, section 6).
pub mod socks {
    pub const SUCCEEDED: u8 = 0;
    pub const GENERAL_FAILURE: u8 = 1;
    pub const NOT_ALLOWED: u8 = 2;
    pub const HOST_UNREACHABLE: u8 = 4;
    pub const COMMAND_NOT_SUPPORTED: u8 = 7;
    pub const ADDRESS_NOT_SUPPORTED: u8 = 8;
}

/// Reads a SOCKS5 request (`VER CMD RSV ATYP ADDR PORT`, after the method negotiation):
/// `Err` holds the reply code to send.
pub fn socks_ask(req: &[u8]) -> Result<Ask, u8> {
    let [5, cmd, 0, atyp, rest @ ..] = req else {
        return Err(socks::GENERAL_FAILURE);
    };
    if *cmd != 1 {
        return Err(socks::COMMAND_NOT_SUPPORTED);
    }
    let (host, rest) = match (atyp, rest) {
        (1, [a, b, c, d, rest @ ..]) => (std::net::Ipv4Addr::new(*a, *b, *c, *d).to_string(), rest),
        (3, [n, rest @ ..]) if rest.len() >= *n as usize => {
            let (name, rest) = rest.split_at(*n as usize);
            let name = std::str::from_utf8(name).map_err(|_| socks::GENERAL_FAILURE)?;
            (name.to_string(), rest)
        }
        (4, rest) if rest.len() >= 16 => {
            let (a, rest) = rest.split_at(16);
            let a: [u8; 16] = a.try_into().map_err(|_| socks::GENERAL_FAILURE)?;
            (std::net::Ipv6Addr::from(a).to_string(), rest)
        }
        (1 | 3 | 4, _) => return Err(socks::GENERAL_FAILURE),
        _ => return Err(socks::ADDRESS_NOT_SUPPORTED),
    };
    let [p1, p2] = rest else {
        return Err(socks::GENERAL_FAILURE);
    };
    Ok(Ask {
        via: Via::Socks5,
        host: normalize(&host).ok_or(socks::GENERAL_FAILURE)?,
        port: u16::from_be_bytes([*p1, *p2]),
        head: Vec::new(),
    })
}

/// The words a refused client and the person see: the host and the key that would allow it.
pub fn refusal(profile: &str, host: &str, port: u16) -> String {
    format!(
        "forge sandbox: {host}:{port} is not allowed: add `{host}` to `sandbox.network.{profile}.allow` in .forge/config.yaml"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(s: &[&str]) -> Vec<Pattern> {
        s.iter().map(|p| Pattern::parse(p).unwrap()).collect()
    }

    #[test]
    fn patterns_match_hosts_wildcards_and_ports() {
        let l = list(&[
            "API.Anthropic.com",
            "*.pythonhosted.org",
            "127.0.0.1:8080",
            "[::1]:9",
            "crates.io.",
        ]);
        let hit = |h: &str, p: u16| allowed(&l, &normalize(h).unwrap(), p).map(|p| p.to_string());
        assert_eq!(
            hit("api.anthropic.com", 443).as_deref(),
            Some("api.anthropic.com")
        );
        assert_eq!(
            hit("api.anthropic.com.", 80).as_deref(),
            Some("api.anthropic.com")
        );
        assert_eq!(hit("evil-api.anthropic.com", 443), None);
        assert_eq!(hit("anthropic.com", 443), None);
        assert_eq!(hit("api.anthropic.com.evil.org", 443), None);
        assert_eq!(
            hit("files.pythonhosted.org", 443).as_deref(),
            Some("*.pythonhosted.org")
        );
        assert_eq!(
            hit("a.b.pythonhosted.org", 443).as_deref(),
            Some("*.pythonhosted.org")
        );
        assert_eq!(
            hit("pythonhosted.org", 443),
            None,
            "a wildcard is names below it"
        );
        assert_eq!(hit("xpythonhosted.org", 443), None);
        assert_eq!(hit("127.0.0.1", 8080).as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(hit("127.0.0.1", 8081), None, "a port given is the only one");
        assert_eq!(hit("[::1]", 9).as_deref(), Some("[::1]:9"));
        assert_eq!(hit("crates.io", 443).as_deref(), Some("crates.io"));
    }

    #[test]
    fn bad_patterns_say_what_a_host_is() {
        for bad in [
            "",
            "https://api.example.com",
            "api.example.com/v1",
            "user@host",
            "*",
            "*.",
            "a.*.com",
            "host:http",
            "host:70000",
            "::1",
            "a..b",
            "exa mple.com",
        ] {
            let e = Pattern::parse(bad).unwrap_err();
            assert!(e.contains("`*.example.com`"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_connect_names_host_and_port() {
        let a =
            http_ask(b"CONNECT Example.COM:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n").unwrap();
        assert_eq!(
            (a.via, a.host.as_str(), a.port),
            (Via::Connect, "example.com", 443)
        );
        let a = http_ask(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((a.host.as_str(), a.port), ("::1", 8443));
        assert!(http_ask(b"CONNECT example.com HTTP/1.1\r\n\r\n").is_err());
        assert!(http_ask(b"CONNECT ex/ample.com:443 HTTP/1.1\r\n\r\n").is_err());
    }

    #[test]
    fn an_absolute_uri_is_forwarded_in_origin_form() {
        let a = http_ask(
            b"GET http://LocalHost:8000/a/b?c=1 HTTP/1.1\r\nHost: localhost:8000\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            (a.via, a.host.as_str(), a.port),
            (Via::Http, "localhost", 8000)
        );
        assert_eq!(
            String::from_utf8(a.head).unwrap(),
            "GET /a/b?c=1 HTTP/1.1\r\nHost: localhost:8000\r\nAccept: */*\r\n\r\n"
        );
        let a = http_ask(b"GET http://example.com HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(a.port, 80);
        assert_eq!(a.head, b"GET / HTTP/1.0\r\n\r\n");
        for bad in [
            &b"GET /relative HTTP/1.1\r\n\r\n"[..],
            b"GET https://example.com/ HTTP/1.1\r\n\r\n",
            b"GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n",
            b"GET http://example.com/ SPDY\r\n\r\n",
        ] {
            assert!(http_ask(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_request_body_is_framed_by_chunks_or_length() {
        assert_eq!(body(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), Body::None);
        assert_eq!(
            body(b"POST / HTTP/1.1\r\ncontent-length: 12\r\n\r\n"),
            Body::Length(12)
        );
        assert_eq!(
            body(
                b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
            ),
            Body::Chunked
        );
        assert_eq!(
            body(b"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n"),
            Body::None
        );
    }

    #[test]
    fn socks_requests_by_name_and_address() {
        let mut by_name = vec![5, 1, 0, 3, 16];
        by_name.extend_from_slice(b"example.invalid.");
        by_name.extend_from_slice(&443u16.to_be_bytes());
        let a = socks_ask(&by_name).unwrap();
        assert_eq!(
            (a.via, a.host.as_str(), a.port),
            (Via::Socks5, "example.invalid", 443)
        );
        let a = socks_ask(&[5, 1, 0, 1, 127, 0, 0, 1, 0x1f, 0x90]).unwrap();
        assert_eq!((a.host.as_str(), a.port), ("127.0.0.1", 8080));
        assert_eq!(
            socks_ask(&[5, 2, 0, 1, 127, 0, 0, 1, 0, 80]),
            Err(socks::COMMAND_NOT_SUPPORTED),
            "BIND is not offered"
        );
        assert_eq!(
            socks_ask(&[5, 1, 0, 9, 0, 80]),
            Err(socks::ADDRESS_NOT_SUPPORTED)
        );
        assert_eq!(
            socks_ask(&[5, 1, 0, 3, 9, b'x']),
            Err(socks::GENERAL_FAILURE)
        );
    }

    #[test]
    fn a_refusal_names_the_key() {
        assert_eq!(
            refusal("check", "example.invalid", 443),
            "forge sandbox: example.invalid:443 is not allowed: add `example.invalid` to `sandbox.network.check.allow` in .forge/config.yaml"
        );
    }
}
