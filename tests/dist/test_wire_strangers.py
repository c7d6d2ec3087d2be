"""Strangers at a live pserver (issue 23's gadget classes): every gadget pickle (torch.load,
torch.storage._load_from_bytes, pickle.loads, numpy.load(allow_pickle), builtins eval/exec/getattr/__import__,
functools.partial, operator.attrgetter, os.system) is thrown at the pserver's endpoint

- raw, before any handshake, at start-up (before the trainer came) and mid-job: refused as garbage and logged
  with the stranger's socket address;
- after a valid handshake (a key holder claiming trainer 0 before the real one comes), as a request's meta:
  each refused as undecodable (answered with a DecodeError, logged with the address), and inside a tensor's
  bytes of a well-formed request: it arrives as a uint8 tensor that nothing opens;
- as a frame declaring a 2^62-byte buffer: refused, not allocated.

Nothing runs (the marker file each gadget would create never appears), the pserver listens on its endpoint
and nowhere else, and the trainer's losses equal those of the same job left alone (one async trainer:
deterministic)."""

import json
import os
import re
import socket
import struct
import time

import pytest
import torch

import wire_gadgets
from dist_utils import Cluster, base_env, endpoints
from prober import listening
from ps_cluster import SCRIPT, wait_for
from paddle_compat.backends.wire import auth, codec, frame

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]

SPEC = [{"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "sync": False, "steps": 25, "sleep": 0.2}]
TOKEN = "good"


def _env(eps, **kw):
    return base_env(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM=1, FLAGS_rpc_deadline=30000,
                    PADDLE_COMPAT_JOB_TOKEN=TOKEN, **kw)


def _key():
    from paddle_compat.backends import job_env
    return job_env.resolve_key({"PADDLE_COMPAT_JOB_TOKEN": TOKEN})[0]


def _raw_gadgets(host, port, gadgets, sent):
    for name, data in gadgets.items():
        with socket.create_connection((host, port), timeout=5) as s:
            sent.append((name, "%s:%d" % s.getsockname()[:2]))
            s.sendall(data)
            s.settimeout(15)
            try:
                while s.recv(4096):     # the pserver drops the connection
                    pass
            except OSError:
                pass


def _claim_again(host, port, digest):
    """Claim trainer 0 again. Until the pserver has seen the first claim's connection close it answers
    'connect again' (TryLater, the elastic re-admission rule): retry as a restarted trainer does."""
    end = time.monotonic() + 30
    while True:
        s = socket.create_connection((host, port), timeout=10)
        try:
            auth.client_handshake(s, _key(), "trainer 0|%s|0" % digest, 10, "pserver 0")
            return s
        except auth.TryLater:
            s.close()
            assert time.monotonic() < end, "the pserver kept refusing a second claim of trainer 0 for 30 s"
            time.sleep(0.1)


def _after_handshake(host, port, digest, gadgets, answers):
    """A key holder claiming trainer 0 sends each gadget as a request's meta, then inside a tensor."""
    with socket.create_connection((host, port), timeout=10) as s:
        me = "%s:%d" % s.getsockname()[:2]
        auth.client_handshake(s, _key(), "trainer 0|%s|0" % digest, 10, "pserver 0")
        reader = frame.FrameReader(s)
        for rid, (name, data) in enumerate(gadgets.items(), 1):
            frame.send_frame(s, frame.REQUEST, rid, data, [])
            kind, got, meta, bufs = reader.read()
            answers.append((name, kind, codec.decode(meta, bufs)))
            t = torch.frombuffer(bytearray(data), dtype=torch.uint8)
            meta, bufs = codec.encode(("no_such_handler", (0, [name], [t])))
            frame.send_frame(s, frame.REQUEST, 1000 + rid, meta, bufs)
            kind, got, meta, bufs = reader.read()
            answers.append((name + " in a tensor", kind, codec.decode(meta, bufs)))
    s = _claim_again(host, port, digest)
    with s:
        s.sendall(frame.HEADER.pack(frame.MAGIC, frame.VERSION, frame.REQUEST, 0, 1, 0, 1) + struct.pack("<Q", 1 << 62))
        s.settimeout(15)
        assert s.recv(100) == b""      # closed, nothing allocated
    return me


def _job(tmp, attack, marker):
    eps = endpoints(1)
    host, port = eps[0].rsplit(":", 1)
    port = int(port)
    os.makedirs(str(tmp), exist_ok=True)
    gadgets = wire_gadgets.gadgets(marker)
    sent, answers, me = [], [], None
    with Cluster(str(tmp)) as c:
        ps = c.start("ps0", [SCRIPT, json.dumps(SPEC)], _env(eps, TRAINING_ROLE="PSERVER",
                                                             PADDLE_CURRENT_ENDPOINT=eps[0]))
        if attack:
            assert wait_for(ps, "DIGEST ", 120), c.report()
            digest = re.search(r"DIGEST (\S+)", ps.output).group(1)
            end = time.monotonic() + 120
            while (host, port) not in listening(ps.popen.pid):
                assert time.monotonic() < end and ps.popen.poll() is None, c.report()
                time.sleep(0.1)
            _raw_gadgets(host, port, gadgets, sent)                     # at start-up
            me = _after_handshake(host, port, digest, gadgets, answers)
        tr = c.start("tr0", [SCRIPT, json.dumps(SPEC)], _env(eps, PADDLE_TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0))
        if attack:
            assert wait_for(tr, "step 3 ", 120), c.report()
            assert listening(ps.popen.pid) == [(host, port)], listening(ps.popen.pid)
            _raw_gadgets(host, port, gadgets, sent)                     # mid-job
            assert tr.popen.poll() is None, "the job ended before the mid-job gadgets:\n" + c.report()
        rcs = c.wait(200)
        report = c.report()
    assert rcs == {"ps0": 0, "tr0": 0}, report
    losses = [json.loads(line[7:])["losses"] for line in tr.output.splitlines() if line.startswith("RESULT ")]
    return losses, ps.output, sent, answers, me, report


def test_gadget_pickles_at_a_live_pserver_run_nothing_and_change_nothing(tmp_path):
    marker = str(tmp_path / "pwned")
    assert all(wire_gadgets.check_gadgets_really_run(marker).values())
    attacked, out, sent, answers, me, report = _job(tmp_path / "attacked", True, marker)
    alone, _, _, _, _, _ = _job(tmp_path / "alone", False, marker)
    assert not os.path.exists(marker)
    assert attacked == alone and len(alone[0]) == SPEC[0]["steps"]
    # each raw gadget: refused as garbage, logged with the stranger's address
    assert len(sent) == 2 * len(wire_gadgets.gadgets(marker))
    for name, addr in sent:
        assert re.search(r"pserver 0 \(\S+\) refused a connection from %s: garbage" % re.escape(addr), out), \
            (name, addr, out[-3000:])
    # after the handshake: each gadget refused as undecodable; inside a tensor, carried as bytes to no handler
    for name, kind, value in answers:
        assert kind == frame.ERROR and isinstance(value, codec.WireError), (name, kind, value)
        if name.endswith("in a tensor"):
            assert value.kind == "RuntimeError" and "has no handler 'no_such_handler'" in value.message, value
        else:
            assert value.kind == "DecodeError", (name, value)
            assert "refused a connection from %s: trainer 0|" % me in out and "undecodable request" in out
    assert "bytes of buffers" in out, out[-3000:]
    # the key holder that claimed trainer 0 and left is an elastic trainer that vanished; the real one came
    assert "vanished" in out and "is back" in out, out[-3000:]
