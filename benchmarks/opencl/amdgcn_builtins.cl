// OpenCL C work-item, barrier and atomic functions on clang's amdgcn builtins.
//
// Debian's clang-19 ships no OpenCL device library for amdgcn (that is ROCm's device-libs), so
// the ordinary get_local_id()/barrier()/atomic_add() would stay external calls (s_swappc_b64,
// with every caller-saved register spilled around them) and the comparison would be meaningless.
// These macros expand to what the ROCm device libraries inline for a uniform work-group size and
// code object v5: work-item and work-group ids from the hardware, the group size and group
// count from the implicit kernel arguments, a barrier as release fence + s_barrier + acquire
// fence, atomics as relaxed read-modify-writes. CUDA's semantics are the same (uniform blocks,
// relaxed atomicAdd), so the kernels compare like for like. Included by the other .cl files.
#pragma once

#define _AMDGCN_XYZ(d, x, y, z) ((d) == 0 ? (x) : (d) == 1 ? (y) : (z))
#define get_local_id(d) _AMDGCN_XYZ(d, __builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(), \
                                    __builtin_amdgcn_workitem_id_z())
#define get_group_id(d) _AMDGCN_XYZ(d, __builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(), \
                                    __builtin_amdgcn_workgroup_id_z())
#define get_local_size(d) ((uint)_AMDGCN_XYZ(d, __builtin_amdgcn_workgroup_size_x(), \
                                    __builtin_amdgcn_workgroup_size_y(), __builtin_amdgcn_workgroup_size_z()))
// hidden_block_count_{x,y,z}: the first three dwords of the implicit arguments (code object v5)
#define get_num_groups(d) (((__constant uint *)__builtin_amdgcn_implicitarg_ptr())[d])

#define barrier(flags) do { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); \
                            __builtin_amdgcn_s_barrier(); \
                            __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); } while (0)

// CUDA atomicAdd: relaxed, device scope (a __local object is visible to its work-group only)
#define atomic_add(p, v) __scoped_atomic_fetch_add((p), (v), __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)
