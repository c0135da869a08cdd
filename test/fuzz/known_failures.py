"""Seeds that fail for a known, recorded reason: strict expected failures (a seed listed here
that passes fails the run, so the list shrinks as bugs are fixed). seed -> reason."""

KNOWN: dict[int, str] = {}
