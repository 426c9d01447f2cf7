"""test_inference.py - an inference loop (no optimizer made, nothing
trained; forwards under inference_mode or no_grad) has steps: one per
iteration, begun by what began the first (its DataLoader's batch, or the
model's forward), so the time no region holds (the post-processing) is
found.  A user's trial: such a loop read "Steps: none recorded",
"Bottlenecks: none" with 58 % of it outside every region, and shares of a
run that was mostly `import torch`.  An optimizer made later ends it.
Programs of our own with their own clock; python -m prism; torch 2.13 and
1.13."""

import json
import subprocess
import sys
import unittest

from pyutil import PRISM_TOP, TempDirTest, python_m_prism, torch_env, torch_skip, write_script

SKIP = torch_skip()

SCRIPT = r'''
import json, sys, time, torch
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0); torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 8)).eval()
mode = sys.argv[1]
N = 20
post = 0.0
preds = []

def postprocess(out):                   # "send the response": a wait of 4 ms
    time.sleep(0.004)
    return out.argmax(1)

t0 = time.perf_counter()
if mode == "loader":
    dl = DataLoader(TensorDataset(torch.randn(16 * N, 64)), batch_size=16)
    with torch.inference_mode():
        for (x,) in dl:
            out = model(x)
            t = time.perf_counter(); preds.append(postprocess(out)); post += time.perf_counter() - t
elif mode == "forward":
    xs = torch.randn(N, 16, 64)
    for i in range(N):
        with torch.no_grad():
            out = model(xs[i])
        t = time.perf_counter(); preds.append(postprocess(out)); post += time.perf_counter() - t
else:                                   # a sanity pass, then training
    xs = torch.randn(N, 16, 64)
    with torch.no_grad():
        for i in range(3):
            model(xs[i])
    model.train()
    opt = torch.optim.SGD(model.parameters(), 0.01)
    for i in range(N):
        loss = model(xs[i]).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
    preds.append(loss.detach())
loop = time.perf_counter() - t0
print("sum", float(torch.cat([p.reshape(-1).float() for p in preds]).sum()))
print("CLOCK " + json.dumps({"loop_s": loop, "post_s": post}))
'''


@unittest.skipIf(SKIP, SKIP or "")
class Inference(TempDirTest):
    def run_mode(self, mode):
        script = write_script(self, "infer.py", SCRIPT)
        out = self.path(mode + ".cbor")
        p, an = python_m_prism(self, script, out, mode)
        plain = subprocess.run([sys.executable, script, mode], env=torch_env(),
                               capture_output=True, text=True, timeout=600)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertEqual(p.stdout.splitlines()[0], plain.stdout.splitlines()[0])
        clock = json.loads(p.stdout.split("CLOCK ", 1)[1])
        text = subprocess.run([PRISM_TOP, "analyze", out], capture_output=True, text=True,
                              timeout=120).stdout
        return an, clock, text

    def check_loop(self, an, clock, text):
        self.assertEqual(an["steps"]["count"], 20)
        self.assertTrue(an["steps"].get("inference"), an["steps"])
        self.assertIn("  Steps are an inference loop's iterations", text)
        ops = {o["name"] for o in an["ops"]}
        self.assertNotIn("eval", ops)
        # the post-processing is the time outside every region, named
        un = [b for b in an["bottlenecks"] if b["type"] == "unattributed_time"]
        self.assertTrue(un, [(b["type"], b["description"]) for b in an["bottlenecks"]])
        if "sampled there" in un[0]["evidence"]:
            self.assertIn("postprocess (infer.py:", un[0]["evidence"])
        # it holds the waits the script's clock measured (the steps, less
        # the first iteration's, hold 19 of the 20)
        outside = sum(o["total_ns"] for o in an["ops"] if o["name"] == "(outside regions)")
        self.assertGreater(outside / 1e9, 0.8 * clock["post_s"] * 19 / 20, (outside, clock))

    def test_loader_loop(self):
        self.check_loop(*self.run_mode("loader"))

    def test_forward_loop(self):
        self.check_loop(*self.run_mode("forward"))

    def test_training_after_a_sanity_pass(self):
        an, _, text = self.run_mode("train")
        # 3 inference steps (the forwards before the optimizer was made),
        # then one step per optimizer step
        self.assertEqual(an["steps"]["count"], 23)
        ops = {o["name"]: o for o in an["ops"]}
        self.assertEqual(ops["optimizer.step"]["calls"], 20)


if __name__ == "__main__":
    unittest.main()
