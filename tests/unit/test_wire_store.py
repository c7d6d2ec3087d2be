"""The rendezvous key-value store on the wire transport, as torch.distributed sees it (a Store subclass),
locally and over an authenticated connection: the operations gloo / NCCL use, and their deadlines."""

import datetime
import threading
import time

import pytest
import torch.distributed as dist

from paddle_compat.backends.ps.errors import PsDeadlineError
from paddle_compat.backends.wire import client, server, store

KEY = b"s" * 32


@pytest.fixture(params=["local", "remote"])
def pair(request):
    kv = store.KVStore("trainer 0's rendezvous")
    if request.param == "local":
        yield kv, store.WireStore(store.local_caller(kv), 2.0, "local")
        return
    srv = server.Server("127.0.0.1:0", "trainer 0's rendezvous", "trainer 0", kv.handlers(), key=KEY)
    c = client.Connection(srv.endpoint, "trainer 1", time.monotonic() + 5, key=KEY)
    yield kv, store.WireStore(lambda n, *a: c.call_async(n, *a), 2.0, srv.endpoint)
    c.close()
    srv.close()


def test_store_operations(pair):
    kv, st = pair
    st.set("a", b"1")
    st.set("s", "text")
    assert st.get("a") == b"1" and st.get("s") == b"text"
    assert st.add("n", 2) == 2 and st.add("n", 5) == 7 and st.get("n") == b"7"
    assert st.check(["a", "n"]) and not st.check(["a", "zz"])
    assert st.compare_set("c", b"", b"x") == b"x" and st.compare_set("c", b"y", b"z") == b"x"
    assert st.compare_set("c", b"x", b"z") == b"z"
    n = st.num_keys()
    assert st.delete_key("c") and not st.delete_key("c") and st.num_keys() == n - 1
    pre = dist.PrefixStore("job/7/", st)       # as comm.py wraps it (PrefixStore adds a "/")
    pre.set("k", b"v")
    assert kv.data["job/7//k"] == b"v" and pre.get("k") == b"v"


def test_get_and_wait_block_until_the_key_comes(pair):
    kv, st = pair
    threading.Timer(0.3, lambda: kv.set("late", b"here")).start()
    assert st.get("late") == b"here"
    threading.Timer(0.3, lambda: kv.set("w", b"1")).start()
    st.wait(["late", "w"])
    st.wait(["w"], datetime.timedelta(seconds=1))


def test_waits_obey_their_deadline_and_name_the_keys(pair):
    kv, st = pair
    t0 = time.monotonic()
    with pytest.raises(Exception, match=r"keys \['never'\] did not appear within 0.5s"):
        st.wait(["never"], datetime.timedelta(seconds=0.5))
    with pytest.raises(Exception, match="did not appear within 2.0s"):
        st.get("never")
    assert time.monotonic() - t0 < 5
    assert kv.waiters == []


def test_kv_deadline_error_kind():
    kv = store.KVStore()
    f = kv.wait(["x"], 0.1)
    with pytest.raises(PsDeadlineError):
        f.wait()
