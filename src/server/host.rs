//! Which `Host` and `Origin` a request may carry: the server's defence
//! against DNS rebinding and against other sites' pages.
//!
//! A page of another site can make its own name resolve to 127.0.0.1 (DNS
//! rebinding) and then talk to this server as if it were that site: the
//! browser still sends the site's name in `Host`. So the gate answers only
//! requests whose `Host` is a name of this server ([`HostPolicy::admits`]):
//!
//! - a loopback name or address: `localhost` and any `*.localhost` (which
//!   never leave the machine), an address of 127.0.0.0/8, `[::1]`;
//! - the address the server is bound to, and, when it is bound to every
//!   interface (`0.0.0.0` or `::`), any address: an address is not a name
//!   that DNS can rebind;
//! - a name given to `--allow-host` ([`AllowedHost`]); `*` admits any.
//!
//! A port, if the Host has one, must be the port the server listens on (or
//! the one the `--allow-host` entry names). Names are compared without
//! regard to case and without one trailing dot. HTTP/1.1 needs exactly one
//! Host; HTTP/1.0, which no browser speaks, may go without.
//!
//! A page of another site may also send requests to `127.0.0.1` directly
//! (a form, an image, a `fetch`), without rebinding anything. Browsers say
//! where such a request comes from: [`HostPolicy::admits_origin`] admits an
//! `Origin` only when it is this server's (`http://` or `https://` and a
//! host the rule above admits by name, or the request's own `Host`), and
//! [`is_cross_site`] refuses a `Sec-Fetch-Site` of `cross-site` or
//! `same-site`. The gate applies both to every request but a `GET` or
//! `HEAD` of the page and its script ([`is_guarded`]), so that every API
//! route, and with it every solve on demand, is the server's own page's
//! (or a script's or curl's, which send neither header) and a link from
//! anywhere still opens the page.
//!
//! Everything here reads bytes of any length and kind without panicking;
//! the gate has bounded the head before.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;

use crate::text::clip;

/// The longest host (and port) read; longer ones are no host of this
/// server. A DNS name is at most 253 characters.
const MAX_AUTHORITY: usize = 300;

/// The characters of a clipped Host or Origin quoted in a refusal.
const QUOTED: usize = 60;

/// A host as a request names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    /// A DNS name, lowercase, without a trailing dot.
    Name(String),
    /// An IP address (an IPv6 one written in brackets), IPv4-mapped IPv6
    /// addresses as IPv4.
    Ip(IpAddr),
}

/// A host and, when given, a port: what `Host` holds, and an `Origin`
/// after its scheme.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authority {
    /// The host.
    pub host: Host,
    /// The port, when given.
    pub port: Option<u16>,
}

impl Authority {
    /// Reads `host[:port]`: a DNS name, an IPv4 address or a bracketed
    /// IPv6 address, then an optional port of 1 to 5 digits up to 65535.
    /// `None` for anything else (a user, a path, a zone, a bare IPv6
    /// address, an empty port, bytes that are not ASCII).
    pub fn parse(bytes: &[u8]) -> Option<Authority> {
        let text = std::str::from_utf8(bytes.trim_ascii()).ok()?;
        if text.len() > MAX_AUTHORITY || !text.is_ascii() {
            return None;
        }
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (inside, after) = rest.split_once(']')?;
            let ip = Ipv6Addr::from_str(inside).ok()?;
            (Host::Ip(IpAddr::V6(ip).to_canonical()), after)
        } else {
            let end = text.find(':').unwrap_or(text.len());
            (host_name(&text[..end])?, &text[end..])
        };
        let port = match port {
            "" => None,
            port => Some(parse_port(port.strip_prefix(':')?)?),
        };
        Some(Authority { host, port })
    }
}

impl fmt::Display for Authority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            Host::Name(name) => f.write_str(name)?,
            Host::Ip(IpAddr::V4(ip)) => write!(f, "{ip}")?,
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]")?,
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

