/* cmd_build.c: placeholder until its module lands. */
#include "cli.h"

int
cmd_build(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	warn("'build' is not implemented yet");
	return AP_EXIT_FAIL;
}
