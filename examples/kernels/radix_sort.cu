// radix_sort.cu: CUB BlockRadixSort, each block sorts BLOCK*ITEMS keys (float keys with
// int values, and plain unsigned keys) in a blocked arrangement.
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>

template <int BLOCK, int ITEMS, typename K, typename V>
__device__ void sort_pairs_tile(const K *keys_in, const V *vals_in, K *keys_out, V *vals_out)
{
	using Load = cub::BlockLoad<K, BLOCK, ITEMS, cub::BLOCK_LOAD_TRANSPOSE>;
	using LoadV = cub::BlockLoad<V, BLOCK, ITEMS, cub::BLOCK_LOAD_TRANSPOSE>;
	using Sort = cub::BlockRadixSort<K, BLOCK, ITEMS, V>;
	using Store = cub::BlockStore<K, BLOCK, ITEMS, cub::BLOCK_STORE_TRANSPOSE>;
	using StoreV = cub::BlockStore<V, BLOCK, ITEMS, cub::BLOCK_STORE_TRANSPOSE>;
	__shared__ union {
		typename Load::TempStorage load;
		typename LoadV::TempStorage loadv;
		typename Sort::TempStorage sort;
		typename Store::TempStorage store;
		typename StoreV::TempStorage storev;
	} tmp;
	const size_t off = (size_t)blockIdx.x * BLOCK * ITEMS;
	K k[ITEMS];
	V v[ITEMS];
	Load(tmp.load).Load(keys_in + off, k);
	__syncthreads();
	LoadV(tmp.loadv).Load(vals_in + off, v);
	__syncthreads();
	Sort(tmp.sort).Sort(k, v);
	__syncthreads();
	Store(tmp.store).Store(keys_out + off, k);
	__syncthreads();
	StoreV(tmp.storev).Store(vals_out + off, v);
}

extern "C" __global__ void __launch_bounds__(128) block_sort_pairs_f32_i32(const float *ki, const int *vi, float *ko,
                                                                           int *vo)
{
	sort_pairs_tile<128, 8>(ki, vi, ko, vo);
}

extern "C" __global__ void __launch_bounds__(256) block_sort_keys_u32(const unsigned *ki, unsigned *ko)
{
	using Sort = cub::BlockRadixSort<unsigned, 256, 4>;
	__shared__ typename Sort::TempStorage tmp;
	const size_t off = (size_t)blockIdx.x * 256 * 4;
	unsigned k[4];
	cub::LoadDirectBlocked(threadIdx.x, ki + off, k);
	Sort(tmp).Sort(k);
	cub::StoreDirectBlocked(threadIdx.x, ko + off, k);
}
