"""gen_kineto.py - a Kineto-shaped torch.profiler trace of a given size.

Writes what torch.profiler (Kineto's ChromeTraceLogger) writes for a GPU
training loop, deterministic for a seed, in big blocks (1 GB in seconds):

  {"schemaVersion", "deviceProperties", "distributedInfo", "record_shapes",
   "with_stack", "displayTimeUnit", "baseTimeNanoseconds", "traceEvents": [
     process/thread metadata ("M"), then every CPU event of every step
     (cpu_op, user_annotation, python_function, cuda_runtime, cuda_driver,
     [memory] instants, the "s" end of each ac2g flow), then every GPU event
     (kernel, gpu_memcpy, gpu_memset, gpu_user_annotation, the "f" end of
     each flow), the "Trace" span, "Record Window End"], "traceName"}

as Kineto orders it: CPU activities first, GPU activities after them, so a
reader must link a kernel to a launch it saw hundreds of MB earlier.  Within a
step the threads' events are grouped per thread and the python_function
events of a step follow its ops, so the file is not sorted by time.

Per step: ProfilerStep#N on the main thread, a python_function stack
(train_step, the model, 8-24 blocks each under 1-3 frames, each op under a
frame of its call site), the cpu_op trees of forward, loss,
backward (on the autograd thread), optimizer; cudaLaunchKernel for each
kernel, cudaMemcpyAsync / cudaMemsetAsync / cudaStreamSynchronize, now and
then a cuLaunchKernel (cuda_driver); kernels on streams 7 and 20 with grid,
block and correlation; [memory] events for allocations; a pin-memory thread.
Event shapes (field names, pretty-printing, "ts": us.ns) follow Kineto.

A step takes one of --variants code paths (256; think data-dependent
branches, dynamic shapes): a variant's blocks, frames and names are the same
each time it runs, so the call tree stays bounded as the trace grows, while
the frames' names (source locations, ~110 per variant, at most --names)
reach tens of thousands of distinct ones: ~19 k in 100 MB, ~23 k in 1 GB.

    gen_kineto.py OUT.json --mb 100 [--seed 1] [--names 40000] [--rank 0]

Also a module: generate(path, target_bytes, ...) returns a dict of counts
(bytes, events, steps, names, kernels).
"""
import argparse
import os
import random
import sys
import tempfile

BLOCK = 8 << 20          # bytes buffered before each write
PID = 4242
T_MAIN, T_AUTOGRAD, T_PIN = 4242, 4307, 4311
DEVICE = 0
S_COMPUTE, S_COPY = 7, 20
BASE_NS = 1700000000000000000

LAYER_OPS = [  # (op, children, kernel) for one block's forward
    ("aten::linear", ["aten::t", "aten::addmm"], "ampere_sgemm_128x64_tn"),
    ("aten::layer_norm", ["aten::native_layer_norm"],
     "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"
     "(int, float, float const*, float const*, float const*, float*, float*, float*)"),
    ("aten::gelu", [], "void at::native::vectorized_elementwise_kernel<4, "
     "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)"
     "::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::"
     "{lambda(float)#1}, at::detail::Array<char*, 2> >(int, "
     "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)"
     "::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::"
     "{lambda(float)#1}, at::detail::Array<char*, 2>)"),
    ("aten::dropout", ["aten::native_dropout"],
     "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, "
     "unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float const, unsigned int>, "
     "at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<bool, "
     "unsigned int>, unsigned int, float, at::PhiloxCudaState)"),
    ("aten::add", [], "void at::native::vectorized_elementwise_kernel<4, "
     "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, "
     "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"),
]
BACKWARD_OPS = [
    ("AddmmBackward0", "aten::mm", "ampere_sgemm_64x64_nn"),
    ("NativeLayerNormBackward0", "aten::native_layer_norm_backward",
     "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<float, float>"
     "(float const*, float const*, float const*, float const*, float const*, float*, int)"),
    ("GeluBackward0", "aten::gelu_backward",
     "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl"
     "(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const, "
     "at::detail::Array<char*, 3> >(int, at::native::GeluBackwardCUDAKernelImpl"
     "(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const, "
     "at::detail::Array<char*, 3>)"),
    ("torch::autograd::AccumulateGrad", "aten::add_",
     "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3>)"),
]
OPT_OPS = ["aten::_foreach_mul_", "aten::_foreach_add_", "aten::_foreach_addcmul_",
           "aten::_foreach_sqrt", "aten::_foreach_div_", "aten::_foreach_addcdiv_"]
