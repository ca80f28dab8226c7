/* cmd_inspect.c: placeholder until its module lands. */
#include "cli.h"

int
cmd_inspect(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	warn("'inspect' is not implemented yet");
	return AP_EXIT_FAIL;
}
