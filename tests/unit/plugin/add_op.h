/* tests/unit/plugin/add_op.h — the `add` operation, written as an operation
 * built outside the tree is: it sees fnworker.h only (the Makefile compiles
 * add_op.c with include/ alone on the include path, so a reach into the
 * tree's internal headers fails to build). test_operation_api.c registers
 * and runs it through the engine. */
#ifndef ADD_OP_H
#define ADD_OP_H

#include "fnworker.h"

/* What a plugin's entry point does: registers the operation. */
int add_op_register(fnw_registry *r, fnw_error *err);

/* Calls the engine cancelled, across every instance (for the test). */
extern int add_op_cancels;

#endif
