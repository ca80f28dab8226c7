/* cmd_version.c: placeholder until its module lands. */
#include "cli.h"

int
cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	warn("'version' is not implemented yet");
	return AP_EXIT_FAIL;
}
