#include <cstdio>
extern "C" int repro_answer(void) { std::printf("%s\n", "x"); return 42; }
