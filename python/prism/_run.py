"""prism._run - what `python -m prism` and prism-run's sitecustomize share:
the automatic PyTorch instrumentation (now, or once the program imports
torch) and the last line on stderr."""

import os
import sys


_start_dir = [None]


def session_started():
    """Note where the session opened its file: the program may chdir before
    finish_line asks whether a relative path exists."""
    try:
        _start_dir[0] = os.getcwd()
    except OSError:
        pass


def finish_line(prism, started, why=None):
    """Shut the session down and say where the profile went (one line)."""
    path = prism.output_path() if started else None
    where = _start_dir[0] if path and not os.path.isabs(path) and _start_dir[0] else ""
    full = os.path.join(where, path) if path else None
    try:
        prism.shutdown()
    except Exception as e:                 # pragma: no cover
        why = why or "shutdown failed: %s" % e
    if full and os.path.exists(full):        # (a relative path: where the session opened it)
        msg = "prism: profile written to %s" % path
    else:
        msg = "prism: no profile written: %s" % (
            why or ("%s was not created" % path if path else "the session did not start"))
    try:
        sys.stderr.flush()
        sys.stderr.write(msg + "\n")
        sys.stderr.flush()
    except Exception:                      # pragma: no cover
        pass


def auto_torch(depth, verbose=False):
    """prism.torch.auto() now when torch is imported, else when it is (an
    import hook): a script that never imports torch never loads it."""
    if "torch" in sys.modules:
        return auto_now(depth, verbose)
    sys.meta_path.insert(0, _TorchHook(depth, verbose))


def auto_now(depth, verbose):
    try:
        import prism.torch as pt
        pt.auto(depth=depth)
        if verbose:
            sys.stderr.write("prism: PyTorch instrumented automatically\n")
    except Exception as e:
        sys.stderr.write("prism: no automatic PyTorch instrumentation: %s\n" % e)


class _TorchHook:
    """A meta-path finder that runs auto() once `torch` has been imported."""

    def __init__(self, depth, verbose):
        self.depth, self.verbose, self.busy = depth, verbose, False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self.busy:
            return None
        import importlib.util
        self.busy = True
        try:
            spec = importlib.util.find_spec("torch")
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        hook, loader = self, spec.loader

        class Loader:
            def create_module(self, s):
                return loader.create_module(s)

            def exec_module(self, module):
                module.__spec__.loader = module.__loader__ = loader
                loader.exec_module(module)
                try:
                    sys.meta_path.remove(hook)
                except ValueError:
                    pass
                auto_now(hook.depth, hook.verbose)
        spec.loader = Loader()
        return spec
