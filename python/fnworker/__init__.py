"""fnworker from PyFlink: run fnworker's native operations in a PyFlink
DataStream job. ``import fnworker`` needs only the standard library; the
job's functions are pickled by PyFlink as usual, and fnworker reads the
pickle without running Python (see python/README.md).

    from fnworker import Operation, unordered_wait
    ds = unordered_wait(ds, Operation("echo"), Time.seconds(5), 1000, output_type=row_type)
    fnworker.print(ds)          # Flink's print, without the Python map ds.print() adds
    fnworker.check(env)         # before env.execute(): no fnworker operator fused with Python

In Flink SQL and the Table API, ``fnworker.udf(Operation(...), result_type)``
(and ``fnworker.udtf``) is a function PyFlink registers as any other
(docs/pyflink.md "SQL and the Table API").

Python functions elsewhere in the job run in PyFlink's own Python worker,
relayed by fnworker; every fnworker operator gets max parallelism
MAX_PARALLELISM so that Flink never fuses it with one (docs/pyflink.md).
"""

# The release: the same as the top-level VERSION file (tests/shell/test_version.sh
# fails when they differ; a package copied next to a job has no VERSION file to read).
__version__ = "0.1.0"

from ._checks import check
from ._datastream import (MAX_PARALLELISM, function, ordered_wait, ordered_wait_batch,
                          ordered_wait_with_retry,
                          process, unordered_wait, unordered_wait_batch, unordered_wait_with_retry)
from ._payload import FnworkerFunction, run_in_fnworker
from ._sink import print  # noqa: A004 - fnworker.print, not in __all__ (a star import keeps the builtin)
from ._spec import NO_RETRY, Operation, RetryStrategy
from ._table import udf, udtf
from ._types import type_info_bytes

__all__ = [
    "Operation", "RetryStrategy", "NO_RETRY", "FnworkerFunction", "run_in_fnworker", "function",
    "process", "unordered_wait", "ordered_wait", "unordered_wait_with_retry",
    "ordered_wait_with_retry", "unordered_wait_batch", "ordered_wait_batch", "type_info_bytes",
    "check", "MAX_PARALLELISM", "udf", "udtf",
]
