"""RPC messages are signed with the job's token and decoded by an allow-list unpickler: a message signed
with another token is refused before it is unpickled, and a signed message naming any other global (a
crafted pickle that would run code) is refused too; in neither case does the payload run."""

import os
import pickle

import pytest
import torch

from paddle_compat.backends.ps import auth, rpc_entry


class _Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, ("touch %s" % self.path,))


@pytest.fixture
def pickler(monkeypatch):
    import torch.distributed.rpc.internal as internal
    monkeypatch.setenv(auth.TOKEN_ENV, "secret-a")
    p = internal._internal_rpc_pickler
    monkeypatch.setattr(p, "serialize", p.serialize)      # restored after the test
    monkeypatch.setattr(p, "deserialize", p.deserialize)
    monkeypatch.setitem(auth._state, "installed", False)
    auth.install("trainer_0")
    yield p
    auth._state["key"] = auth.job_key()


def test_signed_messages_round_trip(pickler):
    from torch.distributed.rpc.internal import PythonUDF
    msg = PythonUDF(rpc_entry.call, ("prefetch", torch.arange(6.0).reshape(2, 3), {"rows": [1, 2]}), {})
    data, tensors = pickler.serialize(msg)
    back = pickler.deserialize(data, tensors)
    assert back.func is rpc_entry.call and back.args[0] == "prefetch"
    assert torch.equal(back.args[1], torch.arange(6.0).reshape(2, 3)) and back.args[2] == {"rows": [1, 2]}


def test_wrong_token_is_refused_before_unpickling(pickler, monkeypatch, tmp_path):
    marker = tmp_path / "ran"
    data, tensors = pickler.serialize(_Evil(str(marker)))      # signed with secret-a
    monkeypatch.setenv(auth.TOKEN_ENV, "secret-b")
    auth.install("pserver_0")                                   # the receiver holds another token
    out = pickler.deserialize(data, tensors)
    assert isinstance(out, auth.RefusedMessage)
    assert "trainer_0" in str(out) and auth.TOKEN_ENV in str(out)
    assert not marker.exists()
    assert auth.refusals()[-1][0] == "trainer_0"


def test_unsigned_pickle_is_refused(pickler, tmp_path):
    marker = tmp_path / "ran"
    out = pickler.deserialize(pickle.dumps(_Evil(str(marker))), [])
    assert isinstance(out, auth.RefusedMessage) and "signature" in str(out)
    assert not marker.exists()


def test_signed_payload_naming_another_global_is_refused(pickler, tmp_path):
    marker = tmp_path / "ran"
    data, tensors = pickler.serialize(_Evil(str(marker)))      # right token, crafted content
    out = pickler.deserialize(data, tensors)
    assert isinstance(out, auth.RefusedMessage)
    assert ".system" in str(out) and "does not accept" in str(out)
    assert not marker.exists()


def test_attribute_lookups_are_limited():
    import torch.distributed.rpc.internal as internal
    # pickle spells the tensor receiver getattr(cls, name); no other attribute may be fetched that way
    with pytest.raises(auth.RefusedMessage):
        auth._safe_getattr(internal.PythonUDF, "__init__")
    assert auth._safe_getattr(internal._InternalRPCPickler, "_tensor_receiver") is not None
