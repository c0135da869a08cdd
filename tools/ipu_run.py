"""ipu-run: placeholder until the runtime lands (issue 4)."""


def main() -> int:
    raise SystemExit("ipu-run: not built yet")
