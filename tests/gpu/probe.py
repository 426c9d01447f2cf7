#!/usr/bin/env python3
"""probe.py - run_gpu_checks.sh's facts about Python, torch and CUPTI.

Prints one JSON line: the interpreter and its headers, torch and its CUDA,
the libcupti / libcuda files mapped after `import torch` and after CUDA is
initialised, and whether a second CUPTI subscriber is refused (39:
CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: torch's own copy already has
one).  Standard library and torch only.
"""
import ctypes
import json
import os
import sys
import sysconfig


def maps(pat):
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if pat in line and "/" in line})


def main():
    r = {"python": sys.version.split()[0], "exe": sys.executable}
    inc = sysconfig.get_path("include")
    r["python_h"] = os.path.exists(os.path.join(inc, "Python.h"))
    r["site"] = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    r["wheel_cupti"] = [os.path.join(p, q) for p in r["site"]
                        for q in ("nvidia/cu13/lib/libcupti.so.13",
                                  "nvidia/cuda_cupti/lib/libcupti.so.12")
                        if os.path.exists(os.path.join(p, q))]
    try:
        import torch
    except Exception as e:      # noqa: BLE001
        r["torch"] = "cannot import: %s" % e
        print(json.dumps(r))
        return 0
    r["torch"] = torch.__version__
    r["torch_cuda"] = torch.version.cuda
    r["cupti_after_import"] = maps("libcupti")
    r["cuda_available"] = torch.cuda.is_available()
    if r["cuda_available"]:
        torch.zeros(1, device="cuda")
        r["gpu"] = torch.cuda.get_device_name(0)
        r["cupti_after_cuda"] = maps("libcupti")
        if r["cupti_after_cuda"]:
            lib = ctypes.CDLL(r["cupti_after_cuda"][0])
            cbt = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint,
                                   ctypes.c_void_p)
            cb = cbt(lambda *a: None)
            sub = ctypes.c_void_p()
            rc = lib.cuptiSubscribe(ctypes.byref(sub), cb, None)
            r["cuptiSubscribe_rc"] = rc
            if rc == 0:
                lib.cuptiUnsubscribe(sub)
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
