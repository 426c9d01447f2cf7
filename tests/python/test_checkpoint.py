"""test_checkpoint.py - activation checkpointing (torch.utils.checkpoint,
reentrant and not): a checkpointed block run again in backward is
'<block> (recompute)' inside the backward pass, named by its path in the
model, with its modules' paths, apart from the previous module's backward
segment; every block's backward keeps its own segments.  A user's trial
(use_reentrant=True) read every block's backward merged into
`fc1 (backward)` (120 calls for 4 blocks x 30 steps), each recompute as a
root `Block.forward` with bare children, and blocks.3's recompute charged
to `head (backward)` (72 ms for a Linear(256, 10), 5 ms without).  Under
python -m prism with every module kept, and under instrument(); the
program's output is unchanged.  torch 2.13 and 1.13."""

import subprocess
import sys
import unittest

from pyutil import PRISM_TOP, TempDirTest, torch_env, torch_skip, write_script

SKIP = torch_skip()

SCRIPT = r'''
import sys, torch
from torch.utils.checkpoint import checkpoint
torch.manual_seed(0); torch.set_num_threads(1)
reentrant = sys.argv[1] == "1"

class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.act = torch.nn.GELU()
        self.fc2 = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.ln(x))))

class Net(torch.nn.Module):
    def __init__(self, d=32, n=3):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(d) for _ in range(n)])
        self.head = torch.nn.Linear(d, 4)

    def forward(self, x):
        for b in self.blocks:
            x = checkpoint(b, x, use_reentrant=reentrant)
        return self.head(x)

model = Net()
opt = torch.optim.SGD(model.parameters(), 0.01)
if sys.argv[2] == "instrument":
    import prism, prism.torch
    prism.init(output=sys.argv[3])
    prism.torch.instrument(model, opt, modules="all")
x = torch.randn(16, 32, requires_grad=reentrant)
y = torch.randint(0, 4, (16,))
for i in range(6):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
print("%.17g" % sum(float(p.detach().sum()) for p in model.parameters()))
'''


@unittest.skipIf(SKIP, SKIP or "")
class Checkpoint(TempDirTest):
    def paths(self, reentrant, mode):
        script = write_script(self, "ckpt.py", SCRIPT)
        out = self.path("c%s%s.cbor" % (reentrant, mode))
        pre = [sys.executable, "-m", "prism", "-o", out] if mode == "zero" else [sys.executable]
        p = subprocess.run(pre + [script, reentrant, mode, out],
                           env=torch_env(with_prism=True, PRISM_TORCH_MODULES="all"),
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        plain = subprocess.run([sys.executable, script, reentrant, "plain", out],
                               env=torch_env(), capture_output=True, text=True, timeout=600)
        self.assertEqual(p.stdout, plain.stdout)
        csv = subprocess.run([PRISM_TOP, "export", out, "--format", "csv"],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(csv.returncode, 0, csv.stderr)
        return {line.split(",")[0]: int(line.split(",")[3])
                for line in csv.stdout.splitlines()[1:]}

    def check(self, calls):
        names = sorted(calls)
        for b in range(3):
            self.assertEqual(calls.get("backward/blocks.%d (recompute)" % b), 6, names)
            self.assertEqual(calls.get("backward/blocks.%d (recompute)/blocks.%d.fc1" % (b, b)),
                             6, names)
            self.assertEqual(calls.get("backward/blocks.%d.fc1 (backward)" % b), 6, names)
        bare = [p for p in names if p.split("/")[-1] in ("fc1 (backward)", "ln (backward)")
                or "Block.forward" in p or "(backward)/" in p]
        self.assertEqual(bare, [], names)

    def test_reentrant(self):
        self.check(self.paths("1", "zero"))

    def test_non_reentrant(self):
        self.check(self.paths("0", "zero"))

    def test_reentrant_instrument(self):
        self.check(self.paths("1", "instrument"))


if __name__ == "__main__":
    unittest.main()
