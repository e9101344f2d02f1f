"""Helpers shared across test folders: imported as modules (`from tests.support.x import ...`),
never loaded by file path, so every folder gets the same objects and linters see the imports."""
