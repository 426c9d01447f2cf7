"""prism._torch_workers - DataLoader worker processes recorded as workers of
the training process (docs/PYTHON.md, "DataLoader workers").

While a session records, a DataLoader that starts worker processes gets a
worker_init_fn of PRISM's (``WorkerInit``) around the user's own, for the
iterator's workers only (the loader's attribute is the user's again at
once).  In each worker it starts a session of the worker's own, writing
``<profile>.workers/w<id>-<pid>.prism`` (prism_init_worker: the file names
the parent's pid and start, and readers merge it into the profile), then
records, in that process only:

  DataLoader batch          one batch fetched (index list to collated batch)
  <Dataset>.__getitem__     each sample (__getitems__ where the dataset has it;
                            ``<Dataset> next`` for an IterableDataset)
  collate (<fn>)            the collate_fn
  <Module>.forward          an nn.Module called in the worker (a transform)
  anything the user marks   prism.region / @prism.region in a transform

It works the same for forked, spawned and persistent workers (the object is
pickled with the loader's other arguments); the worker's session is closed
when the worker loop returns (multiprocessing runs its finalizers before
os._exit) and by SIGTERM (libcollect's handler writes the last chunks), and
a periodic flush bounds what SIGKILL takes.  PRISM_TORCH_WORKERS=0 turns it
off.  Where the worker cannot be recorded (a profile that is not a regular
file, a spawned worker whose environment starts a session of its own) the
parent's file still shows the waits; it says why once on stderr.
"""

import os
import sys
from time import monotonic_ns as _monotonic_ns

import prism
from prism import _prism

_DIR_SUFFIX = ".workers"
_said = set()


def _say(key, msg):
    if key in _said:
        return
    _said.add(key)
    try:
        sys.stderr.write("prism: %s\n" % msg)
    except Exception:
        pass


def enabled():
    return os.environ.get("PRISM_TORCH_WORKERS", "1").strip().lower() not in ("0", "off",
                                                                          "false", "no")


class _Parent:
    """This process's session as its workers see it (set once per session)."""
    start_ns = None
    folder = None


def _profile_path(out):
    """The profile's path: out (prism.output_path(), as the session was
    given it) when absolute; a relative one is relative to the directory
    the session started in, which the program may have left since (some
    launchers change directory before the training code runs): the open
    file's own /proc/self/fd link names it, else the current directory."""
    if os.path.isabs(out):
        return out
    tail = os.sep + os.path.normpath(out)
    try:
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink("/proc/self/fd/" + fd)
            except OSError:
                continue
            if target.endswith(tail) and os.path.isfile(target):
                return target
    except OSError:
        pass
    return os.path.abspath(out)


def _folder():
    """The workers folder of this process's profile, made and emptied of an
    earlier run's worker files once per session; None when workers cannot
    be recorded."""
    start = _prism._session_start_ns()
    if not start:
        return None
    if _Parent.start_ns == start:
        return _Parent.folder
    _Parent.start_ns, _Parent.folder = start, None
    out = prism.output_path()
    path = _profile_path(out) if out else None
    if not path or not os.path.isfile(path):
        _say("nofile", "DataLoader workers are not recorded: the profile %r is not a regular "
             "file" % (out,))
        return None
    folder = path + _DIR_SUFFIX
    try:
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            if name.startswith("w") and name.endswith(".prism"):
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    pass
    except OSError as e:
        _say("nodir", "DataLoader workers are not recorded: %s: %s" % (folder, e.strerror))
        return None
    _Parent.folder = folder
    return folder


class _Which:
    every = False           # auto(): every loader; instrument(): the loaders it was given


def init_for(loader):
    """The WorkerInit for a loader about to start its workers, or None."""
    if not enabled() or not getattr(loader, "num_workers", 0) or not prism.recording():
        return None
    if not _Which.every and "_prism_base" not in type(loader).__dict__:
        return None
    folder = _folder()
    if folder is None:
        return None
    fn = getattr(loader, "worker_init_fn", None)
    if isinstance(fn, WorkerInit):
        return None
    return WorkerInit(fn, folder, os.getpid(), _Parent.start_ns)


