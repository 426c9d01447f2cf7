"""A script written against the "cookbook.measure" PerformanceProfiler
documentation (../shared/reference/003_*.txt), run by tests/python/test_measure.py
under ``python -m prism -o FILE measure_script.py OUTDIR``.

The code in each ``example_*`` function is the document's own snippet,
unchanged except:

* ``from cookbook.measure import PerformanceProfiler`` is
  ``from prism.measure import PerformanceProfiler``;
* the FLOPS example's two prints format ``estimated_flops`` with ``:,``, which
  None (torch without ``torch.utils.flop_counter.FlopCounterMode``: 1.13)
  cannot take: there the script prints the reason instead;
* the Memory Leak Detection example runs twice: once with ``process_data``
  keeping every batch (the leak its comment describes), once without.

What the snippets take as given is set up first, doing real work: a small
torch model trained by ``train_epoch`` on a DataLoader, ``load_dataset``
(writes a file, fsyncs it, reads it back, and measures the /proc/self/io
write bytes of that itself), ``preprocess``, ``train_model``,
``allocate_data`` (2 MB a call: the leaky run keeps 200 MB), ``risky_operation`` (raises).  Without CUDA,
``LargeModel.cuda()`` and the loader's batches' ``.cuda()`` stay on the CPU
(with CUDA they are torch's own).  Everything the test checks goes to
OUTDIR/measured.json.
"""
import json
import os
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from prism.measure import PerformanceProfiler

OUT = sys.argv[1]
CUDA = torch.cuda.is_available()
torch.manual_seed(0)
torch.set_num_threads(1)

# ---- what the snippets take as given ---------------------------------------

_model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
_opt = torch.optim.SGD(_model.parameters(), lr=0.01)
_data = TensorDataset(torch.randn(1024, 32), torch.randint(0, 4, (1024,)))
_loader = DataLoader(_data, batch_size=32, shuffle=True)


def train_epoch():
    for x, y in _loader:
        loss = nn.functional.cross_entropy(_model(x), y)
        _opt.zero_grad()
        loss.backward()
        _opt.step()


class _Fit:
    """model.fit(X, y): a few epochs of full-batch training."""

    def fit(self, X, y):
        for _ in range(20):
            loss = nn.functional.cross_entropy(_model(X), y)
            _opt.zero_grad()
            loss.backward()
            _opt.step()


model = _Fit()
X_train, y_train = torch.randn(512, 32), torch.randint(0, 4, (512,))

io_measured = {}


def _write_bytes():
    try:
        with open("/proc/self/io") as f:
            for line in f:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def load_dataset():
    """Writes the dataset's cache file (8 MB, fsynced) and reads it back."""
    path = os.path.join(OUT, "dataset.bin")
    before = _write_bytes()
    with open(path, "wb") as f:
        f.write(os.urandom(8 << 20))
        f.flush()
        os.fsync(f.fileno())
    after = _write_bytes()
    io_measured["load_dataset"] = None if before is None or after is None else after - before
    with open(path, "rb") as f:
        raw = f.read()
    return torch.frombuffer(bytearray(raw), dtype=torch.float32)[: 256 * 32].reshape(256, 32)


def preprocess(data):
    return (data - data.mean(0)) / (data.std(0) + 1e-6)


def train_model(data):
    net = nn.Linear(32, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(30):
        loss = net(data).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return net


LEAKY = [True]
_kept = []


def allocate_data():
    return torch.randn(512 * 1024)          # 2 MB


_w = torch.randn(1024, 32)


def process_data(data):
    if LEAKY[0]:
        _kept.append(data)                  # the forgotten reference
    out = 0.0
    for _ in range(4):                      # a few ms of work a call
        out += float((data.view(512, 1024) @ _w).sum())
    return out


def risky_operation():
    train_epoch()
    raise ValueError("risky_operation: bad input")


class LargeModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 32))

    def forward(self, x):
        return self.net(x)

    if not CUDA:
        def cuda(self, device=None):
            return self


class _Batch:
    def __init__(self, x):
        self.x = x

    def cuda(self):
        return self.x


dataloader = DataLoader(TensorDataset(torch.randn(128, 32)), batch_size=16,
                        collate_fn=(lambda b: torch.stack([t[0] for t in b])) if CUDA
                        else (lambda b: _Batch(torch.stack([t[0] for t in b]))))

_images = nn.Sequential(nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(48, 10))
input_batch = torch.randn(8, 3, 64, 64)

results = []


def collect(profiler, example):
    for name in profiler.get_timing_breakdown():
        m = profiler.get_metrics(name)
        results.append({"example": example, "name": name, "metrics": m.to_dict(),
                        "summary": m.summary(), "json": json.dumps(m.to_dict(), allow_nan=False)})


# ---- the document's examples ---------------------------------------------------

def example_profile_method():
    profiler = PerformanceProfiler()
    with profiler.profile("training_loop"):
        model.fit(X_train, y_train)
    collect(profiler, "profile")


def example_get_metrics():
    profiler = PerformanceProfiler()
    with profiler.profile("training_loop"):
        model.fit(X_train, y_train)
    metrics = profiler.get_metrics()
    print(f"Peak RAM: {metrics.memory.peak_ram_mb} MB")
    current_ram = profiler.get_current_memory()
    breakdown = profiler.get_timing_breakdown()
    for operation, time_s in breakdown.items():
        print(f"{operation}: {time_s:.3f}s")
    metrics_dict = metrics.to_dict()
    print(metrics.summary())
    collect(profiler, "methods")
    return current_ram, metrics_dict


