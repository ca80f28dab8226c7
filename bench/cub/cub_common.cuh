// cub_common.cuh: the headers the multi-file benchmark's kernels share (scripts/bench-compile.sh).
#pragma once
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/warp/warp_reduce.cuh>
constexpr int BLOCK = 128, ITEMS = 4;
