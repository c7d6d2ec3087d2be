"""Parsing and checking "ip:port" endpoints; errors name the bad value."""

__all__ = ["parse_endpoint", "parse_endpoints"]


def parse_endpoint(ep, what="endpoint", server=False):
    """server: a pserver's own endpoint, where port 0 is allowed as in Paddle (the server takes a free port and
    announces it in /tmp/paddle.<pid>.port)."""
    if not isinstance(ep, str):
        raise TypeError("%s must be an 'ip:port' string, got %r" % (what, ep))
    ep = ep.strip()
    host, sep, port = ep.rpartition(":")
    if not sep or not host:
        raise ValueError("%s %r is not of the form ip:port" % (what, ep))
    try:
        p = int(port)
    except ValueError:
        raise ValueError("%s %r: port %r is not a number" % (what, ep, port))
    if not (0 if server else 1) <= p < 65536:
        raise ValueError("%s %r: port %d is out of range %d..65535" % (what, ep, p, 0 if server else 1))
    _check_host(host, ep, what)
    return "%s:%d" % (host, p)


def _check_host(host, ep, what):
    parts = host.split(".")
    if all(x.isdigit() for x in parts):
        if len(parts) != 4 or any(int(x) > 255 for x in parts):
            raise ValueError("%s %r: %r is not an IPv4 address" % (what, ep, host))
    elif not all(c.isalnum() or c in "-._" for c in host):
        raise ValueError("%s %r: %r is not a host name or IPv4 address" % (what, ep, host))


def parse_endpoints(eps, what="endpoints", server=False):
    if isinstance(eps, (list, tuple)):
        eps = ",".join(eps)
    if not isinstance(eps, str) or not eps.strip():
        raise ValueError("%s must be a comma-separated 'ip:port,ip:port' string, got %r" % (what, eps))
    out = [parse_endpoint(e, "%s entry" % what, server) for e in eps.split(",") if e.strip()]
    dup = sorted(set(e for e in out if out.count(e) > 1))
    if dup:
        raise ValueError("%s lists %s more than once" % (what, ", ".join(dup)))
    return out
