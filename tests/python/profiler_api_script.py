"""The profiler API document's examples (../shared/reference/001_*.txt), run
for real against prism.profiler.

Each block under "The document's examples" is the document's own, unchanged
but for its import (``from kitsune.profiler import X`` -> ``from
prism.profiler import X``) and one word: Memory Tracking's
``device='cuda'`` is ``device=DEVICE``, 'cuda' where torch has a GPU and
'cpu' otherwise, so the example also runs on a machine without one.  What
the examples take as given is set up before them: a small model, optimizer,
criterion and DataLoaders on the CPU (CUDA when available), ``tasks`` and
``streams`` for the stream example (no streams without CUDA:
torch.cuda.stream(None) is a no-op), ``loss`` where a snippet calls
``loss.backward()`` on a loss it never computes (a scalar with a graph, or a
leaf where it is called once per batch), and ``profile_training`` /
``run_with_profiling`` for the comparisons.  "# ... collect metrics ..." in
Custom Reporter runs the Comprehensive Metrics loop once more.

Usage: profiler_api_script.py OUT_DIR.  It runs every example in one
process (under ``python -m prism`` they share its session), writes the
reports into OUT_DIR, and OUT_DIR/measured.json: every timer's and
collector's measurements and every memory tracker's timeline length, which
tests/python/test_profiler_api.py compares with the profile.
"""
import json
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

OUT = sys.argv[1]
os.chdir(OUT)

# ---- what the examples take as given -----------------------------------------

torch.manual_seed(0)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
FEATURES, CLASSES, BATCH = 32, 4, 8
model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 64), torch.nn.ReLU(),
                            torch.nn.Linear(64, CLASSES)).to(DEVICE)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
criterion = torch.nn.CrossEntropyLoss()
input = torch.randn(BATCH, FEATURES, device=DEVICE)  # noqa: A001 - the document's name
inputs = torch.randn(48, FEATURES, device=DEVICE)
labels = torch.randint(0, CLASSES, (48,), device=DEVICE)
dataloader = DataLoader(inputs, batch_size=BATCH)           # yields input batches
train_loader = DataLoader(TensorDataset(inputs, labels), batch_size=BATCH)
num_epochs = 2
loss = torch.ones((), device=DEVICE, requires_grad=True)   # backward() once per batch

measured = {"timers": [], "collectors": [], "trackers": [], "reporter_collector": None}


def keep_timer(t):
    measured["timers"].append(t)
    return t


def keep_collector(c):
    measured["collectors"].append(c)
    return c


def keep_tracker(t):
    measured["trackers"].append(t)
    return t


def fresh_loss():
    return criterion(model(input), labels[:BATCH])


# ---- the document's examples ----------------------------------------------------

# Basic Profiling
from prism.profiler import CUDATimer

timer = keep_timer(CUDATimer())

# Time a code block
with timer.measure('forward_pass'):
    output = model(input)

# Get elapsed time
elapsed = timer.get_elapsed('forward_pass')
print(f"Forward pass: {elapsed:.2f} ms")

# Memory Profiling
from prism.profiler import MemoryTracker

tracker = keep_tracker(MemoryTracker())

# Track memory usage
with tracker:
    for batch in dataloader:
        output = model(batch)
        loss.backward()

# Print memory report
tracker.print_summary()

# Get detailed stats
stats = tracker.get_stats()
print(f"Peak memory: {stats['peak_allocated'] / 1e9:.2f} GB")

# Comprehensive Metrics
from prism.profiler import MetricsCollector

collector = keep_collector(MetricsCollector())

for epoch in range(num_epochs):
    for batch_idx, (data, target) in enumerate(train_loader):
        # Record metrics
        collector.record('batch_size', data.size(0))

        with collector.measure_time('iteration'):
            output = model(data)
            loss = criterion(output, target)
            loss.backward()
            optimizer.step()

        collector.record('loss', loss.item())

# Generate report
report = collector.generate_report()
print(report)

# Custom Reporter
from prism.profiler import Reporter, MetricsCollector

collector = keep_collector(MetricsCollector())
# ... collect metrics ...
for epoch in range(num_epochs):
    for batch_idx, (data, target) in enumerate(train_loader):
        collector.record('batch_size', data.size(0))
        with collector.measure_time('iteration'):
            output = model(data)
            loss = criterion(output, target)
            loss.backward()
            optimizer.step()
        collector.record('loss', loss.item())
measured["reporter_collector"] = collector

# Create reporter
reporter = Reporter(collector)

# Generate different report formats
reporter.save_json('metrics.json')
reporter.save_html('report.html')
reporter.save_csv('metrics.csv')

# Print summary
reporter.print_summary()

# 1. CUDA Event Timing
from prism.profiler import CUDATimer