class WorkerInit:
    """worker_init_fn of a recorded loader: the worker's session, then the
    user's own function (always called, whatever happened before)."""

    def __init__(self, user_fn, folder, parent_pid, parent_start_ns):
        self.user_fn = user_fn
        self.folder = folder
        self.parent_pid = parent_pid
        self.parent_start_ns = parent_start_ns

    def __call__(self, worker_id):
        try:
            _start_worker(self, worker_id)
        except Exception as e:                      # never break the loader
            _say("start", "DataLoader worker %s not recorded: %s: %s"
                 % (worker_id, type(e).__name__, e))
        if self.user_fn is not None:
            return self.user_fn(worker_id)
        return None


def _start_worker(w, worker_id):
    path = os.path.join(w.folder, "w%d-%d.prism" % (worker_id, os.getpid()))
    if not _prism._init_worker({"output": path, "stack_hz": 0}, w.parent_pid,
                               w.parent_start_ns, worker_id):
        return
    import multiprocessing.util as mu
    mu.Finalize(None, prism.shutdown, exitpriority=100)
    prism.thread_name("DataLoader")
    _quiet_parent_hooks()
    _patch_fetchers()
    _module_hooks()


def _quiet_parent_hooks():
    """A forked worker inherits the parent's zero-code state: no steps here,
    and the parent's module hooks give way to the worker's own."""
    try:
        from prism import _torch_core as core
    except Exception:
        return
    core._Steps.on = False
    core._Steps.open = False
    for h in list(core._Auto.handles) + list(core._Auto.kept_handles):
        try:
            h.remove()
        except Exception:
            pass
    core._Auto.measure = False


# ---- what a worker records ------------------------------------------------

_R_BATCH = None


def _patch_fetchers():
    global _R_BATCH
    from torch.utils.data._utils import fetch
    _R_BATCH = prism.region("DataLoader batch")
    for cls in (getattr(fetch, "_MapDatasetFetcher", None),
                getattr(fetch, "_IterableDatasetFetcher", None)):
        if cls is None or getattr(cls.fetch, "_prism", False):
            continue
        cls.fetch = _fetch_wrapper(cls.fetch)


def _fetch_wrapper(orig):
    def fetch(self, possibly_batched_index):
        if not getattr(self, "_prism_ready", False):
            _instrument_fetcher(self)
        r = _R_BATCH
        r.__enter__()
        try:
            return orig(self, possibly_batched_index)
        finally:
            r.__exit__(None, None, None)
    fetch._prism = True
    fetch.__wrapped__ = orig
    return fetch


def _instrument_fetcher(f):
    try:
        f._prism_ready = True
    except Exception:
        pass
    fn = getattr(f, "collate_fn", None)
    if fn is not None and not getattr(fn, "_prism", False):
        try:
            f.collate_fn = _timed(fn, "collate (%s)" % _callable_name(fn))
        except Exception:
            pass
    ds = getattr(f, "dataset", None)
    if ds is None:
        return
    it = getattr(f, "dataset_iter", None)
    if it is not None:
        try:
            f.dataset_iter = _TimedIter(it, "%s next" % type(ds).__name__)
        except Exception:
            pass
        return
    _patch_dataset_class(type(ds))


def _callable_name(fn):
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if name is None:
        name = type(fn).__name__
    return name


def _timed(fn, name):
    r = prism._region_of(name)

    def call(*args, **kwargs):
        r.__enter__()
        try:
            return fn(*args, **kwargs)
        finally:
            r.__exit__(None, None, None)
    call._prism = True
    call.__wrapped__ = fn
    return call


class _TimedIter:
    __slots__ = ("_it", "_r")

    def __init__(self, it, name):
        self._it = it
        self._r = prism._region_of(name)

    def __iter__(self):
        return self

    def __next__(self):
        r = self._r
        r.__enter__()
        try:
            return next(self._it)
        finally:
            r.__exit__(None, None, None)

    def __getattr__(self, name):
        return getattr(self._it, name)


def _patch_dataset_class(cls):
    """Time each sample: the dataset's class in this worker process only
    (the parent's is never touched).  A class that refuses (a C type) gives
    the batch's time alone, said once."""
    for meth in ("__getitem__", "__getitems__"):
        orig = getattr(cls, meth, None)
        if orig is None or getattr(orig, "_prism", False):
            continue
        wrapped = _timed_method(orig, "%s.%s" % (cls.__name__, meth))
        try:
            setattr(cls, meth, wrapped)
        except (TypeError, AttributeError):
            _say("cls", "DataLoader workers: %s.%s not timed per sample (its class cannot be "
                 "patched)" % (cls.__name__, meth))


