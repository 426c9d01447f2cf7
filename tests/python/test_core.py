"""prism's recording API (python/src/_prism.c): each recording runs in a
child interpreter and writes a real profile into a temporary directory,
which is then read back (prism.load, prism-top dump)."""
import ctypes  # noqa: F401  (the ctypes test's child imports it; fail early if absent)
import inspect
import os
import subprocess
import sys
import textwrap
import unittest

from pyutil import (B, SANITIZE, TempDirTest, clean_env, op_names, prism_top, run_py,
                    thread_paths)

import prism


def dump(path):
    return prism_top("dump", path).stdout.decode()


class Recording(TempDirTest):
    def test_regions_steps_marks_counters(self):
        out = self.path("a.cbor")
        run_py("""
            import prism
            assert prism.init(output=%r) is True
            assert prism.recording()
            for i in range(6):
                with prism.step():
                    with prism.region("forward"):
                        with prism.region("layer"):
                            prism.counter("loss", 0.25 * i)
                        prism.counter("tokens", 1000 + i)
                    with prism.region("backward"):
                        prism.mark("grads")
            prism.epoch(1)
            prism.step_begin()
            prism.step_end()
            assert prism.step_index() == 7, prism.step_index()
            prism.shutdown()
            assert not prism.recording()
        """ % out)
        p = prism.load(out)
        self.assertTrue(p.complete)
        self.assertEqual(p.steps["count"], 7)
        self.assertEqual([s["epoch"] for s in p.steps["series"]], [0] * 6 + [1])
        self.assertEqual(op_names(p), {"forward", "layer", "backward"})
        ops = {o["name"]: o for o in p.ops}
        self.assertEqual(ops["layer"]["calls"], 6)
        self.assertIn("forward/layer", thread_paths(p.tree)["MainThread"])
        d = dump(out)
        self.assertEqual(d.count(" grads\n"), 6)
        self.assertIn("tokens = 1005\n", d)
        self.assertIn("loss = 1.25\n", d)
        # the system readings (format 1.3): read at the start and the end
        sy = p.system
        self.assertGreaterEqual(sy["readings"], 2)
        self.assertGreater(sy["mem_total_bytes"], 0)
        self.assertGreater(sy["mem_peak_pct"], 0)
        self.assertGreaterEqual(sy["cpu_user_pct"], 0)
        self.assertIsNotNone(sy["io_write_bytes"])
        self.assertIsNone(sy["carbon_g"])
        sy = prism.load(out, carbon_intensity_g_per_kwh=400).system
        self.assertEqual(sy["carbon_g_per_kwh"], 400)
        if sy["energy_j"] is None:          # no RAPL here: unknown, never guessed
            self.assertIsNone(sy["carbon_g"])
        else:
            self.assertAlmostEqual(sy["carbon_g"], sy["energy_j"] / 3.6e6 * 400)
        with self.assertRaises(ValueError):
            prism.load(out, carbon_intensity_g_per_kwh=-1)

    def test_regions_made_before_init_record(self):
        out = self.path("a.cbor")
        run_py("""
            import prism
            early = prism.region("early")
            with early:                     # no session: not recorded
                pass
            assert early.id == 0
            prism.init(output=%r)
            assert prism.region("early") is early
            with early:
                pass
            assert early.id != 0
            prism.shutdown()
        """ % out)
        self.assertEqual(prism.load(out).ops[0]["calls"], 1)

    def test_threads_get_their_own_named_tracks(self):
        out = self.path("a.cbor")
        run_py("""
            import threading, prism
            prism.init(output=%r)
            def work(n):
                for _ in range(n):
                    with prism.region("load"):
                        with prism.region("decode"):
                            pass
            ts = [threading.Thread(target=work, args=(5,), name="loader-%%d" %% i)
                  for i in range(2)]
            for t in ts:
                t.start()
            with prism.region("train"):
                for t in ts:
                    t.join()
            def named():
                prism.thread_name("custom")
                with prism.region("x"):
                    pass
            t = threading.Thread(target=named, name="ignored")
            t.start(); t.join()
            prism.shutdown()
        """ % out)
        paths = thread_paths(prism.load(out).tree)
        self.assertEqual(paths["loader-0"], {"load", "load/decode"})
        self.assertEqual(paths["loader-1"], {"load", "load/decode"})
        self.assertEqual(paths["MainThread"], {"train"})
        self.assertEqual(paths["custom"], {"x"})
        self.assertNotIn("ignored", paths)

    def test_thread_unknown_to_threading_keeps_its_os_name(self):
        # a thread threading did not start (torch's autograd workers are
        # C++ threads; here _thread) gets no "Dummy-N" thread object in the
        # program's threading.enumerate(), and its track the OS name
        out = self.path("a.cbor")
        run_py("""
            import _thread, ctypes, threading, prism
            prism.init(output=%r)
            done = threading.Event()
            def worker():
                libc = ctypes.CDLL(None)
                libc.prctl(15, b"pt_worker_0", 0, 0, 0)     # PR_SET_NAME
                with prism.region("bw"):
                    pass
                done.set()
            before = len(threading.enumerate())
            _thread.start_new_thread(worker, ())
            done.wait()
            after = [t for t in threading.enumerate() if "Dummy" in type(t).__name__]
            assert not after, after
            prism.shutdown()
        """ % out)
        paths = thread_paths(prism.load(out).tree)
        self.assertEqual(paths.get("pt_worker_0"), {"bw"}, paths)

    def test_decorator_keeps_metadata_and_binds_methods(self):
        @prism.region("deco")
        def f(a, b=2):
            """the doc"""
            return a + b
        self.assertEqual(f.__name__, "f")
        self.assertEqual(f.__doc__, "the doc")
        self.assertEqual(f.__qualname__.split(".")[-1], "f")
        self.assertEqual(str(inspect.signature(f)), "(a, b=2)")
        self.assertEqual(f(1), 3)
        self.assertIs(f.region, prism.region("deco"))

        class K:
            @prism.region("method")
            def m(self, x):
                return (self, x)
        k = K()
        self.assertEqual(k.m(4), (k, 4))
        self.assertEqual(K.m(k, 5), (k, 5))

    def test_decorator_and_exceptions_end_regions(self):
        out = self.path("a.cbor")
        run_py("""
            import prism
            prism.init(output=%r)
            @prism.region("fails")
            def fails():
                with prism.region("inner"):
                    raise KeyError("x")
            for _ in range(3):
                try:
                    fails()
                except KeyError:
                    pass
                try:
                    with prism.region("boom"):
                        raise ValueError("y")
                except ValueError:
                    pass
                with prism.region("after"):
                    pass
            prism.shutdown()
        """ % out)
        paths = thread_paths(prism.load(out).tree)["MainThread"]
        self.assertEqual(paths, {"fails", "fails/inner", "boom", "after"})

    def test_exceptions_propagate(self):
        with self.assertRaises(ZeroDivisionError):
            with prism.region("x"):
                1 / 0
        self.assertFalse(prism.region("x").__exit__(None, None, None))

    def test_region_left_in_another_thread(self):
        out = self.path("a.cbor")
        run_py("""
            import threading, prism
            prism.init(output=%r)
            a = prism.region("a")
            a.__enter__()                       # entered here ...
            def other():
                with prism.region("t"):
                    a.__exit__(None, None, None)    # ... left there: ignored
                with prism.region("t2"):
                    pass
            th = threading.Thread(target=other, name="other")
            th.start(); th.join()
            with prism.region("b"):             # still inside a on this thread
                pass
            a.__exit__(None, None, None)        # ends a here
            with prism.region("c"):
                pass
            prism.shutdown()
        """ % out)
        paths = thread_paths(prism.load(out).tree)
        self.assertEqual(paths["other"], {"t", "t2"})
        self.assertEqual(paths["MainThread"], {"a", "a/b", "c"})

    def test_out_of_order_exit_ends_the_inner_ones(self):
        out = self.path("a.cbor")
        run_py("""
            import prism
            prism.init(output=%r)
            o, i = prism.region("outer"), prism.region("inner")
            o.__enter__(); i.__enter__()
            o.__exit__(None, None, None)        # ends inner and outer
            i.__exit__(None, None, None)        # nothing open: ignored
            with prism.region("next"):
                pass
            prism.shutdown()
        """ % out)
        self.assertEqual(thread_paths(prism.load(out).tree)["MainThread"],
                         {"outer", "outer/inner", "next"})

    def test_region_cache_and_bad_names(self):
        self.assertIs(prism.region("same"), prism.region("same"))
        self.assertIsInstance(prism.region("same"), prism.Region)
        self.assertEqual(prism.region("same").name, "same")
        with self.assertRaises(TypeError):
            prism.region(3)
        with self.assertRaises(ValueError):
            prism.region("nul\0name")
        with self.assertRaises(TypeError):
            prism.Region()
        with self.assertRaises(TypeError):
            prism.counter("c", "not a number")
        with self.assertRaises(TypeError):
            prism.mark(None)

    def test_calls_without_a_session_are_harmless(self):
        # this process never starts a session
        self.assertFalse(prism.recording())
        self.assertIsNone(prism.output_path())
        with prism.region("r"):
            with prism.step():
                prism.counter("c", 1)
                prism.counter("c", 1.5)
                prism.counter("big", 2 ** 70)
                with self.assertRaises(OverflowError):
                    prism.counter("huge", 10 ** 400)
                prism.mark("m")
        prism.step_begin()
        prism.step_end()
        prism.epoch(3)
        prism.thread_name("t")
        prism.gpu_memory(0, 1, 2)
        prism.gpu_memory(99, 1, 2)
        self.assertIsInstance(prism.step_index(), int)
        prism.shutdown()
        self.assertFalse(prism.recording())

    def test_integers_that_are_not_int(self):
        # numpy and torch integers are not int subclasses: they convert
        # through __index__, exactly, not through __float__
        out = self.path("a.cbor")
        run_py("""
            import prism

            class Idx:                      # what numpy.int64 looks like to C
                def __init__(self, v):
                    self.v = v
                def __index__(self):
                    return self.v
                def __float__(self):
                    return float(self.v)
            assert prism.init(output=%r, buffer_events=Idx(1024), sample_rate=Idx(1))
            prism.epoch(Idx(2))
            with prism.step():
                prism.counter("exact", Idx(2 ** 53 + 1))
                prism.counter("negative", Idx(-(2 ** 62) - 1))
                prism.gpu_memory(Idx(0), Idx(1 << 26), Idx(1 << 27))
            try:
                import numpy as np
            except ImportError:
                pass
            else:
                prism.epoch(np.uint64(3))
                with prism.step():
                    prism.counter("np_int", np.int64(2 ** 62 + 1))
                    prism.counter("np_float", np.float32(0.5))
            prism.shutdown()
        """ % out)
        d = dump(out)
        self.assertIn("exact = 9007199254740993\n", d)
        self.assertIn("negative = -4611686018427387905\n", d)
        if "np_int" in d:
            self.assertIn("np_int = 4611686018427387905\n", d)
            self.assertIn("np_float = 0.5\n", d)
        p = prism.load(out)
        self.assertEqual(p.steps["series"][0]["epoch"], 2)
        cfg = {c["key"]: c["value"] for c in p.header["config"]}
        self.assertEqual(cfg["buffer_events"], 1024)

    def test_untrusted_names_raise_value_error(self):
        # a NUL in any name, whether or not a session records
        for call in (prism.region, prism.mark, prism.thread_name,
                     lambda n: prism.counter(n, 1)):
            with self.subTest(call=call), self.assertRaises(ValueError):
                call("nul\0name")
        with self.assertRaises(TypeError):
            prism.region([1])
        with self.assertRaises(TypeError):
            prism.epoch(1.0)
        with self.assertRaises(ValueError):
            prism.epoch(-1)
        with self.assertRaises(ValueError):
            prism.gpu_memory(0, 2 ** 64, 0)

    def test_names_with_lone_surrogates_are_recorded_escaped(self):
        # os.listdir / sys.argv give a non-UTF-8 file name as a str with lone
        # surrogates (surrogateescape): a name made from one never raises into
        # the program; it is recorded with backslash escapes, said once
        out = self.path("s.cbor")
        p = run_py(r'''
            import prism
            prism.init(output=%r)
            for bad in ("img_\udcff.jpg", "a\ud800b"):
                with prism.step():
                    with prism.region(bad):
                        prism.mark(bad)
                        prism.counter(bad, 1)
            prism.thread_name("t\udcff")
            with prism.region("ok"):
                pass
            prism.shutdown()
            print("ran")
        ''' % out)
        self.assertIn("ran", p.stdout)
        said = [l for l in p.stderr.splitlines() if "not valid Unicode" in l]
        self.assertEqual(len(said), 1, p.stderr)
        names = op_names(prism.load(out))
        self.assertEqual(names, {"img_\\udcff.jpg", "a\\ud800b", "ok"})
        d = dump(out)
        self.assertIn("img_\\udcff.jpg = 1\n", d)
        # without a session: nothing raises either
        for call in (prism.region, prism.mark, prism.thread_name,
                     lambda n: prism.counter(n, 1)):
            with self.subTest(call=call):
                call("x\udcff")

    def test_recursive_decorator_and_generators(self):
        out = self.path("a.cbor")
        run_py("""
            import prism
            prism.init(output=%r)
            @prism.region("rec")
            def rec(n):
                return 0 if n == 0 else 1 + rec(n - 1)
            assert rec(200) == 200            # deeper than the 128 tracked
            def gen():
                with prism.region("gen"):
                    yield 1
                    yield 2
            g = gen()
            next(g)
            with prism.region("between"):
                assert next(g) == 2           # left out of order: ends "between"
            g.close()
            with prism.region("after"):
                pass
            prism.shutdown()
        """ % out)
        p = prism.load(out)
        ops = {o["name"]: o["calls"] for o in p.ops}
        self.assertEqual(ops["rec"], 201)
        self.assertEqual(thread_paths(p.tree)["MainThread"] - {"rec" + "/rec" * i
                                                               for i in range(201)},
                         {"gen", "gen/between", "after"})


