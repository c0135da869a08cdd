"""The compiled-program cache (frontends/cache.py) is off for the tests, theirs and their
subprocesses': they test the compiler, and write nothing to the user's cache directory.
test/python/test_cache.py turns it on in a temporary directory."""

import os

os.environ["IPU_MLIR_NO_CACHE"] = "1"
