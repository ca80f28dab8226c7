/* cmd_flags.c: placeholder until its module lands. */
#include "cli.h"

int
cmd_flags(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	warn("'flags' is not implemented yet");
	return AP_EXIT_FAIL;
}
