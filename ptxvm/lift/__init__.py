"""Lifting PTX IR to LLVM IR (llvmlite), shared by the host JIT and the AMDGPU targets.

Conventions every emitter module follows (``fp``, ``cvt``, ``half``, ``intops`` ...):

* An emitter is a pure function ``emit(b: ir.IRBuilder, *values, **modifiers) -> ir.Value``
  that appends instructions at the builder's position and returns the result.
* Value types: ``.f32`` is LLVM ``float``, ``.f64`` is ``double``; ``.f16``/``.bf16`` travel
  as their ``i16`` bit patterns and packed ``.f16x2``/``.bf16x2`` as ``i32`` (low half =
  element 0); integers are ``iN`` of the PTX type's width (signedness is a modifier, not a
  type); predicates are ``i1``.
* Semantics are the PTX ISA's, bit for bit identical to the interpreter (``ptxvm.interp``),
  which is the reference: every f32 NaN result is the canonical ``0x7fffffff``; rounding
  modes are implemented with error-free transformations, never by changing the FPU mode.
  The lifter never calls the interpreter: the two are independent implementations and
  differential tests compare them.
"""
