"""test_trace_hostile.py - damaged and hostile JSON through the importer.

Every input either opens (exit 0: what it holds, anomalies counted, a
cut-off file `complete` false) or is refused with exit 2 and one line on
stderr naming the file and a byte offset ("FILE: what is wrong at byte
N"); never a signal, a sanitizer report, a hang (each run has a time
limit) or memory out of proportion to the input (the child's own peak RSS
under 4 x the input's size + 64 MB; not checked under the sanitizers).

Inputs: a real trace (torch 1.13's, made by trace_loop.py, when torch is
installed) and the Kineto fixture basic.json cut at every 1 % of their
length, plain and gzipped; not JSON; JSON of the wrong shape; 100 000
nested `[`; a 100 MB string (as a name and in args), a 10 MB key, a 10 MB
number; NaN / Infinity, negative and huge numbers; control characters and
invalid UTF-8 in names; corrupt and truncated gzip; a gzip bomb of
whitespace (256 MB inflated from a few hundred KB)."""
import gzip
import json
import os
import re
import subprocess
import sys
import unittest
import zlib

import pyutil
from pyutil import SANITIZE, TempDirTest
import traceutil as tu

LOOP = os.path.join(tu.HERE, "trace_loop.py")
BASIC = os.path.join(tu.FIXTURES, "basic.json")
TIMEOUT = 120 if SANITIZE else 30

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


