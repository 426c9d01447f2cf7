"""DataLoader worker processes recorded as workers of the training process
(prism._torch_workers, libcollect's prism_init_worker, the readers' merge
of <profile>.workers/w<id>-<pid>.prism), on real training runs:
tests/python/workers_train.py, a seeded model fed by a DataLoader with 2
worker processes, run in a child interpreter under ``python -m prism``
(zero-code) or calling prism.torch.instrument() itself.

What is asserted is counted or named, never timed: the script's own
accounting (samples, batches, the workers its worker_init_fn saw start,
by pid) against the merged profile (prism.load: Profile.threads marks the
workers' threads, Profile.tree holds their call trees, Profile.worker_files
the reader's counts); a planted busy-wait transform (several ms a sample,
against microseconds of other work) must hold most of its parent's time;
the program's results (a sum of every sample, a seeded model's final loss)
must be the same with PRISM as without.
"""
import json
import os
import subprocess
import sys
import unittest

from pyutil import PRISM_TOP, TempDirTest, torch_env, torch_skip

import prism

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "workers_train.py")

N, BATCH, EPOCHS, WORKERS = 44, 8, 2, 2
BATCHES = EPOCHS * -(-N // BATCH)        # 2 x 6: the last batch of each epoch holds 4
SAMPLES = EPOCHS * N
GETITEM = "Samples.__getitem__"
BATCH_REGION = "DataLoader batch"


def find(nodes, path):
    """The node at path (a list of names) among nodes and their children."""
    for n in nodes:
        if n["name"] == path[0]:
            return n if len(path) == 1 else find(n.get("children", []), path[1:])
    return None


def worker_threads(p):
    """[(Profile.threads entry, its prism.tree/1 thread)] of the workers."""
    info = {t["stream"]: t for t in p.threads}
    return [(info[th["stream"]], th) for th in p.tree["threads"]
            if info.get(th["stream"], {}).get("worker")]


def worker_calls(p, path):
    """Calls of the node at path, summed over the worker threads."""
    total = 0
    for _, th in worker_threads(p):
        n = find(th["roots"], path)
        total += n["calls"] if n else 0
    return total


def started(measured):
    """{(worker id, pid)} the script's worker_init_fn ran in."""
    return {tuple(int(v) for v in s.split("-")) for s in measured["inits"]}


@unittest.skipIf(torch_skip(), torch_skip())
class WorkersTest(TempDirTest):
    def train(self, name, cfg=None, mode="prism", profile=None, cwd=None, **env):
        """Run workers_train.py in OUT=<tmp>/name: mode "prism" (python -m
        prism -o PROFILE), "instrument" (the script records to PROFILE) or
        "plain" (no PRISM); PROFILE relative to cwd.  (the script's
        measured dict, PROFILE)."""
        out = self.path(name)
        os.makedirs(out)
        profile = profile or os.path.join(out, "run.prism")
        cfg = dict(cfg or {})
        if mode == "instrument":
            cfg["api"], cfg["output"] = "instrument", profile
        elif mode == "plain":
            cfg["api"] = "plain"
        argv = [TRAIN, out, json.dumps(cfg)]
        if mode == "prism":
            argv = ["-m", "prism", "-o", profile] + argv
        p = subprocess.run([sys.executable] + argv, env=torch_env(with_prism=True, **env),
                           cwd=cwd, capture_output=True, text=True, timeout=600)
        self.assertNotIn("workers are not recorded", p.stderr)
        self.assertEqual(p.returncode, 0, "%s\n%s" % (p.stdout, p.stderr))
        if mode == "prism":             # (a relative profile: where the session opened it)
            self.assertEqual(p.stderr.strip().splitlines()[-1],
                             "prism: profile written to %s" % profile, p.stderr)
        with open(os.path.join(out, "measured.json")) as f:
            m = json.load(f)
        # the script's own accounting: every sample, every batch, from a
        # worker whose worker_init_fn had run, and its worker_init_fn kept
        self.assertEqual(m["samples"], cfg.get("epochs", EPOCHS) * N)
        self.assertEqual(m["batches"], BATCHES * cfg.get("epochs", EPOCHS) // EPOCHS)
        self.assertTrue(m["init_fn_same"], "loader.worker_init_fn is not the script's own "
                        "object after the epochs")
        if cfg.get("init_fn", True):
            self.assertEqual(m["inited"], m["samples"])
            starts = WORKERS * (1 if cfg.get("persistent") else cfg.get("epochs", EPOCHS))
            self.assertEqual(len(started(m)), starts, m["inits"])
        else:
            self.assertEqual((m["inited"], m["inits"]), (0, []))
        return m, profile

    def assert_workers_recorded(self, m, profile):
        """The merged profile against the script's accounting; the Profile."""
        p = prism.load(profile)
        starts = started(m)
        folder = profile + ".workers"
        self.assertEqual(sorted(os.listdir(folder)),
                         sorted("w%d-%d.prism" % s for s in starts))
        self.assertEqual(p.worker_files, {"merged": len(starts), "damaged": 0, "other": 0,
                                          "records": p.worker_files["records"]})
        self.assertGreater(p.worker_files["records"], 0)
        own = [t for t in p.threads if not t["worker"]]
        self.assertTrue(own, p.threads)
        for t in own:                       # the training process's threads
            self.assertIsNone(t["worker_id"], t)
            self.assertIsNone(t["pid"], t)
            self.assertFalse(t["name"].startswith("worker "), t)
        ws = worker_threads(p)
        # one thread per worker process, named and marked with its index and pid
        self.assertEqual({(t["worker_id"], t["pid"]) for t, _ in ws}, starts)
        self.assertEqual(len(ws), len(starts))
        for t, th in ws:
            self.assertEqual(t["name"], "worker %d: DataLoader" % t["worker_id"])
            self.assertEqual(th["name"], t["name"])
            for r in th["roots"]:               # the parent's regions stay the parent's
                self.assertEqual(r["name"], BATCH_REGION, r["name"])
            self.assertIsNotNone(find(th["roots"], [BATCH_REGION, GETITEM]), th)
        self.assertEqual(worker_calls(p, [BATCH_REGION]), m["batches"])
        self.assertEqual(worker_calls(p, [BATCH_REGION, GETITEM]), m["samples"])
        self.assertEqual(worker_calls(p, [BATCH_REGION, "collate (default_collate)"]),
                         m["batches"])
        # the workers' work is not the training thread's
        main = [th for th in p.tree["threads"] if th["name"] == "MainThread"]
        self.assertEqual(len(main), 1)
        self.assertIsNone(find(main[0]["roots"], [BATCH_REGION]))
        self.assertIsNotNone(find(main[0]["roots"], ["data_loading"]))
        self.assertEqual(p.steps["count"], m["batches"])
        load = p.cpu_load
        if load and load.get("other_threads") is not None:
            self.assertGreaterEqual(load["other_threads"], 0, load)
        return p

    def assert_transform(self, p, m, name):
        """The planted transform: under __getitem__ in every worker's tree,
        called once a sample, most of its parent's time."""
        t_ns = g_ns = calls = 0
        for t, th in worker_threads(p):
            g = find(th["roots"], [BATCH_REGION, GETITEM])
            n = find(th["roots"], [BATCH_REGION, GETITEM, name])
            self.assertIsNotNone(n, "%s not under %s in %s" % (name, GETITEM, t["name"]))
            t_ns += n["total_ns"]
            g_ns += g["total_ns"]
            calls += n["calls"]
        self.assertEqual(calls, m["samples"])
        self.assertGreater(t_ns, 0.5 * g_ns, "%s: %d of %s's %d ns" % (name, t_ns, GETITEM, g_ns))

    # ---- start methods -------------------------------------------------

    def test_fork_workers(self):
        m, prof = self.train("fork", {"ctx": "fork", "transform": "module"})
        p = self.assert_workers_recorded(m, prof)
        self.assert_transform(p, m, "SlowAug.forward")

    def test_spawn_workers(self):
        m, prof = self.train("spawn", {"ctx": "spawn", "transform": "region"})
        p = self.assert_workers_recorded(m, prof)
        self.assert_transform(p, m, "my_transform")

    def test_persistent_workers_instrument(self):
        m, prof = self.train("pers", {"ctx": "fork", "persistent": True, "transform": "region"},
                             mode="instrument")
        p = self.assert_workers_recorded(m, prof)
        self.assert_transform(p, m, "my_transform")

    def test_persistent_workers_terminated_at_exit(self):
        # the loader outlives the script: multiprocessing's exit handler
        # terminates its persistent workers (SIGTERM); each writes its last
        # chunks and footer before torch's own handler ends it
        m, prof = self.train("term", {"ctx": "fork", "persistent": True, "keep_alive": True,
                                      "transform": "module"})
        p = self.assert_workers_recorded(m, prof)
        self.assert_transform(p, m, "SlowAug.forward")
        folder = prof + ".workers"
        for name in os.listdir(folder):
            d = subprocess.run([PRISM_TOP, "dump", os.path.join(folder, name)],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(d.returncode, 0, d.stderr)
            lines = d.stdout.rstrip("\n").splitlines()
            self.assertIn("complete (footer present)", lines[-1], name)
            foot = [x for x in lines if x.startswith("footer")]
            self.assertEqual(len(foot), 1, name)
            # unclean: the footer written for a signal (the SIGTERM path taken)
            self.assertRegex(foot[0], r"\bunclean$", name)
        self.assertEqual(p.worker_files["damaged"], 0)

    def test_relative_profile_after_chdir(self):
        # -o run.prism, then the script changes directory before its loader
        # starts: the workers' folder is still beside the profile
        os.makedirs(self.path("start"))
        m, rel = self.train("cd", {"ctx": "fork", "transform": "none", "chdir": self.tmp},
                            profile="run.prism", cwd=self.path("start"))
        prof = os.path.join(self.path("start"), rel)
        self.assertFalse(os.path.exists(self.path("run.prism.workers")))
        self.assert_workers_recorded(m, prof)

    # ---- the program's own ---------------------------------------------

    def test_results_unchanged(self):
        cfg = {"ctx": "fork", "transform": "module"}
        plain, _ = self.train("plain", cfg, mode="plain")
        rec, prof = self.train("rec", cfg)
        self.assertTrue(worker_threads(prism.load(prof)))
        self.assertEqual(rec["sum"], plain["sum"])
        self.assertEqual(rec["loss"], plain["loss"])

    def test_user_worker_init_fn_kept(self):
        # instrument() on a loader whose worker_init_fn is the script's own:
        # train() checks it ran in every worker (by pid: assert_workers_recorded
        # matches them with the profile's workers) and is the loader's again
        m, prof = self.train("init", {"ctx": "fork", "transform": "none", "work_us": 200},
                             mode="instrument")
        self.assert_workers_recorded(m, prof)

    def test_no_worker_init_fn(self):
        m, prof = self.train("noinit", {"ctx": "fork", "transform": "none", "init_fn": False},
                             mode="instrument")
        p = prism.load(prof)
        ws = worker_threads(p)
        self.assertEqual(len(ws), WORKERS * EPOCHS)
        self.assertEqual(sorted(t["worker_id"] for t, _ in ws), [0, 0, 1, 1])
        self.assertEqual(len(os.listdir(prof + ".workers")), WORKERS * EPOCHS)
        self.assertEqual(worker_calls(p, [BATCH_REGION]), m["batches"])
        self.assertEqual(worker_calls(p, [BATCH_REGION, GETITEM]), m["samples"])

    # ---- off, and runs after runs ----------------------------------------

    def test_workers_off(self):
        m, prof = self.train("off", {"ctx": "fork", "transform": "module"},
                             PRISM_TORCH_WORKERS="0")
        self.assertFalse(os.path.exists(prof + ".workers"))
        p = prism.load(prof)
        self.assertEqual(worker_threads(p), [])
        self.assertFalse(any(t["worker"] for t in p.threads))
        self.assertEqual(p.worker_files, {"merged": 0, "damaged": 0, "other": 0, "records": 0})
        names = {o["name"] for o in p.ops}
        self.assertNotIn(BATCH_REGION, names)
        self.assertNotIn(GETITEM, names)
        self.assertIn("data_loading", names)
        self.assertEqual(p.steps["count"], m["batches"])

    def test_second_run_replaces_the_first(self):
        prof = self.path("same.prism")
        first, _ = self.train("first", {"ctx": "fork", "transform": "none"}, profile=prof)
        self.assertEqual(len(os.listdir(prof + ".workers")), WORKERS * EPOCHS)
        # a run that records no workers leaves the first run's files, and
        # the reader leaves them out: another session's
        _, _ = self.train("between", {"ctx": "fork", "transform": "none"}, profile=prof,
                          PRISM_TORCH_WORKERS="0")
        p = prism.load(prof)
        self.assertEqual(worker_threads(p), [])
        self.assertEqual(p.worker_files["other"], WORKERS * EPOCHS)
        self.assertEqual(p.worker_files["merged"], 0)
        # a run that records its workers empties the folder of the others
        last, _ = self.train("last", {"ctx": "fork", "persistent": True, "transform": "none"},
                             profile=prof)
        self.assertFalse(started(first) & started(last))
        p = self.assert_workers_recorded(last, prof)
        self.assertEqual(len(worker_threads(p)), WORKERS)
        self.assertEqual(len(p.threads), 1 + WORKERS)


if __name__ == "__main__":
    unittest.main()
