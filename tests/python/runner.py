"""Run one tests/python/test_*.py file with unittest, printing cmocka-style
lines per test, then one machine-readable line for tests/python/run.sh:
"RESULT <passed> <failed> <skipped>" (skipped tests count as passed there)
and "FAILED-TEST <name>" per failure.  Usage: runner.py FILE."""
import importlib.util
import os
import sys
import time
import traceback
import unittest


class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.ok = 0
        self.skips = 0
        self.bad = []
        self.t0 = 0.0

    @staticmethod
    def _name(test):
        return test.id().split(".", 1)[-1] if "." in test.id() else test.id()

    def startTest(self, test):
        super().startTest(test)
        self.t0 = time.monotonic()
        print("[ RUN      ] %s" % self._name(test), flush=True)

    def addSuccess(self, test):
        self.ok += 1
        print("[       OK ] %s (%.1f s)" % (self._name(test), time.monotonic() - self.t0),
              flush=True)

    def addSkip(self, test, reason):
        self.skips += 1
        print("[  SKIPPED ] %s: %s" % (self._name(test), reason), flush=True)

    def _fail(self, test, err):
        print("".join(traceback.format_exception(*err)).rstrip(), flush=True)
        print("[  FAILED  ] %s" % self._name(test), flush=True)
        self.bad.append(self._name(test))

    def addFailure(self, test, err):
        self._fail(test, err)

    def addError(self, test, err):
        self._fail(test, err)

    def addExpectedFailure(self, test, err):
        self.ok += 1

    def addUnexpectedSuccess(self, test):
        self.bad.append(self._name(test) + " (unexpected success)")
        print("[  FAILED  ] %s: unexpected success" % self._name(test), flush=True)

    def addSubTest(self, test, subtest, err):
        if err is not None:
            self._fail(subtest, err)


def main(path):
    base = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    res = Result()
    try:
        spec = importlib.util.spec_from_file_location(base, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[base] = mod
        spec.loader.exec_module(mod)
        suite = unittest.TestLoader().loadTestsFromModule(mod)
    except Exception:  # a broken test file is one failure
        traceback.print_exc()
        print("[  FAILED  ] %s (cannot load)" % base)
        print("RESULT 0 1 0")
        print("FAILED-TEST %s" % base)
        return 1
    suite.run(res)
    print("RESULT %d %d %d" % (res.ok + res.skips, len(res.bad), res.skips))
    for b in res.bad:
        print("FAILED-TEST %s::%s" % (base, b))
    return 1 if res.bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
