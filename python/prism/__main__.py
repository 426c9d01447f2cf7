"""python -m prism - profile a Python program with PRISM, unchanged.

    python -m prism [-o OUT] [options] script.py [args...]
    python -m prism [-o OUT] [options] -m module [args...]

Starts the session, instruments PyTorch automatically (prism.torch.auto():
modules, backward, optimizer steps as PRISM steps, DataLoader waits, sync
calls), runs the program as __main__ with the sys.argv and sys.path[0] Python
would give it, and exits with its status.  One line on stderr at the end says
where the profile went, or why none was written.
"""

import os
import sys

USAGE = """usage: python -m prism [-o OUT] [options] script.py [args...]
       python -m prism [-o OUT] [options] -m module [args...]
       python -m prism sweep [options] MODULE:CALLABLE [args...]   (--help: DataLoader sweep)
Profile a Python program with PRISM: regions, steps and data waits of PyTorch
training (automatic), CUDA activity through CUPTI, memory.

  -o, --output PATTERN   profile file; %p pid, %h host, %r rank (default prism-%p.cbor)
      --output-dir DIR   directory for a relative output
      --sample-rate R    fraction of steps whose regions are recorded, (0, 1]
      --adaptive N       record the first N steps densely
      --flush-ms MS      writer flush period
      --memory-ms MS     memory sampling period
      --no-memory        no memory sampling
      --no-timing        no CPU regions
      --no-gpu           no CUPTI activity
      --warmup-steps N   GPU activity only after N steps
      --active-steps N   ... and for N steps, 0 = all
      --policy P         drop | wait when buffers run out
      --buffer-mb N      event buffers, all threads together
      --depth N          module levels below the model to record (default: all)
      --op-steps N       the operator window: every PyTorch operator as a region,
                         with shapes and FLOPs, for N training steps (default 0: off)
      --op-warmup N      ... after N steps (default 10)
      --op-every K       ... and again every K steps (default 0: once)
      --flop-steps N     without --op-steps: count FLOPs (per module, no operator
                         regions) for N steps, at the same place
      --no-torch         no automatic PyTorch instrumentation
  (module regions are adaptive: modules too small for their hooks are folded into
  their parents after 5 steps; PRISM_TORCH_MODULES=all keeps every module,
  PRISM_TORCH_ADAPT_STEPS=N measures N steps first)
  -v, --verbose          say what is set up, on stderr
  -h, --help             this text

Exit status: the program's; 1 when it raised; 2 for a usage error.
"""

# option -> (init keyword, converter); converter None: a flag with a fixed value
_OPTS = {
    "output": ("output", str),
    "output-dir": ("output_dir", str),
    "sample-rate": ("sample_rate", float),
    "adaptive": ("adaptive_steps", int),
    "flush-ms": ("flush_interval_ms", int),
    "memory-ms": ("memory_interval_ms", int),
    "no-memory": ("collect_memory", False),
    "no-timing": ("collect_timing", False),
    "no-gpu": ("collect_gpu_ops", False),
    "warmup-steps": ("warmup_steps", int),
    "active-steps": ("active_steps", int),
    "policy": ("policy", str),
    "buffer-mb": ("buffer_mb", int),
    "op-steps": ("op_steps", int),
    "op-warmup": ("op_warmup", int),
    "op-every": ("op_every", int),
    "flop-steps": ("flop_steps", int),
}


class UsageError(Exception):
    pass


def parse(argv):
    """(config dict, options dict, target kind 'script'|'module', target, args)."""
    config, o = {}, {"depth": None, "torch": True, "verbose": False}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if a == "-m":
            if i + 1 >= len(argv):
                raise UsageError("-m needs a module name")
            return config, o, "module", argv[i + 1], argv[i + 2:]
        if not a.startswith("-") or a == "-":
            break
        if a in ("-h", "--help"):
            sys.stdout.write(USAGE)
            sys.exit(0)
        if a in ("-v", "--verbose"):
            o["verbose"] = True
            i += 1
            continue
        if a == "--no-torch":
            o["torch"] = False
            i += 1
            continue
        name, val = (a[2:], None) if a.startswith("--") else (None, None)
        if a == "-o":
            name = "output"
        if name and "=" in name:
            name, val = name.split("=", 1)
        if name not in _OPTS and name != "depth":
            raise UsageError("unknown option: %s" % a)
        conv = _OPTS[name][1] if name in _OPTS else int
        if conv is False:
            if val is not None:
                raise UsageError("option takes no value: %s" % a)
            config[_OPTS[name][0]] = False
            i += 1
            continue
        if val is None:
            if i + 1 >= len(argv):
                raise UsageError("option needs a value: %s" % a)
            i += 1
            val = argv[i]
        if val == "":
            raise UsageError("empty value for option: %s" % a)
        try:
            v = conv(val)
        except ValueError:
            raise UsageError("bad value for %s: %s" % (a, val)) from None
        if name == "depth":
            if v < 0:
                raise UsageError("bad value for %s: %s" % (a, val))
            o["depth"] = v
        else:
            config[_OPTS[name][0]] = v
            if name == "adaptive":
                config["adaptive_sampling"] = True
        i += 1
    if i >= len(argv):
        raise UsageError("no script to run")
    return config, o, "script", argv[i], argv[i + 1:]


