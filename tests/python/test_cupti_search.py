"""The Python module's hand-off of sys.path to libcollect's libcupti search
(python/src/_prism.c cupti_dirs_from_sys_path -> prism__cupti_search_dirs,
libcollect/cupti_where.c; issue 27, defect 8): pip's CUDA wheels put
libcupti under site-packages/nvidia/cu13/lib (nvidia-cuda-cupti 13.x) or
nvidia/cuda_cupti/lib (nvidia-cuda-cupti-cu12), folders only the
interpreter knows.

Each case builds fake site-packages trees holding a real shared object
(the CUPTI double, tests/cupti_double.c, copied under the wheel's file
name), "loads the CUDA driver" (a copy of the double named libcuda.so.1)
so that CUPTI attaches at prism.init, and reads which file was opened from
the profile's gpu.status.  The C test of the search order itself is
tests/cupti_where_test.c."""
import os
import shutil
import unittest

from pyutil import B, TempDirTest, clean_env, prism_top, run_py

DOUBLE = os.path.join(B, "tests", "libcupti_double.so")

CU13 = "nvidia/cu13/lib/libcupti.so.13"
CU12 = "nvidia/cuda_cupti/lib/libcupti.so.12"


@unittest.skipUnless(os.path.exists(DOUBLE),
                     "no CUPTI double (built only with the CUPTI headers)")
class SysPathHandOff(TempDirTest):
    def wheel(self, site, layout):
        """site/layout, a copy of the double; its full path."""
        f = self.path(os.path.join(site, layout))
        os.makedirs(os.path.dirname(f), exist_ok=True)
        shutil.copy(DOUBLE, f)
        return f

    def status(self, before_import, after_import=""):
        """gpu.status of a child that loads the driver, runs before_import,
        imports prism, runs after_import, then init/shutdown."""
        cuda = self.path("cuda/libcuda.so.1")
        if not os.path.exists(cuda):
            os.makedirs(os.path.dirname(cuda))
            shutil.copy(DOUBLE, cuda)
        out = self.path("a.cbor")
        env = clean_env()
        for v in ("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "NVTX_INJECTION64_PATH"):
            env.pop(v, None)
        run_py("import ctypes, sys\nctypes.CDLL(%r)\n%s\nimport prism\n%s\n"
               "prism.init(output=%r)\nprism.shutdown()\n"
               % (cuda, before_import, after_import, out), env=env)
        lines = [l for l in prism_top("dump", out).stdout.decode().splitlines()
                 if "gpu.status" in l]
        self.assertTrue(lines, "no gpu.status")
        self.assertIn("ok: CUPTI", lines[0])
        return lines[0]

    def test_cu13_wheel(self):
        # a pip wheel's libcupti on a folder only sys.path names
        f = self.wheel("site", CU13)
        self.assertIn(f, self.status("sys.path.insert(0, %r)" % self.path("site")))

    def test_cuda_cupti_cu12_wheel(self):
        f = self.wheel("site", CU12)
        self.assertIn(f, self.status("sys.path.insert(0, %r)" % self.path("site")))

    def test_first_site_on_sys_path_wins(self):
        # sys.path's order, not the layouts': the first site holding one
        a = self.wheel("a", CU12)
        b = self.wheel("b", CU13)
        st = self.status("sys.path[:0] = [%r, %r]" % (self.path("a"), self.path("b")))
        self.assertIn(a, st)
        st = self.status("sys.path[:0] = [%r, %r]" % (self.path("b"), self.path("a")))
        self.assertIn(b, st)

    def test_entries_that_cannot_be_handed_are_skipped(self):
        # the list libcollect keeps is ':'-separated: an entry with ':' in
        # it is left out (handed whole, "x" would be searched and found);
        # entries that are not str (bytes, a number) are ignored, as
        # Python's import system ignores them; the next one is used
        self.wheel("x", CU13)
        self.wheel("bytes", CU13)
        os.makedirs(self.path("x:y"))
        good = self.wheel("good", CU12)
        st = self.status("sys.path[:0] = [%r, %r, 42, %r]"
                         % (self.path("x:y"), os.fsencode(self.path("bytes")),
                            self.path("good")))
        self.assertIn(good, st)

    def test_sys_path_as_at_init(self):
        # the hand-off reads sys.path at prism.init, not at import
        f = self.wheel("late", CU13)
        self.assertIn(f, self.status("", "sys.path.insert(0, %r)" % self.path("late")))


if __name__ == "__main__":
    unittest.main()
