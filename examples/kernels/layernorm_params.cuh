// layernorm_params.cuh: launch parameters of layernorm.cu (only it includes this header).
#pragma once
#define LN_THREADS 256
#define LN_EPS 1e-5f
