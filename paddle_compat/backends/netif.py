"""Which network interface holds an address: TensorPipe binds its RPC listeners to the interface named by
TP_SOCKET_IFNAME, else to whatever the machine's hostname resolves to, which need not be the address the job
was configured with (a job on 127.0.0.1 would listen on the LAN address). Linux only; elsewhere None."""

import fcntl
import socket
import struct

_SIOCGIFADDR = 0x8915


def iface_address(name):
    """The IPv4 address of interface `name`, or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        packed = fcntl.ioctl(s.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
        return socket.inet_ntoa(packed[20:24])
    except OSError:
        return None
    finally:
        s.close()


def iface_for(host):
    """The name of the interface carrying `host`'s IPv4 address (a name is resolved first), or None."""
    try:
        addr = socket.gethostbyname(host)
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return None
    for name in names:
        if iface_address(name) == addr:
            return name
    return None


def address_towards(host, port):
    """The local address this machine would use to reach host:port (no packet is sent)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect((host, port))
        return s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
