"""Dagster definitions of the memory pipeline (assets, checks, sensors, schedules, resources).

Only `glyphoxa_pipelines.definitions` and the CLI's pipeline commands import this package; the
realtime service never does.
"""
