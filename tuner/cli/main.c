/* autotune: the command line. The subcommands live in tuner/cmd_*.c and are
 * listed in tuner/cli/cli.c. */
#include "tuner/cli/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
