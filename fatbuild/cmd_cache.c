/* cmd_cache.c: placeholder until its module lands. */
#include "cli.h"

int
cmd_cache(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	warn("'cache' is not implemented yet");
	return AP_EXIT_FAIL;
}
