//! Forge's egress proxy: the one way out of a sandbox whose profile has an allowlist
//! (`sandbox.network.<profile>: {allow: [...]}`).
//!
//! The sandbox's network namespace has only its loopback. The proxy has a foot on each side:
//! [`start`] forks it before the launcher leaves the machine's network namespace, so it connects
//! out from there; once the launcher is in the new namespace, [`Proxy::listen`] opens a listening
//! socket on `127.0.0.1` there and hands it over (`SCM_RIGHTS`). CMD finds it through
//! `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY`. One port serves HTTP (`CONNECT`, and absolute-URI
//! requests forwarded) and SOCKS5 (told apart by the first byte); the proxy resolves names itself,
//! so the sandbox needs no DNS and a refused name is never looked up.
//!
//! Every connection asked for — allowed, refused, or failed — is one `net` event in the
//! project's timeline; a refused one is answered 403 (SOCKS5: "not allowed by ruleset") and named,
//! with the key that would allow it, on CMD's stderr. What is allowed is decided in `egress.rs`.
//!
//! The proxy runs outside every sandbox, nobody's child (so CMD cannot wait for it), in a
//! session of its own (a terminal's Ctrl-C is CMD's), and ends when the launcher's process ends:
//! CMD itself once `exec`ed, or `forge sandbox` when CMD is contained. Anything CMD leaves
//! running after that keeps the namespace but loses the way out (fail closed).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use nix::libc;
use serde_json::json;

use super::SandboxError;
use super::egress::{self, Ask, Pattern, Via, socks};
use crate::timeline::Recorder;

/// How long a client may take to say where it goes, and a connection out to be made.
const ASK_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// A request head longer than this is not one.
const MAX_HEAD: usize = 64 * 1024;

/// What the proxy allows, and where it records.
pub struct Rules {
    pub profile: &'static str,
    pub allow: Vec<Pattern>,
    pub recorder: Option<Recorder>,
}

/// The launcher's end of the channel to a proxy waiting for its listening socket.
pub struct Proxy {
    chan: OwnedFd,
}

fn setup(step: &str) -> SandboxError {
    SandboxError::Setup {
        step: step.to_string(),
        source: std::io::Error::last_os_error(),
    }
}

/// Starts the proxy from this process, in the network namespace it is in now.
pub fn start(rules: Rules) -> Result<Proxy, SandboxError> {
    // SAFETY: pidfd_open(2) on this process's own pid; the descriptor is close-on-exec.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) } as RawFd;
    if pidfd < 0 {
        return Err(setup(
            "watch this process for the egress proxy (pidfd_open)",
        ));
    }
    // SAFETY: a descriptor just opened, owned from here.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    let mut sv = [0 as RawFd; 2];
    // SAFETY: socketpair(2) writes two descriptors into the array.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            sv.as_mut_ptr(),
        )
    } != 0
    {
        return Err(setup("open a channel to the egress proxy"));
    }
    // SAFETY: descriptors just opened, owned from here.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(sv[0]), OwnedFd::from_raw_fd(sv[1])) };
    // Two forks, as the keeper's: the proxy is nobody's child. SAFETY: fork(2) in the
    // single-threaded launcher; the middle process only forks and exits, the proxy runs `serve`
    // and never returns.
    let middle = unsafe { libc::fork() };
    if middle < 0 {
        return Err(setup("start the egress proxy"));
    }
    if middle == 0 {
        // SAFETY: as above.
        unsafe {
            libc::setsid();
            if libc::fork() == 0 {
                serve(theirs.as_raw_fd(), pidfd.as_raw_fd(), rules);
            }
            libc::_exit(0);
        }
    }
    let mut status = 0;
    // SAFETY: waiting for the child just forked.
    unsafe { libc::waitpid(middle, &mut status, 0) };
    drop(theirs);
    Ok(Proxy { chan: ours })
}

impl Proxy {
    /// Opens the proxy's port on this (new) network namespace's loopback, hands it over, and
    /// returns it.
    pub fn listen(self) -> Result<u16, SandboxError> {
        let io = |step: &str, e: std::io::Error| SandboxError::Setup {
            step: step.to_string(),
            source: e,
        };
        let l = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| io("open the egress proxy's port on the sandbox's loopback", e))?;
        let port = l
            .local_addr()
            .map_err(|e| io("read the egress proxy's port", e))?
            .port();
        send_fd(self.chan.as_raw_fd(), l.as_raw_fd())
            .map_err(|e| io("hand the port to the egress proxy", e))?;
        Ok(port)
    }
}

