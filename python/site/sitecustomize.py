"""PRISM's sitecustomize: profiles a Python program started by prism-run.

prism-run puts this file's directory (and the one holding the prism package)
in front of PYTHONPATH when the program it runs is a Python interpreter or a
Python script, and sets PRISM_RUN_PID.  At interpreter start-up this:

  - starts the session from the PRISM_* environment (importing prism starts
    it); a child interpreter (its pid is not PRISM_RUN_PID) with an output
    pattern without %p writes its own file, train.cbor -> train.<pid>.cbor
    (libcollect does that, for every process of the run);
  - instruments PyTorch automatically (prism.torch.auto(), when the program
    imports torch; torch is never imported here);
  - at exit prints one line on stderr: where the profile went, or why none;
  - then runs the sitecustomize it shadows (Debian has one), if any.

It never breaks the program: any failure is one line on stderr, and the
program runs unprofiled.
"""


def _prism_start():
    import os
    root = os.environ.get("PRISM_RUN_PID")
    if not root or os.environ.get("PRISM_PY_DISABLE") == "1":
        return
    pid = os.getpid()
    # the session starts from the environment as prism loads; a child
    # interpreter gets its own file from libcollect (session.c, own_output)
    import prism
    started = prism.init()
    prism._prism_site_active = True      # python -m prism leaves the last line to us
    import atexit
    from prism import _run
    _run.session_started()

    def done():
        if os.getpid() == pid:           # not in a forked child that exits normally
            _run.finish_line(prism, started)
    atexit.register(done)
    if started and os.environ.get("PRISM_PY_TORCH", "1") != "0":
        depth = os.environ.get("PRISM_PY_DEPTH")
        _run.auto_torch(int(depth) if depth else None, False)


try:
    _prism_start()
except Exception as _e:                  # the program runs unprofiled
    try:
        import sys as _sys
        _sys.stderr.write("prism: not profiling this Python program: %s: %s\n"
                          % (type(_e).__name__, _e))
    except Exception:
        pass


def _chain():
    """Run the sitecustomize this file shadows (the next one on sys.path)."""
    import importlib
    import os
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    mine = sys.modules.get(__name__)
    saved = list(sys.path)
    try:
        sys.path[:] = [p for p in sys.path
                       if os.path.abspath(p or os.curdir) != here]
        del sys.modules[__name__]
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    finally:
        sys.path[:] = saved
        if mine is not None:
            sys.modules[__name__] = mine


try:
    _chain()
except Exception as _e:
    try:
        import sys as _sys
        _sys.stderr.write("prism: the shadowed sitecustomize failed: %s: %s\n"
                          % (type(_e).__name__, _e))
    except Exception:
        pass
