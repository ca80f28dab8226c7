/* cmd_env.c: placeholder until its module lands. */
#include "cli.h"

int
cmd_env(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	warn("'env' is not implemented yet");
	return AP_EXIT_FAIL;
}