def example_basic():
    profiler = PerformanceProfiler(track_gpu=True)

    with profiler.profile("model_training"):
        # Your ML training code
        for epoch in range(10):
            train_epoch()

    metrics = profiler.get_metrics()
    print(f"Training completed in {metrics.timing.wall_time_s:.1f}s")
    print(f"Peak memory usage: {metrics.memory.peak_ram_mb:.1f} MB")
    collect(profiler, "basic")


def example_gpu():
    profiler = PerformanceProfiler(track_gpu=True, detailed_memory=True)

    with profiler.profile("gpu_intensive_task"):
        model = LargeModel().cuda()

        for batch in dataloader:
            output = model(batch.cuda())

            # Check GPU memory during training
            if profiler.get_current_gpu_memory() > 0.9:  # >90% usage
                print("Warning: High GPU memory usage")

    gpu_metrics = profiler.get_metrics()
    print(f"Peak GPU memory: {gpu_metrics.memory.peak_gpu_mb} MB")
    collect(profiler, "gpu")


def example_multi():
    profiler = PerformanceProfiler()

    # Profile data loading
    with profiler.profile("data_loading"):
        data = load_dataset()

    # Profile preprocessing
    with profiler.profile("preprocessing"):
        processed_data = preprocess(data)

    # Profile training
    with profiler.profile("training"):
        model = train_model(processed_data)

    # Get breakdown of all operations
    timing_breakdown = profiler.get_timing_breakdown()
    total_time = sum(timing_breakdown.values())

    print("Operation breakdown:")
    for op, time_s in timing_breakdown.items():
        percentage = (time_s / total_time) * 100
        print(f"  {op}: {time_s:.2f}s ({percentage:.1f}%)")
    collect(profiler, "multi")
    return timing_breakdown


def example_leak(leaky):
    LEAKY[0] = leaky
    profiler = PerformanceProfiler(detailed_memory=True, memory_interval=0.1)

    with profiler.profile("memory_leak_check"):
        for i in range(100):
            # Code that might leak memory
            data = allocate_data()
            process_data(data)
            # Forgot to clean up data!

    metrics = profiler.get_metrics()
    if metrics.memory.memory_leak_detected:
        print("⚠️ Potential memory leak detected")
        print(f"Memory grew from {metrics.memory.initial_ram_mb}MB to {metrics.memory.final_ram_mb}MB")
    collect(profiler, "leak" if leaky else "no_leak")
    _kept.clear()


def example_flops():
    import torch
    import torch.nn as nn

    profiler = PerformanceProfiler(estimate_flops=True)

    model = nn.Sequential(
        nn.Linear(784, 512),
        nn.ReLU(),
        nn.Linear(512, 10)
    )

    with profiler.profile("flops_analysis"):
        x = torch.randn(32, 784)
        output = model(x)

    compute_metrics = profiler.get_metrics().compute
    if compute_metrics.estimated_flops is None:
        print("Estimated FLOPs: n/a (%s)"
              % profiler.get_metrics().unavailable["compute.estimated_flops"])
    else:
        print(f"Estimated FLOPs: {compute_metrics.estimated_flops:,}")
        print(f"FLOPS per second: {compute_metrics.flops_per_second:,.0f}")
    collect(profiler, "flops")


def example_errors():
    profiler = PerformanceProfiler()

    try:
        with profiler.profile("potentially_failing_operation"):
            risky_operation()  # This might raise an exception
    except Exception as e:
        print(f"Operation failed: {e}")

    # Still get partial profiling results
    if profiler.has_results():
        partial_metrics = profiler.get_metrics()
        print(f"Partial timing: {partial_metrics.timing.wall_time_s:.2f}s")
    collect(profiler, "errors")


def example_best_practices():
    model = _images
    # For long-running operations, use lower frequency sampling
    profiler = PerformanceProfiler(memory_interval=1.0)  # Sample every second

    # For detailed analysis, use higher frequency
    profiler = PerformanceProfiler(memory_interval=0.1)  # Sample every 100ms

    import torch

    # Conditional GPU tracking based on availability
    profiler = PerformanceProfiler(track_gpu=torch.cuda.is_available())

    # Good: Descriptive names
    with profiler.profile("resnet50_forward_pass"):
        output = model(input_batch)

    # Bad: Generic names
    with profiler.profile("operation"):
        output = model(input_batch)

    # Profile with realistic data sizes
    with profiler.profile("production_inference"):
        # Use production-like batch sizes
        batch = torch.randn(128, 3, 224, 224)  # Realistic batch
        predictions = model(batch)
    collect(profiler, "best_practices")


if __name__ == "__main__":
    example_profile_method()
    current_ram, metrics_dict = example_get_metrics()
    example_basic()
    example_gpu()
    breakdown = example_multi()
    example_leak(True)
    example_leak(False)
    example_flops()
    example_errors()
    example_best_practices()
    with open(os.path.join(OUT, "measured.json"), "w") as f:
        json.dump({"results": results, "io_measured": io_measured, "current_ram": current_ram,
                   "breakdown": breakdown, "cpus": len(os.sched_getaffinity(0)),
                   "torch": torch.__version__}, f)
    print("measure_script: done")
