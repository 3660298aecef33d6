/* SPDX-License-Identifier: MIT */
/*
 * record_layout.h — which CUPTI record structs a libcupti hands out.
 *
 * CUPTI fills each activity kind with the newest struct version of its own
 * release, so a CUDA 12 libcupti (e.g. PyTorch's bundled libcupti.so.12)
 * and CUDA 13's differ. From NVIDIA's public CUPTI headers:
 *
 *   layout   CUPTI API version    kernel    memcpy             memset            sync
 *   12.0     19..25 (12.0-12.7)   Kernel9   Memcpy5            Memset4 (12.x)    Synchronization
 *   12.8     26..28 (12.8-12.9)   Kernel9   Memcpy6 (12.8)     Memset4 (12.x)    Synchronization2
 *   13       >= 130000            Kernel10  Memcpy6 (13)       Memset4 (13)      Synchronization2
 *
 * API, MemcpyPtoP4, Overhead3 and Marker2 are the same in all three. Kernel9
 * and Memcpy5/Synchronization are in CUDA 13's cupti_activity_deprecated.h;
 * the two 12.x structs that CUDA 13 redefined under the same name are
 * transcribed below. The converter decodes each kind through the struct of
 * the loaded library's layout (convert.c); the sizes serve the test fakes.
 */
#ifndef GPUIO_CUPTI_RECORD_LAYOUT_H
#define GPUIO_CUPTI_RECORD_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <cupti.h>

enum cupti_layout {
	CUPTI_LAYOUT_NONE = 0,   /* a version gpuio does not decode */
	CUPTI_LAYOUT_12_0,
	CUPTI_LAYOUT_12_8,
	CUPTI_LAYOUT_13,
};

/* CUDA 12.x CUpti_ActivityMemset4 (13 appended isDeviceLaunched). */
typedef struct PACKED_ALIGNMENT {
	CUpti_ActivityKind kind;
	uint32_t value;
	uint64_t bytes;
	uint64_t start;
	uint64_t end;
	uint32_t deviceId;
	uint32_t contextId;
	uint32_t streamId;
	uint32_t correlationId;
	uint16_t flags;
	uint16_t memoryKind;
	uint32_t pad;
	void *reserved0;
	uint64_t graphNodeId;
	uint32_t graphId;
	uint32_t channelID;
	CUpti_ChannelType channelType;
	uint32_t pad2;
} cupti12_ActivityMemset4;

/* CUDA 12.8/12.9 CUpti_ActivityMemcpy6 (13 split pad2 for isDeviceLaunched). */
typedef struct PACKED_ALIGNMENT {
	CUpti_ActivityKind kind;
	uint8_t copyKind;
	uint8_t srcKind;
	uint8_t dstKind;
	uint8_t flags;
	uint64_t bytes;
	uint64_t start;
	uint64_t end;
	uint32_t deviceId;
	uint32_t contextId;
	uint32_t streamId;
	uint32_t correlationId;
	uint32_t runtimeCorrelationId;
	uint32_t pad;
	void *reserved0;
	uint64_t graphNodeId;
	uint32_t graphId;
	uint32_t channelID;
	CUpti_ChannelType channelType;
	uint32_t pad2;
	uint64_t copyCount;
} cupti128_ActivityMemcpy6;

/* cuptiGetVersion() value -> layout (CUPTI_LAYOUT_NONE: not decoded). */
enum cupti_layout record_layout__for_version(uint32_t api_version);
/* "CUDA 12.0-12.7", "CUDA 12.8-12.9", "CUDA 13.x", "unsupported". */
const char *record_layout__name(enum cupti_layout l);
/* Bytes of one record of kind in this layout (0: a kind gpuio does not convert). */
size_t record_layout__size(enum cupti_layout l, CUpti_ActivityKind kind);

#endif /* GPUIO_CUPTI_RECORD_LAYOUT_H */
