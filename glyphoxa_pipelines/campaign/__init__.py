"""Campaign files (YAML), transcript import, and loading them into the memory store."""
