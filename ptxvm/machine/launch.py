"""Launch geometry and launch statistics, the same for every executor."""

from __future__ import annotations

from dataclasses import dataclass

Dim3 = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Geometry:
    """A launch's grid (CTAs) and block (threads per CTA), x fastest."""

    grid: Dim3
    block: Dim3

    @property
    def threads_per_cta(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def ctas(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


@dataclass
class LaunchStats:
    """What a launch ran; executors add to it batch by batch (so it is not frozen)."""

    # Thread-instructions: one per instruction reached by one thread, its guard predicate true
    # or false (a predicated-off instruction still issues, as NVIDIA's thread_inst_executed
    # counts); the same on every executor.
    instructions: int = 0
    steps: int = 0                   # instruction steps (one instruction for a group of threads)
    divergent_steps: int = 0
    batches: int = 0
    host_driver: str = ""            # the host JIT: which driver loop ran the threads, and why
    host_threads: int = 0            # the host JIT: host threads the CTAs ran on (at most)


ENVREGS = 32                         # %envreg0..%envreg31 (PTX ISA §10.27)


@dataclass(frozen=True, slots=True)
class Environment:
    """What the driver gives a launch besides its geometry and `.param` block, the same on every
    host executor: the driver-defined %envreg values (a cooperative launch's grid workspace,
    ``machine.cooperative``), whether the launch is cooperative (every CTA resident at once),
    a hint a `trap` message carries (a grid sync without a cooperative launch) and the device
    runtime that device-side launches go to (``machine.cdp``; None: no CDP calls expected)."""

    envreg: tuple[int, ...] = (0,) * ENVREGS
    cooperative: bool = False
    trap_hint: str = ""
    runtime: object | None = None
    # Texture/surface references bound with Module.bind_texture: (name, TextureObject/SurfaceObject).
    textures: tuple = ()


PLAIN = Environment()
