"""A training script written against the reference profiler's documentation.

The code under "The reference's examples" is the reference's own
(../shared/reference/000_*.txt: Verify Installation, Programmatic Usage,
Context Manager for Custom Regions, Integration Examples 1, 2, 4 and 5,
Configuration Examples, Troubleshooting), unchanged except its imports:

* ``from prism.profiling import ...``: unchanged: PRISM's prism.profiling.
* ``from prism.core.trainers import PRISMTrainer``: replaced by the small
  PRISMTrainer below, a stand-in for the reference project's own trainer (not
  part of the profiler): it calls the hooks that trainer calls
  (on_sample_start/end, on_epoch_start/end, on_training_end).
* ``from prism.profiling.visualization import ProfilePlotter`` and
  ``from prism.profiling.call_graph import CallGraphBuilder`` (Example 4,
  steps 5 and 6: matplotlib charts and a call graph from raw region times):
  left out with the lines that use them; PRISM draws its charts in prism-top.

The names the examples take as given (model, optimizer, measurement_system,
load_batch, ...) are set up first: a small torch model on the CPU when torch
imports, a pure-Python one otherwise.  One PRISM session per process, so each
example that records runs in its own process:

    reference_script.py programmatic | regions | detailed | analyze | configs

(run in a scratch directory: profiles are saved to the current directory).
"""
import contextlib
import sys
import types

from prism.profiling import TrainingProfiler, ProfilerConfig

N_SAMPLES = 5          # the trainer's outer loop (reference "samples")
N_EPOCHS = 8           # iterations per sample (reference "epochs")
SIDE = 16              # image side


# ---- the names the reference's examples take as given ---------------------

