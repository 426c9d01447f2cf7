"""Datasets and a transform for test_dataload.py: each burns its own
thread's CPU time (time.thread_time), so the work is the same however busy
the machine is; only the wall time it takes moves."""
import time

import torch
from torch.utils.data import Dataset


def _burn(ms):
    end = time.thread_time() + ms / 1e3
    while time.thread_time() < end:
        pass


class Burning(Dataset):
    """n samples of 8 floats, each costing ms of CPU to make."""

    def __init__(self, n=256, ms=1.0):
        self.n, self.ms = int(n), float(ms)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        _burn(self.ms)
        return torch.full((8,), float(i))


class Failing(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        raise ValueError("planted")


def make(n="256", ms="1.0"):
    return Burning(int(n), float(ms))


def burn_transform(x):
    _burn(0.2)
    return x * 2