def _print_exception(e):
    """The traceback as Python prints it, without runpy's and our frames."""
    tb = e.__traceback__
    here = _run_program.__code__.co_filename
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if fn == here or fn.endswith(("runpy.py", "<frozen runpy>")):
            tb = tb.tb_next
            continue
        break
    sys.excepthook(type(e), e.with_traceback(tb), tb)


def _exit_status(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    try:
        sys.stderr.write("%s\n" % (code,))
    except Exception:
        pass
    return 1


def _run_script(target):
    """Run a script as Python does: the real __main__ module replaced by a
    fresh one, __file__ absolute (3.9+), sys.argv[0] as given."""
    import types
    path = os.path.abspath(target)
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__cached__ = None
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


# _run_program's status for a program ended by an uncaught KeyboardInterrupt
_SIGINT_DEATH = -2


def _die_of_sigint():
    """End as CPython ends a program a KeyboardInterrupt ended: its atexit
    functions run, then the process dies of SIGINT (the parent sees
    WIFSIGNALED, as shells and job runners that stop a loop on it expect),
    not exit(130)."""
    import atexit
    import signal
    try:
        atexit._run_exitfuncs()
    except Exception:                       # pragma: no cover
        pass
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:                   # pragma: no cover
            pass
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except Exception:                       # pragma: no cover
        pass
    os._exit(130)                           # no signal delivered: as a shell says it


def _run_program(kind, target, args):
    """Run the program as __main__; returns its exit status."""
    import runpy
    if kind == "module":
        sys.argv = [target] + list(args)    # runpy puts the module's file in argv[0]
        sys.path[0] = os.getcwd()
        runner = lambda: runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.argv = [target] + list(args)
        sys.path[0] = os.path.dirname(os.path.abspath(target))
        runner = lambda: _run_script(target)
    try:
        runner()
    except SystemExit as e:
        return _exit_status(e.code)
    except KeyboardInterrupt as e:
        _print_exception(e)
        return _SIGINT_DEATH
    except BaseException as e:
        _print_exception(e)
        return 1
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "sweep" and not os.path.exists("sweep"):
        from prism._dataload import sweep_main     # DataLoader configurations
        return sweep_main(argv[1:])
    try:
        config, o, kind, target, args = parse(argv)
    except UsageError as e:
        sys.stderr.write("python -m prism: %s\nTry 'python -m prism --help'.\n" % e)
        return 2
    if kind == "script" and not os.path.exists(target):
        sys.stderr.write("python -m prism: %s: no such file\n" % target)
        return 2
    import prism
    from prism import _run as shared
    site_run = getattr(prism, "_prism_site_active", False)   # sitecustomize reports
    if "output" not in config and not os.environ.get("PRISM_OUTPUT"):
        config["output"] = "prism-%p.cbor"
    why = None
    shared.session_started()
    try:
        started = prism.init(**config)
    except (TypeError, ValueError) as e:
        sys.stderr.write("python -m prism: %s\n" % e)
        return 2
    if not started:
        why = "the session did not start (PRISM_ENABLED=0, or the output cannot be created)"
    if o["verbose"]:
        sys.stderr.write("prism: recording to %s\n" % prism.output_path() if started
                         else "prism: not recording\n")
    if o["torch"] and started:
        shared.auto_torch(o["depth"], o["verbose"])
    pid = os.getpid()
    status = _run_program(kind, target, args)
    # a child the program forked that returns or calls sys.exit() comes
    # back here too: it wrote no profile and says nothing (it printed
    # "profile written" about its parent's file)
    if not site_run and os.getpid() == pid:
        shared.finish_line(prism, started, why)
    return status


if __name__ == "__main__":
    _status = main()
    if _status == _SIGINT_DEATH:
        _die_of_sigint()
    sys.exit(_status)