/// The variables CMD finds the proxy by (both cases: curl reads only `http_proxy` in lower
/// case, others only upper); `socks5h`: names are resolved by the proxy.
pub fn environment(port: u16) -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let none = "localhost,127.0.0.1,::1".to_string();
    let mut out = Vec::new();
    for (name, value) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
        ("NO_PROXY", &none),
    ] {
        out.push((name.to_string(), value.clone()));
        out.push((name.to_ascii_lowercase(), value.clone()));
    }
    out
}

/// Sends `fd` over the Unix socket `chan`.
fn send_fd(chan: RawFd, fd: RawFd) -> std::io::Result<()> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: CMSG_SPACE is arithmetic; the buffer is as large as it says, aligned for cmsghdr.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut buf = vec![0u64; space.div_ceil(8)];
    // SAFETY: msghdr is plain data; every pointer in it points into locals alive across the
    // call, and the control message is written within `buf`.
    let r = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = buf.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<RawFd>(), fd);
        libc::sendmsg(chan, &msg, libc::MSG_NOSIGNAL)
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Receives one descriptor from `chan`; `None` at end of file (the launcher made no namespace,
/// or died).
fn recv_fd(chan: RawFd) -> Option<OwnedFd> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: as in `send_fd`; the descriptor read is one the kernel just installed.
    unsafe {
        let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let mut buf = vec![0u64; space.div_ceil(8)];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = buf.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        if libc::recvmsg(chan, &mut msg, libc::MSG_CMSG_CLOEXEC) <= 0 {
            return None;
        }
        let c = libc::CMSG_FIRSTHDR(&msg);
        if c.is_null() || (*c).cmsg_level != libc::SOL_SOCKET || (*c).cmsg_type != libc::SCM_RIGHTS
        {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<RawFd>());
        Some(OwnedFd::from_raw_fd(fd))
    }
}

/// Waits until `fd` is readable or the launcher ended; `false`: it ended.
fn wait(fd: RawFd, pidfd: RawFd) -> bool {
    let mut fds = [
        libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: pidfd,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: poll(2) on an array of two pollfds.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if r < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        return fds[1].revents == 0;
    }
}

/// The proxy process: never returns.
fn serve(chan: RawFd, pidfd: RawFd, rules: Rules) -> ! {
    // Only the channel, the launcher's pidfd and stderr (where refusals are named) stay: a
    // pipe of the caller's held open here would keep its reader waiting.
    // SAFETY: open/dup2/close on descriptor numbers of this process.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
        }
        if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
            let fds: Vec<RawFd> = dir
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect();
            for fd in fds {
                if fd > 2 && fd != chan && fd != pidfd {
                    libc::close(fd);
                }
            }
        }
    }
    super::keeper::detached_as(c"forge-proxy");
    let exit = |code| -> ! { std::process::exit(code) };
    if !wait(chan, pidfd) {
        exit(0);
    }
    let Some(listener) = recv_fd(chan) else {
        exit(0);
    };
    // SAFETY: closing the channel, no longer needed.
    unsafe { libc::close(chan) };
    let listener = TcpListener::from(listener);
    let rules = std::sync::Arc::new(rules);
    loop {
        if !wait(listener.as_raw_fd(), pidfd) {
            exit(0);
        }
        if let Ok((conn, _)) = listener.accept() {
            let rules = rules.clone();
            std::thread::spawn(move || handle(conn, &rules));
        }
    }
}

