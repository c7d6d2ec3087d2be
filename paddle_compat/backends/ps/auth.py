"""What an RPC listener accepts: messages signed with the job's secret, decoded by an allow-list unpickler.

torch.distributed.rpc pickles every call (the function to run and its arguments) and its reply, and the
receiving process unpickles whatever arrives: anyone who can reach a listener could have code run there.
Here both ends go through one pickler whose output starts with an HMAC-SHA256 of the pickled bytes under the
job's secret; a message whose MAC does not verify is refused before a byte of it is unpickled (logged with
the sender it claims to be), and even a signed message may only name the globals on the allow-list below
(our RPC entry points, tensors, numpy arrays, plain containers and error types).

The secret comes from PADDLE_COMPAT_JOB_TOKEN: `python -m paddle_compat.distributed.launch_ps` / `launch`
generate one per job and pass it to their children; under mpirun, torchrun or a cluster scheduler set it
yourself (the same value in every process of the job). Without it messages are still signed (with an empty
key, so a stranger can forge them) and still pass the allow-list: no code execution, but no authentication;
a warning says so once per process.
"""

import hashlib
import hmac
import io
import logging
import os
import pickle
import struct
import threading

TOKEN_ENV = "PADDLE_COMPAT_JOB_TOKEN"
_MAGIC = b"PCA1"
_LOG = logging.getLogger("paddle_compat.ps.auth")

# (module, name) globals a message may name; a module listed with "*" allows every name in it.
_ALLOWED = {
    ("torch.distributed.rpc.internal", "PythonUDF"),
    ("torch.distributed.rpc.internal", "RemoteException"),
    ("torch.distributed.rpc.internal", "_InternalRPCPickler"),
    ("paddle_compat.backends.ps.rpc_entry", "call"),
    ("paddle_compat.backends.ps.rpc_entry", "watch"),
    ("paddle_compat.backends.ps.auth", "RefusedMessage"),
    ("torch.distributed.rpc.api", "_gather_to_leader"),        # rpc.shutdown's all-gather
    ("torch.distributed.rpc.api", "_broadcast_to_followers"),
    ("collections", "OrderedDict"),
    ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice"), ("builtins", "complex"),
    ("builtins", "getattr"),
    ("numpy", "dtype"), ("numpy", "ndarray"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("torch._utils", "_rebuild_tensor_v2"), ("torch.storage", "_load_from_bytes"),
}
_ALLOWED_ERRORS = ("builtins",)       # exception classes travel as the type of a RemoteException


class RefusedMessage(AttributeError):
    """A message that failed authentication or named a global off the allow-list. (An AttributeError:
    torch's RPC runner re-raises that type from a failed decode and answers the sender with it.)"""


def _is_allowed(module, name):
    if (module, name) in _ALLOWED:
        return True
    if module.startswith("paddle_compat.") and name.endswith(("Error", "Exception")):
        return True
    if module in _ALLOWED_ERRORS and name.endswith(("Error", "Exception")):
        return True
    return False


class _AllowListUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        audit = os.environ.get("PADDLE_COMPAT_RPC_AUDIT")
        if audit:
            with open(audit, "a") as f:
                f.write("%s %s\n" % (module, name))
        if not _is_allowed(module, name):
            raise RefusedMessage("message names %s.%s, which this job's RPC does not accept" % (module, name))
        if name == "getattr":
            return _safe_getattr
        obj = __import__(module, fromlist=["_"])
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj


def _safe_getattr(obj, name):
    # pickle spells classmethod references as getattr(cls, name); only the tensor receiver is needed
    if name != "_tensor_receiver":
        raise RefusedMessage("message asks for attribute %r, which this job's RPC does not accept" % name)
    return getattr(obj, name)


_state = {"key": None, "installed": False, "warned": False}
_lock = threading.Lock()
_refusals = []          # (claimed sender, reason): read by tests and logs


def job_key():
    token = os.environ.get(TOKEN_ENV, "")
    return hashlib.sha256(b"paddle_compat job token\0" + token.encode()).digest()


def namespace():
    """A public name for the job's token (rendezvous keys live under it); reveals nothing of the token."""
    return hashlib.sha256(b"namespace\0" + job_key()).hexdigest()[:32]


def _mac(key, data):
    return hmac.new(key, data, hashlib.sha256).digest()


def install(sender_name):
    """Sign what this process sends and check what it receives (idempotent; before init_rpc)."""
    with _lock:
        _state["key"] = job_key()
        _state["sender"] = sender_name.encode()[:255]
        if not os.environ.get(TOKEN_ENV) and not _state["warned"]:
            _state["warned"] = True
            _LOG.warning("%s is not set: this job's RPC messages are not authenticated (they still pass an "
                         "allow-list unpickler); set it to the same secret in every process, or launch with "
                         "paddle_compat.distributed.launch_ps", TOKEN_ENV)
        if _state["installed"]:
            return
        import torch.distributed.rpc.internal as internal
        pickler = internal._internal_rpc_pickler
        plain_serialize = pickler.serialize

        def serialize(obj):
            data, tensors = plain_serialize(obj)
            head = _MAGIC + struct.pack("B", len(_state["sender"])) + _state["sender"]
            return head + _mac(_state["key"], head + data) + data, tensors

        def deserialize(binary_data, tensor_table):
            data = bytes(binary_data)
            try:
                sender, body = _verify(data)
                return _load(body, tensor_table, sender)
            except RefusedMessage as e:
                claimed = getattr(e, "sender", None) or "an unknown peer"
                # torch hands the decoder bytes only, never the connection's address: name the addresses the
                # RPC guard admitted for that sender (they proved holding the token when they connected)
                from . import rpc_guard
                addrs = rpc_guard.addresses_of(claimed)
                where = ("connections from %s, admitted by the RPC guard" % ", ".join(addrs) if addrs else
                         "as it claims; no connection of that name was admitted by the RPC guard")
                _refusals.append((claimed, str(e)))
                _LOG.warning("refused an RPC message from %s (%s): %s", claimed, where, e)
                return e

        pickler.serialize = serialize
        pickler.deserialize = deserialize
        _state["installed"] = True


def _verify(data):
    if not data.startswith(_MAGIC) or len(data) < 5:
        raise RefusedMessage("message without this job's signature header")
    n = data[4]
    sender = data[5:5 + n].decode("utf-8", "replace") or "an unnamed peer"
    head_end = 5 + n
    mac, body = data[head_end:head_end + 32], data[head_end + 32:]
    if len(mac) != 32 or not hmac.compare_digest(mac, _mac(_state["key"], data[:head_end] + body)):
        e = RefusedMessage("message claiming to be from %s is not signed with this job's token (%s)"
                           % (sender, TOKEN_ENV))
        e.sender = sender
        raise e
    return sender, body


def _load(body, tensor_table, sender=None):
    import torch.distributed.rpc.internal as internal
    tables = internal._thread_local_tensor_tables
    old = getattr(tables, "recv_tables", None)
    tables.recv_tables = tensor_table
    try:
        return _AllowListUnpickler(io.BytesIO(body)).load()
    except RefusedMessage as e:
        e.sender = sender
        raise
    finally:
        if old is not None:
            tables.recv_tables = old
        else:
            del tables.recv_tables


def refusals():
    return list(_refusals)
