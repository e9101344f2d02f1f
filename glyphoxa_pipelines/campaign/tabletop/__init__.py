"""Worlds from virtual tabletops (Foundry VTT, Roll20, a generic CSV), read into one shape.

One module per format reads a file into an `ImportedWorld` (`world.py`); nothing enters the
knowledge graph from here: `review.py` keeps the world as a pending batch the DM accepts
(whole or entity by entity) or discards, as the design asks. `detect.py` picks the reader
from a file's content.
"""
