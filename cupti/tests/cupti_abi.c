// SPDX-License-Identifier: MIT
/*
 * cupti_abi — print "struct.field offset" and "struct.sizeof N" for the
 * capture header and the GPU records, as the C compiler lays them out.
 * t_cupti_unit.sh compares this with tests/gpu_records.py --layout, so the
 * Python decoder cannot drift from bpf/gpuio_abi.h.
 */
#include <stddef.h>
#include <stdio.h>
#include "capture/capture.h"

#define F(s, f) printf(#s "." #f " %zu\n", offsetof(struct s, f))
#define Z(s) printf(#s ".sizeof %zu\n", sizeof(struct s))

int main(void)
{
	F(gpuio_cap_header, magic); F(gpuio_cap_header, version); F(gpuio_cap_header, header_size);
	F(gpuio_cap_header, realtime_ns); F(gpuio_cap_header, monotonic_ns);
	F(gpuio_cap_header, tracer_pid); F(gpuio_cap_header, flags); F(gpuio_cap_header, abi_version);
	F(gpuio_cap_header, ncpus); F(gpuio_cap_header, hostname); F(gpuio_cap_header, kernel);
	F(gpuio_cap_header, boot_id); F(gpuio_cap_header, vfs_mode); F(gpuio_cap_header, block_mode);
	F(gpuio_cap_header, proc_mode); F(gpuio_cap_header, pagecache_mode);
	F(gpuio_cap_header, iouring_mode); F(gpuio_cap_header, modes_detail);
	F(gpuio_cap_header, target); F(gpuio_cap_header, cmdline); F(gpuio_cap_header, sched_mode);
	F(gpuio_cap_header, fault_mode); F(gpuio_cap_header, stack_mode);
	F(gpuio_cap_header, sample_mode); Z(gpuio_cap_header);

	F(gpuio_gpu_info, offset_ns); F(gpuio_gpu_info, uncertainty_ns); F(gpuio_gpu_info, cupti_dropped);
	F(gpuio_gpu_info, records); F(gpuio_gpu_info, write_errors); F(gpuio_gpu_info, state);
	F(gpuio_gpu_info, clock); F(gpuio_gpu_info, how); F(gpuio_gpu_info, cupti_version);
	F(gpuio_gpu_info, cupti_error); F(gpuio_gpu_info, reason); Z(gpuio_gpu_info);

	F(gpuio_gpu_kernel, end_ns); F(gpuio_gpu_kernel, context); F(gpuio_gpu_kernel, stream);
	F(gpuio_gpu_kernel, correlation); F(gpuio_gpu_kernel, device); F(gpuio_gpu_kernel, grid);
	F(gpuio_gpu_kernel, block); F(gpuio_gpu_kernel, static_smem); F(gpuio_gpu_kernel, dynamic_smem);
	F(gpuio_gpu_kernel, registers); F(gpuio_gpu_kernel, name_len); F(gpuio_gpu_kernel, flags);
	F(gpuio_gpu_kernel, name); Z(gpuio_gpu_kernel);

	F(gpuio_gpu_memcpy, end_ns); F(gpuio_gpu_memcpy, bytes); F(gpuio_gpu_memcpy, context);
	F(gpuio_gpu_memcpy, stream); F(gpuio_gpu_memcpy, correlation); F(gpuio_gpu_memcpy, device);
	F(gpuio_gpu_memcpy, dst_device); F(gpuio_gpu_memcpy, kind); F(gpuio_gpu_memcpy, src_kind);
	F(gpuio_gpu_memcpy, dst_kind); F(gpuio_gpu_memcpy, flags); Z(gpuio_gpu_memcpy);

	F(gpuio_gpu_memset, end_ns); F(gpuio_gpu_memset, bytes); F(gpuio_gpu_memset, context);
	F(gpuio_gpu_memset, stream); F(gpuio_gpu_memset, correlation); F(gpuio_gpu_memset, device);
	F(gpuio_gpu_memset, value); F(gpuio_gpu_memset, mem_kind); F(gpuio_gpu_memset, flags);
	Z(gpuio_gpu_memset);

	F(gpuio_cuda_api, end_ns); F(gpuio_cuda_api, ret); F(gpuio_cuda_api, bytes);
	F(gpuio_cuda_api, stream); F(gpuio_cuda_api, func); F(gpuio_cuda_api, correlation);
	F(gpuio_cuda_api, cbid); F(gpuio_cuda_api, source); F(gpuio_cuda_api, kind);
	F(gpuio_cuda_api, memcpy_kind); F(gpuio_cuda_api, name); Z(gpuio_cuda_api);

	F(gpuio_gpu_sync, end_ns); F(gpuio_gpu_sync, context); F(gpuio_gpu_sync, stream);
	F(gpuio_gpu_sync, correlation); F(gpuio_gpu_sync, type); Z(gpuio_gpu_sync);

	F(gpuio_nvtx_range, end_ns); F(gpuio_nvtx_range, depth); F(gpuio_nvtx_range, name_len);
	F(gpuio_nvtx_range, name); Z(gpuio_nvtx_range);

	F(gpuio_gpu_overhead, end_ns); F(gpuio_gpu_overhead, kind); F(gpuio_gpu_overhead, object_kind);
	F(gpuio_gpu_overhead, object_id); Z(gpuio_gpu_overhead);

	F(gpuio_gpu_sym, addr); F(gpuio_gpu_sym, name_len); F(gpuio_gpu_sym, name); Z(gpuio_gpu_sym);
	return 0;
}
