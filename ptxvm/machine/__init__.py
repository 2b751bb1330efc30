"""What every executor of PTX shares, whatever it runs on (the interpreter, the host JIT, the AMD
targets): the device address map, device memory and its allocations, the device heap, module
images and the launch's symbol layout and `.param` block, launch geometry and statistics, the
printf formatter, and the one builder of fault and deadlock reports.

Stages above (``interp``, ``jit``, ``amdgpu``, ``driver``) import the submodules directly; this
package imports nothing, so reaching one of them does not load the others (or numpy).
"""
