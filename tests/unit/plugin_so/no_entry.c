/* tests/unit/plugin_so/no_entry.c — a shared object without the plugin
 * entry point. */
#include "fnworker.h"

int not_a_plugin(void);
int not_a_plugin(void)
{
    return 1;
}
