"""test_outputs.py - a model's backward segments: whatever its forward
returns (a tensor, a tuple, a dict, or a @dataclass record: a custom
trainer's ModelOutput-like output got no segment, so its loss's backward
was `backward`'s own time, 90 % unattributed in a user's trial), and in a
torch.autograd.grad pass (a gradient penalty's: its segments were roots,
in no region), which is a region `autograd.grad` of its own.  Under python
-m prism with every module kept; the program's output is unchanged.  torch
2.13 and 1.13."""

import subprocess
import sys
import unittest

from pyutil import PRISM_TOP, TempDirTest, torch_env, torch_skip, write_script

SKIP = torch_skip()

SCRIPT = r'''
import dataclasses, torch
torch.manual_seed(0); torch.set_num_threads(1)

@dataclasses.dataclass
class Record:
    note: str
    logits: torch.Tensor
    loss: torch.Tensor

class Base(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 4)

class OutTensor(Base):
    def forward(self, x):
        return self.lin(x).pow(2).mean()

class OutTuple(Base):
    def forward(self, x):
        return (self.lin(x).pow(2).mean(), 1)

class OutDict(Base):
    def forward(self, x):
        return {"loss": self.lin(x).pow(2).mean()}

class OutRecord(Base):
    def forward(self, x):
        y = self.lin(x)
        return Record("r", y, y.pow(2).mean())

def loss_of(out):
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, tuple):
        return out[0]
    if isinstance(out, dict):
        return out["loss"]
    return out.loss

for cls in (OutTensor, OutTuple, OutDict, OutRecord):
    m = cls()
    opt = torch.optim.SGD(m.parameters(), 0.1)
    for i in range(6):
        loss = loss_of(m(torch.randn(8, 16)))
        opt.zero_grad(); loss.backward(); opt.step()
    print(cls.__name__, "%.17g" % float(loss.detach()))
'''


def paths_of(test, name, text):
    """The call paths of `text` (a script) run under python -m prism with
    every module kept, its output the same as without PRISM."""
    script = write_script(test, name + ".py", text)
    out = test.path(name + ".cbor")
    p = subprocess.run([sys.executable, "-m", "prism", "-o", out, script],
                       env=torch_env(with_prism=True, PRISM_TORCH_MODULES="all"),
                       capture_output=True, text=True, timeout=600)
    test.assertEqual(p.returncode, 0, p.stderr)
    plain = subprocess.run([sys.executable, script], env=torch_env(), capture_output=True,
                           text=True, timeout=600)
    test.assertEqual(p.stdout, plain.stdout)
    csv = subprocess.run([PRISM_TOP, "export", out, "--format", "csv"],
                         capture_output=True, text=True, timeout=120)
    test.assertEqual(csv.returncode, 0, csv.stderr)
    return {line.split(",")[0] for line in csv.stdout.splitlines()[1:]}


@unittest.skipIf(SKIP, SKIP or "")
class Outputs(TempDirTest):
    def test_every_output_kind_has_its_backward_segment(self):
        paths = paths_of(self, "outputs", SCRIPT)
        for cls in ("OutTensor", "OutTuple", "OutDict", "OutRecord"):
            self.assertIn("backward/%s (backward)" % cls, paths, sorted(paths))


GRAD = r'''
import torch
torch.manual_seed(0); torch.set_num_threads(1)
D = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
opt = torch.optim.Adam(D.parameters(), 1e-3)
for i in range(8):
    x = torch.randn(8, 16).requires_grad_(True)
    out = D(x)
    g, = torch.autograd.grad(out.sum(), x, create_graph=True)      # a gradient penalty
    loss = out.mean() + 10 * ((g.norm(dim=1) - 1) ** 2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
print("%.17g" % sum(float(p.sum()) for p in D.parameters()))
'''


@unittest.skipIf(SKIP, SKIP or "")
class AutogradGrad(TempDirTest):
    def test_grad_pass_is_a_region(self):
        rows = paths_of(self, "gp", GRAD)
        self.assertIn("autograd.grad", rows, sorted(rows))
        self.assertIn("autograd.grad/0 (backward)", rows, sorted(rows))
        self.assertIn("backward/0 (backward)", rows, sorted(rows))
        # no module segment at the root: each pass holds its own
        self.assertFalse([p for p in rows if p.endswith("(backward)") and "/" not in p],
                         sorted(rows))


if __name__ == "__main__":
    unittest.main()
