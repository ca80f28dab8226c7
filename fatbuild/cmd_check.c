/* cmd_check.c: placeholder until its module lands. */
#include "cli.h"

int
cmd_check(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	warn("'check' is not implemented yet");
	return AP_EXIT_FAIL;
}
