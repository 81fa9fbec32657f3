"""Training the calibrator: the labelled runs (``runs``) and the fitting (``train``).

Run from the repository root; the fitted artifact and its report are written beside this file.
"""
