"""ops_train.py - a small transformer trained on fixed data, for the
operator window's tests (test_ops_window.py).  Prints one line
`TRUTH {json}`: its losses (to compare runs bit for bit) and the FLOPs of
its matrix products per training step, counted here from the layer sizes
(2 a multiply-add; forward, and backward's input and weight gradients),
the ground truth for the profile's FLOPs.

    ops_train.py STEPS [--compile] [--loader] [--amp]

--amp: forward and loss under torch.autocast (CPU, bfloat16).

--loader: the batches come from a DataLoader with 2 forked worker
processes, 2 batches an epoch, so that a new epoch's workers are forked in
a step's tail; each sample says whether a dispatch mode was active where
it was made (TRUTH "worker_modes": how many were: the workers must not
inherit the window).
"""
import json
import sys

import torch

torch.manual_seed(0)
torch.set_num_threads(1)
B, T, D, H, FF, C = 4, 16, 32, 2, 64, 10
steps = int(sys.argv[1])


class Block(torch.nn.Module):
    """Attention written out (so that every product is a visible mm/bmm) and
    an MLP."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.proj = torch.nn.Linear(D, D)
        self.up = torch.nn.Linear(D, FF)
        self.down = torch.nn.Linear(FF, D)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = torch.softmax(q @ k.transpose(1, 2) / D ** 0.5, dim=-1)
        x = x + self.proj(att @ v)
        return x + self.down(torch.relu(self.up(x)))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(D, D)
        self.blocks = torch.nn.Sequential(Block(), Block())
        self.head = torch.nn.Linear(D, C)

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)).mean(dim=1))


model = Model()
if "--compile" in sys.argv:
    model = torch.compile(model, backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(B, T, D)
y = torch.randint(0, C, (B,))
losses = []
worker_modes = 0


class Data(torch.utils.data.Dataset):
    def __len__(self):
        return 2 * B

    def __getitem__(self, i):
        from torch.utils._python_dispatch import _get_current_dispatch_mode
        return x[i % B], y[i % B], int(_get_current_dispatch_mode() is not None)


def batches():
    if "--loader" not in sys.argv:
        while True:
            yield x, y, torch.zeros(1)
    loader = torch.utils.data.DataLoader(Data(), batch_size=B, num_workers=2)
    while True:
        for b in loader:
            yield b


it = batches()
for _ in range(steps):
    xb, yb, modes = next(it)
    worker_modes += int(modes.sum())
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled="--amp" in sys.argv):
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
    loss.backward()
    opt.step()
    opt.zero_grad()
    losses.append(loss.item())


def mm(m, k, n):
    return 2 * m * k * n


# forward: the linears (rows B*T, the head B) and the two attention bmm's
fwd_lin = [(B * T, D, D)] + 2 * [(B * T, D, 3 * D), (B * T, D, D), (B * T, D, FF),
                                 (B * T, FF, D)] + [(B, D, C)]
fwd = sum(mm(*s) for s in fwd_lin) + 2 * 2 * B * mm(T, D, T)
# backward: each linear's weight gradient; its input gradient except the
# first's (x needs none); each bmm's two input gradients
bwd = sum(mm(*s) for s in fwd_lin) + sum(mm(*s) for s in fwd_lin[1:]) + 2 * 2 * 2 * B * mm(T, D, T)
print("TRUTH " + json.dumps({"losses": losses, "flops": fwd + bwd, "worker_modes": worker_modes}))
