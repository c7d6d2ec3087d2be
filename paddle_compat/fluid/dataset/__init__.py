"""Paddle's fluid.dataset (DatasetFactory, QueueDataset, InMemoryDataset; datasets.py) and what feeds it: MultiSlot
text parsed into columns (parse.py), batched into feeds (feed.py), read in helper processes (reader.py,
reader_helper.py) and shuffled across trainers (shuffle.py). Not paddle.dataset (paddle_compat/dataset/)."""

from .datasets import DatasetBase, DatasetFactory, InMemoryDataset, QueueDataset  # noqa: F401

__all__ = ["DatasetFactory", "DatasetBase", "QueueDataset", "InMemoryDataset"]
