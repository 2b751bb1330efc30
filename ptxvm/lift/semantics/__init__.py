"""Bit-exact PTX semantics as LLVM IR emitters: integer (intops*), floating point (fp*), half precision
(half*) and conversions (cvt*). The instruction chapters in ``lift/ops`` read operands and call these."""
