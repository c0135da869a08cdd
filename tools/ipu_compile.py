"""ipu-compile: placeholder until the default pipeline lands (issue 3)."""


def main() -> int:
    raise SystemExit("ipu-compile: not built yet")