/// One client connection: what it asks, the decision, and the bytes both ways if allowed.
fn handle(mut conn: TcpStream, rules: &Rules) {
    let _ = conn.set_read_timeout(Some(ASK_TIMEOUT));
    let mut first = [0u8; 1];
    if !matches!(conn.peek(&mut first), Ok(1)) {
        return;
    }
    let Ok(read) = conn.try_clone() else {
        return;
    };
    let mut client = Reader::new(read);
    let ask = if first[0] == 5 {
        match socks_ask(&mut conn) {
            Some(a) => a,
            None => return,
        }
    } else {
        match client.head() {
            Some(head) => match egress::http_ask(&head) {
                Ok(a) => a,
                Err(e) => {
                    respond(
                        &mut conn,
                        "400 Bad Request",
                        &format!("forge sandbox: {e}\n"),
                    );
                    return;
                }
            },
            None => return,
        }
    };
    let Some(rule) = egress::allowed(&rules.allow, &ask.host, ask.port) else {
        let why = egress::refusal(rules.profile, &ask.host, ask.port);
        record(rules, &ask, None, Some("refused"));
        eprintln!("{why}");
        match ask.via {
            Via::Socks5 => socks_reply(&mut conn, socks::NOT_ALLOWED),
            _ => respond(
                &mut conn,
                &format!(
                    "403 Forbidden by Forge: add {} to sandbox.network.{}.allow",
                    ask.host, rules.profile
                ),
                &format!("{why}\n"),
            ),
        }
        return;
    };
    let up = connect(&ask.host, ask.port);
    record(
        rules,
        &ask,
        Some(rule),
        up.as_ref().err().map(String::as_str),
    );
    let mut up = match up {
        Ok(up) => up,
        Err(e) => {
            match ask.via {
                Via::Socks5 => socks_reply(&mut conn, socks::HOST_UNREACHABLE),
                _ => respond(
                    &mut conn,
                    "502 Bad Gateway",
                    &format!(
                        "forge sandbox: cannot reach {}:{}: {e}\n",
                        ask.host, ask.port
                    ),
                ),
            }
            return;
        }
    };
    let ready = match ask.via {
        Via::Socks5 => {
            socks_reply(&mut conn, socks::SUCCEEDED);
            Ok(())
        }
        Via::Connect => conn.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n"),
        Via::Http => Ok(()),
    };
    if ready.is_err() {
        return;
    }
    let _ = conn.set_read_timeout(None);
    let Ok(mut u2) = up.try_clone() else {
        return;
    };
    // The client's side: a tunnel is copied as it comes; plain HTTP is forwarded request by
    // request, each head rewritten (a client keeps its connection to the proxy open and sends
    // the next request with an absolute URI too), as long as it goes to the same host.
    let out = std::thread::spawn(move || {
        let _ = match ask.via {
            Via::Http => forward_requests(&mut client, &mut u2, ask),
            _ => u2
                .write_all(&client.pending)
                .and_then(|()| std::io::copy(&mut client.conn, &mut u2).map(drop)),
        };
        let _ = u2.shutdown(Shutdown::Write);
    });
    let _ = std::io::copy(&mut up, &mut conn);
    let _ = conn.shutdown(Shutdown::Write);
    let _ = out.join();
}

/// One `net` event: the host asked for, how, and the decision (`error`: `refused`, or why an
/// allowed host could not be reached).
fn record(rules: &Rules, ask: &Ask, rule: Option<&Pattern>, error: Option<&str>) {
    let Some(r) = &rules.recorder else {
        return;
    };
    let mut data = json!({
        "profile": rules.profile,
        "host": ask.host,
        "port": ask.port,
        "via": ask.via.as_str(),
        "decision": if rule.is_some() { "allowed" } else { "refused" },
        "key": format!("sandbox.network.{}.allow", rules.profile),
    });
    if let Some(rule) = rule {
        data["rule"] = json!(rule.to_string());
    }
    if let (Some(e), Some(_)) = (error, rule) {
        data["error"] = json!(e);
    }
    r.record_or_warn(None, "net", data);
}

/// Connects to `host:port` from the machine's network, trying each address it resolves to.
fn connect(host: &str, port: u16) -> Result<TcpStream, String> {
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?;
    let mut last = format!("{host} resolves to no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
            Ok(s) => return Ok(s),
            Err(e) => last = format!("{a}: {e}"),
        }
    }
    Err(last)
}

/// A client connection read with what came before it was needed: an HTTP head is found in
/// whatever reads return, and the bytes after it are the next part's.
struct Reader {
    conn: TcpStream,
    pending: Vec<u8>,
}

impl Reader {
    fn new(conn: TcpStream) -> Reader {
        Reader {
            conn,
            pending: Vec::new(),
        }
    }

