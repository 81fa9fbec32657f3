"""Answer paths besides the model: CRF and heuristic, and their registry."""
