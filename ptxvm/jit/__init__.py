"""Host JIT: LLVM code generation in an isolated worker process (``toolchain``) and
in-process loading of the finished object files (``loader``)."""
