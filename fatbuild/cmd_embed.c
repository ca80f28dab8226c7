/* cmd_embed.c: placeholder until its module lands. */
#include "cli.h"

int
cmd_embed(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	warn("'embed' is not implemented yet");
	return AP_EXIT_FAIL;
}
