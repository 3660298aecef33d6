// SPDX-License-Identifier: MIT
/*
 * cupti_nvtx — an application with NVTX ranges (CUDA's header-only NVTX3).
 * Run with NVTX_INJECTION64_PATH=libgpuio-cupti.so, NVTX hands its
 * injection to the collector's InitializeInjectionNvtx2, which passes it on
 * to CUPTI's. The application's output and status must not change.
 */
#include <stdio.h>
#include <nvtx3/nvToolsExt.h>

int main(void)
{
	nvtxRangePushA("outer");
	nvtxRangePushA("inner");
	nvtxRangePop();
	nvtxRangePop();
	nvtxMarkA("mark");
	printf("app: nvtx\n");
	return 7;
}
