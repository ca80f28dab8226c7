/* cmd_extract.c: placeholder until its module lands. */
#include "cli.h"

int
cmd_extract(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	warn("'extract' is not implemented yet");
	return AP_EXIT_FAIL;
}
