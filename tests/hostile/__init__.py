"""The hostile corpus (``cases.yaml``), its harness (``corpus.py``) and the tests that run it."""
