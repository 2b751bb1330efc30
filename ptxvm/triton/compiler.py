"""ptxvm's Triton backend: Triton's own NVIDIA backend, stopped at the PTX stage.

The kernels are compiled exactly as for an NVIDIA GPU of the chosen compute capability
(TTIR -> TTGIR -> LLVM IR -> PTX, by Triton's NVIDIA backend); the "binary" ptxvm's driver
loads is that PTX (no ptxas, no cubin). One concrete backend class lives here, as Triton's
entry-point discovery requires.
"""

from __future__ import annotations

from triton.backends.nvidia import compiler as _nvidia

from . import BACKEND, TritonError


class PtxvmBackend(_nvidia.CUDABackend):
    """CUDA compilation for ``GPUTarget("ptxvm", arch, 32)``, ending with the PTX."""

    @staticmethod
    def supports_target(target) -> bool:
        return target.backend == BACKEND

    def __init__(self, target) -> None:
        super().__init__(target)
        self.binary_ext = "ptx"

    def parse_options(self, opts):
        try:
            return super().parse_options(opts)
        except ValueError as exc:                 # Triton's verdict on the launch options
            raise TritonError(f"Triton refuses the kernel's options for sm_{self.target.arch}: {exc}") from None

    def add_stages(self, stages, options, language) -> None:
        super().add_stages(stages, options, language)
        stages.pop("cubin", None)

    def hash(self) -> str:
        return f"ptxvm-{super().hash()}"