class Configuration(TempDirTest):
    def test_names_with_nul_are_not_truncated(self):
        # "enabled\0x" is not the field enabled, "drop\0x" not the policy drop
        with self.assertRaises(TypeError):
            prism.init(**{"enabled\0x": False})
        with self.assertRaises(ValueError):
            prism.init(policy="drop\0x", enabled=False)
        with self.assertRaises(ValueError):
            prism.init(policy="\udcff", enabled=False)
        self.assertFalse(prism.recording())

    def test_numbers_that_are_not_int_or_float(self):
        class Idx:
            def __index__(self):
                return 64
        self.assertFalse(prism.init(enabled=False, buffer_events=Idx(), warmup_steps=Idx()))
        for kw in ({"buffer_events": 2.5j}, {"sample_rate": 1j}, {"buffer_events": True},
                   {"sample_rate": True}, {"buffer_mb": 1 << 80}, {"collect_memory": 1 << 80}):
            with self.subTest(kw=kw), self.assertRaises(ValueError):
                prism.init(enabled=False, **kw)
        self.assertFalse(prism.recording())

    def test_unknown_and_bad_values(self):
        # raised before any session starts (this process never records)
        with self.assertRaises(TypeError):
            prism.init(bogus=1)
        for kw in ({"sample_rate": 0}, {"sample_rate": 1.5}, {"sample_rate": "1"},
                   {"policy": "block"}, {"buffer_events": 10}, {"buffer_mb": -1},
                   {"enabled": "yes"}, {"memory_interval_ms": 0}, {"warmup_steps": 1.5},
                   {"output": ""}, {"bottleneck_threshold_pct": float("nan")}):
            with self.subTest(kw=kw), self.assertRaises(ValueError):
                prism.init(**kw)
        self.assertFalse(prism.recording())

    def test_kwargs_over_environment_over_defaults(self):
        out = self.path("a.cbor")
        run_py("""
            import prism
            assert prism.init(output=%r, sample_rate=0.5, policy="wait", buffer_events=1024)
        """ % out, env=clean_env(PRISM_SAMPLE_RATE="0.25", PRISM_ADAPTIVE_STEPS="3",
                                 PRISM_FLUSH_INTERVAL_MS="50"))
        cfg = {c["key"]: c["value"] for c in prism.load(out).header["config"]}
        self.assertEqual(cfg["sample_rate"], 0.5)           # keyword
        self.assertEqual(cfg["policy"], "wait")
        self.assertEqual(cfg["buffer_events"], 1024)
        self.assertEqual(cfg["adaptive_steps"], 3)          # environment
        self.assertEqual(cfg["flush_interval_ms"], 50)
        self.assertEqual(cfg["memory_interval_ms"], 100)    # default

    def test_environment_starts_the_session_at_import(self):
        out = self.path("env.cbor")
        other = self.path("other.cbor")
        run_py("""
            import prism
            assert prism.recording()
            assert prism.init(output=%r) is True     # a no-op
            assert prism.output_path() == %r, prism.output_path()
            with prism.region("r"):
                pass
        """ % (other, out), env=clean_env(PRISM_OUTPUT=out))
        self.assertFalse(os.path.exists(other))
        self.assertEqual(op_names(prism.load(out)), {"r"})

    def test_disabled_and_after_shutdown(self):
        out = self.path("a.cbor")
        run_py("""
            import prism
            assert prism.init(output=%r, enabled=False) is False
            assert not prism.recording()
        """ % out)
        self.assertFalse(os.path.exists(out))
        p = run_py("""
            import prism
            assert prism.init(output=%r)
            prism.shutdown()
            assert prism.init(output=%r) is False   # one session per process
        """ % (out, self.path("b.cbor")))
        self.assertIn("one session per process", p.stderr)
        self.assertTrue(os.path.exists(out))
        self.assertFalse(os.path.exists(self.path("b.cbor")))

    def test_output_path_pattern(self):
        run_py("""
            import os, prism
            assert prism.init(output="run-%%p.cbor", output_dir=%r)
            assert prism.output_path() == os.path.join(%r, "run-%%d.cbor" %% os.getpid())
        """ % (self.tmp, self.tmp))
        self.assertEqual(len([f for f in os.listdir(self.tmp) if f.startswith("run-")]), 1)


