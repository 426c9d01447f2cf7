"""A Python program never waits on a profile's reader that stopped reading
(issue 32, item 1): prism.init(output=FIFO) whose reader holds the FIFO
open and never reads.  The program ends with its own status after one
warning (its exit bounded by PRISM_SHUTDOWN_TIMEOUT_MS), and a SIGTERM
while the writer waits ends it by that signal.  The child's timeout is the
guard: a program that hangs fails the test.  prism.load of a FIFO with no
writer ends at once (issue 32, item 10)."""
import fcntl
import os
import signal
import subprocess
import sys
import textwrap
import unittest

from pyutil import TempDirTest, clean_env

F_SETPIPE_SZ = 1031

SCRIPT = textwrap.dedent("""
    import sys, prism
    assert prism.init(output=sys.argv[1]) is True
    for i in range(40000):              # far beyond the FIFO's 4 KiB
        with prism.region("work"):
            pass
    print("ready", flush=True)
    if sys.argv[2] == "wait":
        sys.stdin.read()                # until the test has sent its signal
    sys.exit(5)
""")


class StalledReader(TempDirTest):
    def fifo(self):
        path = self.path("p.fifo")
        os.mkfifo(path)
        rd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.addCleanup(os.close, rd)
        try:
            fcntl.fcntl(rd, F_SETPIPE_SZ, 4096)
        except OSError:
            pass
        return path

    def test_exit_with_own_status(self):
        p = subprocess.run([sys.executable, "-c", SCRIPT, self.fifo(), "exit"],
                           env=clean_env(PRISM_SHUTDOWN_TIMEOUT_MS=300), capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 5, p.stderr)
        warnings = [l for l in p.stderr.splitlines() if l.startswith("prism: warning:")]
        self.assertEqual(len(warnings), 1, p.stderr)
        self.assertIn("stopped reading", warnings[0])

    def test_sigterm_not_lost(self):
        # a grace of a minute: a lost signal would be a hang, not a pass
        child = subprocess.Popen([sys.executable, "-c", SCRIPT, self.fifo(), "wait"],
                                 env=clean_env(PRISM_SHUTDOWN_TIMEOUT_MS=60000),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            self.assertEqual(child.stdout.readline().strip(), "ready")
            child.send_signal(signal.SIGTERM)
            _, err = child.communicate(timeout=120)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        self.assertEqual(child.returncode, -signal.SIGTERM, err)


class NoWriter(TempDirTest):
    def test_load_fifo_without_writer(self):
        # it blocked open(2) for good: now the end of the file at once
        path = self.path("nobody.fifo")
        os.mkfifo(path)
        p = subprocess.run([sys.executable, "-c", textwrap.dedent("""
            import sys, prism
            try:
                prism.load(sys.argv[1])
            except Exception as e:
                print("error:", e)
            """), path], env=clean_env(), capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("empty file", p.stdout)


if __name__ == "__main__":
    unittest.main()
