"""The LLVM toolchain every LLVM target shares (the host JIT and the AMD GPU targets).

``toolchain.compile_ir`` turns LLVM IR text into object code (and assembly or optimised IR)
in one persistent worker process (``llvm_worker``), so an LLVM abort kills the worker, not the
caller, and becomes a ``CodegenError``. Results are cached in memory and, sealed, on disk
(``ptxvm.diskcache``). This stage imports no other stage: targets hand it IR text.
"""
