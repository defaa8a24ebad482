"""The PyFlink job README.md shows ("A PyFlink job in a few lines") runs as
written on a real Flink, in a process of its own, against a local Redis (the
only change: the snippet's 127.0.0.1:6379 becomes that server's address), and
prints the rows the README's types describe: the front door cannot rot."""

import os
import re
import tempfile

from fnw_e2e import ROOT, launches, run_job_script
from services import redis_client, serve

SECTION = "## A PyFlink job in a few lines"


def readme_job():
    """The python block of README.md's SECTION, as written."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(re.escape(SECTION) + r"\n.*?```python\n(.*?)```", text, re.S)
    assert m, "README.md has no python block after %r" % SECTION
    return m.group(1)


def test_readme_job_as_written(runner_dir):
    source = readme_job()
    assert '"127.0.0.1:6379"' in source, "the README's job no longer names Redis at 127.0.0.1:6379"
    with serve("redis") as redis, tempfile.TemporaryDirectory() as tmp:
        redis_client(redis).hset("user:7", mapping={"name": "ann", "tier": "gold"})
        script = os.path.join(tmp, "readme_job.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(source.replace('"127.0.0.1:6379"', '"%s"' % redis.address))
        before = launches(runner_dir)
        p = run_job_script(script, runner_dir)
    assert p.returncode == 0, p.stdout[-3000:]
    assert launches(runner_dir) > before
    # user 8 has no hash: on_missing's default (null) gives a null name
    rows = sorted(m.group(1) for m in re.finditer(r"^(?:\d+> )?\+I\[(.*)\]$", p.stdout, re.M))
    assert rows == ["1, 7, ann", "2, 8, null"], p.stdout[-3000:]
