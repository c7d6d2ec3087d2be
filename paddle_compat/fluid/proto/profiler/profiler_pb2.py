"""Paddle 1.8's profiler.proto (package paddle.platform.proto) as message classes: Profile, Event, MemEvent,
MemCopy (what a profiler's profile_path file holds)."""

from ..message import ENUM, INT64, MESSAGE, OPTIONAL, REPEATED, STRING, UINT32, UINT64, Enum, Field, Message


class MemCopy(Message):
    FIELDS = (Field("bytes", 1, OPTIONAL, UINT64),)


class Event(Message):
    EventType = Enum("EventType", [("CPU", 0), ("GPUKernel", 1)])
    CPU, GPUKernel = 0, 1
    FIELDS = (Field("type", 8, OPTIONAL, ENUM, enum=EventType), Field("name", 1, OPTIONAL, STRING),
              Field("start_ns", 2, OPTIONAL, UINT64), Field("end_ns", 3, OPTIONAL, UINT64),
              Field("device_id", 5, OPTIONAL, INT64), Field("sub_device_id", 6, OPTIONAL, INT64),
              Field("memcopy", 7, OPTIONAL, MESSAGE, message=MemCopy), Field("detail_info", 9, OPTIONAL, STRING))


class MemEvent(Message):
    Place = Enum("Place", [("CUDAPlace", 0), ("CPUPlace", 1), ("CUDAPinnedPlace", 2)])
    CUDAPlace, CPUPlace, CUDAPinnedPlace = 0, 1, 2
    FIELDS = (Field("start_ns", 1, OPTIONAL, UINT64), Field("end_ns", 2, OPTIONAL, UINT64),
              Field("bytes", 3, OPTIONAL, UINT64), Field("place", 4, OPTIONAL, ENUM, enum=Place),
              Field("thread_id", 5, OPTIONAL, UINT64), Field("device_id", 6, OPTIONAL, UINT32),
              Field("alloc_in", 7, OPTIONAL, STRING), Field("free_in", 8, OPTIONAL, STRING))


class Profile(Message):
    FIELDS = (Field("events", 1, REPEATED, MESSAGE, message=Event), Field("start_ns", 2, OPTIONAL, UINT64),
              Field("end_ns", 3, OPTIONAL, UINT64), Field("mem_events", 4, REPEATED, MESSAGE, message=MemEvent))
