/* cmd_compile.c: placeholder until its module lands. */
#include "cli.h"

int
cmd_compile(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	warn("'compile' is not implemented yet");
	return AP_EXIT_FAIL;
}
