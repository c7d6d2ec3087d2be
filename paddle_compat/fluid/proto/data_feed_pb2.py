"""Paddle 1.8's data_feed.proto (package paddle.framework) as message classes: DataFeedDesc, MultiSlotDesc,
Slot (what fluid.DataFeedDesc and a TrainerDesc's data_desc hold)."""

from .message import BOOL, INT32, MESSAGE, OPTIONAL, REPEATED, REQUIRED, STRING, Field, Message


class Slot(Message):
    FIELDS = (Field("name", 1, REQUIRED, STRING), Field("type", 2, REQUIRED, STRING),
              Field("is_dense", 3, OPTIONAL, BOOL, default=False), Field("is_used", 4, OPTIONAL, BOOL, default=False),
              Field("shape", 5, REPEATED, INT32))


class MultiSlotDesc(Message):
    FIELDS = (Field("slots", 1, REPEATED, MESSAGE, message=Slot),)


class DataFeedDesc(Message):
    FIELDS = (Field("name", 1, OPTIONAL, STRING), Field("batch_size", 2, OPTIONAL, INT32, default=32),
              Field("multi_slot_desc", 3, OPTIONAL, MESSAGE, message=MultiSlotDesc),
              Field("pipe_command", 4, OPTIONAL, STRING), Field("thread_num", 5, OPTIONAL, INT32),
              Field("rank_offset", 6, OPTIONAL, STRING), Field("pv_batch_size", 7, OPTIONAL, INT32, default=32))
