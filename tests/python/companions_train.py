"""companions_train.py - training loops with frozen companions of the
iteration, for tests/python/test_companions.py (run under python -m prism):

    teacher   a distillation teacher (never trained, eval mode, no_grad,
              a planted 6 ms of work) at the start of each loop body
    ensemble  three such teachers at the start of each loop body
    ema       an EMA copy updated and run under no_grad after
              optimizer.step(), and at the end an evaluation of it: 6
              forwards under no_grad (an eval pass, not a companion)

No DataLoader: the batches are made in the loop.  Its own clock is the
truth: one JSON line on stdout, "CLOCK {...}"."""
import copy
import json
import sys
import time

import torch
import torch.nn as nn

MODE = sys.argv[1]
STEPS = 24


def busy(s):
    t = time.perf_counter()
    while time.perf_counter() - t < s:
        pass


class Net(nn.Module):
    def __init__(self, work=0.0):
        super().__init__()
        self.l = nn.Linear(64, 8)
        self.work = work

    def forward(self, x):
        if self.work:
            busy(self.work)
        return self.l(x)


class Teacher(Net):
    pass


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    student = Net()
    opt = torch.optim.SGD(student.parameters(), lr=0.01)
    teachers = [Teacher(0.006).eval() for _ in range(3 if MODE == "ensemble" else 1)]
    ema = copy.deepcopy(student)
    ema.work = 0.006
    clock = {"companion_s": 0.0, "eval_s": 0.0}
    t0 = time.perf_counter()
    for i in range(STEPS):
        x = torch.randn(32, 64)
        target = torch.zeros(32, 8)
        if MODE in ("teacher", "ensemble"):
            a = time.perf_counter()
            with torch.no_grad():
                target = sum(t(x) for t in teachers) / len(teachers)
            clock["companion_s"] += time.perf_counter() - a
        loss = (student(x) - target).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        if MODE == "ema":
            a = time.perf_counter()
            with torch.no_grad():
                for pe, ps in zip(ema.parameters(), student.parameters()):
                    pe.mul_(0.9).add_(ps, alpha=0.1)
                ema(x)
            clock["companion_s"] += time.perf_counter() - a
    clock["loop_s"] = time.perf_counter() - t0
    if MODE == "ema":
        a = time.perf_counter()
        with torch.no_grad():
            for _ in range(6):
                ema(torch.randn(32, 64))
        clock["eval_s"] = time.perf_counter() - a
    clock["steps"] = STEPS
    print("CLOCK " + json.dumps(clock))


if __name__ == "__main__":
    main()