def setup_torch(torch):
    torch.manual_seed(0)

    class Reconstruction(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.latent = torch.nn.Parameter(torch.randn(1, SIDE))
            self.net = torch.nn.Sequential(torch.nn.Linear(SIDE, 128), torch.nn.ReLU(),
                                           torch.nn.Linear(128, SIDE * SIDE))

        def forward(self, x=None):
            z = self.latent if x is None else x
            return self.net(z).view(-1, SIDE, SIDE)

    class MeasurementSystem:
        def measure(self, image, reconstruction, centers):
            spectrum = torch.fft.fft2(image).abs()
            return spectrum / (1.0 + spectrum.amax())

    model = Reconstruction()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = torch.nn.MSELoss()
    image = torch.rand(1, SIDE, SIDE)
    g = dict(
        model=model, optimizer=optimizer, criterion=criterion,
        scheduler=torch.optim.lr_scheduler.StepLR(optimizer, step_size=2),
        measurement_system=MeasurementSystem(), device=torch.device("cpu"),
        image=image, target=image, reconstruction=model().detach(),
        load_batch=lambda: torch.randn(4, SIDE))
    g["loss"] = criterion(model(g["load_batch"]()), torch.zeros(4, SIDE, SIDE))
    return g


class _Loss:
    """Pure Python: a squared error whose backward() fills the model's gradients."""

    def __init__(self, model, output, target):
        self.model, self.output, self.target = model, output, target
        self.value = sum((o - t) ** 2 for o, t in zip(output, target)) / len(output)

    def item(self):
        return self.value

    def backward(self):
        n = len(self.output)
        self.model.grad = [2.0 * (o - t) / n for o, t in zip(self.output, self.target)]


def setup_python():
    import random
    random.seed(0)

    class Reconstruction:
        def __init__(self):
            self.weights = [random.random() for _ in range(SIDE * SIDE)]
            self.grad = [0.0] * len(self.weights)

        def __call__(self, x=None):
            scale = 1.0 if x is None else 1.0 + sum(x) / (len(x) * 10.0)
            return [w * scale for w in self.weights]

    class Optimizer:
        def __init__(self, model, lr=0.1):
            self.model, self.lr = model, lr

        def zero_grad(self):
            self.model.grad = [0.0] * len(self.model.weights)

        def step(self):
            m = self.model
            m.weights = [w - self.lr * g for w, g in zip(m.weights, m.grad)]

    class Scheduler:
        def __init__(self, optimizer):
            self.optimizer = optimizer

        def step(self):
            self.optimizer.lr *= 0.9

    class MeasurementSystem:
        def measure(self, image, reconstruction, centers):
            c = centers[0] % len(image)
            return [abs(v - image[c]) for v in image]

    model = Reconstruction()
    optimizer = Optimizer(model)
    image = [random.random() for _ in range(SIDE * SIDE)]
    g = dict(
        model=model, optimizer=optimizer, criterion=lambda out, t: _Loss(model, out, t),
        scheduler=Scheduler(optimizer), measurement_system=MeasurementSystem(),
        device="cpu", image=image, target=image, reconstruction=model(),
        load_batch=lambda: [random.random() for _ in range(SIDE)])
    g["loss"] = g["criterion"](model(), image)
    return g


def setup():
    try:
        import torch
    except ImportError:
        g = setup_python()
    else:
        g = setup_torch(torch)
    g["args"] = types.SimpleNamespace(n_epochs=N_EPOCHS)
    g["sample_centers"] = list(range(N_SAMPLES))
    g["n_epochs"] = N_EPOCHS
    globals().update(g)


class PRISMTrainer:
    """Stand-in for prism.core.trainers.PRISMTrainer: the hooks it calls.

    It times its phases with the region names of the reference's report
    (measurement_system, forward_pass, loss_computation, backward_pass,
    optimizer_step) through the profiler behind a profiler callback (the
    reference's callback keeps it as ``_profiler`` too).
    """

    def __init__(self, model, optimizer, scheduler, measurement_system, args, device,
                 callbacks=()):
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.measurement_system, self.args, self.device = measurement_system, args, device
        self.callbacks = list(callbacks)
        self.profilers = [cb._profiler for cb in self.callbacks
                          if hasattr(getattr(cb, "_profiler", None), "profile_region")]

    def _call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(*args)

    def _region(self, name):
        if self.profilers:
            return self.profilers[0].profile_region(name)
        return contextlib.nullcontext()

    def run_progressive_training(self, target_image=None, sample_centers=()):
        for sample_idx, center in enumerate(sample_centers):
            self._call("on_sample_start", sample_idx)
            with self._region("measurement_system"):
                measurement = self.measurement_system.measure(target_image, self.model(),
                                                              [center])
            loss_value = None
            for epoch in range(self.args.n_epochs):
                self._call("on_epoch_start", epoch)
                with self._region("forward_pass"):
                    output = self.model()
                with self._region("loss_computation"):
                    loss = criterion(output, measurement)
                with self._region("backward_pass"):
                    self.optimizer.zero_grad()
                    loss.backward()
                with self._region("optimizer_step"):
                    self.optimizer.step()
                loss_value = loss.item()
                self._call("on_epoch_end", epoch, loss_value)
            self.scheduler.step()
            self._call("on_sample_end", sample_idx, {"loss": loss_value})
        self._call("on_training_end")


# ---- the reference's examples ---------------------------------------------

def verify_installation():
    # Should import without errors
    print("Profiler installed successfully!")


def programmatic_usage():
    # 1. Configure profiler
    config = ProfilerConfig(
        enabled=True,
        sample_rate=0.1,          # Profile 10% of epochs
        collect_memory=True,       # Track GPU memory
        collect_timing=True,       # Collect timing data
        collect_gpu_ops=True,      # Detailed operator stats
        adaptive_sampling=True,    # More sampling during early training
    )

    # 2. Create profiler instance
    profiler = TrainingProfiler(config)

    # 3. Pass callback to trainer
    trainer = PRISMTrainer(
        model=model,
        optimizer=optimizer,
        scheduler=scheduler,
        measurement_system=measurement_system,
        args=args,
        device=device,
        callbacks=[profiler.callback],  # Add profiler callback
    )

    # 4. Run training (profiling happens automatically)
    trainer.run_progressive_training(target_image=target, sample_centers=sample_centers)

    # 5. Save profile data
    profiler.save("my_profile.pt")
    print("Profile saved! Analyze with: prism profile analyze my_profile.pt")


def context_manager_regions():
    profiler = TrainingProfiler(ProfilerConfig(enabled=True))

    # Profile custom regions
    with profiler.profile_region("data_loading"):
        data = load_batch()

    with profiler.profile_region("forward_pass"):
        output = model(data)

    with profiler.profile_region("backward_pass"):
        loss.backward()

    # Save and analyze
    profiler.save("custom_regions.pt")


def custom_profiling_regions():
    profiler = TrainingProfiler(ProfilerConfig(enabled=True))

    # Profile specific training phases
    for sample_idx, center in enumerate(sample_centers):
        with profiler.profile_region("data_preparation"):
            measurement = measurement_system.measure(image, reconstruction, [center])

        for epoch in range(n_epochs):
            with profiler.profile_region("forward"):
                output = model()

            with profiler.profile_region("loss"):
                loss = criterion(output, measurement)

            with profiler.profile_region("backward"):
                optimizer.zero_grad()
                loss.backward()

            with profiler.profile_region("optimizer"):
                optimizer.step()

    profiler.save("detailed_profile.pt")


def post_training_analysis():
    from prism.profiling import ProfileAnalyzer

    # Load profile
    analyzer = ProfileAnalyzer("my_profile.pt")

    # 1. Get summary statistics
    summary = analyzer.get_summary()
    print(f"Total time: {summary['total_time_ms']:.1f} ms")
    print(f"Peak memory: {summary['peak_gpu_memory_mb']:.1f} MB")

    # 2. Get top operations
    top_ops = analyzer.get_top_operations(n=10)
    for i, op in enumerate(top_ops, 1):
        print(f"{i}. {op['name']}: {op['total_ms']:.1f} ms")

    # 3. Detect bottlenecks
    bottlenecks = analyzer.identify_bottlenecks()
    for b in bottlenecks:
        print(f"[{b.severity}] {b.type.value}: {b.description}")
        print(f"  Fix: {b.recommendation}")

    # 4. Generate report
    report = analyzer.get_efficiency_report()
    print(report)

    # Or filter in analysis (Troubleshooting):
    bottlenecks = analyzer.identify_bottlenecks()
    critical = [b for b in bottlenecks if b.severity == "high"]
    print(f"Critical bottlenecks: {len(critical)}")


def compare_before_after():
    from prism.profiling import ProfileAnalyzer

    # Profile before optimization
    analyzer_before = ProfileAnalyzer("before_optimization.pt")
    before_summary = analyzer_before.get_summary()

    # Profile after optimization
    analyzer_after = ProfileAnalyzer("after_optimization.pt")
    after_summary = analyzer_after.get_summary()

    # Compare metrics
    print("Optimization Impact:")
    print(f"  Time: {before_summary['total_time_ms']:.1f} ms -> {after_summary['total_time_ms']:.1f} ms")
    speedup = before_summary['total_time_ms'] / after_summary['total_time_ms']
    print(f"  Speedup: {speedup:.2f}x")

    memory_reduction = before_summary['peak_gpu_memory_mb'] - after_summary['peak_gpu_memory_mb']
    print(f"  Memory saved: {memory_reduction:.1f} MB")

    # Compare bottlenecks
    before_bottlenecks = analyzer_before.identify_bottlenecks()
    after_bottlenecks = analyzer_after.identify_bottlenecks()
    print(f"  Bottlenecks fixed: {len(before_bottlenecks) - len(after_bottlenecks)}")


def configuration_examples():
    configs = []
    # Minimal overhead (for production training)
    config = ProfilerConfig(
        enabled=True,
        sample_rate=0.05,          # Only 5% of epochs
        collect_gpu_ops=False,     # Skip detailed operator stats
        with_flops=False,          # Skip FLOP estimation
    )
    configs.append(config)
    # Debugging (maximum detail)
    config = ProfilerConfig(
        enabled=True,
        sample_rate=0.5,           # Profile 50% of epochs
        cuda_sync_per_epoch=True,  # Sync more frequently
        record_shapes=True,        # Record tensor shapes
        with_flops=True,           # Estimate FLOPs
        bottleneck_threshold_pct=5.0,  # Stricter detection
    )
    configs.append(config)
    # Memory leak detection
    config = ProfilerConfig(
        enabled=True,
        collect_memory=True,       # Essential for leak detection
        sample_rate=0.2,           # More samples for regression
        memory_leak_threshold_mb=5.0,  # Sensitive threshold
    )
    configs.append(config)
    # Troubleshooting: "No CUDA device available"
    config = ProfilerConfig(
        enabled=True,
        use_cuda_events=False,  # Disable CUDA timing
        collect_gpu_ops=False,  # No GPU operators
    )
    configs.append(config)
    for c in configs:
        print(c)


SCENARIOS = {
    "programmatic": programmatic_usage,
    "regions": context_manager_regions,
    "detailed": custom_profiling_regions,
    "analyze": lambda: (post_training_analysis(), compare_before_after()),
    "configs": configuration_examples,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        sys.exit("usage: reference_script.py " + " | ".join(SCENARIOS))
    verify_installation()
    if sys.argv[1] in ("programmatic", "regions", "detailed"):
        setup()
    SCENARIOS[sys.argv[1]]()
