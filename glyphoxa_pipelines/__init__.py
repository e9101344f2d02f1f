"""Glyphoxa memory: the pipeline side (stores, transforms, Dagster definitions)."""
