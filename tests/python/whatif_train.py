"""A training loop whose Dataset.__getitem__ waits SLOW_MS a sample (a slow
disk, planted), for test_whatif.py.  Run under python -m prism, it prints
its own clock's figures over every step: the mean step and the mean time
the step waited in next() for its batch; the step without that wait is
what "if the wait were zero" should come to."""
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

SLOW_MS = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
STEPS = 30


class Data(Dataset):
    def __len__(self):
        return 4 * STEPS

    def __getitem__(self, i):
        if SLOW_MS:
            time.sleep(SLOW_MS / 1e3)
        return torch.randn(64), torch.randn(8)


torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
it = iter(DataLoader(Data(), batch_size=4, num_workers=0))
ends, waits = [time.perf_counter()], []
for _ in range(STEPS):
    t0 = time.perf_counter()
    x, y = next(it)
    waits.append(time.perf_counter() - t0)
    for _ in range(20):                         # the same work every step
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
    opt.step()
    ends.append(time.perf_counter())
steps = [b - a for a, b in zip(ends, ends[1:])]
print("mean_step_ns", int(1e9 * sum(steps) / len(steps)))
print("mean_wait_ns", int(1e9 * sum(waits) / len(steps)))