class HostileTest(TempDirTest):

    def write(self, name, data):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return p

    def judge(self, path, allow_ok=True, allow_error=True, timeout=TIMEOUT):
        """Run analyze on path; check what every run must satisfy.
        Returns (run, analysis or None, error offset or None)."""
        r = tu.run_top("analyze", path, "--format", "json", timeout=timeout)
        what = "%s (%d bytes): %r" % (os.path.basename(path), os.path.getsize(path), r)
        self.assertFalse(r.timed_out, "hang: " + what)
        self.assertGreaterEqual(r.rc, 0, "killed by signal %d: %s" % (-r.rc, what))
        self.assertNotRegex(r.stderr, r"AddressSanitizer|LeakSanitizer|runtime error:", what)
        self.assertIn(r.rc, (0, 2), what)
        limit = tu.rss_limit(os.path.getsize(path))
        if limit is not None:
            self.assertLess(r.maxrss, limit, "peak RSS %d MB: %s" % (r.maxrss >> 20, what))
        if r.rc == 0:
            self.assertTrue(allow_ok, "opened, expected a refusal: " + what)
            return r, json.loads(r.stdout), None
        self.assertTrue(allow_error, "refused, expected to open: " + what)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, "not one line: " + what)
        self.assertIn(path, lines[0], what)
        m = re.search(r"\bbyte (\d+)\b", lines[0])
        self.assertTrue(m, "no byte offset: " + what)
        off = int(m.group(1))
        if "decompressed" not in lines[0]:      # else an offset in the inflated bytes
            self.assertLessEqual(off, os.path.getsize(path), what)
        return r, None, off

    def refused(self, path, lo=None, hi=None):
        _, _, off = self.judge(path, allow_ok=False)
        if lo is not None:
            self.assertGreaterEqual(off, lo, path)
        if hi is not None:
            self.assertLessEqual(off, hi, path)
        return off

    # ---- a trace cut off --------------------------------------------------

    def cuts(self, data, name, gz=False, step=1):
        """data cut at every `step` %: each opens incomplete or is refused;
        what opens never holds fewer events than a shorter cut."""
        last_events, opened = -1, 0
        for pct in range(step, 100, step):
            n = len(data) * pct // 100
            p = self.write("%s.%02d%s" % (name, pct, ".gz" if gz else ""), data[:n])
            r, d, off = self.judge(p)
            if d is not None:
                opened += 1
                self.assertFalse(d["complete"], "cut at %d %% reads as complete" % pct)
                ev = d["summary"]["events"]
                self.assertGreaterEqual(ev, last_events, "cut at %d %%: fewer events" % pct)
                last_events = ev
            os.unlink(p)
        return opened

    def test_truncated_fixture(self):
        with open(BASIC, "rb") as f:
            data = f.read()
        self.assertGreater(self.cuts(data, "basic.json"), 90)  # a cut file opens
        gz = zlib.compressobj(6, zlib.DEFLATED, 31)
        z = gz.compress(data) + gz.flush()
        self.cuts(z, "basic.json", gz=True, step=5)

    @unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed for %s" % sys.executable)
    def test_truncated_real_trace(self):
        out = self.path("real.json")
        env = pyutil.clean_env()
        for k in ("LD_PRELOAD", "ASAN_OPTIONS", "PYTHONPATH"):
            env.pop(k, None)
        subprocess.run([sys.executable, LOOP, "torch", "-o", out, "--heavy", "3000"],
                       env=env, check=True, capture_output=True, timeout=300)
        with open(out, "rb") as f:
            data = f.read()
        _, d, _ = self.judge(out, allow_error=False)
        self.assertTrue(d["complete"])
        self.assertGreater(self.cuts(data, "real.json"), 90)

    # ---- not JSON, wrong shapes --------------------------------------------

    def test_not_json(self):
        self.refused(self.write("a.json", "{this is not json}"), 0, 2)
        self.refused(self.write("b.json", "[1, 2, 3,, 4]"), 7, 10)
        self.refused(self.write("c.json", b"[\xff\xfe\x00garbage"), 0, 4)
        self.refused(self.write("d.json", "[{\"ph\": \"X\"} {\"ph\": \"X\"}]"), 10, 15)
        self.refused(self.write("e.json", "{\"traceEvents\": [}"), 15, 19)
        self.refused(self.write("f.json", "\"a string\""), 0, 0)     # not a trace: CBOR's error
        self.refused(self.write("g.json", ""), 0, 0)
        for name, text in [("h.json", "   \n\t  "), ("i.json", "["), ("j.json", "{"),
                           ("k.json", "[{\"name\": \"a\", \"ph\": \"X\", \"ts\": 1, "
                                      "\"dur\": 1, \"pid\": 1, \"tid\": 1}] trailing")]:
            self.judge(self.write(name, text))

    def test_wrong_shape(self):
        for i, text in enumerate([
                "{}", "[]", "[[]]", "[1, 2, 3]", "{\"traceEvents\": 5}",
                "{\"traceEvents\": {\"a\": 1}}",
                "{\"traceEvents\": [1, \"x\", null, [], {}, true]}",
                "[{\"ph\": \"X\", \"name\": {\"a\": 1}, \"ts\": [1], \"dur\": \"10\", "
                "\"pid\": {}, \"tid\": []}]",
                "[{\"ph\": 7, \"name\": 7, \"ts\": \"1\", \"dur\": null, \"pid\": 1.5, "
                "\"tid\": -0.0, \"cat\": 3, \"args\": 9}]",
                "{\"traceEvents\": [], \"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", "
                "\"ts\": 1, \"dur\": 1, \"pid\": 1, \"tid\": 1}]}",
                "{\"deviceProperties\": 1, \"distributedInfo\": [], \"baseTimeNanoseconds\": "
                "\"x\", \"traceEvents\": []}",
                "{\"distributedInfo\": {\"rank\": -7, \"world_size\": 1e30}, "
                "\"baseTimeNanoseconds\": -1, \"traceEvents\": []}",
                "[{\"ph\": \"i\", \"name\": \"[memory]\", \"s\": \"t\", \"pid\": 1, \"tid\": 1, "
                "\"ts\": 1, \"args\": {\"Total Allocated\": -5, \"Total Reserved\": 1e300, "
                "\"Bytes\": \"x\", \"Device Id\": 99999999999, \"Device Type\": -1}}]",
                "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
                "\"tid\": 7, \"ts\": 1, \"dur\": 1, \"args\": {\"device\": -1, "
                "\"stream\": 1e20, \"correlation\": -3, \"grid\": [1e30, -1], "
                "\"block\": \"x\", \"bytes\": -1}}]",
                "[{\"ph\": \"f\", \"id\": 1, \"pid\": 0, \"tid\": 7, \"ts\": 1, \"cat\": "
                "\"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}, {\"ph\": \"s\", \"id\": 1, "
                "\"pid\": 0, \"tid\": 7, \"ts\": 1, \"cat\": \"ac2g\", \"name\": \"ac2g\"}]"]):
            self.judge(self.write("shape%02d.json" % i, text))

    def test_deep_nesting(self):
        for name, text in [("deep1.json", "[" * 100000),
                           ("deep2.json", "{\"a\":" * 100000),
                           ("deep3.json", "{\"traceEvents\": [{\"ph\": \"X\", \"args\": "
                                          + "[" * 100000 + "]" * 100000 + "}]}"),
                           ("deep4.json", "[" * 100000 + "]" * 100000)]:
            p = self.write(name, text)
            r, d, off = self.judge(p)
            if off is not None:
                self.assertLess(off, 100000, "the depth limit should stop it early")

    # ---- big tokens ----------------------------------------------------------

    def event(self, name="a", **kw):
        e = {"ph": "X", "name": name, "ts": 1, "dur": 1, "pid": 1, "tid": 1}
        e.update(kw)
        return e

    def test_huge_string(self):
        big = "A" * (100 << 20)
        p = self.write("name.json", json.dumps({"traceEvents": [self.event(big),
                                                                  self.event("b", ts=5)]}))
        r, d, off = self.judge(p)
        if d is not None:
            longest = max(len(o["name"]) for o in d["ops"])
            self.assertLess(longest, 1 << 20, "a 100 MB name kept whole")
        p = self.write("args.json", json.dumps([self.event(args={"Input Dims": big}),
                                                self.event("b", ts=5)]))
        r, d, off = self.judge(p)
        if d is not None:
            self.assertIn("b", {o["name"] for o in d["ops"]})
        os.unlink(p)
        p = self.write("key.json", "[{\"%s\": 1, \"ph\": \"X\", \"name\": \"a\", \"ts\": 1, "
                                   "\"dur\": 1, \"pid\": 1, \"tid\": 1}]" % ("k" * (10 << 20)))
        self.judge(p)
        p = self.write("number.json", "[{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1%s, "
                                      "\"dur\": 1, \"pid\": 1, \"tid\": 1}]" % ("0" * (10 << 20)))
        self.judge(p)

    def test_numbers(self):
        for i, (ts, dur, pid, tid) in enumerate([
                ("NaN", "1", "1", "1"), ("1", "Infinity", "1", "1"), ("-Infinity", "1", "1", "1"),
                ("-5", "-1", "-1", "-2"), ("1e308", "1e300", "1", "1"),
                ("1.7976931348623157e308", "1.7976931348623157e308", "1", "1"),
                ("-1e308", "1", "1", "1"), ("1e-320", "1e-320", "1", "1"),
                ("99999999999999999999999", "1", "99999999999999999999", "1"),
                ("9223372036854775807", "9223372036854775807", "1", "1"),
                ("-9223372036854775808", "9223372036854775807", "-9223372036854775808", "1"),
                ("1", "1000000000000000000", "1", "1"),
                ("0.0000001", "0.0000001", "1e20", "-1e20"), ("1e999", "1", "1", "1")]):
            text = ("[{\"ph\": \"X\", \"name\": \"ok\", \"ts\": 0, \"dur\": 10, \"pid\": 1, "
                    "\"tid\": 1}, {\"ph\": \"X\", \"name\": \"n\", \"ts\": %s, \"dur\": %s, "
                    "\"pid\": %s, \"tid\": %s}]" % (ts, dur, pid, tid))
            self.judge(self.write("num%02d.json" % i, text))
        # a negative duration among good events: opens, counted
        p = self.write("neg.json", json.dumps({"traceEvents": [
            self.event("good", ts=0, dur=10), self.event("bad", ts=20, dur=-5)]}))
        r, d, off = self.judge(p, allow_error=False)
        self.assertIn("good", {o["name"] for o in d["ops"]})
        a = tu.anomalies(tu.dump(p))
        self.assertGreaterEqual(tu.counted(a, "negative", "dur"), 1, a)

    def test_names(self):
        """Control characters, NUL, invalid UTF-8 and escapes in names."""
        evs = [self.event("tab\there", ts=0), self.event("nul\u0000inside", ts=10),
               self.event("\ud800 lone surrogate", ts=20), self.event("\u00e9t\u00e9", ts=30),
               self.event("", ts=40)]
        p = self.write("names.json", json.dumps(evs))
        self.judge(p)
        raw = b'[{"ph": "X", "name": "bad \xc3\x28 utf8 \xff", "ts": 1, "dur": 1, ' \
              b'"pid": 1, "tid": 1}]'
        self.judge(self.write("utf8.json", raw))

    # ---- gzip ------------------------------------------------------------------

    def test_corrupt_gz(self):
        with open(BASIC, "rb") as f:
            data = f.read()
        z = gzip.compress(data)
        self.judge(self.write("magic.json.gz", b"\x1f\x8b" + os.urandom(0) + b"garbage" * 100))
        mid = bytearray(z)
        for i in range(len(mid) // 3, len(mid) // 3 + 64):
            mid[i] ^= 0x5A
        self.judge(self.write("flipped.json.gz", bytes(mid)))
        self.judge(self.write("crc.json.gz", z[:-8] + b"\0" * 8))      # bad CRC and size
        self.judge(self.write("two.json.gz", z + z))                   # two members
        self.judge(self.write("tail.json.gz", z + b"trailing junk"))
        self.judge(self.write("header.json.gz", z[:5]))
        self.refused(self.write("notjson.gz", gzip.compress(b"hello, not a trace")))
        self.refused(self.write("magic2.gz", b"\x1f\x8b"))

    def test_gzip_bomb(self):
        """256 MB of whitespace in an array, inflated from a small file:
        streamed, so memory stays at the small file's bound."""
        c = zlib.compressobj(9, zlib.DEFLATED, 31)
        parts = [c.compress(b"[")]
        block = b" " * (1 << 20)
        for _ in range(256):
            parts.append(c.compress(block))
        parts.append(c.compress(json.dumps(self.event("after_the_blanks")).encode() + b"]"))
        parts.append(c.flush())
        p = self.write("bomb.json.gz", b"".join(parts))
        self.assertLess(os.path.getsize(p), 1 << 20)
        r, d, off = self.judge(p, timeout=TIMEOUT * 4)
        if d is not None:
            self.assertIn("after_the_blanks", {o["name"] for o in d["ops"]})


if __name__ == "__main__":
    unittest.main()