timer = keep_timer(CUDATimer())

timer.start('kernel_launch')
# GPU operation
output = model(input)
timer.stop('kernel_launch')

elapsed = timer.get_elapsed('kernel_launch')

# 2. Memory Tracking
from prism.profiler import MemoryTracker

tracker = keep_tracker(MemoryTracker(track_allocations=True))

# Track all allocations
with tracker:
    x = torch.randn(1000, 1000, device=DEVICE)
    y = torch.matmul(x, x)

# View allocation timeline
timeline = tracker.get_allocation_timeline()

# 3. Stream Profiling
tasks = [torch.randn(64, 64, device=DEVICE) for _ in range(4)]
streams = [torch.cuda.Stream() for _ in range(4)] if DEVICE == "cuda" else [None] * 4


def execute_task(task):
    return task @ task


from prism.profiler import StreamProfiler

profiler = StreamProfiler(num_streams=4)

# Profile stream usage
with profiler:
    # Multi-stream execution
    for stream_id, task in enumerate(tasks):
        with torch.cuda.stream(streams[stream_id]):
            execute_task(task)

# View stream efficiency
profiler.print_stream_efficiency()

# Identifying Bottlenecks
dataloader = iter(DataLoader(inputs, batch_size=BATCH))   # next(dataloader) below
loss = fresh_loss()
from prism.profiler import MetricsCollector

collector = keep_collector(MetricsCollector())

# Profile different components
with collector.measure_time('data_loading'):
    data = next(dataloader)

with collector.measure_time('forward'):
    output = model(data)

with collector.measure_time('backward'):
    loss.backward()

# Analyze bottlenecks
analysis = collector.analyze_bottlenecks()
print(f"Bottleneck: {analysis['bottleneck']}")

# Comparing Configurations
config1, config2 = {"batch_size": 4}, {"batch_size": 16}


def profile_training(config):
    c = keep_collector(MetricsCollector())
    for data, target in DataLoader(TensorDataset(inputs, labels),
                                   batch_size=config["batch_size"]):
        c.record('batch_size', data.size(0))
        with c.measure_time('iteration'):
            optimizer.zero_grad()
            criterion(model(data), target).backward()
            optimizer.step()
    return c


from prism.profiler import compare_runs

# Run 1: Baseline
metrics1 = profile_training(config1)

# Run 2: With Kitsune
metrics2 = profile_training(config2)

# Compare
comparison = compare_runs(metrics1, metrics2)
print(f"Speedup: {comparison['speedup']:.2f}x")

# Best practice 1. Profile Representative Workloads
# Use actual training data, not synthetic
collector = keep_collector(MetricsCollector())

# Profile multiple epochs
for epoch in range(5):
    # ... training code with profiling ...
    pass

# Get stable averages
report = collector.generate_report()

# Best practice 2. Measure End-to-End Performance
timer = keep_timer(CUDATimer())
loss = fresh_loss()
with timer.measure('full_iteration'):
    with timer.measure('data_loading'):
        data = next(dataloader)

    with timer.measure('forward'):
        output = model(data)

    with timer.measure('backward'):
        loss.backward()

    with timer.measure('optimizer'):
        optimizer.step()


# Best practice 3. Compare Against Baseline
def run_with_profiling(use_kitsune):
    c = profile_training(config2 if use_kitsune else config1)
    t = sum(sum(v) for v in c.get_timings().values()) / 1000.0
    return {"time": t, **Reporter(c).to_dict()}


# Baseline run
baseline_metrics = run_with_profiling(use_kitsune=False)

# Kitsune run
kitsune_metrics = run_with_profiling(use_kitsune=True)

# Compare
speedup = baseline_metrics['time'] / kitsune_metrics['time']
print(f"Speedup: {speedup:.2f}x")

# JSON Report
reporter.save_json('profile.json')

# HTML Report
reporter.save_html('report.html')

# CSV Export
reporter.save_csv('metrics.csv')

# ---- what the test compares with the profile ----------------------------------

with open("measured.json", "w") as f:
    json.dump({
        "timers": [t.get_all() for t in measured["timers"]],
        "collectors": [c.get_timings() for c in measured["collectors"]],
        "metrics": [c.get_metrics() for c in measured["collectors"]],
        "timeline_samples": sum(len(t.get_allocation_timeline())
                                for t in measured["trackers"]),
        "reporter_iteration_ms": measured["reporter_collector"].get_timings()["iteration"],
        "stream_wall_ms": profiler.wall_ms,
        "clock": timer.clock,
        "comparison": comparison,
        "speedup": speedup,
        "bottleneck": analysis,
        "finished": time.time(),
    }, f)
print("profiler_api_script: done")