OPT_KERNEL = ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
              "at::native::(anonymous namespace)::TensorListMetadata<2>, "
              "at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, "
              "std::multiplies<float>, float>(at::native::(anonymous namespace)::"
              "TensorListMetadata<2>, at::native::(anonymous namespace)::"
              "BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::multiplies<float>, float)")
TRITON_KERNEL = "triton_poi_fused_add_mul_0"
DIMS = {"aten::linear": '[[64, 1024], [1024, 1024], [1024]]',
        "aten::addmm": '[[1024], [64, 1024], [1024, 1024], [], []]',
        "aten::layer_norm": '[[64, 1024], [], [1024], [1024], [], []]',
        "aten::gelu": '[[64, 1024], []]', "aten::add": '[[64, 1024], [64, 1024], []]',
        "aten::mm": '[[64, 1024], [1024, 1024]]'}


def us(ns):
    """Kineto's time text: microseconds with 3 decimals (ns precision)."""
    return "%d.%03d" % (ns // 1000, ns % 1000)


def py_name(i):
    """The i-th distinct python_function name (a source location)."""
    return "models/pkg%d/mod%d.py(%d): %s_%d" % (
        i % 97, i % 1013, 20 + i % 480,
        ("forward", "_call_impl", "helper", "apply", "inner")[i % 5], i)


class Writer:
    """Buffers text and writes it to f in blocks; counts bytes and events."""

    def __init__(self, f):
        self.f, self.parts, self.size, self.bytes, self.events = f, [], 0, 0, 0

    def add(self, s, events=1):
        self.parts.append(s)
        self.size += len(s)
        self.events += events
        if self.size >= BLOCK:
            self.flush()

    def flush(self):
        if self.parts:
            data = "".join(self.parts).encode()
            self.f.write(data)
            self.bytes += len(data)
            self.parts, self.size = [], 0


class Gen:
    def __init__(self, cpu, gpu, seed, names, variants):
        self.cpu, self.gpu = cpu, gpu
        self.rng = random.Random(seed)
        self.seed = seed
        self.names = names
        self.variants = variants
        self.ext = 0          # External id (the op's record function id)
        self.ev = 0           # Ev Idx
        self.corr = 1000      # correlation ids (runtime <-> kernel)
        self.gpu_free = {S_COMPUTE: 0, S_COPY: 0}
        self.kernels = 0
        self.allocated = 512 << 20
        self.py_id = 0
        self.pending = []     # python_function events of the step (written after its ops)
        self.step_allocs = []  # bytes allocated in the step, freed at its end
        self.used = set()

    # ---- CPU ----
    def x(self, cat, name, tid, ts, dur, args):
        self.cpu.add('\n  {\n    "ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d,\n'
                     '    "ts": %s, "dur": %s,\n    "args": {\n      %s\n    }\n  },'
                     % (cat, name, PID, tid, us(ts), us(dur), args))

    def next_ext(self):
        self.ext += 1
        return self.ext

    def op(self, cat, name, tid, ts, dur, ext=None):
        """A cpu_op / user_annotation; ext: its External id (a new one if None)."""
        if ext is None:
            ext = self.next_ext()
        self.ev += 1
        dims = DIMS.get(name)
        if dims:
            n = dims.count("[") - 1
            extra = ('"Input Dims": %s, "Input type": [%s], ' %
                     (dims, ", ".join(['"float"'] * n)))
        else:
            extra = ""
        self.x(cat, name, tid, ts, dur, '"External id": %d,"Record function id": 0, %s"Ev Idx": %d'
               % (ext, extra, self.ev))

    def pyfn(self, name, tid, ts, parent):
        """A python_function from ts under pending[parent] (-1: none); its end
        is set later with end(); returns its index in pending."""
        self.py_id += 1
        pid = self.pending[parent][5] if parent >= 0 else 0
        self.pending.append([name, tid, ts, ts, pid, self.py_id])
        return len(self.pending) - 1

    def end(self, idx, t):
        self.pending[idx][3] = t

    def write_pending(self):
        for name, tid, ts, end, parent, pid in self.pending:
            self.cpu.add('\n  {\n    "ph": "X", "cat": "python_function", "name": "%s", "pid": %d, '
                         '"tid": %d,\n    "ts": %s, "dur": %s,\n    "args": {\n      '
                         '"Python parent id": %d, "Python id": %d, "Python thread": 0\n    }\n  },'
                         % (name, PID, tid, us(ts), us(end - ts), parent, pid))
        self.pending = []

    def memory(self, tid, ts, nbytes):
        """A [memory] event: nbytes allocated (> 0) or freed (< 0)."""
        if nbytes > 0:
            self.step_allocs.append(nbytes)
        self.allocated += nbytes
        self.cpu.add('\n  {\n    "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",\n'
                     '    "pid": %d, "tid": %d,\n    "ts": %s,\n    "args": {\n      '
                     '"Total Reserved": %d, "Total Allocated": %d, "Bytes": %d, "Addr": %d, '
                     '"Device Type": 1, "Device Id": %d\n    }\n  },'
                     % (PID, tid, us(ts), (self.allocated | ((1 << 30) - 1)) + 1, self.allocated,
                        nbytes, 139800000000000 + (self.allocated & 0xffffffff), DEVICE))

    def flow(self, w, ph, c, pid, tid, ts):
        w.add('\n  {\n    "ph": "%s", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n'
              '    "cat": "ac2g", "name": "ac2g"%s\n  },'
              % (ph, c, pid, tid, us(ts), ', "bp": "e"' if ph == "f" else ""))

    def launch(self, tid, ts, ext, kernel, kdur, driver=False, stream=S_COMPUTE):
        """A runtime (or driver) launch at ts (5 us) by op ext and its kernel
        later on stream; returns the launch's end."""
        self.corr += 1
        c = self.corr
        if driver:
            self.x("cuda_driver", "cuLaunchKernel", tid, ts, 5000,
                   '"cbid": 307, "correlation": %d' % c)
        else:
            self.x("cuda_runtime", "cudaLaunchKernel", tid, ts, 5000,
                   '"External id": %d, "cbid": 211, "correlation": %d' % (ext, c))
        self.flow(self.cpu, "s", c, PID, tid, ts)
        start = max(self.gpu_free[stream], ts + 4000 + self.rng.randrange(3000))
        self.gpu_free[stream] = start + kdur
        self.kernels += 1
        g = (kdur // 700) + 1
        self.gpu.add('\n  {\n    "ph": "X", "cat": "kernel", "name": "%s", "pid": %d, "tid": %d,\n'
                     '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,'
                     '"queued": 0, "device": %d, "context": 1, "stream": %d, "correlation": %d, '
                     '"registers per thread": 32, "shared memory": 0, "blocks per SM": %.6f, '
                     '"warps per SM": %.6f, "grid": [%d, 1, 1], "block": [256, 1, 1], '
                     '"est. achieved occupancy %%": %d\n    }\n  },'
                     % (kernel, DEVICE, stream, us(start), us(kdur), ext, DEVICE, stream, c,
                        g / 132, g * 8 / 132, g, min(100, g * 4)))
        self.flow(self.gpu, "f", c, DEVICE, stream, start)
        return ts + 5000

    def copy(self, tid, ts, ext, kind, nbytes, memset=False):
        """cudaMemcpyAsync / cudaMemsetAsync at ts (7 us) by op ext and its
        GPU record; returns the call's end."""
        self.corr += 1
        c = self.corr
        api = "cudaMemsetAsync" if memset else "cudaMemcpyAsync"
        self.x("cuda_runtime", api, tid, ts, 7000,
               '"External id": %d, "cbid": %d, "correlation": %d'
               % (ext, 51 if memset else 41, c))
        self.flow(self.cpu, "s", c, PID, tid, ts)
        stream = S_COMPUTE if memset else S_COPY
        dur = 2000 + nbytes // 12000
        start = max(self.gpu_free[stream], ts + 5000)
        self.gpu_free[stream] = start + dur
        name = "Memset (Device)" if memset else "Memcpy %s (Pinned -> Device)" % kind
        self.gpu.add('\n  {\n    "ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d,\n'
                     '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,'
                     '"device": %d, "context": 1, "stream": %d, "correlation": %d, '
                     '"bytes": %d, "memory bandwidth (GB/s)": %.6f\n    }\n  },'
                     % ("gpu_memset" if memset else "gpu_memcpy", name, DEVICE, stream, us(start),
                        us(dur), ext, DEVICE, stream, c, nbytes, nbytes / dur))
        self.flow(self.gpu, "f", c, DEVICE, stream, start)
        return ts + 7000

    def cpu_tree(self, tid, ts, name, children, kernel):
        """An op with child ops, then a launch of kernel; returns its end."""
        ext = self.next_ext()
        t = ts + 2000
        kids = []
        for ch in children:
            kids.append((ch, t))
            t += 3000 + self.rng.randrange(4000)
        t = self.launch(tid, t, ext, kernel, 20000 + self.rng.randrange(200000)) + 1000
        end = t + 1000
        self.op("cpu_op", name, tid, ts, end - ts, ext)
        for ch, cts in kids:
            self.op("cpu_op", ch, tid, cts, 2500)
        return end

    def site_name(self, variant, site):
        """The python_function name of a call site of a code path variant."""
        i = (variant * 1009 + site) % self.names
        self.used.add(i)
        return py_name(i)

    # ---- one step ----
    def step(self, n, t0):
        """Step n from t0 (ns): its CPU events now, its GPU events to the GPU
        writer; returns where the next step starts."""
        rng = self.rng
        # the code path this step takes: its blocks and python frames (the
        # same names and nesting every time the variant runs)
        variant = rng.randrange(self.variants)
        vr = random.Random(variant * 7919 + self.seed)
        sites = 0
        tid = T_MAIN
        step_ext = self.next_ext()
        step_py = self.pyfn("train.py(58): train_step", tid, t0 + 5000, -1)
        t = t0 + 10000
        # data: a batch from the loader, pinned on the pin-memory thread,
        # copied to the device
        t_dl = t
        t += 30000 + rng.randrange(50000)
        self.op("user_annotation",
                "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", tid, t_dl, t - t_dl)
        pin0 = t_dl + 2000
        self.op("cpu_op", "aten::pin_memory", T_PIN, pin0, 20000)
        self.op("cpu_op", "aten::_pin_memory", T_PIN, pin0 + 1000, 18000)
        self.op("cpu_op", "aten::copy_", T_PIN, pin0 + 4000, 12000)
        self.op("cpu_op", "aten::to", tid, t, 12000)
        self.op("cpu_op", "aten::_to_copy", tid, t + 500, 11000)
        e = self.next_ext()
        self.op("cpu_op", "aten::copy_", tid, t + 1000, 9500, e)
        self.copy(tid, t + 1500, e, "HtoD", 64 * 1024 * 4)
        t += 13000
        # forward: the model's frames, per block 1-3 frames from the pool,
        # each op under a frame of its own call site (from the pool too)
        fwd0 = t
        model = self.pyfn("nn.Module: GPT_0", tid, fwd0, step_py)
        t += 200
        nblocks = 8 + vr.randrange(17)
        for b in range(nblocks):
            blk = self.pyfn("nn.Module: Block_%d" % b, tid, t, model)
            frames = []
            parent = blk
            for d in range(1 + vr.randrange(3)):
                t += 100
                sites += 1
                parent = self.pyfn(self.site_name(variant, sites), tid, t, parent)
                frames.append(parent)
            t += 100
            for name, children, kernel in LAYER_OPS:
                sites += 1
                site = self.pyfn(self.site_name(variant, sites), tid, t, parent)
                t += 200
                if name == "aten::linear" and rng.randrange(4) == 0:
                    self.op("cpu_op", "aten::empty", tid, t, 1000)
                    self.memory(tid, t + 500, 64 * 4096)
                    t += 1200
                t = self.cpu_tree(tid, t, name, children, kernel) + 100
                self.end(site, t)
                t += 300
            if rng.randrange(16) == 0:
                t = self.launch(tid, t, 0, TRITON_KERNEL, 15000, driver=True) + 500
            for f in reversed(frames):
                t += 50
                self.end(f, t)
            t += 50
            self.end(blk, t)
            t += 200
        self.end(model, t)
        t += 1000
        # loss
        t = self.cpu_tree(tid, t, "aten::cross_entropy_loss",
                          ["aten::log_softmax", "aten::_log_softmax", "aten::nll_loss"],
                          "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, "
                          "float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>"
                          "(float*, float const*, int)") + 500
        # backward: ones_like + memset on main, then main waits in
        # backward() while the autograd thread runs the graph
        bw0 = t
        e = self.next_ext()
        self.op("cpu_op", "aten::ones_like", tid, t, 9000, e)
        self.copy(tid, t + 1000, e, "", 4, memset=True)
        t += 10000
        hook0 = t
        bw_py = self.pyfn("torch/_tensor.py(487): backward", tid, bw0 - 200, step_py)
        tb = t + 3000
        for b in reversed(range(nblocks)):
            for fn, op, kernel in BACKWARD_OPS:
                e0 = tb
                e = self.next_ext()
                tb = self.launch(T_AUTOGRAD, tb + 2500, e, kernel,
                                 30000 + rng.randrange(150000)) + 1500
                self.op("cpu_op", "autograd::engine::evaluate_function: " + fn, T_AUTOGRAD,
                        e0, tb + 1000 - e0)
                self.op("cpu_op", fn, T_AUTOGRAD, e0 + 500, tb - e0)
                self.op("cpu_op", op, T_AUTOGRAD, e0 + 1000, tb - e0 - 1000, e)
                tb += 1500
        t = tb + 2000
        self.op("cpu_op", "autograd::engine::evaluate_function: BackwardHook", tid, hook0,
                t - hook0)
        t += 200
        self.end(bw_py, t)
        # optimizer
        o0 = t
        t += 2000
        for name in OPT_OPS:
            t = self.cpu_tree(tid, t, name, [], OPT_KERNEL) + 300
        self.op("user_annotation", "Optimizer.step#AdamW.step", tid, o0, t - o0)
        self.op("user_annotation", "Optimizer.zero_grad#AdamW.zero_grad", tid, t + 500, 1000)
        t += 2000
        # loss.item(): copy back, wait for the GPU
        e = self.next_ext()
        self.copy(tid, t + 1000, e, "DtoH", 4)
        gpu_end = max(self.gpu_free.values())
        sync_end = max(t + 10000, gpu_end + 2000)
        self.corr += 1
        self.x("cuda_runtime", "cudaStreamSynchronize", tid, t + 8500, sync_end - t - 8500,
               '"External id": %d, "cbid": 131, "correlation": %d' % (e, self.corr))
        self.op("cpu_op", "aten::item", tid, t, sync_end + 1000 - t)
        self.op("cpu_op", "aten::_local_scalar_dense", tid, t + 500, sync_end - t, e)
        # the step's activations freed (the allocator's frees: negative Bytes)
        for nbytes in self.step_allocs:
            self.memory(tid, sync_end + 1500, -nbytes)
        self.step_allocs = []
        t = sync_end + 2000
        self.end(step_py, t)
        t += 3000
        self.op("user_annotation", "ProfilerStep#%d" % n, tid, t0, t - t0, step_ext)
        # the GPU side of the step's annotation, over its kernels
        self.gpu.add('\n  {\n    "ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#%d",'
                     ' "pid": %d, "tid": %d,\n    "ts": %s, "dur": %s,\n    "args": {\n'
                     '      "External id": %d\n    }\n  },'
                     % (n, DEVICE, S_COMPUTE, us(fwd0 + 4999), us(gpu_end - fwd0 + 2), step_ext))
        self.write_pending()
        return t + 5000


HEAD = """{
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 84942979072,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 233472,
      "numSms": 132, "sharedMemPerBlockOptin": 232448
    }
  ],
  "distributedInfo": {"backend": "nccl", "rank": %(rank)d, "world_size": 8, "pg_count": 1, "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 8, "ranks": [0, 1, 2, 3, 4, 5, 6, 7]}], "nccl_version": "2.21.5"},
  "record_shapes": 1,
  "with_stack": 1,
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": %(base)d,
  "traceEvents": ["""

META = """
  {
    "name": "process_name", "ph": "M", "ts": %(ts)s, "pid": %(pid)s, "tid": 0,
    "args": {
      "name": "%(name)s"
    }
  },
  {
    "name": "process_labels", "ph": "M", "ts": %(ts)s, "pid": %(pid)s, "tid": 0,
    "args": {
      "labels": "%(label)s"
    }
  },"""

THREAD = """
  {
    "name": "thread_name", "ph": "M", "ts": %(ts)s, "pid": %(pid)d, "tid": %(tid)d,
    "args": {
      "name": "%(name)s"
    }
  },"""


def generate(path, target_bytes, seed=1, names=40000, rank=0, variants=256):
    """Write a trace of about target_bytes (at least) to path; return counts."""
    out = open(path, "wb")
    fd, gpath = tempfile.mkstemp(prefix="gen_kineto_gpu_", dir=os.path.dirname(path) or ".")
    gf = os.fdopen(fd, "wb")
    try:
        cpu, gpu = Writer(out), Writer(gf)
        cpu.add(HEAD % {"rank": rank, "base": BASE_NS}, 0)
        cpu.add(META % {"ts": us(0), "pid": PID, "name": "python", "label": "CPU"}, 2)
        cpu.add(META % {"ts": us(0), "pid": DEVICE, "name": "python", "label": "GPU 0"}, 2)
        for tid, name in ((T_MAIN, "thread %d (python)" % T_MAIN),
                          (T_AUTOGRAD, "thread %d (pt_autograd_0)" % T_AUTOGRAD),
                          (T_PIN, "thread %d (pt_pin_memory)" % T_PIN)):
            cpu.add(THREAD % {"ts": us(0), "pid": PID, "tid": tid, "name": name})
        for s in (S_COMPUTE, S_COPY):
            cpu.add(THREAD % {"ts": us(0), "pid": DEVICE, "tid": s, "name": "stream %d" % s})
        g = Gen(cpu, gpu, seed, names, variants)
        t, n = 1000000, 0
        while cpu.bytes + cpu.size + gpu.bytes + gpu.size < target_bytes:
            n += 1
            t = g.step(n, t)
        events = cpu.events + gpu.events
        cpu.flush()
        gpu.flush()
        gf.close()
        with open(gpath, "rb") as f:
            while True:
                b = f.read(BLOCK)
                if not b:
                    break
                out.write(b)
        tail = ('\n  {\n    "ph": "X", "cat": "Trace", "ts": %s, "dur": %s,\n    "pid": "Spans", '
                '"tid": "PyTorch Profiler",\n    "name": "PyTorch Profiler (0)",\n    "args": {\n'
                '      "Op count": 0\n    }\n  },\n  {\n    "name": "Iteration Start: PyTorch '
                'Profiler", "ph": "i", "s": "g",\n    "pid": "Traces", "tid": "Trace PyTorch '
                'Profiler", "ts": %s\n  },\n  {\n    "name": "Record Window End", "ph": "i", '
                '"s": "g",\n    "pid": "", "tid": "", "ts": %s\n  }\n  ],\n  "traceName": "%s"\n}\n'
                % (us(1000000), us(t - 1000000), us(1000000), us(t), os.path.basename(path)))
        out.write(tail.encode())
        events += 3
        return {"bytes": out.tell(), "events": events, "steps": n, "names": len(g.used),
                "kernels": g.kernels}
    finally:
        out.close()
        if not gf.closed:
            gf.close()
        os.unlink(gpath)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=100, help="size in MB (10^6 bytes)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--names", type=int, default=40000, help="distinct python_function names")
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--variants", type=int, default=256,
                    help="code paths a step may take (each with its own frames)")
    a = ap.parse_args()
    r = generate(a.out, int(a.mb * 1e6), a.seed, a.names, a.rank, a.variants)
    print("%s: %d bytes, %d events, %d steps, %d kernels, %d distinct python names"
          % (a.out, r["bytes"], r["events"], r["steps"], r["kernels"], r["names"]))


if __name__ == "__main__":
    sys.exit(main())