def _timed_method(orig, name):
    r = prism._region_of(name)

    def method(self, *args, **kwargs):
        r.__enter__()
        try:
            return orig(self, *args, **kwargs)
        finally:
            r.__exit__(None, None, None)
    method._prism = True
    method.__wrapped__ = orig
    method.__name__ = getattr(orig, "__name__", "method")
    method.__qualname__ = getattr(orig, "__qualname__", method.__name__)
    method.__doc__ = getattr(orig, "__doc__", None)
    return method


class _Mods:
    regions = {}
    stack = []


def _module_hooks():
    """nn.Modules called in the worker (transforms): a region per call,
    <Class>.forward, nested as called."""
    import torch
    from prism._torch_core import _always
    mm = torch.nn.modules.module

    def pre(module, inputs):
        cls = type(module)
        r = _Mods.regions.get(cls)
        if r is None:
            r = _Mods.regions[cls] = prism._region_of("%s.forward" % cls.__name__)
        r.__enter__()
        _Mods.stack.append((module, r))

    def post(module, inputs, output):
        st = _Mods.stack
        while st:
            m, r = st.pop()
            r.__exit__(None, None, None)
            if m is module:
                break
    mm.register_module_forward_pre_hook(pre)
    _always(mm.register_module_forward_hook, post)


# ---- the parent: the iterator that starts the workers ----------------------

def patch_iterator_init(every):
    """_MultiProcessingDataLoaderIter.__init__ gives its workers a WorkerInit
    (every loader's, or only those prism.torch.instrument() was given)."""
    _Which.every = _Which.every or every
    import torch.utils.data.dataloader as dl
    cls = getattr(dl, "_MultiProcessingDataLoaderIter", None)
    if cls is None or getattr(cls.__init__, "_prism", False):
        return
    orig = cls.__init__

    def __init__(self, loader, *args, **kwargs):
        wi = None
        try:
            wi = init_for(loader)
        except Exception as e:
            _say("init", "DataLoader workers not recorded: %s: %s" % (type(e).__name__, e))
        if wi is None:
            return orig(self, loader, *args, **kwargs)
        user = loader.worker_init_fn
        try:
            loader.worker_init_fn = wi
        except Exception:
            return orig(self, loader, *args, **kwargs)
        t0 = _monotonic_ns()
        try:
            orig(self, loader, *args, **kwargs)
        finally:
            loader.worker_init_fn = user
        _settings(loader)
        try:
            self.__dict__["_prism_t0"] = t0     # its first batch: first_batch()
        except Exception:
            pass
    __init__._prism = True
    __init__.__wrapped__ = orig
    cls.__init__ = __init__
    _patch_pin_memory()


def _settings(loader):
    """The loader's settings as INFO dataloader.* (the analysis reads them)."""
    info = _prism._info
    pf = getattr(loader, "prefetch_factor", None)
    for key, value in (("num_workers", loader.num_workers),
                       ("prefetch_factor", 2 if pf is None else pf),
                       ("persistent_workers", int(bool(getattr(loader, "persistent_workers",
                                                               False)))),
                       ("pin_memory", int(bool(getattr(loader, "pin_memory", False)))),
                       ("batch_size", getattr(loader, "batch_size", None))):
        if isinstance(value, int) and value >= 0:
            try:
                info("dataloader." + key, value)
            except Exception:
                pass


class _Starts:
    n = 0
    ns = 0


def first_batch(it):
    """After a batch arrived from iterator it: the first one after its workers
    started ends their start-up (INFO dataloader.starts / startup_ns)."""
    d = getattr(it, "__dict__", None)
    t0 = d.pop("_prism_t0", None) if d else None
    if t0 is None:
        return
    _Starts.n += 1
    _Starts.ns += max(0, _monotonic_ns() - t0)
    try:
        _prism._info("dataloader.starts", _Starts.n)
        _prism._info("dataloader.startup_ns", _Starts.ns)
    except Exception:
        pass


def _patch_pin_memory():
    """pin_memory (the pin-memory thread's copy of each batch, or the training
    thread's without workers) as a region."""
    try:
        from torch.utils.data._utils import pin_memory as pm
    except Exception:
        return
    fn = getattr(pm, "pin_memory", None)
    if fn is None or getattr(fn, "_prism", False):
        return
    pm.pin_memory = _timed(fn, "pin_memory")
