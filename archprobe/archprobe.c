/* archprobe: the CLI (placeholder until the probe module lands). */
#include <stdio.h>

#include "archprobe.h"

int
main(void)
{
	fprintf(stderr, "archprobe: not implemented yet\n");
	return AP_EXIT_FAIL;
}
