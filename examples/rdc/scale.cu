// scale.cu: a device function defined here and called from apply.cu (relocatable device code:
// build with --rdc or --lto).
__device__ float scale_value(float x)
{
	return 2.0f * x + 1.0f;
}
