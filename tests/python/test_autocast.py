"""test_autocast.py - a training loop whose forward runs under
torch.autocast (CPU, bfloat16) says so in its profile (INFO
torch.autocast "cpu bfloat16", said once), and its findings do not tell it
to use mixed precision (a user's trial: the top finding's only concrete fix
was what the program already did); the same loop without autocast has no
such INFO.  Under python -m prism, torch 2.13 and 1.13."""

import subprocess
import unittest

from pyutil import PRISM_TOP, TempDirTest, python_m_prism, torch_skip, write_script

SKIP = torch_skip()

SCRIPT = r'''
import sys, torch
torch.manual_seed(0); torch.set_num_threads(1)
m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 8))
opt = torch.optim.SGD(m.parameters(), 1e-3)
amp = sys.argv[1] == "amp"
for i in range(12):
    x = torch.randn(64, 256)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=amp):
        loss = m(x).float().pow(2).mean()
    loss.backward(); opt.step(); opt.zero_grad()
print("done")
'''


@unittest.skipIf(SKIP, SKIP or "")
class Autocast(TempDirTest):
    def run_loop(self, mode):
        out = self.path(mode + ".cbor")
        _, an = python_m_prism(self, write_script(self, "amp.py", SCRIPT), out, mode)
        d = subprocess.run([PRISM_TOP, "dump", out], capture_output=True, text=True, timeout=120)
        self.assertEqual(d.returncode, 0, d.stderr)
        return [l for l in d.stdout.splitlines() if "torch.autocast" in l], an

    def test_autocast_said_once(self):
        infos, an = self.run_loop("amp")
        self.assertEqual(len(infos), 1, infos)
        self.assertIn('"cpu bfloat16"', infos[0])
        for b in an["bottlenecks"]:
            self.assertNotIn("mixed precision", b["recommendation"], b)

    def test_no_autocast_no_info(self):
        infos, _ = self.run_loop("plain")
        self.assertEqual(infos, [])


if __name__ == "__main__":
    unittest.main()