class Fork(TempDirTest):
    def test_forked_child_does_not_write_into_the_parent_file(self):
        out = self.path("a.cbor")
        run_py("""
            import os, prism
            prism.init(output=%r)
            with prism.region("before"):
                pass
            pid = os.fork()
            if pid == 0:
                ok = not prism.recording()
                for _ in range(1000):
                    with prism.region("child_only"):
                        prism.mark("child_mark")
                prism.shutdown()
                os._exit(0 if ok else 3)
            _, st = os.waitpid(pid, 0)
            assert os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, st
            with prism.region("after"):
                pass
            prism.shutdown()
        """ % out)
        p = prism.load(out)
        self.assertTrue(p.complete)
        self.assertEqual(op_names(p), {"before", "after"})
        names = [l for l in dump(out).splitlines() if l.startswith(("string ", "mark "))]
        self.assertFalse([l for l in names if "child_" in l], names)
        self.assertEqual(p.reader["damaged_runs"], 0)


class SpawnedChildren(TempDirTest):
    """A spawned worker (multiprocessing 'spawn', a subprocess) inherits
    PRISM_OUTPUT and imports prism, which starts a session from it: it must
    write its own file (the pid before the extension), never truncate the
    parent's."""

    def test_spawned_worker_writes_its_own_file(self):
        script = self.path("job.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent("""
                import multiprocessing as mp, os, subprocess, sys
                import prism

                def work(n):
                    with prism.region("in_worker"):
                        return n * 2, os.getpid(), prism.output_path()

                if __name__ == "__main__":
                    assert prism.recording()
                    with prism.region("parent_before"):
                        pass
                    ctx = mp.get_context("spawn")
                    with ctx.Pool(1) as pool:
                        r, wpid, wout = pool.apply(work, (21,))
                    assert r == 42 and wpid != os.getpid()
                    sub = subprocess.run([sys.executable, "-c",
                                          "import prism; print(prism.output_path())"],
                                         capture_output=True, text=True, check=True)
                    with prism.region("parent_after"):
                        pass
                    print(wout)
                    print(sub.stdout.strip())
            """))
        out = self.path("run.cbor")
        p = subprocess.run([sys.executable, script], env=clean_env(PRISM_OUTPUT=out),
                           capture_output=True, text=True, timeout=300, cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        worker_out, sub_out = p.stdout.split()
        for child in (worker_out, sub_out):
            self.assertNotEqual(child, out)
            self.assertRegex(os.path.basename(child), r"^run\.[0-9]+\.cbor$")
            self.assertTrue(os.path.exists(child), child)
        parent = prism.load(out)
        self.assertTrue(parent.complete)
        self.assertEqual(parent.reader["damaged_runs"], 0)
        self.assertEqual(op_names(parent), {"parent_before", "parent_after"})
        self.assertIn("in_worker", op_names(prism.load(worker_out)))


class GpuMemory(TempDirTest):
    def test_reported_gpu_memory_in_samples_and_leak_fit(self):
        out = self.path("a.cbor")
        run_py("""
            import time, prism
            prism.init(output=%r, collect_gpu_ops=False)
            for i in range(40):
                with prism.step():
                    with prism.region("work"):
                        # a step's work: longer than the writer's 5 ms poll
                        # for ended steps, so most steps get their sample
                        time.sleep(0.006)
                    # 64 MiB more every step, reserved double that
                    prism.gpu_memory(0, (i + 1) << 26, (i + 1) << 27)
                    prism.gpu_memory(16, 1, 1)     # past the table: ignored
            prism.shutdown()
        """ % out)
        p = prism.load(out)
        self.assertTrue(p.memory["have_gpu"])
        self.assertEqual(p.memory["peak_gpu_used_bytes"], 40 << 26)
        self.assertEqual(p.memory["peak_gpu_reserved_bytes"], 40 << 27)
        ms = p.memory_series
        used = [int(u) for u in ms["gpu_used_bytes"] if u]
        self.assertTrue(used)
        self.assertTrue(all(u % (1 << 26) == 0 and u <= 40 << 26 for u in used))
        self.assertTrue(all(int(r) == 2 * int(u)
                            for u, r in zip(ms["gpu_used_bytes"], ms["gpu_reserved_bytes"])))
        gpu = p.leak["gpu"]
        self.assertTrue(gpu["have_fit"])
        self.assertGreaterEqual(gpu["points"], 4)
        self.assertAlmostEqual(gpu["slope_mb_per_step"], 64.0, delta=4.0)
        self.assertTrue(gpu["leak"])
        d = dump(out)
        self.assertIn(" gpu0 used ", d)
        self.assertNotIn(" gpu1", d)


class CtypesLibprism(TempDirTest):
    @unittest.skipUnless(os.path.exists(os.path.join(B, "lib", "libprism.so")), "no libprism.so")
    def test_ctypes_calls_the_real_symbols(self):
        lib = os.path.join(B, "lib", "libprism.so")
        run_py("""
            import ctypes
            lib = ctypes.CDLL(%r)
            lib.prism_name.restype = ctypes.c_uint32
            lib.prism_name.argtypes = [ctypes.c_char_p]
            lib.prism_push_id.argtypes = [ctypes.c_uint32]
            assert lib.prism_init(None) == 0
            rid = lib.prism_name(b"from_ctypes")
            assert rid != 0
            for _ in range(3):
                lib.prism_push_id(rid)
                lib.prism_pop()
            lib.prism_shutdown()
        """ % lib, env=clean_env(PRISM_OUTPUT_DIR=self.tmp), cwd=self.tmp)
        files = [f for f in os.listdir(self.tmp) if f.endswith(".cbor")]
        self.assertEqual(len(files), 1)
        p = prism.load(os.path.join(self.tmp, files[0]))
        self.assertEqual([(o["name"], o["calls"]) for o in p.ops], [("from_ctypes", 3)])


if __name__ == "__main__":
    unittest.main()