    /// Reads more; `false` at end of file or on an error.
    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        match self.conn.read(&mut chunk) {
            Ok(n) if n > 0 => {
                self.pending.extend_from_slice(&chunk[..n]);
                true
            }
            _ => false,
        }
    }

    /// The next request head, up to and including its blank line.
    fn head(&mut self) -> Option<Vec<u8>> {
        let mut from = 0;
        loop {
            if let Some(i) = self.pending[from..]
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
            {
                let rest = self.pending.split_off(from + i + 4);
                return Some(std::mem::replace(&mut self.pending, rest));
            }
            if self.pending.len() > MAX_HEAD {
                return None;
            }
            from = self.pending.len().saturating_sub(3);
            if !self.fill() {
                return None;
            }
        }
    }

    /// Copies `n` bytes to `out`.
    fn copy(&mut self, mut n: u64, out: &mut TcpStream) -> std::io::Result<()> {
        while n > 0 {
            if self.pending.is_empty() && !self.fill() {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let take = self
                .pending
                .len()
                .min(usize::try_from(n).unwrap_or(usize::MAX));
            out.write_all(&self.pending[..take])?;
            self.pending.drain(..take);
            n -= take as u64;
        }
        Ok(())
    }

    /// Copies one line, with its CRLF, to `out`, and returns it.
    fn line(&mut self, out: &mut TcpStream) -> std::io::Result<Vec<u8>> {
        loop {
            if let Some(i) = self.pending.windows(2).position(|w| w == b"\r\n") {
                let rest = self.pending.split_off(i + 2);
                let line = std::mem::replace(&mut self.pending, rest);
                out.write_all(&line)?;
                return Ok(line);
            }
            if self.pending.len() > MAX_HEAD || !self.fill() {
                return Err(std::io::ErrorKind::InvalidData.into());
            }
        }
    }
}

/// Forwards plain-HTTP requests to `up` (already connected to `first`'s host), each head in
/// origin form and each body by its framing, until the client ends, asks for another host, or
/// sends what is not a request (the connection is then ended: the client opens another).
fn forward_requests(client: &mut Reader, up: &mut TcpStream, first: Ask) -> std::io::Result<()> {
    let mut ask = first;
    loop {
        up.write_all(&ask.head)?;
        match egress::body(&ask.head) {
            egress::Body::None => {}
            egress::Body::Length(n) => client.copy(n, up)?,
            egress::Body::Chunked => loop {
                let line = client.line(up)?;
                let size = std::str::from_utf8(&line)
                    .ok()
                    .and_then(|l| l.trim().split(';').next())
                    .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
                    .ok_or(std::io::ErrorKind::InvalidData)?;
                if size == 0 {
                    // Trailers, up to the blank line.
                    while client.line(up)? != b"\r\n" {}
                    break;
                }
                client.copy(size + 2, up)?;
            },
        }
        let Some(head) = client.head() else {
            return Ok(());
        };
        match egress::http_ask(&head) {
            Ok(next) if next.via == Via::Http && next.host == ask.host && next.port == ask.port => {
                ask = next;
            }
            _ => return Ok(()),
        }
    }
}

/// The SOCKS5 greeting (no authentication is offered) and request.
fn socks_ask(conn: &mut TcpStream) -> Option<Ask> {
    let mut hello = [0u8; 2];
    conn.read_exact(&mut hello).ok()?;
    let mut methods = vec![0u8; hello[1] as usize];
    conn.read_exact(&mut methods).ok()?;
    if !methods.contains(&0) {
        let _ = conn.write_all(&[5, 0xff]);
        return None;
    }
    conn.write_all(&[5, 0]).ok()?;
    let mut req = vec![0u8; 5];
    conn.read_exact(&mut req).ok()?;
    let more = match req[3] {
        1 => 4 - 1 + 2,
        3 => req[4] as usize + 2,
        4 => 16 - 1 + 2,
        _ => 0,
    };
    let mut rest = vec![0u8; more];
    conn.read_exact(&mut rest).ok()?;
    req.extend_from_slice(&rest);
    match egress::socks_ask(&req) {
        Ok(a) => Some(a),
        Err(code) => {
            socks_reply(conn, code);
            None
        }
    }
}

fn socks_reply(conn: &mut TcpStream, code: u8) {
    let _ = conn.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
}

fn respond(conn: &mut TcpStream, status: &str, body: &str) {
    let _ = conn.write_all(
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
}
