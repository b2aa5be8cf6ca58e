"""CouchDB's Mango test suite (src/mango/test in CouchDB 3.5), transcribed, against
`settee serve`:

    python Tests/Mango/run.py path/to/settee [unittest arguments, e.g. -k pagination]

It starts the server on a free loopback port with a new file and an administrator,
runs every `test_*.py` here and stops it. With `MANGO_URL` (and `MANGO_ADMIN`,
`name:password`) set instead of a binary, it runs against that server: the same suite
passes on CouchDB 3.5.0 itself. CouchDB's cases that need its search service (text
indexes, `MANGO_TEXT_INDEXES`) or partitioned databases are not part of it; see
docs/query-language.md.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ADMIN, PASSWORD = "adm", "pass"


def serve(binary, directory):
    process = subprocess.Popen(
        [binary, "--db", os.path.join(directory, "mango.db"), "serve", "--port", "0",
         "--log-level", "none", "--admin", ADMIN],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**os.environ, "SETTEE_ADMIN_PASSWORD": PASSWORD})
    url = json.loads(process.stdout.readline())["url"].rstrip("/")
    return process, url


def main():
    arguments = sys.argv[1:]
    process = None
    directory = tempfile.TemporaryDirectory()
    if "MANGO_URL" not in os.environ:
        if not arguments:
            sys.exit("usage: run.py path/to/settee [unittest arguments]")
        process, url = serve(os.path.abspath(arguments.pop(0)), directory.name)
        os.environ["MANGO_URL"] = url
        os.environ["MANGO_ADMIN"] = "%s:%s" % (ADMIN, PASSWORD)
    sys.path.insert(0, HERE)
    try:
        program = unittest.main(
            module=None, argv=["mango", "discover", "-s", HERE, "-p", "test_*.py", *arguments],
            exit=False, verbosity=2)
        ok = program.result.wasSuccessful()
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
        directory.cleanup()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