/// A host without brackets or port: an IPv4 address, or a DNS name of
/// letters, digits, `-` and `_` in labels of at most 63, lowercased and
/// without one trailing dot.
fn host_name(text: &str) -> Option<Host> {
    let text = text.strip_suffix('.').unwrap_or(text);
    if let Ok(ip) = Ipv4Addr::from_str(text) {
        return Some(Host::Ip(IpAddr::V4(ip)));
    }
    let label_ok = |label: &str| {
        (1..=63).contains(&label.len())
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    (text.len() <= 253 && text.split('.').all(label_ok)).then(|| Host::Name(text.to_ascii_lowercase()))
}

/// A port of 1 to 5 ASCII digits, at most 65535.
fn parse_port(text: &str) -> Option<u16> {
    if text.is_empty() || text.len() > 5 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Whether `host` never leaves this machine: `localhost`, a name under
/// `.localhost`, an address of 127.0.0.0/8, `::1`.
fn is_loopback(host: &Host) -> bool {
    match host {
        Host::Name(name) => name == "localhost" || name.ends_with(".localhost"),
        Host::Ip(ip) => ip.is_loopback(),
    }
}

/// One `--allow-host` value: a name (or address) with an optional port, or
/// `*` for any Host at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllowedHost {
    /// `*`: any Host (the defence against DNS rebinding is off).
    Any,
    /// A host, admitted with this port or none; with the server's port or
    /// none when it names no port.
    Exact(Authority),
}

impl FromStr for AllowedHost {
    type Err = String;

    fn from_str(text: &str) -> Result<AllowedHost, String> {
        if text.trim() == "*" {
            return Ok(AllowedHost::Any);
        }
        Authority::parse(text.as_bytes()).map(AllowedHost::Exact).ok_or_else(|| {
            format!(
                "`{}` is not a host name or address with an optional port, like `example.test`, `example.test:8080` or `*`",
                clip(text, QUOTED)
            )
        })
    }
}

/// Which Hosts and Origins a server admits: its address and port, and the
/// `--allow-host` values.
#[derive(Clone, Debug)]
pub struct HostPolicy {
    /// The address and port the server listens on.
    bound: SocketAddr,
    /// The `--allow-host` names, with their ports.
    allowed: Vec<Authority>,
    /// Whether `--allow-host '*'` was given.
    any: bool,
}

impl HostPolicy {
    /// The policy of a server listening on `bound`, admitting `allowed` too.
    pub fn new(bound: SocketAddr, allowed: &[AllowedHost]) -> HostPolicy {
        HostPolicy {
            bound: SocketAddr::new(bound.ip().to_canonical(), bound.port()),
            allowed: allowed
                .iter()
                .filter_map(|a| match a {
                    AllowedHost::Exact(authority) => Some(authority.clone()),
                    AllowedHost::Any => None,
                })
                .collect(),
            any: allowed.contains(&AllowedHost::Any),
        }
    }

    /// Whether a request's `Host` names this server ([the rule](self)).
    pub fn admits(&self, host: &Authority) -> bool {
        self.any || self.admits_by_name(host)
    }

    /// The rule without `--allow-host '*'`: a loopback host, the address
    /// bound, or an allowed name, each with its port or none.
    fn admits_by_name(&self, host: &Authority) -> bool {
        let port_is = |port: u16| host.port.is_none_or(|p| p == port);
        if self
            .allowed
            .iter()
            .any(|a| a.host == host.host && port_is(a.port.unwrap_or(self.bound.port())))
        {
            return true;
        }
        let bound = self.bound.ip();
        let address = match host.host {
            Host::Ip(ip) => ip == bound || bound.is_unspecified(),
            Host::Name(_) => false,
        };
        port_is(self.bound.port()) && (is_loopback(&host.host) || address)
    }

    /// Whether an `Origin` header's value is this server's own page: not
    /// `null`, `http://` or `https://` (any case) and a host and port that
    /// [`admits`](HostPolicy::admits) admits by name or that equal the
    /// request's `host`, and nothing after them.
    pub fn admits_origin(&self, origin: &[u8], host: Option<&Authority>) -> bool {
        let origin = origin.trim_ascii();
        let scheme = origin.iter().position(|&b| b == b':').unwrap_or(0);
        let (scheme, rest) = origin.split_at(scheme);
        let known = scheme.eq_ignore_ascii_case(b"http") || scheme.eq_ignore_ascii_case(b"https");
        let Some(authority) = rest.strip_prefix(b"://").filter(|_| known) else {
            return false;
        };
        Authority::parse(authority).is_some_and(|a| self.admits_by_name(&a) || host == Some(&a))
    }

    /// The one-line refusal of a request whose `Host` is `host`: what it
    /// sent, clipped, and what it should ask for instead.
    pub fn foreign_host_message(&self, host: &[u8]) -> String {
        let port = self.bound.port();
        let ask = if self.bound.ip().is_loopback() {
            format!("ask for localhost or 127.0.0.1 on port {port}")
        } else {
            format!("ask for this server's address on port {port}")
        };
        format!(
            "the Host `{}` is not a name of this server, which answers only its own names against DNS rebinding: {ask}, or start it with --allow-host NAME",
            quote(host)
        )
    }
}

/// `value` quoted in a refusal: at most `QUOTED` characters of it on one
/// line, whatever its bytes.
pub fn quote(value: &[u8]) -> String {
    // Never more than a few characters' bytes are decoded, whatever the length.
    let text = String::from_utf8_lossy(&value[..value.len().min(4 * QUOTED)]);
    if value.len() <= 4 * QUOTED {
        return clip(&text, QUOTED);
    }
    let shown: String = text.chars().take(QUOTED).collect();
    format!("{}… ({} bytes)", clip(&shown, QUOTED), value.len())
}

/// Whether a `Sec-Fetch-Site` value says the request comes from a page of
/// another origin: `cross-site`, or `same-site` (another port of this
/// host, or another name under the same domain). `same-origin` and `none`
/// (the user typed the address) pass, as do values browsers do not send.
pub fn is_cross_site(value: &[u8]) -> bool {
    let value = value.trim_ascii();
    value.eq_ignore_ascii_case(b"cross-site") || value.eq_ignore_ascii_case(b"same-site")
}

/// Whether a request with `method` and `path` must come from this server's
/// own page when it comes from a page at all: every request but a `GET` or
/// `HEAD` of the page (`/`) and its script (`/app.js`), which a link from
/// any site may open.
pub fn is_guarded(method: &[u8], path: &str) -> bool {
    let reads = method == b"GET" || method == b"HEAD";
    !(reads && (path == "/" || path == "/app.js"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Option<Authority> {
        Authority::parse(text.as_bytes())
    }

    fn name(name: &str, port: Option<u16>) -> Authority {
        Authority {
            host: Host::Name(name.into()),
            port,
        }
    }

    fn ip(ip: &str, port: Option<u16>) -> Authority {
        Authority {
            host: Host::Ip(ip.parse().unwrap()),
            port,
        }
    }

    #[test]
    fn hosts_are_read_with_and_without_ports() {
        assert_eq!(parse("localhost"), Some(name("localhost", None)));
        assert_eq!(parse(" LocalHost.:8080 "), Some(name("localhost", Some(8080))));
        assert_eq!(parse("Example.TEST:1"), Some(name("example.test", Some(1))));
        assert_eq!(parse("127.0.0.1:65535"), Some(ip("127.0.0.1", Some(65535))));
        assert_eq!(parse("127.0.0.1."), Some(ip("127.0.0.1", None)));
        assert_eq!(parse("[::1]:80"), Some(ip("::1", Some(80))));
        assert_eq!(parse("[0:0:0:0:0:0:0:1]"), Some(ip("::1", None)));
        assert_eq!(parse("[::FFFF:127.0.0.2]:9"), Some(ip("127.0.0.2", Some(9))));
        assert_eq!(parse("localhost:00080"), Some(name("localhost", Some(80))));
        // Not an address by Rust's strict reading: a name, which no rule admits.
        assert_eq!(parse("127.1"), Some(name("127.1", None)));
        assert_eq!(parse("0x7f.0.0.1"), Some(name("0x7f.0.0.1", None)));
    }

    #[test]
    fn what_is_no_host_is_none_whatever_its_bytes() {
        let long_label = format!("{}.test", "a".repeat(64));
        let long_name = format!("{}test", "a.".repeat(130));
        let huge = "9".repeat(100_000);
        for text in [
            "",
            " ",
            ".",
            "..",
            "a..b",
            ":80",
            "localhost:",
            "localhost::80",
            "localhost:80:80",
            "localhost:65536",
            "localhost:99999999999999999999",
            "localhost:+80",
            "localhost:-1",
            "localhost: 80",
            "local host",
            "user@localhost",
            "localhost/x",
            "localhost?x",
            "localhost#x",
            "loc%61lhost",
            "::1",
            "[::1",
            "::1]",
            "[::1]x",
            "[::1]:",
            "[::1]:99999",
            "[fe80::1%eth0]",
            "[127.0.0.1]",
            "[]",
            "caf\u{e9}.test",
            long_label.as_str(),
            long_name.as_str(),
            huge.as_str(),
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
        for bytes in [&b"\xff\xfe"[..], b"local\0host", b"[\xff]", b"localhost:\x80"] {
            assert_eq!(Authority::parse(bytes), None, "{bytes:?}");
        }
    }

    #[test]
    fn a_loopback_server_admits_loopback_names_on_its_port() {
        let policy = HostPolicy::new("127.0.0.1:8080".parse().unwrap(), &[]);
        for host in [
            "localhost",
            "localhost:8080",
            "LOCALHOST.:8080",
            "app.localhost:8080",
            "127.0.0.1",
            "127.0.0.1:8080",
            "127.255.0.9:8080",
            "[::1]:8080",
            "[::ffff:127.0.0.1]:8080",
        ] {
            assert!(policy.admits(&parse(host).unwrap()), "{host}");
        }
        for host in [
            "localhost:8081",
            "127.0.0.1:80",
            "[::1]:1",
            "evil.example",
            "evil.example:8080",
            "127.0.0.1.evil.example:8080",
            "localhost.evil.example",
            "localhostx",
            "10.0.0.1:8080",
            "0.0.0.0:8080",
            "[::]:8080",
            "127.1:8080",
        ] {
            assert!(!policy.admits(&parse(host).unwrap()), "{host}");
        }
        let policy = HostPolicy::new("[::1]:8080".parse().unwrap(), &[]);
        assert!(policy.admits(&parse("127.0.0.1:8080").unwrap()));
        assert!(policy.admits(&parse("[::1]").unwrap()));
    }

    #[test]
    fn allowed_hosts_are_exact_with_their_port_or_the_servers() {
        let allowed: Vec<AllowedHost> = ["Example.Test", "tunnel.test:9000", "10.0.0.5"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        let policy = HostPolicy::new("127.0.0.1:8080".parse().unwrap(), &allowed);
        for host in [
            "example.test",
            "EXAMPLE.TEST:8080",
            "example.test.",
            "tunnel.test:9000",
            "tunnel.test",
            "10.0.0.5:8080",
        ] {
            assert!(policy.admits(&parse(host).unwrap()), "{host}");
        }
        for host in [
            "example.test:9000",
            "tunnel.test:8080",
            "sub.example.test",
            "example.testx",
            "test",
            "10.0.0.6:8080",
        ] {
            assert!(!policy.admits(&parse(host).unwrap()), "{host}");
        }
        let any = HostPolicy::new("127.0.0.1:8080".parse().unwrap(), &[AllowedHost::Any]);
        assert!(any.admits(&parse("evil.example:1").unwrap()));
        for bad in ["", "a b", "*.example", "http://example.test", "example.test:0x50"] {
            let e = bad.parse::<AllowedHost>().unwrap_err();
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn a_server_on_every_interface_admits_addresses_but_only_allowed_names() {
        let policy = HostPolicy::new("0.0.0.0:8080".parse().unwrap(), &["box.lan".parse().unwrap()]);
        for host in ["192.168.1.5:8080", "[2001:db8::1]:8080", "localhost:8080", "box.lan"] {
            assert!(policy.admits(&parse(host).unwrap()), "{host}");
        }
        for host in ["192.168.1.5:8081", "evil.example:8080", "other.lan"] {
            assert!(!policy.admits(&parse(host).unwrap()), "{host}");
        }
        let policy = HostPolicy::new("192.168.1.5:8080".parse().unwrap(), &[]);
        assert!(policy.admits(&parse("192.168.1.5:8080").unwrap()));
        assert!(policy.admits(&parse("localhost:8080").unwrap()));
        assert!(!policy.admits(&parse("192.168.1.6:8080").unwrap()));
    }

    #[test]
    fn only_this_servers_origin_is_admitted() {
        let policy = HostPolicy::new("127.0.0.1:8080".parse().unwrap(), &[]);
        let host = parse("127.0.0.1:8080");
        for origin in [
            "http://127.0.0.1:8080",
            "http://localhost:8080",
            "HTTP://LocalHost:8080",
            "https://localhost:8080",
            "http://[::1]:8080",
            " http://localhost ",
        ] {
            assert!(policy.admits_origin(origin.as_bytes(), host.as_ref()), "{origin}");
        }
        for origin in [
            "null",
            "",
            "http://",
            "http:",
            "http",
            "://localhost:8080",
            "localhost:8080",
            "ftp://localhost:8080",
            "http://evil.example",
            "http://evil.example:8080",
            "http://localhost:8081",
            "http://127.0.0.1:8080.evil.example",
            "http://127.0.0.1:8080/",
            "http://127.0.0.1:8080/x",
            "http://user@127.0.0.1:8080",
            "http:/localhost:8080",
        ] {
            assert!(!policy.admits_origin(origin.as_bytes(), host.as_ref()), "{origin}");
        }
        assert!(!policy.admits_origin(b"http://\xff", None));
        assert!(!policy.admits_origin(&[b'h'; 100_000], None));
        // Under `*`, the Origin must still be a name of this server, or the
        // request's own Host.
        let any = HostPolicy::new("127.0.0.1:8080".parse().unwrap(), &[AllowedHost::Any]);
        let evil = parse("evil.example:8080");
        assert!(any.admits_origin(b"http://evil.example:8080", evil.as_ref()));
        assert!(any.admits_origin(b"http://localhost:8080", evil.as_ref()));
        assert!(!any.admits_origin(b"http://other.example:8080", evil.as_ref()));
    }

    #[test]
    fn fetch_sites_and_guarded_routes() {
        assert!(is_cross_site(b"cross-site") && is_cross_site(b" Same-Site"));
        assert!(!is_cross_site(b"same-origin") && !is_cross_site(b"none") && !is_cross_site(b"\xff"));
        assert!(!is_guarded(b"GET", "/") && !is_guarded(b"HEAD", "/app.js"));
        for (method, path) in [
            ("GET", "/api/query"),
            ("GET", "/api/variants"),
            ("POST", "/"),
            ("POST", "/api/verify"),
            ("GET", "/app.js/"),
            ("OPTIONS", "*"),
        ] {
            assert!(is_guarded(method.as_bytes(), path), "{method} {path}");
        }
    }

    #[test]
    fn refusals_quote_a_clipped_host_on_one_line() {
        let policy = HostPolicy::new("127.0.0.1:8080".parse().unwrap(), &[]);
        let message = policy.foreign_host_message(&[b'a'; 100_000]);
        assert!(message.len() < 400 && message.contains("(100000 bytes)"), "{message}");
        let message = policy.foreign_host_message(b"evil\n\xff");
        assert!(!message.contains('\n') && message.contains("port 8080"), "{message}");
    }
}
