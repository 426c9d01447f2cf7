"""A training loop written from document 004's snippets (../shared/reference/
004_*.txt: "Training Loop Integration", "Minimal Code Changes"), unchanged
except the imports: ``from prism.bottleneck import ...`` for the profiler's
names.  The names the snippet takes as given (num_epochs, data_loader, model,
criterion, optimizer, preprocess_data) are set up first: a small torch model
and a real DataLoader.  Two additions, marked: the memory threshold is set
below the process's measured share of memory (so the monitor's rule fires
whatever the machine), and the session's figures are written to OUT/result.json
for the test.

    bottleneck_script.py OUT [stall]

``stall``: the dataset's __getitem__ sleeps (num_workers=0): an input stall
for PRISM's data_loading finding.  Run it under ``python -m prism -o FILE``.
"""
import json
import os
import sys
import time

import torch
from torch.utils import data

from prism.bottleneck import (BottleneckProfiler, BottleneckProfilerConfig, BottleneckType,
                              MemoryTracker, ProfilingLevel)

OUT = sys.argv[1]
STALL = len(sys.argv) > 2 and sys.argv[2] == "stall"

# ---- the names the snippet takes as given ----------------------------------

torch.manual_seed(0)
torch.set_num_threads(1)


class Samples(data.Dataset):
    def __init__(self, n, stall_s):
        self.x = torch.randn(n, 32)
        self.y = torch.randint(0, 4, (n,))
        self.stall_s = stall_s

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.stall_s:
            time.sleep(self.stall_s)        # the planted input stall
        return self.x[i], self.y[i]


num_epochs = 2
data_loader = data.DataLoader(Samples(48 if STALL else 64, 0.02 if STALL else 0.0),
                              batch_size=4 if STALL else 8, num_workers=0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def preprocess_data(x):
    return (x - x.mean(dim=0)) / (x.std(dim=0) + 1e-6)


# ---- the document's snippet ------------------------------------------------

# Setup profiler
config = BottleneckProfilerConfig(
    profiling_level=ProfilingLevel.COMPREHENSIVE,
    enable_real_time_monitoring=True
)
# (added) below the process's share of memory: the monitor's rule must fire
config.memory_threshold = MemoryTracker().get_current_stats()["used_percent"] / 100 / 2
config.output_dir = os.path.join(OUT, "reports")
profiler = BottleneckProfiler(config)

# Start profiling session
session_id = profiler.start_profiling_session("complete_training")

try:
    for epoch in range(num_epochs):
        # Profile data loading
        with profiler.profile_operation(f"epoch_{epoch}_data_loading",
                                      BottleneckType.DATA_LOADING):
            for batch_idx, (data, target) in enumerate(data_loader):
                # Profile preprocessing
                with profiler.profile_operation("preprocessing",
                                              BottleneckType.PREPROCESSING):
                    data = preprocess_data(data)

                # Profile model inference
                with profiler.profile_operation("model_inference",
                                              BottleneckType.CPU_COMPUTATION):
                    output = model(data)

                # Profile loss computation and backward pass
                with profiler.profile_operation("training_step",
                                              BottleneckType.CPU_COMPUTATION):
                    loss = criterion(output, target)
                    loss.backward()
                    optimizer.step()

finally:
    # Stop profiling and generate report
    session = profiler.stop_profiling_session()
    summary = profiler.get_bottleneck_summary()

    print(f"Training completed with {len(summary.get('bottlenecks', []))} bottlenecks detected")

    # Generate comprehensive report
    profiler.generate_optimization_report()

# ---- (added) what the test reads ----------------------------------------

summary["report"] = profiler.format_report()
summary["batches"] = len(data_loader)
summary["threads"] = [t.name for t in __import__("threading").enumerate()]
with open(os.path.join(OUT, "result.json"), "w") as f:
    json.dump(summary, f, default=str)
