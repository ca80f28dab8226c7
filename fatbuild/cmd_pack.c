/* cmd_pack.c: placeholder until its module lands. */
#include "cli.h"

int
cmd_pack(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	warn("'pack' is not implemented yet");
	return AP_EXIT_FAIL;
}
